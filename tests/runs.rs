//! Posting runs (format 2): bulk loads write runs, single writes flush into
//! runs, runs merge like a counter in base 4, removed documents' postings are
//! never returned and are dropped by merges — and every answer stays the
//! one an exhaustive search gives.

mod common;

use lshdb::shingle::Shingler;
use lshdb::sketch::measures::jaccard;
use lshdb::{BulkOptions, Config, Database};
use redb::ReadableDatabase;
use std::collections::BTreeMap;

/// Families of near-duplicates: family f, member m.
fn text(f: usize, m: usize) -> String {
    format!(
        "family {f} shares this long sentence about posting runs and merges, with words \
         alpha beta gamma delta epsilon zeta {f} eta theta; member {m} differs here {}",
        "x".repeat(m % 3)
    )
}

fn corpus(families: usize, members: usize) -> Vec<(String, String)> {
    (0..families)
        .flat_map(|f| (0..members).map(move |m| (format!("f{f}-m{m}"), text(f, m))))
        .collect()
}

/// Every stored key with similarity ≥ t to `query`, exhaustively.
fn brute(docs: &BTreeMap<String, String>, query: &str, t: f64) -> Vec<String> {
    let shingler = Shingler::new(Default::default()).unwrap();
    let q = shingler.set(query);
    let mut keys: Vec<String> = docs
        .iter()
        .filter(|(_, text)| jaccard(q.as_slice(), shingler.set(text).as_slice()) >= t)
        .map(|(k, _)| k.clone())
        .collect();
    keys.sort();
    keys
}

fn hits(db: &Database, query: &str, t: f64) -> Vec<String> {
    common::found_keys(db, query, Some(t))
}

#[test]
fn bulk_loads_write_runs_that_merge_and_answer_exactly() {
    let (_dir, path, db) = common::new_db_at("runs.lshdb", Config::jaccard(0.5).bands(32, 4));
    let docs = corpus(60, 5);
    // Small commits: many runs, many merges.
    let report = db
        .insert_bulk(
            docs.iter().map(|(k, t)| (k.clone(), t.clone())),
            &BulkOptions::default().batch(7),
            |_| true,
        )
        .unwrap();
    assert_eq!(report.inserted, 300);
    let stats = db.stats_deep().unwrap();
    assert_eq!(stats.fresh_postings, 0, "bulk loads write runs only");
    assert_eq!(stats.deep.as_ref().unwrap().postings, 300 * 32);
    // A counter in base 4 of 43 commits (223 in base 4, plus odd sizes):
    // at most three runs per level.
    assert!(
        stats.runs >= 1 && stats.runs <= 7,
        "{} runs after 43 commits",
        stats.runs
    );
    let mut model: BTreeMap<String, String> = docs.into_iter().collect();
    for f in [0, 17, 59] {
        assert_eq!(hits(&db, &text(f, 1), 0.5), brute(&model, &text(f, 1), 0.5));
    }

    // Replace and remove: the old ids' postings stay in runs until a merge,
    // and are never returned.
    for m in 0..5 {
        db.remove(&format!("f17-m{m}")).unwrap();
        model.remove(&format!("f17-m{m}"));
    }
    db.insert(
        "f0-m0",
        "a completely different text about something else entirely",
    )
    .unwrap();
    model.insert(
        "f0-m0".into(),
        "a completely different text about something else entirely".into(),
    );
    let found = hits(&db, &text(17, 1), 0.5);
    assert!(found.iter().all(|k| !k.starts_with("f17-")), "{found:?}");
    assert_eq!(found, brute(&model, &text(17, 1), 0.5));
    assert_eq!(hits(&db, &text(0, 1), 0.5), brute(&model, &text(0, 1), 0.5));
    assert!(db.check().unwrap().is_clean());

    // Reopened, read-only: the same answers.
    drop(db);
    let reader = Database::builder().read_only(true).open(&path).unwrap();
    assert_eq!(
        hits(&reader, &text(0, 1), 0.5),
        brute(&model, &text(0, 1), 0.5)
    );
    assert_eq!(reader.pairs(0.5, |_| true).unwrap(), {
        // Pairs within families that are left: 59 families × C(5,2) − f0's
        // replaced member's 4 pairs, if its text matches no other.
        let mut n = 0;
        let shingler = Shingler::new(Default::default()).unwrap();
        let all: Vec<_> = model.values().map(|t| shingler.set(t)).collect();
        for i in 0..all.len() {
            for j in i + 1..all.len() {
                if jaccard(all[i].as_slice(), all[j].as_slice()) >= 0.5 {
                    n += 1;
                }
            }
        }
        n
    });
    drop(reader);

    // compact merges every run, dropping the dead postings.
    let mut db = Database::open(&path).unwrap();
    db.compact().unwrap();
    let stats = db.stats_deep().unwrap();
    let postings = stats.deep.as_ref().unwrap().postings;
    assert_eq!(stats.runs, 1);
    assert_eq!(
        stats.run_postings,
        postings + stats.documents,
        "no dead postings left (band postings and one key posting per document)"
    );
    assert_eq!(postings, (model.len() * 32) as u64);
    assert!(db.check_pages().unwrap().is_clean());
    assert_eq!(hits(&db, &text(0, 1), 0.5), brute(&model, &text(0, 1), 0.5));
}

