//! Crash consistency of the priority policy: a power cut at **every**
//! storage call of a run of inserts with priorities and removals (of
//! representatives too) into a file whose clusters rank by priority
//! (`FaultyBackend`, as `crash_consistency.rs`) leaves, in the durable,
//! live and torn-header images alike, a file that opens, passes `check`
//! (which verifies the stored priorities and that each representative is
//! the member of highest priority), and holds the documents of the
//! acknowledged writes, perhaps with the one in flight; each cluster's
//! representative is the one those writes make.

mod common_backend;

use common_backend::{Call, Fault, FaultyBackend};
use lshdb::{Config, Database, Prioritised, Representative};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One write of the run.
#[derive(Clone, Copy)]
enum Op {
    /// Document i, with priority `PRIORITY[i]`.
    Insert(usize),
    /// Remove document i.
    Remove(usize),
}

/// Two families of near-duplicates (even and odd documents).
const DOCS: usize = 8;
const PRIORITY: [i64; DOCS] = [0, 5, 9, -2, 3, 9, 1, 0];
const OPS: [Op; 11] = [
    Op::Insert(0),
    Op::Insert(1),
    Op::Insert(2),
    Op::Insert(3),
    Op::Insert(4),
    Op::Insert(5),
    Op::Insert(6),
    Op::Insert(7),
    Op::Remove(2), // the even family's representative (9)
    Op::Remove(0),
    Op::Remove(5), // the odd family's representative (9, tied with none left)
];

fn key(i: usize) -> String {
    format!("k{i}")
}

fn text(i: usize) -> String {
    let family = if i % 2 == 0 {
        "the quick brown fox jumps over the lazy dog near the river bank"
    } else {
        "a completely different sentence about storage engines and indexes"
    };
    format!("{family} {}", ["", "!", "?", "."][i / 2])
}

fn config() -> Config {
    Config::jaccard(0.6).cluster_representative(Representative::Priority)
}

/// Runs the writes, one commit each; returns how many were acknowledged.
fn run(backend: &FaultyBackend) -> Option<usize> {
    let db = Database::builder()
        .create_with_backend(backend.clone(), config())
        .ok()?;
    let mut acked = 0;
    for op in OPS {
        let done = match op {
            Op::Insert(i) => {
                let doc = Prioritised::new(text(i), PRIORITY[i]);
                db.insert_document(&key(i), &doc).is_ok()
            }
            Op::Remove(i) => db.remove(&key(i)).is_ok(),
        };
        if !done {
            break;
        }
        acked += 1;
    }
    Some(acked)
}

/// The documents stored after the first `n` writes.
fn stored_after(n: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for op in &OPS[..n] {
        match *op {
            Op::Insert(i) => out.insert(i),
            Op::Remove(i) => out.remove(&i),
        };
    }
    out
}

/// Checks a recovered image against the writes acknowledged.
fn verify(image: &[u8], acked: usize) -> Result<(), String> {
    let db = Database::builder()
        .open_with_backend(FaultyBackend::from_image(image))
        .map_err(|e| format!("open: {e}"))?;
    let report = db.check().map_err(|e| format!("check: {e}"))?;
    if !report.is_clean() {
        return Err(format!("check: {:?}", report.problems));
    }
    let mut stored = BTreeSet::new();
    for i in 0..DOCS {
        if db.contains(&key(i)).map_err(|e| e.to_string())? {
            stored.insert(i);
        }
    }
    let n = (acked..=(acked + 1).min(OPS.len()))
        .find(|&n| stored_after(n) == stored)
        .ok_or_else(|| format!("stored {stored:?}, {acked} writes acknowledged"))?;
    for &i in &stored {
        let family: Vec<usize> = stored.iter().copied().filter(|j| j % 2 == i % 2).collect();
        // Highest priority; ties to the first stored (ids follow i here).
        let best = family
            .iter()
            .max_by_key(|&&j| (PRIORITY[j], usize::MAX - j));
        let cluster = db.cluster_of(&key(i)).map_err(|e| e.to_string())?;
        let got = cluster.map(|c| c.representative);
        if got != best.map(|&j| key(j)) {
            return Err(format!(
                "after {n} writes, {}: representative {got:?}",
                key(i)
            ));
        }
    }
    Ok(())
}

#[test]
fn every_cut_point_of_prioritised_writes_recovers_consistently() {
    let calls = |b: &FaultyBackend| Call::ALL.map(|kind| b.calls(kind));
    let backend = FaultyBackend::new();
    let setup = Database::builder()
        .create_with_backend(backend.clone(), config())
        .unwrap();
    drop(setup);
    let before = calls(&backend);
    let backend = FaultyBackend::new();
    assert_eq!(run(&backend), Some(OPS.len()));
    verify(&backend.durable_image(), OPS.len()).unwrap();
    let total = calls(&backend);
    let mut failures = Vec::new();
    let mut cuts = 0;
    for kind in Call::ALL {
        for n in before[kind.index()] + 1..=total[kind.index()] {
            let fault = Fault::CutAt(kind, n);
            let backend = FaultyBackend::with_fault(fault);
            let acked = catch_unwind(AssertUnwindSafe(|| run(&backend)))
                .unwrap_or_else(|_| panic!("panic with the power cut at {fault:?}"));
            let Some(acked) = acked else { continue };
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
    println!("cut points in the writes: {cuts}");
    assert!(cuts >= 20, "only {cuts} cut points");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
