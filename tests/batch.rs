//! Batches and bulk loads are all-or-nothing per commit: an uncommitted
//! (dropped or aborted) batch leaves no trace in the handle or the file, a
//! committed one is visible at once, a bulk load stopped by its progress
//! callback stores exactly what it reported, and bulk input that cannot be
//! indexed is rejected with typed errors while the rest is stored.

mod common;

use lshdb::{BulkOptions, Config, Database, Error, MAX_KEY_BYTES};
use std::path::{Path, PathBuf};

const KEPT: &str = "a document committed before the batch and kept after it";

fn texts() -> Vec<String> {
    common::families(0xba7c, 12, 1, 25)
        .into_iter()
        .map(|mut f| f.remove(0))
        .collect()
}

/// A database `name` in a new temporary folder, holding only "kept";
/// returns the folder (keep it), the file's path and the handle.
fn setup(name: &str) -> (tempfile::TempDir, PathBuf, Database) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let db = Database::create(&path, Config::jaccard(0.8)).unwrap();
    db.insert("kept", KEPT).unwrap();
    (dir, path, db)
}

/// Asserts the database holds only "kept", in the handle and on reopening.
fn assert_untouched(db: Database, path: &Path) {
    let texts = texts();
    let check = |db: &Database| {
        assert_eq!(db.len().unwrap(), 1);
        assert!(db.contains("kept").unwrap());
        for (i, text) in texts.iter().enumerate().take(3) {
            assert!(!db.contains(&format!("new{i}")).unwrap());
            assert_eq!(db.get(&format!("new{i}")).unwrap(), None);
            let result = db.query(text).run().unwrap();
            assert!(result.hits.is_empty());
            assert_eq!(result.explain.candidates, 0);
        }
        assert_eq!(db.query(KEPT).run().unwrap().hits[0].key, "kept");
    };
    check(&db);
    // The handle can write again: the write lock was released.
    let mut batch = db.batch().unwrap();
    batch.remove("nothing").unwrap();
    batch.abort().unwrap();
    drop(db);
    let mut db = Database::open(path).unwrap();
    check(&db);
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.postings, db.settings().bands as u64);
}

/// Bulk-loads `docs` in batches of 10, the progress callback answering
/// `go_on`; returns the report and the (inserted, commits) the callback saw.
fn load_in_tens(
    db: &Database,
    docs: &[(String, String)],
    go_on: bool,
) -> (lshdb::BulkReport, Vec<(u64, u64)>) {
    let mut calls = Vec::new();
    let report = db
        .insert_bulk(docs.to_vec(), &BulkOptions::default().batch(10), |r| {
            calls.push((r.inserted, r.commits));
            go_on
        })
        .unwrap();
    (report, calls)
}

fn fill(batch: &mut lshdb::Batch<'_>) {
    for (i, text) in texts().iter().enumerate().take(3) {
        batch.insert(&format!("new{i}"), text).unwrap();
    }
    assert!(batch.remove("kept").unwrap());
}

#[test]
fn dropped_batch_leaves_no_trace() {
    let (_dir, path, db) = setup("drop.lshdb");
    {
        let mut batch = db.batch().unwrap();
        fill(&mut batch);
        // Readers do not see the batch while it is open.
        assert_eq!(db.len().unwrap(), 1);
        assert!(db.contains("kept").unwrap());
    } // dropped without commit
    assert_untouched(db, &path);
}

#[test]
fn aborted_batch_leaves_no_trace() {
    let (_dir, path, db) = setup("abort.lshdb");
    let mut batch = db.batch().unwrap();
    fill(&mut batch);
    batch.abort().unwrap();
    assert_untouched(db, &path);
}

#[test]
fn committed_batch_is_visible_and_durable() {
    let (_dir, path, db) = setup("commit.lshdb");
    let texts = texts();
    let mut batch = db.batch().unwrap();
    fill(&mut batch);
    batch.commit().unwrap();
    let check = |db: &Database| {
        assert_eq!(db.len().unwrap(), 3);
        assert!(!db.contains("kept").unwrap());
        for (i, text) in texts.iter().enumerate().take(3) {
            let hits = db.query(text).run().unwrap().hits;
            assert_eq!(hits.len(), 1);
            assert_eq!(hits[0].key, format!("new{i}"));
            assert_eq!(hits[0].similarity, 1.0);
        }
        assert!(db.query(KEPT).run().unwrap().hits.is_empty());
    };
    check(&db);
    drop(db);
    check(&Database::open(&path).unwrap());
}

