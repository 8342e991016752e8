//! Top-k over the prefix forest (the containment index): the k nearest
//! neighbours at whatever similarity they lie, against a brute-force scan
//! of the stored sets, with the recall estimate and the warning on files
//! without the forest.

use lshdb::hash::SplitMix64;
use lshdb::sketch::measures::jaccard;
use lshdb::{BulkOptions, Config, Database, Warning};
use std::collections::HashMap;

/// 1,200 texts of 15 to 40 words from 300 words, a third of them variants
/// of an earlier text with a fifth to four fifths of the words replaced:
/// most documents' ten nearest neighbours lie between 0.05 and 0.6.
fn corpus() -> Vec<(String, String)> {
    let mut rng = SplitMix64::new(22);
    let vocab: Vec<String> = (0..300)
        .map(|_| {
            let len = 3 + (rng.next_u64() % 6) as usize;
            (0..len)
                .map(|_| (b'a' + (rng.next_u64() % 26) as u8) as char)
                .collect()
        })
        .collect();
    let mut texts: Vec<Vec<String>> = Vec::new();
    for i in 0..1200 {
        let pick = |rng: &mut SplitMix64| vocab[(rng.next_u64() % 300) as usize].clone();
        let text = if i % 3 == 2 {
            let mut base = texts[(rng.next_u64() % i as u64) as usize].clone();
            let share = 20 + rng.next_u64() % 61; // percent of words replaced
            for word in base.iter_mut() {
                if rng.next_u64() % 100 < share {
                    *word = pick(&mut rng);
                }
            }
            base
        } else {
            let n = 15 + (rng.next_u64() % 26) as usize;
            (0..n).map(|_| pick(&mut rng)).collect()
        };
        texts.push(text);
    }
    texts
        .into_iter()
        .enumerate()
        .map(|(i, words)| (format!("d{i:04}"), words.join(" ")))
        .collect()
}

fn load(dir: &tempfile::TempDir, name: &str, config: Config) -> Database {
    let db = Database::create(dir.path().join(name), config).unwrap();
    db.insert_bulk(corpus(), &BulkOptions::default(), |_| true)
        .unwrap();
    db
}

/// Top-k recall of `db` over every 25th document queried by key: hits
/// at least as similar as the exact k-th best, over min(k, neighbours).
/// Checks every hit's similarity and order on the way.
fn recall(db: &Database, k: usize) -> f64 {
    let mut sets = HashMap::new();
    db.for_each(|doc| {
        sets.insert(doc.key, doc.shingles);
        true
    })
    .unwrap();
    let (mut found, mut wanted) = (0, 0);
    let mut keys: Vec<&String> = sets.keys().collect();
    keys.sort();
    for key in keys.into_iter().step_by(25) {
        let query = &sets[key];
        let mut exact: Vec<(&String, f64)> = sets
            .iter()
            .filter(|(other, _)| *other != key)
            .map(|(other, set)| (other, jaccard(query, set)))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let want = k.min(exact.len());
        let kth = exact[want - 1].1;
        let result = db.query_key(key).top(k).run().unwrap();
        assert!(result.hits.len() <= k);
        assert!(result
            .hits
            .windows(2)
            .all(|w| w[0].similarity >= w[1].similarity));
        for hit in &result.hits {
            assert_eq!(
                hit.similarity,
                jaccard(query, &sets[&hit.key]),
                "{}",
                hit.key
            );
        }
        found += result
            .hits
            .iter()
            .filter(|h| h.similarity >= kth)
            .count()
            .min(want);
        wanted += want;
    }
    found as f64 / wanted as f64
}

#[test]
fn the_forest_finds_the_nearest_neighbours_the_bands_miss() {
    let dir = tempfile::tempdir().unwrap();
    let forest = load(&dir, "forest.lshdb", Config::jaccard(0.8).containment(true));
    let bands = load(&dir, "bands.lshdb", Config::jaccard(0.8));
    let (with, without) = (recall(&forest, 10), recall(&bands, 10));
    assert!(with >= 0.95, "forest recall {with}");
    assert!(without < 0.6, "bands recall {without}");
}

#[test]
fn the_forest_reports_its_recall_estimate_and_the_bands_warn() {
    let dir = tempfile::tempdir().unwrap();
    let forest = load(&dir, "forest.lshdb", Config::jaccard(0.8).containment(true));
    let result = forest.query_key("d0100").top(10).run().unwrap();
    assert_eq!(result.hits.len(), 10);
    let estimate = result.explain.recall_estimate.unwrap();
    assert!(estimate > 0.9 && estimate <= 1.0, "{estimate}");
    assert!(
        result.explain.warnings.is_empty(),
        "{:?}",
        result.explain.warnings
    );
    assert!(result.explain.verified >= result.hits.len());
    assert!(result.explain.forest);
    // A limit below k cuts the same ranking.
    let two = forest.query_key("d0100").top(10).limit(2).run().unwrap();
    assert_eq!(two.hits, result.hits[..2]);

    let bands = load(&dir, "bands.lshdb", Config::jaccard(0.8));
    let result = bands.query_key("d0100").top(10).run().unwrap();
    assert!(!result.explain.forest);
    let Some(Warning::TopWithoutForest {
        recall_estimate,
        bands,
        rows,
        ..
    }) = result.explain.warnings.first()
    else {
        panic!("no warning: {:?}", result.explain.warnings);
    };
    assert!(*recall_estimate < 0.9);
    assert_eq!((*bands, *rows), (16, 8));
}

#[test]
fn an_empty_forest_and_a_key_alone_find_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(
        dir.path().join("e.lshdb"),
        Config::jaccard(0.8).containment(true),
    )
    .unwrap();
    let result = db.query("nothing stored yet").top(5).run().unwrap();
    assert!(result.hits.is_empty());
    assert_eq!(result.explain.recall_estimate, None);
    db.insert("only", "a single document").unwrap();
    let result = db.query_key("only").top(5).run().unwrap();
    assert!(result.hits.is_empty(), "{:?}", result.hits);
}
