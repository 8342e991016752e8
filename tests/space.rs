//! Space reclamation: after every document is removed, `compact()` brings
//! the file back near the size of a freshly created empty database, and
//! repeated insert/remove cycles reuse freed pages instead of growing the
//! file. The sizes are printed (`cargo test --test space -- --nocapture`).

mod common;

use lshdb::{Config, Database};
use std::path::{Path, PathBuf};

/// How much larger than a compacted empty database a compacted database
/// that held data may be.
const BOUND: u64 = 4;

fn config() -> Config {
    Config::jaccard(0.8).simhash(3).store_text(true)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// `n` short texts (12 words each), keyed `prefix0`, `prefix1`, ...
fn texts(seed: u64, n: usize) -> Vec<String> {
    common::families(seed, n / 5, 5, 12)
        .into_iter()
        .flatten()
        .collect()
}

fn insert_all(db: &Database, prefix: &str, texts: &[String]) {
    let mut batch = db.batch().unwrap();
    for (i, text) in texts.iter().enumerate() {
        batch.insert(&format!("{prefix}{i}"), text).unwrap();
    }
    batch.commit().unwrap();
}

fn remove_all(db: &Database, prefix: &str, n: usize) {
    let mut batch = db.batch().unwrap();
    for i in 0..n {
        assert!(batch.remove(&format!("{prefix}{i}")).unwrap());
    }
    batch.commit().unwrap();
}

/// Compacts until redb has nothing left to move (it may take more than one
/// pass), at most 10 passes.
fn compact(db: &mut Database) -> usize {
    let mut passes = 1;
    while db.compact().unwrap() && passes < 10 {
        passes += 1;
    }
    passes
}

/// The sizes of a freshly created empty database, closed: as created (redb
/// allocates its first region up front), and compacted then closed (the
/// smallest file an empty database can be).
fn empty_sizes(dir: &Path) -> (u64, u64) {
    let path = dir.join("empty.lshdb");
    drop(Database::create(&path, config()).unwrap());
    let created = size(&path);
    let mut db = Database::open(&path).unwrap();
    compact(&mut db);
    drop(db);
    (created, size(&path))
}

/// A new temporary folder (keep it) with an empty database's sizes
/// measured in it (see [`empty_sizes`]), and a new database `name` beside.
fn beside_empty(name: &str) -> (tempfile::TempDir, (u64, u64), PathBuf, Database) {
    let dir = tempfile::tempdir().unwrap();
    let sizes = empty_sizes(dir.path());
    let path = dir.path().join(name);
    let db = Database::create(&path, config()).unwrap();
    (dir, sizes, path, db)
}

#[test]
fn compaction_after_removing_everything_returns_near_the_empty_size() {
    let (_dir, (created, empty), path, mut db) = beside_empty("space.lshdb");
    let texts = texts(0x5ace, 2000);
    assert_eq!(texts.len(), 2000);
    insert_all(&db, "doc", &texts);
    let full = size(&path);
    remove_all(&db, "doc", texts.len());
    assert!(db.is_empty().unwrap());
    let removed = size(&path);
    let passes = compact(&mut db);
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!((report.documents, report.postings), (0, 0));
    drop(db);
    let closed = size(&path);
    println!(
        "space: empty database {created} bytes as created, {empty} compacted; 2,000 documents \
         {full}; all removed {removed}; compacted ({passes} passes) and closed {closed} \
         ({:.2}x the compacted empty database)",
        closed as f64 / empty as f64
    );
    assert!(closed < full, "{closed} >= {full}");
    assert!(closed <= BOUND * empty, "{closed} > {BOUND} x {empty}");
    // Still a working database.
    let db = Database::open(&path).unwrap();
    db.insert("again", texts[0].as_str()).unwrap();
    assert_eq!(db.query(&texts[0]).run().unwrap().hits[0].key, "again");
}

#[test]
fn insert_remove_cycles_reuse_space() {
    let (_dir, (_, empty), path, mut db) = beside_empty("cycles.lshdb");
    db.insert("keep", "the one document that stays through every cycle")
        .unwrap();
    let mut sizes = Vec::new();
    for round in 0..6u64 {
        let texts = texts(0xc7c1e + round, 500);
        insert_all(&db, "doc", &texts);
        let peak = size(&path);
        remove_all(&db, "doc", texts.len());
        sizes.push((peak, size(&path)));
    }
    let passes = compact(&mut db);
    assert_eq!(db.len().unwrap(), 1);
    assert!(db.check_pages().unwrap().is_clean());
    drop(db);
    let closed = size(&path);
    println!(
        "cycles: (after inserting 500, after removing them) per round: {sizes:?}; compacted \
         ({passes} passes) and closed {closed} ({:.2}x the compacted empty database, {empty})",
        closed as f64 / empty as f64
    );
    // Freed pages are reused: after the first two cycles the file stops
    // growing (redb grows a file in steps, so where the first step ends
    // depends on the record sizes, not on reuse).
    let steady = sizes[1].1;
    for &(peak, after) in &sizes[2..] {
        assert!(
            peak.max(after) <= steady + steady / 4,
            "the file grew from {steady} to {} bytes over the cycles: {sizes:?}",
            peak.max(after)
        );
    }
    assert!(closed <= BOUND * empty, "{closed} > {BOUND} x {empty}");
}
