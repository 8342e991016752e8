//! `check()` finds damage done to the file behind lshdb's back — a missing
//! or stray posting, a damaged record, a missing document — and queries that
//! meet a damaged record fail with `Error::Corrupted` instead of panicking;
//! `compact()` shrinks the file after mass deletion and keeps it clean.

mod common;

use lshdb::{Config, Database, Error};
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use std::path::{Path, PathBuf};

const BUCKETS: TableDefinition<(u32, u64, u64), ()> = TableDefinition::new("buckets");
const SETS: TableDefinition<u64, &[u8]> = TableDefinition::new("sets");
const DOCS: TableDefinition<u64, &[u8]> = TableDefinition::new("docs");

const FAMILIES: usize = 10;
const MEMBERS: usize = 3;
const DOCS_N: u64 = (FAMILIES * MEMBERS) as u64;

/// The test database `i.lshdb` in a new temporary folder (keep it), with
/// its corpus of families.
fn build(config: Config) -> (tempfile::TempDir, PathBuf, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.lshdb");
    let corpus = common::families(0x1417, FAMILIES, MEMBERS, 30);
    let db = Database::create(&path, config).unwrap();
    let mut batch = db.batch().unwrap();
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            batch.insert(&common::key(f, m), text).unwrap();
        }
    }
    batch.commit().unwrap();
    (dir, path, corpus)
}

/// The internal id of `key`, read with redb from the document records.
fn id_of(path: &Path, key: &str) -> u64 {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_read().unwrap();
    let docs = txn.open_table(DOCS).unwrap();
    let id = docs
        .iter()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|(_, bytes)| lshdb::store::codec::decode_doc(bytes.value()).unwrap().key == key)
        .unwrap()
        .0
        .value();
    id
}

/// Runs `f` in one redb write transaction on the closed database file.
fn tamper(path: &Path, f: impl FnOnce(&redb::WriteTransaction)) {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    f(&txn);
    txn.commit().unwrap();
}

fn problems(path: &Path) -> (lshdb::CheckReport, String) {
    let mut db = Database::open(path).unwrap();
    let report = db.check_pages().unwrap();
    let all = report.problems.join("\n");
    (report, all)
}

/// Asserts that the problems `all` (one a line) include `problem`.
fn assert_problem(all: &str, problem: &str) {
    assert!(all.contains(problem), "{all}");
}

/// Removes the record of `key` from `table` behind the library's back;
/// returns its id and what the check then finds, which is not clean.
fn remove_record(
    path: &Path,
    table: redb::TableDefinition<u64, &[u8]>,
    key: &str,
) -> (u64, lshdb::CheckReport, String) {
    let id = id_of(path, key);
    tamper(path, |txn| {
        txn.open_table(table).unwrap().remove(id).unwrap().unwrap();
    });
    let (report, all) = problems(path);
    assert!(!report.is_clean());
    (id, report, all)
}

#[test]
fn a_fresh_database_is_clean() {
    let (_dir, path, _) = build(Config::jaccard(0.8));
    let mut db = Database::open(&path).unwrap();
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.storage_ok, Some(true));
    assert_eq!(report.documents, DOCS_N);
    assert_eq!(report.postings, DOCS_N * db.settings().bands as u64);
    assert_eq!(report.problem_count, 0);
    let stats = db.stats_deep().unwrap();
    assert_eq!(stats.documents, DOCS_N);
    assert_eq!(stats.deep.unwrap().postings, report.postings);
    assert!(stats.file_bytes > 0);

    // With SimHash blocks, the block postings are counted apart, as stats
    // counts them.
    let (dir, path, _) = build(Config::jaccard(0.8).simhash(3));
    let mut db = Database::open(&path).unwrap();
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.postings, DOCS_N * db.settings().bands as u64);
    assert_eq!(report.simhash_postings, DOCS_N * 4);
    let stats = db.stats_deep().unwrap();
    assert_eq!(
        (stats.deep.unwrap().postings, stats.simhash_postings),
        (report.postings, report.simhash_postings)
    );
    // An empty database is clean too.
    let empty = Database::create(dir.path().join("empty.lshdb"), Config::jaccard(0.8));
    let report = empty.unwrap().check_pages().unwrap();
    assert!(report.is_clean());
    assert_eq!((report.documents, report.postings), (0, 0));
}

