//! The query types users ask for: top-k (the k most similar, verified,
//! whatever their similarity) against a brute-force scan, and exact
//! duplicates at threshold 1 served by one band.

mod common;

use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::lsh::candidate_probability;
use lshdb::sketch::measures::jaccard;
use lshdb::{Config, Database};

/// A database of word families (variants of a base text with 1 to 3 words
/// changed) and the texts in insertion order.
fn family_db(dir: &tempfile::TempDir, index_threshold: f64) -> (Database, Vec<(String, String)>) {
    let db =
        Database::create(dir.path().join("q.lshdb"), Config::jaccard(index_threshold)).unwrap();
    let mut docs = Vec::new();
    for (f, family) in common::families(0x70b, 12, 6, 40).into_iter().enumerate() {
        for (m, text) in family.into_iter().enumerate() {
            docs.push((common::key(f, m), text));
        }
    }
    for (key, text) in &docs {
        db.insert(key, text.as_str()).unwrap();
    }
    (db, docs)
}

/// Every stored document ranked by exact similarity to `text`, best first
/// (ties in insertion order, as the planner breaks them by id).
fn brute_force(docs: &[(String, String)], text: &str) -> Vec<(String, f64)> {
    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    let query = shingler.set(text);
    let mut ranked: Vec<(String, f64)> = docs
        .iter()
        .map(|(k, t)| {
            (
                k.clone(),
                jaccard(query.as_slice(), shingler.set(t).as_slice()),
            )
        })
        .filter(|(_, s)| *s > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked
}

#[test]
fn top_k_matches_a_brute_force_scan_where_the_banding_sees_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let (db, docs) = family_db(&dir, 0.5);
    let (bands, rows) = (db.settings().bands, db.settings().rows);
    let mut compared = 0;
    for (i, (_, text)) in docs.iter().enumerate().step_by(5) {
        // A changed query, so that similarities spread below 1.
        let query = format!("{text} extra words {i}");
        let k = 6;
        let result = db.query(&query).top(k).run().unwrap();
        let truth = brute_force(&docs, &query);
        // Every hit carries its exact similarity, best first.
        for hit in &result.hits {
            let exact = truth.iter().find(|(key, _)| *key == hit.key).unwrap().1;
            assert_eq!(hit.similarity, exact, "{}", hit.key);
        }
        assert!(result
            .hits
            .windows(2)
            .all(|w| w[0].similarity >= w[1].similarity));
        assert!(result.hits.len() <= k);
        // Documents well above the index threshold are all found: the
        // top-k agrees with brute force down to similarity 0.6.
        let expected: Vec<&String> = truth
            .iter()
            .take(k)
            .filter(|(_, s)| *s >= 0.6)
            .map(|(k, _)| k)
            .collect();
        let got: Vec<&String> = result
            .hits
            .iter()
            .take(expected.len())
            .map(|h| &h.key)
            .collect();
        assert_eq!(got, expected, "query {i}");
        compared += expected.len();
        // Top-k ignores the threshold: hits below the index threshold come
        // back too, and the recall estimate is P(candidate) at the k-th
        // similarity.
        let last = result.hits.last().unwrap().similarity;
        let recall = result.explain.recall_estimate.unwrap();
        assert!((recall - candidate_probability(last, bands, rows)).abs() < 1e-12);
        assert_eq!(result.explain.buckets_probed, bands);
        assert_eq!(
            result.explain.pruned_by_signature + result.explain.pruned_by_length,
            0
        );
        // Without the prefix forest, a low estimate comes with a warning.
        let warned = matches!(
            result.explain.warnings.as_slice(),
            [lshdb::Warning::TopWithoutForest { recall_estimate, .. }] if *recall_estimate == recall
        );
        assert_eq!(warned, recall < 0.9, "{:?}", result.explain.warnings);
    }
    assert!(compared > 40, "the test compared {compared} hits");
    // Other queries report no recall estimate.
    assert!(db
        .query(&docs[0].1)
        .run()
        .unwrap()
        .explain
        .recall_estimate
        .is_none());
}

#[test]
fn top_k_returns_documents_below_the_threshold_and_excludes_the_query_key() {
    let dir = tempfile::tempdir().unwrap();
    let (db, docs) = family_db(&dir, 0.8);
    let key = &docs[0].0;
    let result = db.query_key(key).top(100).run().unwrap();
    assert!(result.hits.iter().all(|h| h.key != *key));
    let truth = brute_force(&docs[1..], &docs[0].1);
    // The family is found (each variant shares buckets with its base).
    for (k, s) in truth.iter().filter(|(_, s)| *s >= 0.8) {
        assert!(
            result
                .hits
                .iter()
                .any(|h| h.key == *k && h.similarity == *s),
            "{k}"
        );
    }
    assert_eq!(
        db.query_key(key).top(2).run().unwrap().hits.len(),
        2.min(result.hits.len())
    );
}

#[test]
fn threshold_one_finds_exactly_the_identical_sets_through_one_band() {
    let dir = tempfile::tempdir().unwrap();
    let (db, docs) = family_db(&dir, 0.8);
    let text = docs[7].1.clone();
    // Identical after normalisation (case, white space) and a near copy.
    db.insert("same-1", text.to_uppercase().as_str()).unwrap();
    db.insert(
        "same-2",
        format!("  {}  ", text.replace(' ', "\n ")).as_str(),
    )
    .unwrap();
    db.insert("near", format!("{text}!").as_str()).unwrap();
    let result = db.query(&text).threshold(1.0).run().unwrap();
    let mut keys: Vec<&str> = result.hits.iter().map(|h| h.key.as_str()).collect();
    keys.sort();
    assert_eq!(keys, [docs[7].0.as_str(), "same-1", "same-2"]);
    assert!(result.hits.iter().all(|h| h.similarity == 1.0));
    assert_eq!(result.explain.buckets_probed, 1);
    assert_eq!(result.explain.posting_sizes.len(), 1);
    assert!(result.explain.warnings.is_empty());
    // By key: the others, not itself; the same as exact all-pairs at 1.
    let by_key = db.query_key("same-1").threshold(1.0).run().unwrap();
    let mut keys: Vec<&str> = by_key.hits.iter().map(|h| h.key.as_str()).collect();
    keys.sort();
    assert_eq!(keys, [docs[7].0.as_str(), "same-2"]);
    let mut exact = Vec::new();
    db.exact_pairs(1.0, |p| {
        exact.push((p.a, p.b));
        true
    })
    .unwrap();
    assert_eq!(exact.len(), 3, "{exact:?}");
    // Above 1 stays an error.
    assert!(db.query(&text).threshold(1.5).run().is_err());
}