#[test]
fn bulk_load_stopped_by_progress_stores_exactly_what_it_reported() {
    let (_dir, path, db) = common::new_db_at("bulk.lshdb", Config::jaccard(0.8));
    let docs: Vec<(String, String)> = common::families(0xb01c, 7, 5, 20)
        .into_iter()
        .enumerate()
        .flat_map(|(f, family)| {
            family
                .into_iter()
                .enumerate()
                .map(move |(m, text)| (common::key(f, m), text))
        })
        .collect();
    assert_eq!(docs.len(), 35);
    let (report, calls) = load_in_tens(&db, &docs, false);
    assert_eq!(calls, [(10, 1)]);
    assert!(report.stopped);
    assert_eq!(report.inserted, 10);
    assert_eq!(report.commits, 1);
    assert_eq!(report.replaced, 0);
    assert!(report.rejected.is_empty());
    assert_eq!(db.len().unwrap(), report.inserted);
    for (i, (key, _)) in docs.iter().enumerate() {
        assert_eq!(db.contains(key).unwrap(), i < 10, "{key}");
    }
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 10);

    // Loading everything (the first 10 again) reports replacements and
    // calls progress once per commit.
    let (report, calls) = load_in_tens(&db, &docs, true);
    assert_eq!(calls, [(10, 1), (20, 2), (30, 3), (35, 4)]);
    assert!(!report.stopped);
    assert_eq!((report.inserted, report.replaced), (35, 10));
    assert_eq!(db.len().unwrap(), 35);
    let hits = db
        .query_key(&common::key(3, 0))
        .threshold(0.5)
        .run()
        .unwrap()
        .hits;
    assert!(hits.iter().all(|h| common::family_of(&h.key) == 3));
    assert!(!hits.is_empty());
}

#[test]
fn bulk_rejects_bad_documents_and_stores_the_rest() {
    let (_dir, db) = common::new_db("rej.lshdb", Config::jaccard(0.8));
    let long_key = "k".repeat(MAX_KEY_BYTES + 1);
    let max_key = "m".repeat(MAX_KEY_BYTES);
    let good = texts();
    let docs: Vec<(String, String)> = vec![
        ("good0".into(), good[0].clone()),
        ("empty".into(), String::new()),
        ("blank".into(), " \t\n  \r\n".into()),
        (String::new(), good[1].clone()),
        (long_key.clone(), good[2].clone()),
        (max_key.clone(), good[3].clone()),
        ("good4".into(), good[4].clone()),
        ("good0".into(), good[5].clone()), // replaces the first
    ];
    let report = db
        .insert_bulk(docs, &BulkOptions::default().batch(3), |_| true)
        .unwrap();
    assert_eq!(report.inserted, 4);
    assert_eq!(report.replaced, 1);
    assert_eq!(report.commits, 3);
    assert!(!report.stopped);
    let rejected: Vec<&str> = report.rejected.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(rejected, ["empty", "blank", "", long_key.as_str()]);
    for (key, err) in &report.rejected {
        match key.as_str() {
            "empty" | "blank" => {
                assert!(
                    matches!(err, Error::EmptyDocument { key: k } if k == key),
                    "{err}"
                )
            }
            "" => assert!(
                matches!(
                    err,
                    Error::InvalidKey {
                        len: 0,
                        max: MAX_KEY_BYTES
                    }
                ),
                "{err}"
            ),
            _ => assert!(
                matches!(err, Error::InvalidKey { len, max: MAX_KEY_BYTES } if *len == MAX_KEY_BYTES + 1),
                "{err}"
            ),
        }
    }
    assert_eq!(db.len().unwrap(), 3);
    assert!(db.contains("good4").unwrap());
    assert!(db.contains(&max_key).unwrap());
    assert!(!db.contains("empty").unwrap() && !db.contains("blank").unwrap());
    assert!(!db.contains(&long_key).unwrap());
    assert_eq!(db.query(&good[5]).run().unwrap().hits[0].key, "good0");
    assert!(db.query(&good[0]).run().unwrap().hits.is_empty());
    assert!(db.query(&good[1]).run().unwrap().hits.is_empty());
    assert_eq!(report.rejected_count, 4);
}

