//! Containment search (`Query::containment`) against exact containment by
//! brute force: recall of the LSH Ensemble index, precision 1 (every hit
//! verified), the exhaustive scan, persistence, removals and
//! replacements, building and dropping the index, size-class edge cases,
//! misuse (the CLI's side: crates/lshdb-cli/tests/cli_containment.rs).

mod common;

use lshdb::hash::SplitMix64;
use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::measures::intersection_size;
use lshdb::{Config, ContainmentResult, Database, Error};
use std::collections::BTreeMap;

/// Words of the synthetic corpus.
fn vocabulary() -> Vec<String> {
    let mut rng = SplitMix64::new(7);
    (0..400)
        .map(|_| {
            let len = 2 + (rng.next_u64() % 7) as usize;
            (0..len)
                .map(|_| (b'a' + (rng.next_u64() % 26) as u8) as char)
                .collect()
        })
        .collect()
}

fn words(rng: &mut SplitMix64, vocab: &[String], n: usize) -> Vec<String> {
    (0..n)
        .map(|_| vocab[(rng.next_u64() % vocab.len() as u64) as usize].clone())
        .collect()
}

/// Documents of 1 to 600 words (some of them one short word, one shingle),
/// and documents that hold two others whole.
fn corpus() -> Vec<(String, String)> {
    let vocab = vocabulary();
    let mut rng = SplitMix64::new(11);
    let mut docs: Vec<(String, String)> = (0..300)
        .map(|i| {
            let n = match i % 10 {
                0 => 1,
                1..=3 => 5 + (rng.next_u64() % 30) as usize,
                4..=7 => 30 + (rng.next_u64() % 150) as usize,
                _ => 150 + (rng.next_u64() % 450) as usize,
            };
            (format!("doc{i:03}"), words(&mut rng, &vocab, n).join(" "))
        })
        .collect();
    for i in 0..40 {
        let (a, b) = (&docs[i * 3 + 1].1, &docs[i * 5 + 2].1);
        docs.push((format!("both{i:02}"), format!("{a} {b}")));
    }
    docs
}

/// Passages cut from documents (a fifth to all of one), two passages
/// side by side, and unrelated text.
fn queries(docs: &[(String, String)]) -> Vec<String> {
    let vocab = vocabulary();
    let mut rng = SplitMix64::new(13);
    let mut out = Vec::new();
    for i in 0..120 {
        let text = &docs[(rng.next_u64() % docs.len() as u64) as usize].1;
        let w: Vec<&str> = text.split(' ').collect();
        let len = (w.len() * (20 + (rng.next_u64() % 81) as usize) / 100).max(1);
        let start = (rng.next_u64() % (w.len() - len + 1) as u64) as usize;
        let passage = w[start..start + len].join(" ");
        out.push(match i % 6 {
            0 => {
                let other = &docs[(rng.next_u64() % docs.len() as u64) as usize].1;
                format!("{passage} {other}")
            }
            1 => words(&mut rng, &vocab, 40).join(" "),
            _ => passage,
        });
    }
    out
}

/// Exact containment of `query` in every stored document at or above `t`.
fn truth(sets: &BTreeMap<String, Vec<u32>>, query: &[u32], t: f64) -> BTreeMap<String, (f64, f64)> {
    sets.iter()
        .filter_map(|(key, set)| {
            let common = intersection_size(query, set);
            let c = common as f64 / query.len() as f64;
            let j = common as f64 / (query.len() + set.len() - common) as f64;
            (c >= t).then(|| (key.clone(), (c, j)))
        })
        .collect()
}

fn stored_sets(db: &Database) -> BTreeMap<String, Vec<u32>> {
    let mut sets = BTreeMap::new();
    db.for_each(|doc| {
        sets.insert(doc.key, doc.shingles);
        true
    })
    .unwrap();
    sets
}

fn load(db: &Database, docs: &[(String, String)]) {
    let report = db
        .insert_bulk(
            docs.iter().map(|(k, t)| (k.as_str(), t.as_str())),
            &lshdb::BulkOptions::default().batch(100),
            |_| true,
        )
        .unwrap();
    assert_eq!(report.inserted as usize, docs.len());
}

fn found(result: &ContainmentResult) -> BTreeMap<String, (f64, f64)> {
    result
        .hits
        .iter()
        .map(|h| (h.key.clone(), (h.containment, h.jaccard)))
        .collect()
}

/// Checks every hit against the truth (precision 1, exact values, ranking)
/// and returns (true hits found, true hits).
fn compare(result: &ContainmentResult, expected: &BTreeMap<String, (f64, f64)>) -> (usize, usize) {
    let got = found(result);
    for (key, value) in &got {
        assert_eq!(
            expected.get(key),
            Some(value),
            "hit {key} is not a true hit"
        );
    }
    let ranked: Vec<f64> = result.hits.iter().map(|h| h.containment).collect();
    assert!(ranked.windows(2).all(|w| w[0] >= w[1]), "{ranked:?}");
    (got.len(), expected.len())
}