#[test]
fn fresh_postings_of_single_writes_become_a_run() {
    let (_dir, db) = common::new_db("f.lshdb", Config::jaccard(0.8));
    let bands = db.settings().bands;
    // Enough single inserts (in one commit) to pass the fresh limit.
    let n = 70_000 / bands + 10;
    let mut batch = db.batch().unwrap();
    for i in 0..n {
        batch
            .insert(&format!("d{i}"), text(i, i % 5).as_str())
            .unwrap();
    }
    batch.commit().unwrap();
    let stats = db.stats_deep().unwrap();
    // Flushed when the fresh postings passed the limit; the rest stay fresh.
    assert_eq!(stats.runs, 1);
    // Band postings and one key posting per document.
    assert_eq!(
        stats.run_postings + stats.fresh_postings,
        (n * (bands + 1)) as u64
    );
    assert!(stats.fresh_postings < stats.run_postings);
    assert_eq!(stats.deep.as_ref().unwrap().postings, (n * bands) as u64);
    // More single writes go to the fresh table beside the run.
    db.insert("late", text(3, 1).as_str()).unwrap();
    assert_eq!(
        db.stats().unwrap().fresh_postings,
        stats.fresh_postings + bands as u64 + 1
    );
    let found = hits(&db, &text(3, 1), 0.8);
    assert!(found.contains(&"late".to_owned()) && found.contains(&"d3".to_owned()));
    assert!(db.check().unwrap().is_clean());
}

/// A bucket larger than a block (240 postings) spans blocks: look-ups read
/// all of it, or its lowest ids up to the cap, and say it was cut.
#[test]
fn buckets_spanning_blocks_are_read_whole_or_to_the_cap() {
    let (_dir, db) = common::new_db("big.lshdb", Config::jaccard(0.8));
    let same = text(1, 1);
    let docs: Vec<(String, String)> = (0..600)
        .map(|i| (format!("copy{i:04}"), same.clone()))
        .chain((0..50).map(|i| {
            let other = format!("unrelated note {i}: {} and nothing else", i * 7919);
            (format!("other{i}"), other)
        }))
        .collect();
    db.insert_bulk(docs, &BulkOptions::default(), |_| true)
        .unwrap();
    let all = db.query(&same).max_bucket(10_000).run().unwrap();
    assert_eq!(all.hits.len(), 600);
    assert!(all.explain.truncated_buckets.is_empty());
    let capped = db.query(&same).max_bucket(100).run().unwrap();
    assert_eq!(capped.hits.len(), 100);
    assert!(!capped.explain.truncated_buckets.is_empty());
    // The lowest ids: the first 100 copies stored.
    let mut keys: Vec<String> = capped.hits.into_iter().map(|h| h.key).collect();
    keys.sort();
    assert_eq!(keys.first().map(String::as_str), Some("copy0000"));
    assert_eq!(keys.last().map(String::as_str), Some("copy0099"));
    assert!(db.check().unwrap().is_clean());
}

/// Runs of odd sizes (short last commits, flushes) must not stop merges:
/// the run count stays logarithmic whatever the commit sizes.
#[test]
fn odd_sized_runs_do_not_pile_up() {
    let (_dir, db) = common::new_db("odd.lshdb", Config::jaccard(0.8));
    let docs = corpus(400, 1);
    let mut next = docs.iter().cloned();
    // Loads of 11 documents in commits of 4: each ends with a short run.
    for _ in 0..36 {
        let chunk: Vec<(String, String)> = next.by_ref().take(11).collect();
        db.insert_bulk(chunk, &BulkOptions::default().batch(4), |_| true)
            .unwrap();
    }
    let stats = db.stats().unwrap();
    assert_eq!(stats.documents, 396);
    // 396 documents × 16 bands in runs of levels from 3 (4 × 16 postings)
    // to 6: at most three runs per level.
    assert!(stats.runs <= 8, "{} runs", stats.runs);
    assert!(db.check().unwrap().is_clean());
}

