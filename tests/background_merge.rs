//! Background merges (`store/runs/background.rs`): a merge too large for a
//! write is made by the handle's merger thread, while readers keep seeing
//! every document exactly once; a handle dropped mid-merge stops at once,
//! and a process killed mid-merge (SIGKILL) loses nothing: the reopened
//! file passes `check`, holds every acknowledged document, and the next
//! merger deletes the half-built run and finishes the merge.
//!
//! The killed processes are this test binary run again as children (the
//! ignored test `child`, with `LSHDB_BG_DB` set).

use lshdb::hash::SplitMix64;
use lshdb::store::runs::{policy, RUN_GARBAGE, RUN_MERGES};
use lshdb::{BulkOptions, Config, Database};
use redb::{ReadableDatabase, ReadableTableMetadata};
use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Documents per commit, and commits: four runs of 1,100 × 257 postings
/// (256 bands and the key posting) each, level 9, which merge into more
/// than `INLINE_MAX` postings: a background merge.
const PER_COMMIT: usize = 1100;
const COMMITS: usize = 4;
const POSTINGS_PER_DOC: u64 = 257;

fn config() -> Config {
    Config::jaccard(0.5).num_perm(256).bands(256, 1)
}

fn docs() -> Vec<(String, String)> {
    let words: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
    let mut rng = SplitMix64::new(7);
    (0..PER_COMMIT * COMMITS)
        .map(|i| {
            let text: Vec<&str> = (0..12)
                .map(|_| words[(rng.next_u64() % 5000) as usize].as_str())
                .collect();
            (format!("doc{i:05}"), format!("{} doc{i}", text.join(" ")))
        })
        .collect()
}

/// Loads `docs` in commits of [`PER_COMMIT`].
fn load(db: &Database, docs: &[(String, String)]) {
    let options = BulkOptions::default().batch(PER_COMMIT);
    let items = docs.iter().map(|(k, t)| (k.as_str(), t.as_str()));
    db.insert_bulk(items, &options, |_| true).unwrap();
}

/// Milliseconds to wait after a load before cutting the merge it set off
/// (the tests stop at the first cut that lands mid-merge): a fine grid,
/// since where the merge falls depends on the build and the machine (the
/// merger may wait up to its poll interval to begin; a release build then
/// merges in tens of milliseconds).
fn delays() -> impl Iterator<Item = u64> {
    (0..=60).map(|i| i * 20)
}

/// (background merges under way, runs waiting to be deleted) in the file.
fn pending(path: &Path) -> (u64, u64) {
    let raw = redb::Database::open(path).unwrap(); // repairs after a kill
    let txn = raw.begin_read().unwrap();
    let count = |t: Result<u64, _>| t.unwrap_or(0);
    let merges = count(txn.open_table(RUN_MERGES).map(|t| t.len().unwrap()));
    let garbage = count(txn.open_table(RUN_GARBAGE).map(|t| t.len().unwrap()));
    (merges, garbage)
}

/// Every posting of every document, exactly once (a walk of the runs: a
/// posting in both a merge's inputs and its output would count twice).
fn assert_postings_whole(db: &Database, docs: &[(String, String)]) {
    let deep = db.stats_deep().unwrap().deep.unwrap();
    assert_eq!(deep.postings, docs.len() as u64 * (POSTINGS_PER_DOC - 1));
    assert_eq!(db.len().unwrap(), docs.len() as u64);
    for (key, _) in docs {
        assert!(db.contains(key).unwrap(), "{key} lost");
    }
}

/// Opens `path`, and checks that it holds every document, with `check`
/// too when `check` (a full check reads every posting: about a minute in
/// a debug build); then lets the merger finish, and checks the merged file.
fn verify(path: &Path, docs: &[(String, String)], check: bool) {
    let db = Database::open(path).unwrap();
    if check {
        let report = db.check().unwrap();
        assert!(report.is_clean(), "{:?}", report.problems);
    }
    assert_postings_whole(&db, docs);
    db.wait_for_merges().unwrap();
    let stats = db.stats().unwrap();
    assert_eq!(stats.runs, 1, "the merge was finished");
    assert_eq!(stats.run_postings, docs.len() as u64 * POSTINGS_PER_DOC);
    assert_postings_whole(&db, docs);
    drop(db);
    assert_eq!(pending(path), (0, 0), "half-built and retired runs deleted");
}