#[test]
fn a_missing_posting_is_reported() {
    let (_dir, path, _) = build(Config::jaccard(0.8));
    let id = id_of(&path, &common::key(4, 1));
    tamper(&path, |txn| {
        let mut buckets = txn.open_table(BUCKETS).unwrap();
        let posting = buckets
            .iter()
            .unwrap()
            .map(|e| e.unwrap().0.value())
            .find(|&(band, _, doc)| band == 3 && doc == id)
            .unwrap();
        buckets.remove(posting).unwrap();
    });
    let (report, all) = problems(&path);
    assert!(!report.is_clean());
    assert_eq!(report.storage_ok, Some(true), "redb itself is fine");
    assert_eq!(report.problem_count, 1, "{all}");
    assert_problem(
        &all,
        &format!("document {id} is missing from its bucket in band 3"),
    );
}

#[test]
fn a_stray_posting_is_reported() {
    let (_dir, path, corpus) = build(Config::jaccard(0.8));
    // Put the stray posting into a bucket that a real query reads.
    let db = Database::open(&path).unwrap();
    let bands = db.settings().bands;
    drop(db);
    let id = id_of(&path, &common::key(2, 0));
    tamper(&path, |txn| {
        let mut buckets = txn.open_table(BUCKETS).unwrap();
        let (band, key, _) = buckets
            .iter()
            .unwrap()
            .map(|e| e.unwrap().0.value())
            .find(|&(_, _, doc)| doc == id)
            .unwrap();
        buckets.insert((band, key, 999_999), ()).unwrap();
    });
    let (report, all) = problems(&path);
    assert!(!report.is_clean());
    assert_eq!(report.problem_count, 1, "{all}");
    assert_problem(&all, "points at document 999999");
    assert_eq!(report.postings, DOCS_N * bands as u64 + 1);
    // A query reading that bucket skips the posting of a missing document.
    let db = Database::open(&path).unwrap();
    let hits = db.query(&corpus[2][0]).run().unwrap().hits;
    assert_eq!(hits[0].key, common::key(2, 0));
}

#[test]
fn a_damaged_set_record_is_reported_and_fails_queries() {
    let (_dir, path, corpus) = build(Config::jaccard(0.8));
    let victim = common::key(6, 0);
    let id = id_of(&path, &victim);
    tamper(&path, |txn| {
        let mut sets = txn.open_table(SETS).unwrap();
        let mut bytes = sets.get(id).unwrap().unwrap().value().to_vec();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x10;
        sets.insert(id, bytes.as_slice()).unwrap();
    });
    let (report, all) = problems(&path);
    assert!(!report.is_clean());
    assert_eq!(report.storage_ok, Some(true));
    assert_eq!(report.problem_count, 1, "{all}");
    assert_problem(&all, &format!("shingle set record of document {id}"));
    assert_problem(&all, "checksum mismatch");

    let db = Database::open(&path).unwrap();
    // Every query that has to verify against the damaged set fails cleanly.
    for result in [
        db.query(&corpus[6][0]).run(),
        db.query(&corpus[6][1]).threshold(0.3).run(),
        db.query_key(&victim).run(),
        db.query_key(&common::key(6, 2)).threshold(0.3).run(),
    ] {
        match result {
            Err(Error::Corrupted(what)) => {
                assert!(what.contains(&format!("document {id}")), "{what}")
            }
            other => panic!("expected Corrupted, got {other:?}"),
        }
    }
    assert!(matches!(db.pairs(0.5, |_| true), Err(Error::Corrupted(_))));
    assert!(matches!(db.groups(0.5), Err(Error::Corrupted(_))));
    // The rest of the database still answers.
    let hits = db.query(&corpus[1][0]).run().unwrap().hits;
    assert_eq!(hits[0].key, common::key(1, 0));
    assert_eq!(db.len().unwrap(), DOCS_N);
    // get() does not read the set, so it still works.
    assert!(db.get(&victim).unwrap().is_some());
}

#[test]
fn a_missing_document_record_is_reported() {
    let (_dir, path, corpus) = build(Config::jaccard(0.8));
    let victim = common::key(8, 2);
    let (id, report, all) = remove_record(&path, DOCS, &victim);
    assert_eq!(report.documents, DOCS_N - 1);
    assert_problem(
        &all,
        &format!(
            "key posting {:016x} points at document {id}, which is not stored",
            lshdb::hash::key_hash(&victim)
        ),
    );
    assert_problem(
        &all,
        &format!("{DOCS_N} shingle sets stored for {} documents", DOCS_N - 1),
    );

    let db = Database::open(&path).unwrap();
    assert!(matches!(db.get(&victim), Err(Error::Corrupted(_))));
    match db.query(&corpus[8][2]).run() {
        Err(Error::Corrupted(what)) => assert!(what.contains("missing document"), "{what}"),
        other => panic!("expected Corrupted, got {other:?}"),
    }
}

