//! Crash consistency of expiry: a power cut at **every** storage call of
//! an `expire` that takes several commits (each `write`, `set_len` and
//! `sync_data`, none skipped; `FaultyBackend`, as `crash_consistency.rs`)
//! leaves, in the durable, live and torn-header images alike, a file that
//! opens, passes `check` (the time index included), and holds exactly the
//! documents of some whole number of commits: every acknowledged commit's
//! removals, possibly the one in flight, never part of one — always the
//! oldest documents first. Expiring again then finishes the job.

mod common_backend;

use common_backend::{Call, Fault, FaultyBackend};
use lshdb::{Config, Database};
use std::panic::{catch_unwind, AssertUnwindSafe};

const DOCS: u64 = 30;
const T0: u64 = 1_700_000_000;
/// Documents stamped before `T0 + CUT` expire: 20 of them.
const CUT: u64 = 20;
/// Removals per commit: 5 commits.
const BATCH: usize = 4;

fn text(i: u64) -> String {
    format!(
        "document number {i} talks about topic {} with words {}",
        i % 7,
        i * 7919
    )
}

/// Creates the database and stores the documents, document i stamped
/// T0 + i; then expires with `BATCH` per commit. Returns (whether the
/// setup was acknowledged, removal commits acknowledged).
fn run(backend: &FaultyBackend) -> (bool, u64) {
    let config = Config::jaccard(0.5).timestamps(true);
    let Ok(db) = Database::builder().create_with_backend(backend.clone(), config) else {
        return (false, 0);
    };
    let mut batch = match db.batch() {
        Ok(batch) => batch,
        Err(_) => return (false, 0),
    };
    for i in 0..DOCS {
        if batch
            .insert_at(&format!("k{i:02}"), text(i).as_str(), T0 + i)
            .is_err()
        {
            return (false, 0);
        }
    }
    if batch.commit().is_err() {
        return (false, 0);
    }
    let mut acked = 0;
    let _ = db.expire_with(T0 + CUT, BATCH, |report| {
        acked = report.commits;
        true
    });
    (true, acked)
}

/// The calls of each kind a run makes: before the expiry, and in all.
fn counts() -> ([u64; 3], [u64; 3]) {
    let calls = |b: &FaultyBackend| Call::ALL.map(|kind| b.calls(kind));
    let backend = FaultyBackend::new();
    let config = Config::jaccard(0.5).timestamps(true);
    let db = Database::builder()
        .create_with_backend(backend.clone(), config)
        .unwrap();
    let mut batch = db.batch().unwrap();
    for i in 0..DOCS {
        batch
            .insert_at(&format!("k{i:02}"), text(i).as_str(), T0 + i)
            .unwrap();
    }
    batch.commit().unwrap();
    let before = calls(&backend);
    let report = db.expire_with(T0 + CUT, BATCH, |_| true).unwrap();
    assert_eq!(
        (report.removed, report.commits),
        (CUT, CUT.div_ceil(BATCH as u64))
    );
    (before, calls(&backend))
}

/// Checks a recovered image: it opens, is clean, and holds documents
/// `removed..DOCS` with their stamps, where `removed` is `BATCH` times a
/// number of commits from `acked` to `acked + 1` (capped at `CUT`).
fn verify(image: &[u8], acked: u64) -> Result<(), String> {
    let db = Database::builder()
        .open_with_backend(FaultyBackend::from_image(image))
        .map_err(|e| format!("open: {e}"))?;
    let report = db.check().map_err(|e| format!("check: {e}"))?;
    if !report.is_clean() {
        return Err(format!("check: {:?}", report.problems));
    }
    let len = db.len().map_err(|e| e.to_string())?;
    let removed = DOCS - len;
    let allowed = [acked, acked + 1].map(|c| (c * BATCH as u64).min(CUT));
    if !allowed.contains(&removed) {
        return Err(format!(
            "{removed} removed; {acked} commits of {BATCH} acknowledged"
        ));
    }
    for i in 0..DOCS {
        let key = format!("k{i:02}");
        let stamp = db.timestamp(&key).map_err(|e| e.to_string())?;
        let expected = (i >= removed).then_some(T0 + i);
        if stamp != expected {
            return Err(format!("{key}: stamp {stamp:?}, expected {expected:?}"));
        }
    }
    // The rest of the work can be done.
    let again = db
        .expire(T0 + CUT)
        .map_err(|e| format!("expire again: {e}"))?;
    if again.removed != CUT - removed || db.len().map_err(|e| e.to_string())? != DOCS - CUT {
        return Err(format!("expiring again removed {}", again.removed));
    }
    Ok(())
}

#[test]
fn every_cut_point_of_an_expiry_recovers_to_whole_commits() {
    let (before, total) = counts();
    let mut failures = Vec::new();
    let mut cuts = 0;
    for kind in Call::ALL {
        for n in before[kind.index()] + 1..=total[kind.index()] {
            let fault = Fault::CutAt(kind, n);
            let backend = FaultyBackend::with_fault(fault);
            let (setup, acked) = catch_unwind(AssertUnwindSafe(|| run(&backend)))
                .unwrap_or_else(|_| panic!("panic with the power cut at {fault:?}"));
            assert!(setup, "{fault:?} hit the setup");
            cuts += 1;
            let images = [
                ("durable", backend.durable_image()),
                ("live", backend.live_image()),
                ("torn-header", backend.torn_header_image()),
            ];
            for (name, image) in images {
                if let Err(why) = verify(&image, acked) {
                    failures.push(format!("{fault:?}, {name} image ({acked} acked): {why}"));
                }
            }
        }
    }
    println!("cut points in the expiry: {cuts}");
    assert!(cuts >= 10, "only {cuts} cut points");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