#[test]
fn the_merge_is_left_to_the_merger_and_readers_see_every_document_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bg.lshdb");
    let db = Arc::new(Database::create(&path, config()).unwrap());
    let docs = Arc::new(docs());
    load(&db, &docs);
    let probe = docs[123].1.clone();
    let expected: Vec<String> = db
        .query(&probe)
        .run()
        .unwrap()
        .hits
        .iter()
        .map(|h| h.key.clone())
        .collect();
    assert_eq!(expected.first().map(String::as_str), Some("doc00123"));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (db, docs, done, probe, expected) = (
                Arc::clone(&db),
                Arc::clone(&docs),
                Arc::clone(&done),
                probe.clone(),
                expected.clone(),
            );
            std::thread::spawn(move || {
                let mut runs_seen = Vec::new();
                let mut i = r;
                while !done.load(Ordering::SeqCst) || runs_seen.is_empty() {
                    // Every document, exactly once: never both the inputs
                    // and the merged run, never neither.
                    let (key, text) = &docs[i % docs.len()];
                    let hits = db.query(text).run().unwrap().hits;
                    assert_eq!(hits.iter().filter(|h| &h.key == key).count(), 1);
                    let got: Vec<String> = db
                        .query(&probe)
                        .run()
                        .unwrap()
                        .hits
                        .iter()
                        .map(|h| h.key.clone())
                        .collect();
                    assert_eq!(got, expected);
                    runs_seen.push(db.stats().unwrap().runs);
                    i += 97;
                }
                runs_seen
            })
        })
        .collect();
    db.wait_for_merges().unwrap();
    done.store(true, Ordering::SeqCst);
    let seen: Vec<usize> = readers
        .into_iter()
        .flat_map(|r| r.join().unwrap())
        .collect();
    assert!(
        seen.iter().all(|&runs| runs == 1 || runs == COMMITS),
        "{seen:?}"
    );
    assert!(
        seen.contains(&COMMITS),
        "the readers ran while the inputs were still listed"
    );
    assert_eq!(db.stats().unwrap().runs, 1);
    drop(db);
    verify(&path, &docs, false);
}

#[test]
fn the_corpus_makes_a_merge_too_large_for_a_write() {
    // What the other tests rely on: three commits merge inline, four not.
    assert!(POSTINGS_PER_DOC * (PER_COMMIT * COMMITS) as u64 > policy::INLINE_MAX);
    assert!(POSTINGS_PER_DOC * (PER_COMMIT * (COMMITS - 1)) as u64 <= policy::INLINE_MAX);
}

#[test]
fn a_handle_dropped_mid_merge_stops_at_once_and_the_next_open_finishes() {
    let docs = docs();
    // How long the merge takes depends on the build (a release build
    // merges these postings in a few milliseconds): drops at growing
    // delays, until one lands mid-merge. Every drop must lose nothing.
    let mut cut_mid_merge = 0;
    for delay in delays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("drop.lshdb");
        let db = Database::create(&path, config()).unwrap();
        load(&db, &docs);
        std::thread::sleep(Duration::from_millis(delay));
        let started = Instant::now();
        drop(db);
        assert!(started.elapsed() < Duration::from_secs(10), "drop hung");
        let (merges, _) = pending(&path);
        cut_mid_merge += u32::from(merges > 0);
        verify(&path, &docs, false);
        if cut_mid_merge > 0 {
            break;
        }
    }
    assert!(cut_mid_merge > 0, "no drop landed mid-merge");
}

#[test]
fn compact_and_reband_during_a_merge_take_over_its_rows() {
    let docs = docs();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("maint.lshdb");
    let mut db = Database::create(&path, config()).unwrap();
    load(&db, &docs);
    std::thread::sleep(Duration::from_millis(300));
    db.compact().unwrap();
    assert_eq!(db.stats().unwrap().runs, 1);
    assert_postings_whole(&db, &docs);
    db.wait_for_merges().unwrap();
    drop(db);
    assert_eq!(pending(&path), (0, 0));

    let path = dir.path().join("reband.lshdb");
    let mut db = Database::create(&path, config()).unwrap();
    load(&db, &docs);
    std::thread::sleep(Duration::from_millis(300));
    db.reband(0.5, Some((64, 4))).unwrap();
    let deep = db.stats_deep().unwrap().deep.unwrap();
    assert_eq!(deep.postings, docs.len() as u64 * 64);
    for (key, _) in &docs {
        assert!(db.contains(key).unwrap(), "{key} lost");
    }
    db.wait_for_merges().unwrap();
    drop(db);
    assert_eq!(pending(&path), (0, 0));
}

/// The entry point of the killed child processes (run only by the test
/// below): loads the documents, says so, and waits to be killed.
#[test]
#[ignore = "a child process of a_process_killed_mid_merge_loses_nothing"]
fn child() {
    let path = std::env::var("LSHDB_BG_DB").expect("run by the kill test");
    let db = Database::create(path, config()).unwrap();
    load(&db, &docs());
    println!("loaded");
    std::thread::sleep(Duration::from_secs(60));
}

#[cfg(unix)]
#[test]
fn a_process_killed_mid_merge_loses_nothing() {
    let docs = docs();
    let mut cut_mid_merge = 0;
    // Kills at growing delays until one lands mid-merge (a release build
    // merges in milliseconds); every kill must lose nothing.
    for delay in delays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kill.lshdb");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "child", "--nocapture", "--quiet"])
            .env("LSHDB_BG_DB", &path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let loaded = std::io::BufReader::new(stdout)
            .lines()
            .any(|line| line.unwrap().trim() == "loaded");
        assert!(loaded, "the child failed to load");
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (merges, _) = pending(&path);
        // The first kill that cut a merge: the full check too.
        verify(&path, &docs, merges > 0 && cut_mid_merge == 0);
        cut_mid_merge += u32::from(merges > 0);
        if cut_mid_merge > 0 {
            break;
        }
    }
    assert!(cut_mid_merge > 0, "no kill landed mid-merge");
}