#[test]
fn compaction_shrinks_the_file_after_mass_deletion() {
    let (_dir, path, mut db) =
        common::new_db_at("compact.lshdb", Config::jaccard(0.8).store_text(true));
    let texts: Vec<String> = common::families(0xc0ffee, 100, 5, 40)
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(texts.len(), 500);
    db.insert("keep", "the one document that stays through it all")
        .unwrap();
    db.insert_bulk(
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("doc{i}"), t.as_str())),
        &lshdb::BulkOptions::default().batch(100),
        |_| true,
    )
    .unwrap();
    assert_eq!(db.len().unwrap(), 501);
    let mut batch = db.batch().unwrap();
    for i in 0..500 {
        assert!(batch.remove(&format!("doc{i}")).unwrap());
    }
    batch.commit().unwrap();
    assert_eq!(db.len().unwrap(), 1);
    let before = std::fs::metadata(&path).unwrap().len();
    assert_eq!(db.stats().unwrap().file_bytes, before);

    // redb may need more than one pass to move everything.
    let mut passes = 0;
    while db.compact().unwrap() && passes < 5 {
        passes += 1;
    }
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(after < before, "compaction: {before} -> {after} bytes");
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(
        (report.documents, report.postings),
        (1, db.settings().bands as u64)
    );
    assert_eq!(
        db.query("the one document that stays through it all")
            .run()
            .unwrap()
            .hits[0]
            .key,
        "keep"
    );
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 1);
    assert_eq!(
        db.get("keep").unwrap().unwrap().text.as_deref(),
        Some("the one document that stays through it all")
    );
}

#[test]
fn a_missing_set_record_is_reported_once() {
    let (_dir, path, corpus) = build(Config::jaccard(0.8));
    let victim = common::key(5, 1);
    let (id, report, all) = remove_record(&path, SETS, &victim);
    assert_problem(&all, &format!("document {id} has no shingle set"));
    assert_problem(
        &all,
        &format!("{} shingle sets stored for {DOCS_N} documents", DOCS_N - 1),
    );
    // Nothing else: in particular no comparison with another document's set.
    assert_eq!(report.problem_count, 2, "{all}");
    // Queries skip a candidate without a set; its siblings still answer.
    let db = Database::open(&path).unwrap();
    let hits = db.query(&corpus[5][1]).run().unwrap().hits;
    assert!(hits.iter().all(|h| h.key != victim));
    assert!(matches!(
        db.query_key(&victim).run(),
        Err(Error::Corrupted(_))
    ));
}

/// Key look-ups (format 4) read the ids posted under the key's hash and
/// keep the one whose document record holds the key: a posting of another
/// document under that hash (as two keys sharing a hash would make) does
/// not mislead them, and `check` reports it as not belonging there.
#[test]
fn a_foreign_key_posting_does_not_mislead_look_ups() {
    let (_dir, path, corpus) = build(Config::jaccard(0.8));
    let (owner, other) = (common::key(3, 0), common::key(6, 1));
    let (owner_id, other_id) = (id_of(&path, &owner), id_of(&path, &other));
    let hash = lshdb::hash::key_hash(&owner);
    tamper(&path, |txn| {
        let mut buckets = txn.open_table(BUCKETS).unwrap();
        // Below the owner's id, so a look-up meets it first.
        assert!(other_id > owner_id);
        buckets.insert((u32::MAX, hash, 0), ()).unwrap();
        buckets.insert((u32::MAX, hash, other_id), ()).unwrap();
    });
    let db = Database::open(&path).unwrap();
    // Id 0 has no document: that posting is damage, and says so.
    match db.get(&owner) {
        Err(Error::Corrupted(what)) => assert!(what.contains("missing document 0"), "{what}"),
        other => panic!("expected Corrupted, got {other:?}"),
    }
    drop(db);
    tamper(&path, |txn| {
        let mut buckets = txn.open_table(BUCKETS).unwrap();
        buckets.remove((u32::MAX, hash, 0)).unwrap();
    });
    let db = Database::open(&path).unwrap();
    let got = db.get(&owner).unwrap().unwrap();
    assert_eq!(got.text.as_deref(), None);
    assert!(db.contains(&owner).unwrap());
    let hits = db.query(&corpus[3][0]).run().unwrap().hits;
    assert_eq!(hits[0].key, owner);
    drop(db);
    let (report, all) = problems(&path);
    assert_eq!(report.problem_count, 2, "{all}");
    assert_problem(
        &all,
        &format!("{} key postings for {DOCS_N} documents", DOCS_N + 1),
    );
    assert_problem(&all, &format!(
            "key posting {hash:016x} points at document {other_id}, which is not stored under a key of that hash"
        ));
    // Removing the owner leaves the other document under its own key.
    let db = Database::open(&path).unwrap();
    assert!(db.remove(&owner).unwrap());
    assert!(!db.contains(&owner).unwrap());
    assert!(db.contains(&other).unwrap());
}

