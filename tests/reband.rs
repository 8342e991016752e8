//! Re-banding rebuilds the LSH buckets for a new threshold (tuned or with
//! explicit bands and rows) without losing any document: each is still
//! found by its key and by its own text, the settings say what was chosen,
//! the integrity check is clean, and the new settings survive reopening.

mod common;

use lshdb::sketch::lsh::{tune, TuneGoal};
use lshdb::{Config, Database, Error};
use std::path::Path;

const FAMILIES: usize = 15;
const MEMBERS: usize = 4;

fn assert_all_findable(db: &mut Database, corpus: &[Vec<String>], label: &str) {
    let settings = db.settings().clone();
    assert_eq!(db.len().unwrap(), (FAMILIES * MEMBERS) as u64);
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            let key = common::key(f, m);
            let result = db.query(text).run().unwrap();
            assert_eq!(
                result.explain.posting_sizes.len(),
                settings.bands,
                "{label}"
            );
            assert_eq!(result.hits[0].key, key, "{label}: own text of {key}");
            assert_eq!(result.hits[0].similarity, 1.0, "{label}");
            assert!(
                result
                    .hits
                    .iter()
                    .all(|h| common::family_of(&h.key) == f && h.similarity >= settings.threshold),
                "{label}: {:?}",
                result.hits
            );
            // By key: the stored signature lands in the same buckets as the
            // text's, so the answer is the text's without the document.
            let by_key = db.query_key(&key).threshold(0.3).run().unwrap().hits;
            let by_text = db.query(text).threshold(0.3).run().unwrap().hits;
            assert_eq!(by_key, by_text[1..], "{label}: {key}");
            if settings.threshold <= 0.5 {
                // Banded for 0.5, every sibling is a candidate.
                assert!(!by_key.is_empty(), "{label}: no sibling of {key}");
            }
        }
    }
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{label}: {:?}", report.problems);
    assert_eq!(report.documents, (FAMILIES * MEMBERS) as u64);
    assert_eq!(
        report.postings,
        (FAMILIES * MEMBERS * settings.bands) as u64,
        "{label}"
    );
}

fn reopen(db: Database, path: &Path) -> Database {
    let settings = db.settings().clone();
    drop(db);
    let db = Database::open(path).unwrap();
    assert_eq!(db.settings(), &settings);
    db
}

#[test]
fn reband_keeps_every_document_findable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reband.lshdb");
    let corpus = common::families(0x7eba, FAMILIES, MEMBERS, 30);
    let mut db = Database::create(&path, Config::jaccard(0.7).simhash(2)).unwrap();
    let original = db.settings().clone();
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            db.insert(&common::key(f, m), text).unwrap();
        }
    }
    // SimHash postings are kept by re-banding: count the bucket postings
    // only once the simhash blocks are accounted for.
    let blocks = original.simhash_blocks.unwrap() as u64;
    let docs = (FAMILIES * MEMBERS) as u64;
    let fingerprints: Vec<_> = (0..FAMILIES)
        .map(|f| db.get(&common::key(f, 0)).unwrap().unwrap().simhash)
        .collect();

    for (threshold, explicit) in [(0.5, None), (0.9, None), (0.8, Some((16, 8)))] {
        let label = format!("reband({threshold}, {explicit:?})");
        db.reband(threshold, explicit).unwrap();
        let (bands, rows) = explicit.unwrap_or_else(|| {
            let tuned = tune(&TuneGoal::new(threshold, 128)).unwrap().banding;
            (tuned.bands(), tuned.rows())
        });
        let s = db.settings().clone();
        assert_eq!(
            (s.threshold, s.bands, s.rows),
            (threshold, bands, rows),
            "{label}"
        );
        assert_eq!(s.shingle, original.shingle);
        assert_eq!(s.minhash, original.minhash);
        assert_eq!(s.simhash_blocks, original.simhash_blocks);
        assert_eq!(s.store_text, original.store_text);
        // The default query threshold follows the index.
        let result = db.query(&corpus[0][0]).run().unwrap();
        assert!(result.hits.iter().all(|h| h.similarity >= threshold));
        assert_eq!(result.explain.posting_sizes.len(), bands);

        let report = db.check_pages().unwrap();
        assert!(report.is_clean(), "{label}: {:?}", report.problems);
        assert_eq!(
            report.postings + report.simhash_postings,
            docs * (bands as u64 + blocks),
            "{label}"
        );
        db = reopen(db, &path);
        assert_eq!(db.settings(), &s, "{label} after reopening");
        let report = db.check_pages().unwrap();
        assert!(report.is_clean(), "{label}: {:?}", report.problems);
        // Every document, by its text and by its key.
        for (f, family) in corpus.iter().enumerate() {
            for (m, text) in family.iter().enumerate() {
                let key = common::key(f, m);
                let hits = db.query(text).run().unwrap().hits;
                assert_eq!(
                    (hits[0].key.as_str(), hits[0].similarity),
                    (key.as_str(), 1.0),
                    "{label}"
                );
                let by_key = db.query_key(&key).run().unwrap().hits;
                assert_eq!(by_key, hits[1..], "{label}: {key}");
            }
        }
        // SimHash fingerprints are untouched.
        for (f, fp) in fingerprints.iter().enumerate() {
            assert_eq!(&db.get(&common::key(f, 0)).unwrap().unwrap().simhash, fp);
        }
        let (hits, _) = db.query(&corpus[0][0]).near_simhash(0).unwrap();
        assert!(hits
            .iter()
            .any(|h| h.key == common::key(0, 0) && h.distance == 0));
    }
    assert_eq!(db.settings().bands, 16);

    // Writes after re-banding use the new banding.
    db.insert("late", corpus[3][0].as_str()).unwrap();
    let hits = db.query_key("late").run().unwrap().hits;
    assert_eq!(hits[0].key, common::key(3, 0));
    assert_eq!(hits[0].similarity, 1.0);
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(
        report.postings + report.simhash_postings,
        (docs + 1) * (16 + blocks)
    );
}

#[test]
fn reband_of_a_plain_database_then_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.lshdb");
    let corpus = common::families(0x9a1, FAMILIES, MEMBERS, 30);
    let mut db = Database::create(&path, Config::jaccard(0.8)).unwrap();
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            db.insert(&common::key(f, m), text).unwrap();
        }
    }
    assert_all_findable(&mut db, &corpus, "before");
    db.reband(0.5, None).unwrap();
    assert_all_findable(&mut db, &corpus, "0.5");
    let mut db = reopen(db, &path);
    assert_eq!(db.settings().threshold, 0.5);
    assert_all_findable(&mut db, &corpus, "0.5 reopened");
    db.reband(0.8, Some((16, 8))).unwrap();
    let mut db = reopen(db, &path);
    assert_eq!((db.settings().bands, db.settings().rows), (16, 8));
    assert_all_findable(&mut db, &corpus, "16x8 reopened");
    // A rejected re-banding changes nothing.
    assert!(matches!(
        db.reband(0.8, Some((17, 8))),
        Err(Error::InvalidParameter { .. })
    ));
    assert_eq!((db.settings().bands, db.settings().rows), (16, 8));
    let mut db = reopen(db, &path);
    assert_eq!((db.settings().bands, db.settings().rows), (16, 8));
    assert_all_findable(&mut db, &corpus, "after refused reband");
}