#[test]
fn recall_and_precision_against_exact_containment() {
    let (_dir, db) = common::new_db("c.lshdb", Config::jaccard(0.8).containment(true));
    let docs = corpus();
    load(&db, &docs);
    let sets = stored_sets(&db);
    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    for t in [0.5, 0.7, 0.9, 1.0] {
        let (mut hit, mut all) = (0, 0);
        let (mut lsh_hit, mut lsh_all) = (0, 0);
        for query in queries(&docs) {
            let set = shingler.set(&query);
            let expected = truth(&sets, set.as_slice(), t);
            let result = db.query(&query).containment(t).run().unwrap();
            assert!(!result.explain.scanned);
            assert!(result.explain.recall_estimate > 0.0);
            let (h, a) = compare(&result, &expected);
            hit += h;
            all += a;
            // The index alone, never reading a class whole, for queries of
            // 50 shingles or more (a word or two inside a long document is
            // beyond 32 MinHash values: Jaccard 0.001).
            let lsh = db
                .query(&query)
                .containment(t)
                .class_scan_cap(0)
                .run()
                .unwrap();
            assert!(lsh.explain.classes.iter().all(|c| !c.whole));
            let (h, a) = compare(&lsh, &expected);
            if set.len() >= 50 {
                lsh_hit += h;
                lsh_all += a;
            }
            // The exhaustive scan is exact.
            let scan = db
                .query(&query)
                .containment(t)
                .exhaustive(true)
                .run()
                .unwrap();
            assert!(scan.explain.scanned);
            assert_eq!(found(&scan), expected);
        }
        let recall = hit as f64 / all as f64;
        let lsh_recall = lsh_hit as f64 / lsh_all as f64;
        println!(
            "t = {t}: recall {recall:.4} ({hit} of {all}); index alone {lsh_recall:.4} \
             ({lsh_hit} of {lsh_all})"
        );
        assert!(all > 100, "too few true hits at t = {t}: {all}");
        assert!(recall >= 0.98, "recall {recall} at t = {t}");
        assert!(
            lsh_recall >= 0.35,
            "index-only recall {lsh_recall} at t = {t}"
        );
    }
}

#[test]
fn persists_and_never_returns_removed_or_replaced_documents() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.lshdb");
    let docs = corpus();
    let passage = docs[250].1.clone();
    {
        let db = Database::create(&path, Config::jaccard(0.8).containment(true)).unwrap();
        load(&db, &docs);
        let keys = found(&db.query(&passage).containment(0.9).run().unwrap());
        assert!(keys.contains_key("doc250"), "{keys:?}");
        db.remove("doc250").unwrap();
        db.insert("doc251", "entirely new text for this key")
            .unwrap();
        let mut batch = db.batch().unwrap();
        batch
            .insert("late", &format!("a prefix {passage} a suffix"))
            .unwrap();
        batch.commit().unwrap();
    }
    let db = Database::open(&path).unwrap();
    assert!(db.has_containment_index());
    let sets = stored_sets(&db);
    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    let result = db.query(&passage).containment(0.9).run().unwrap();
    let keys = found(&result);
    assert!(!keys.contains_key("doc250"));
    assert!(keys.contains_key("late"), "{keys:?}");
    let expected = truth(&sets, shingler.set(&passage).as_slice(), 0.9);
    assert_eq!(compare(&result, &expected).0, expected.len());
    // The old text of a replaced document is not found.
    let old = &docs[251].1;
    let keys = found(&db.query(old).containment(0.9).run().unwrap());
    assert!(!keys.contains_key("doc251"), "{keys:?}");
    let report = db.check().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    let stats = db.stats().unwrap();
    assert_eq!(stats.containment_postings, stats.documents * 32);
    assert_eq!(report.containment_postings, stats.containment_postings);
}

#[test]
fn building_and_dropping_the_index_of_an_existing_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.lshdb");
    let docs = corpus();
    let mut db = Database::create(&path, Config::jaccard(0.8)).unwrap();
    load(&db, &docs);
    assert!(!db.has_containment_index());
    let query = docs[120].1.clone();
    let scan = db.query(&query).containment(0.8).run().unwrap();
    assert!(scan.explain.scanned);
    assert_eq!(scan.explain.warnings[0], lshdb::Warning::NoContainmentIndex);
    let words = scan.explain.warnings[0].to_string();
    assert!(words.contains("no containment index"), "{words}");
    assert!(
        !words.contains("--") && !words.contains("lshdb "),
        "{words}"
    );
    db.build_containment_index().unwrap();
    assert!(db.check().unwrap().is_clean());
    let indexed = db.query(&query).containment(0.8).run().unwrap();
    assert!(!indexed.explain.scanned);
    assert_eq!(found(&indexed), found(&scan));
    // Writes after the build maintain it; a reopen keeps it.
    db.insert("copy", &query).unwrap();
    drop(db);
    let mut db = Database::open(&path).unwrap();
    assert!(found(&db.query(&query).containment(0.8).run().unwrap()).contains_key("copy"));
    assert!(db.check().unwrap().is_clean());
    db.drop_containment_index().unwrap();
    drop(db);
    let db = Database::open(&path).unwrap();
    assert!(!db.has_containment_index());
    let again = db.query(&query).containment(0.8).run().unwrap();
    assert!(again.explain.scanned);
    assert!(found(&again).contains_key("copy"));
    assert!(db.check().unwrap().is_clean());
}