/// `stats` reads no signature and no posting — table lengths, the run list
/// and the file's metadata only — so it answers at once at any size: it
/// still answers when the run blocks or the signatures are damaged, where
/// `stats_deep`, which walks them for the bucket sizes, fails. Its counts
/// are those of `stats_deep`.
#[test]
fn stats_walks_nothing_and_stats_deep_walks_everything() {
    const SIGS: TableDefinition<u64, &[u8]> = TableDefinition::new("sigs");
    const RUN_BLOCKS: TableDefinition<(u32, u32, u64, u64), &[u8]> =
        TableDefinition::new("run_blocks_by_last");
    let (_dir, path, db) = common::new_db_at("s.lshdb", Config::jaccard(0.8).simhash(3));
    let corpus = common::families(0x5747, FAMILIES, MEMBERS, 30);
    let docs = corpus.iter().enumerate().flat_map(|(f, family)| {
        family
            .iter()
            .enumerate()
            .map(move |(m, text)| (common::key(f, m), text.clone()))
    });
    db.insert_bulk(docs, &lshdb::BulkOptions::default(), |_| true)
        .unwrap();
    let bands = db.settings().bands as u64;
    let (cheap, full) = (db.stats().unwrap(), db.stats_deep().unwrap());
    let counts = |s: &lshdb::Stats| {
        (
            s.documents,
            s.runs,
            s.run_postings,
            s.fresh_postings,
            s.simhash_postings,
            s.containment_postings,
        )
    };
    assert_eq!(counts(&cheap), counts(&full));
    assert_eq!(cheap.file_bytes, full.file_bytes);
    assert_eq!(
        (cheap.documents, cheap.simhash_postings),
        (DOCS_N, DOCS_N * 4)
    );
    assert!(cheap.runs >= 1 && cheap.run_postings >= DOCS_N * bands);
    assert!(cheap.deep.is_none());
    let deep = full.deep.unwrap();
    assert_eq!(deep.postings, DOCS_N * bands);
    assert_eq!(deep.histogram.iter().sum::<u64>(), deep.buckets);
    assert!(deep.buckets >= bands && deep.largest.len() == 10);
    assert!(deep.mean_shingles > 10.0, "{}", deep.mean_shingles);
    drop(db);

    // Every run block damaged, then every signature too.
    tamper(&path, |txn| {
        let mut blocks = txn.open_table(RUN_BLOCKS).unwrap();
        let keys: Vec<_> = blocks
            .iter()
            .unwrap()
            .map(|e| e.unwrap().0.value())
            .collect();
        assert!(!keys.is_empty());
        for key in keys {
            blocks.insert(key, &b"damaged"[..]).unwrap();
        }
    });
    let db = Database::open(&path).unwrap();
    assert_eq!(counts(&db.stats().unwrap()), counts(&cheap));
    assert!(matches!(db.stats_deep(), Err(Error::Corrupted(_))));
    drop(db);
    tamper(&path, |txn| {
        let mut sigs = txn.open_table(SIGS).unwrap();
        let ids: Vec<u64> = sigs.iter().unwrap().map(|e| e.unwrap().0.value()).collect();
        for id in ids {
            sigs.insert(id, &b"damaged"[..]).unwrap();
        }
    });
    let db = Database::open(&path).unwrap();
    assert_eq!(db.stats().unwrap().documents, DOCS_N);
    assert!(matches!(db.stats_deep(), Err(Error::Corrupted(_))));
}