/// `max_rejected` bounds the report however many documents are refused:
/// it keeps the most recent, counts all, and a progress callback reading
/// the newest `rejected_count - seen` after each commit sees each refused
/// document exactly once, in input order.
#[test]
fn bulk_keeps_at_most_max_rejected_and_counts_them_all() {
    let (_dir, db) = common::new_db("rejmax.lshdb", Config::jaccard(0.8));
    let good = texts();
    let docs: Vec<(String, String)> = (0..95)
        .map(|i| match i % 19 {
            0 => (format!("good{i}"), good[i / 19].clone()),
            _ => (format!("empty{i}"), "  ".to_owned()),
        })
        .collect();
    let (mut seen, mut largest) = (Vec::new(), 0);
    let options = BulkOptions::default().batch(10).max_rejected(10);
    let report = db
        .insert_bulk(docs, &options, |r| {
            let new = (r.rejected_count - seen.len() as u64) as usize;
            seen.extend(
                r.rejected[r.rejected.len() - new..]
                    .iter()
                    .map(|(k, _)| k.clone()),
            );
            largest = largest.max(r.rejected.len());
            true
        })
        .unwrap();
    let expected: Vec<String> = (0..95)
        .filter(|i| i % 19 != 0)
        .map(|i| format!("empty{i}"))
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(report.rejected_count, 90);
    assert_eq!((report.inserted, largest), (5, 10));
    let kept: Vec<&String> = report.rejected.iter().map(|(k, _)| k).collect();
    assert_eq!(kept, expected[80..].iter().collect::<Vec<_>>());
}

/// Within one bulk chunk, a later document with the same key replaces an
/// earlier one, exactly as separate inserts would.
#[test]
fn bulk_duplicate_keys_keep_the_last_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let db = lshdb::Database::create(
        dir.path().join("dup.lshdb"),
        lshdb::Config::jaccard(0.8).store_text(true),
    )
    .unwrap();
    let docs = vec![
        ("b", "the second key, first version"),
        ("a", "first version of a"),
        ("b", "the second key, final version"),
        ("a", "second version of a"),
        ("c", "only version of c"),
        ("a", "final version of a"),
    ];
    let report = db.insert_bulk(docs, &Default::default(), |_| true).unwrap();
    assert_eq!(report.inserted, 6);
    assert_eq!(report.replaced, 3);
    assert_eq!(db.len().unwrap(), 3);
    let text = |k: &str| db.get(k).unwrap().unwrap().text.unwrap();
    assert_eq!(text("a"), "final version of a");
    assert_eq!(text("b"), "the second key, final version");
    assert_eq!(text("c"), "only version of c");
    let mut db = db;
    assert!(db.check_pages().unwrap().is_clean());
}