/// Opens the file behind lshdb's back (the database must be closed).
fn raw(path: &std::path::Path) -> redb::Database {
    redb::Database::open(path).unwrap()
}

#[test]
fn runs_written_before_filters_are_read_and_filtered_once_merged() {
    use lshdb::store::runs::{RUN_FILTERS, RUN_FILTER_LINES};
    use redb::ReadableTableMetadata;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.lshdb");
    let docs = corpus(40, 5);
    let model: BTreeMap<String, String> = docs.iter().cloned().collect();
    {
        let db = Database::create(&path, Config::jaccard(0.5).bands(32, 4)).unwrap();
        db.insert_bulk(docs.clone(), &BulkOptions::default().batch(9), |_| true)
            .unwrap();
        assert!(db.stats().unwrap().runs >= 2);
    }
    // A format-2 file of before run filters: no filter tables at all.
    {
        let file = raw(&path);
        let txn = file.begin_write().unwrap();
        assert!(txn.open_table(RUN_FILTER_LINES).unwrap().len().unwrap() >= 2);
        txn.delete_table(RUN_FILTERS).unwrap();
        txn.delete_table(RUN_FILTER_LINES).unwrap();
        txn.commit().unwrap();
    }
    let reader = Database::builder().read_only(true).open(&path).unwrap();
    for f in [0, 21, 39] {
        assert_eq!(
            hits(&reader, &text(f, 2), 0.5),
            brute(&model, &text(f, 2), 0.5)
        );
    }
    assert!(reader.check().unwrap().is_clean());
    drop(reader);
    // A compaction merges the old runs into one run with a filter.
    let mut db = Database::open(&path).unwrap();
    db.compact().unwrap();
    assert_eq!(db.stats().unwrap().runs, 1);
    for f in [0, 21, 39] {
        assert_eq!(hits(&db, &text(f, 2), 0.5), brute(&model, &text(f, 2), 0.5));
    }
    assert!(db.check().unwrap().is_clean());
    drop(db);
    let file = raw(&path);
    let txn = file.begin_read().unwrap();
    assert_eq!(txn.open_table(RUN_FILTER_LINES).unwrap().len().unwrap(), 1);
}

#[test]
fn a_damaged_run_filter_is_found_by_check_and_never_panics() {
    use lshdb::store::runs::RUN_FILTERS;
    use redb::ReadableTable;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.lshdb");
    let docs = corpus(30, 4);
    {
        let db = Database::create(&path, Config::jaccard(0.5).bands(32, 4)).unwrap();
        db.insert_bulk(docs.clone(), &BulkOptions::default(), |_| true)
            .unwrap();
    }
    // Clear every bit of one row, keeping its frame valid: the postings
    // it covered are no longer found, which check must report.
    let (key, len) = {
        let file = raw(&path);
        let txn = file.begin_read().unwrap();
        let table = txn.open_table(RUN_FILTERS).unwrap();
        let (k, v) = table.iter().unwrap().next().unwrap().unwrap();
        (k.value(), v.value().len())
    };
    let cleared = {
        // The frame: tag 6, CRC32 of tag and payload (LE), payload.
        let payload = vec![0u8; len - 5];
        let mut crc = crc32fast::Hasher::new();
        crc.update(&[6]);
        crc.update(&payload);
        let mut bytes = vec![6];
        bytes.extend_from_slice(&crc.finalize().to_le_bytes());
        bytes.extend_from_slice(&payload);
        bytes
    };
    let rewrite = |bytes: &[u8]| {
        let file = raw(&path);
        let txn = file.begin_write().unwrap();
        txn.open_table(RUN_FILTERS)
            .unwrap()
            .insert(key, bytes)
            .unwrap();
        txn.commit().unwrap();
    };
    rewrite(&cleared);
    let db = Database::builder().read_only(true).open(&path).unwrap();
    let report = db.check().unwrap();
    assert!(!report.is_clean());
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("missing from its bucket")),
        "{:?}",
        report.problems
    );
    drop(db);
    // Garbage in a row: a typed error naming the filter, not a panic.
    let mut garbage = cleared.clone();
    garbage[10] ^= 0xff;
    rewrite(&garbage);
    let db = Database::builder().read_only(true).open(&path).unwrap();
    let failures: Vec<String> = docs
        .iter()
        .filter_map(|(_, t)| db.query(t).threshold(0.5).run().err())
        .map(|e| e.to_string())
        .collect();
    assert!(!failures.is_empty(), "no query read the damaged row");
    assert!(
        failures.iter().all(|e| e.contains("filter record")),
        "{failures:?}"
    );
}