#[test]
fn thousands_of_copies_are_all_found_past_the_probe_cap() {
    // Copies share every prefix, so each tree's probe holds the same ids:
    // the cap counts new candidates, and the trees together read them all
    // (PyPI's one-line summaries repeat by the thousand).
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(
        dir.path().join("c.lshdb"),
        Config::jaccard(0.8).containment(true),
    )
    .unwrap();
    let text = "A small python package for parsing things";
    let copies: Vec<(String, &str)> = (0..2500).map(|i| (format!("copy{i:04}"), text)).collect();
    db.insert_bulk(copies, &lshdb::BulkOptions::default(), |_| true)
        .unwrap();
    let result = db.query(text).containment(0.8).run().unwrap();
    assert_eq!(result.hits.len(), 2500);
    assert!(
        result.explain.warnings.is_empty(),
        "{:?}",
        result.explain.warnings
    );
    // A cap below one tree's worth still cuts, and says so.
    let cut = db
        .query(text)
        .containment(0.8)
        .max_bucket(10)
        .run()
        .unwrap();
    assert!(cut.hits.len() < 2500);
    assert!(matches!(
        cut.explain.warnings[..],
        [lshdb::Warning::ProbesTruncated { max_bucket: 10, .. }]
    ));
}

#[test]
fn size_class_edge_cases() {
    let (_dir, db) = common::new_db("e.lshdb", Config::jaccard(0.8).containment(true));
    db.insert("tiny", "abc").unwrap(); // one shingle: its whole text
    db.insert("word", "zebra").unwrap();
    let long = corpus()[9].1.clone();
    db.insert("long", &long).unwrap();
    // A tiny query is contained in the tiny document only.
    let hits = db.query("abc").containment(1.0).run().unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].key.as_str(), hits[0].containment), ("tiny", 1.0));
    // A query larger than every document: at most a part of it is contained.
    let larger = format!("{long} and then a great deal more text that no document holds");
    assert!(db
        .query(&larger)
        .containment(1.0)
        .run()
        .unwrap()
        .hits
        .is_empty());
    let part = db.query(&larger).containment(0.5).run().unwrap().hits;
    assert_eq!(part[0].key, "long");
    assert!(part[0].containment < 1.0 && part[0].containment > 0.5);
    // The stored key as the query leaves itself out.
    assert!(db
        .query_key("long")
        .containment(0.5)
        .run()
        .unwrap()
        .hits
        .is_empty());
    // Empty and whitespace-only queries.
    for empty in ["", "   "] {
        assert!(matches!(
            db.query(empty).containment(0.5).run(),
            Err(Error::EmptyDocument { .. })
        ));
    }
    // Item sets work as text does.
    db.insert_items("basket", &["milk", "bread", "eggs", "tea"])
        .unwrap();
    let hits = db
        .query_items(&["milk", "tea"])
        .containment(1.0)
        .run()
        .unwrap()
        .hits;
    assert_eq!(hits[0].key, "basket");
    assert_eq!(hits[0].jaccard, 0.5);
}

#[test]
fn misuse_gives_typed_errors() {
    let (dir, db) = common::new_db("m.lshdb", Config::jaccard(0.8).containment(true));
    db.insert("a", "some text to look for").unwrap();
    for t in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                db.query("some text").containment(t).run(),
                Err(Error::InvalidParameter {
                    name: "containment",
                    ..
                })
            ),
            "{t}"
        );
    }
    assert!(matches!(
        db.query_key("missing").containment(0.5).run(),
        Err(Error::NotFound(_))
    ));
    // Read-only handles query; they cannot build the index.
    let path = dir.path().join("m.lshdb");
    drop(db);
    let mut reader = Database::builder().read_only(true).open(&path).unwrap();
    assert_eq!(
        reader
            .query("some text to look")
            .containment(0.9)
            .run()
            .unwrap()
            .hits[0]
            .key,
        "a"
    );
    assert!(matches!(
        reader.build_containment_index(),
        Err(Error::ReadOnly { .. })
    ));
}

#[test]
fn settings_without_the_index_keep_their_old_encoding() {
    use lshdb::store::meta::{decode_settings, encode_settings};
    let plain = Config::jaccard(0.8).resolve().unwrap();
    let with = Config::jaccard(0.8).containment(true).resolve().unwrap();
    let (a, b) = (
        encode_settings(&plain).unwrap(),
        encode_settings(&with).unwrap(),
    );
    // The index's shape follows the old record: trees, depth, classes per
    // octave as postcard varints.
    assert_eq!(&b[5..a.len()], &a[5..]);
    assert_eq!(&b[a.len()..], &[32, 4, 2]);
    assert_eq!(decode_settings(&a).unwrap(), plain);
    assert_eq!(decode_settings(&b).unwrap(), with);
    assert!(plain.containment.is_none() && with.containment.is_some());
}