#[test]
fn bulk_chunks_end_at_the_byte_bound() {
    let (_dir, db) = common::new_db("bytes.lshdb", Config::jaccard(0.8));
    // 10 documents of about 100 KB each, a 250 KB bound: a chunk ends with
    // the document that reaches the bound, so three per commit.
    let docs: Vec<(String, String)> = (0..10)
        .map(|i| {
            let text: String = (0..13_000).map(|w| format!("w{i}x{w} ")).collect();
            (format!("big{i}"), text)
        })
        .collect();
    assert!(docs
        .iter()
        .all(|(_, t)| t.len() > 100_000 && t.len() < 125_000));
    let options = BulkOptions::default().batch(1000).max_chunk_bytes(250_000);
    let mut sizes = Vec::new();
    let report = db
        .insert_bulk(docs.clone(), &options, |r| {
            sizes.push(r.inserted);
            true
        })
        .unwrap();
    assert_eq!(sizes, [3, 6, 9, 10]);
    assert_eq!(report.commits, 4);
    assert_eq!(db.len().unwrap(), 10);
    // The document count still bounds a chunk of small documents, and the
    // defaults load everything in one commit.
    let report = db
        .insert_bulk(docs.clone(), &BulkOptions::default().batch(4), |_| true)
        .unwrap();
    assert_eq!(report.commits, 3);
    let report = db
        .insert_bulk(docs, &BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!(report.commits, 1);
    assert_eq!(report.replaced, 10);
}

/// A write through the handle on the thread that holds a batch open would
/// wait for the batch's own transaction forever: it fails with
/// `WriteInProgress` instead, changes nothing, and the batch goes on. Once
/// the batch is committed (or dropped), the handle writes again; another
/// thread's write waits for the batch, as before.
#[test]
fn a_write_beside_an_open_batch_on_its_thread_fails_instead_of_hanging() {
    let (_dir, _path, db) = setup("holding.lshdb");
    let mut batch = db.batch().unwrap();
    batch.insert("a", "the first text of the batch").unwrap();
    let err = db.insert("b", "another text written beside").unwrap_err();
    assert!(
        matches!(
            err,
            Error::WriteInProgress {
                holder: "a batch",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("commit or drop it first"), "{err}");
    assert!(matches!(db.batch(), Err(Error::WriteInProgress { .. })));
    assert!(matches!(db.remove("a"), Err(Error::WriteInProgress { .. })));
    assert!(matches!(db.flush(), Err(Error::WriteInProgress { .. })));
    batch.insert("c", "a third text, in the batch").unwrap();
    batch.commit().unwrap();
    assert_eq!(db.len().unwrap(), 3); // "kept", "a", "c"
    db.insert("b", "another text written beside").unwrap();
    let batch = db.batch().unwrap();
    drop(batch);
    db.insert("d", "written once the batch is dropped").unwrap();
    assert_eq!(db.len().unwrap(), 5);
}

/// The input and the callback of a dedup-on-write load run on the caller's
/// thread while the load's transaction is open: a write of theirs through
/// the handle fails with `WriteInProgress` instead of hanging.
#[test]
fn a_write_from_a_dedup_loads_callback_fails_instead_of_hanging() {
    let (_dir, _path, db) = setup("holding-load.lshdb");
    let chunks = vec![
        vec![("a", "one text of the load")],
        vec![("b", "a second one")],
    ];
    let mut refused = Vec::new();
    db.insert_unique_bulk(chunks, 0.8, &BulkOptions::default(), |_| {
        refused.push(db.insert("x", "written from the callback").unwrap_err());
        true
    })
    .unwrap();
    assert_eq!(refused.len(), 2);
    assert!(refused.iter().all(|e| matches!(
        e,
        Error::WriteInProgress {
            holder: "a dedup-on-write load",
            ..
        }
    )));
    assert_eq!(db.len().unwrap(), 3); // "kept", "a", "b"
    assert!(db.get("x").unwrap().is_none());
    db.insert("x", "written after the load").unwrap();
}

/// A bulk load into an empty file rules out the look-up of a key it never
/// wrote (its filter of keys): keys that repeat in later commits still
/// replace, and so do keys stored by another write between two of its
/// commits (the filter, which does not hold them, stops answering).
#[test]
fn a_load_into_an_empty_file_replaces_keys_written_earlier_or_between_its_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("k.lshdb"), Config::jaccard(0.8)).unwrap();
    let text = |i: usize, round: usize| format!("document number {i} of round {round}, with words");
    // 300 documents in commits of 7; keys 0..100 come again, twice.
    let docs: Vec<(String, String)> = (0..300)
        .map(|i| {
            (
                format!("k{}", if i < 100 { i } else { i % 100 }),
                text(i, i / 100),
            )
        })
        .chain((0..50).map(|i| (format!("fresh{i}"), text(i, 9))))
        .collect();
    // Between two commits, another write stores keys the load writes later.
    let mut between = (0..5).map(|i| (format!("fresh{i}"), text(i, 7)));
    let report = db
        .insert_bulk(docs, &BulkOptions::default().batch(7), |_| {
            if let Some((key, text)) = between.next() {
                db.insert(&key, text.as_str()).unwrap();
            }
            true
        })
        .unwrap();
    assert_eq!(report.inserted, 350);
    assert_eq!(report.replaced, 205);
    assert_eq!(db.len().unwrap(), 150);
    // Each key holds its last text: a query by that text meets it whole.
    let holds = |key: &str, text: &str| {
        let hits = db.query(text).threshold(1.0).run().unwrap().hits;
        hits.iter().any(|h| h.key == key)
    };
    for i in 0..100 {
        assert!(holds(&format!("k{i}"), &text(200 + i, 2)), "k{i}");
    }
    for i in 0..50 {
        assert!(holds(&format!("fresh{i}"), &text(i, 9)), "fresh{i}");
    }
    assert!(db.check().unwrap().is_clean());
}
