//! The query planner: the large-bucket cap and its explain/warning record,
//! the consistency of the explain numbers, ranking and `limit`, the
//! low-threshold warning, SimHash search through the block index, and
//! all-pairs / groups against a brute-force answer.

mod common;

use lshdb::hash::SplitMix64;
use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::lsh::candidate_probability;
use lshdb::sketch::measures::jaccard;
use lshdb::sketch::simhash::{from_bag, hamming, Weighting};
use lshdb::{Config, Database, Error, QueryResult, DEFAULT_MAX_BUCKET};
use std::collections::{BTreeMap, BTreeSet};

const BOILERPLATE: &str = "This package is a transitional dummy package. It can safely be \
                           removed once the upgrade has finished and nothing depends on it.";
const COPIES: usize = 60;

/// Explain numbers that must hold for every query.
fn assert_consistent(result: &QueryResult, bands: usize) {
    let e = &result.explain;
    assert_eq!(e.posting_sizes.len(), bands);
    assert_eq!(e.buckets_probed, bands);
    assert!(
        e.candidates >= e.pruned_by_length + e.pruned_by_signature + e.verified,
        "{e:?}"
    );
    assert!(e.verified >= e.returned, "{e:?}");
    assert_eq!(e.returned, result.hits.len());
    assert!(e.candidates <= e.posting_sizes.iter().sum::<usize>());
    for w in result.hits.windows(2) {
        assert!(w[0].similarity >= w[1].similarity, "{:?}", result.hits);
    }
    assert!((0.0..=1.0).contains(&e.candidate_probability_at_threshold));
}

fn boilerplate_db(dir: &tempfile::TempDir) -> (Database, Vec<Vec<String>>) {
    let db = Database::create(dir.path().join("p.lshdb"), Config::jaccard(0.8)).unwrap();
    let corpus = common::families(0x91a, 6, 4, 30);
    let mut batch = db.batch().unwrap();
    for i in 0..COPIES {
        batch.insert(&format!("same{i:02}"), BOILERPLATE).unwrap();
    }
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            batch.insert(&common::key(f, m), text).unwrap();
        }
    }
    batch.commit().unwrap();
    (db, corpus)
}

#[test]
fn large_buckets_are_cut_at_max_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = boilerplate_db(&dir);
    let bands = db.settings().bands;
    assert_eq!(
        db.stats_deep().unwrap().deep.unwrap().largest[0].2,
        COPIES as u64
    );

    let capped = db.query(BOILERPLATE).max_bucket(10).run().unwrap();
    assert_consistent(&capped, bands);
    let e = &capped.explain;
    assert_eq!(
        e.truncated_buckets.len(),
        bands,
        "every band holds all copies"
    );
    assert!(e.truncated_buckets.iter().all(|t| t.read == 10));
    assert!(e.posting_sizes.iter().all(|&n| n == 10));
    assert!(e.candidates <= bands * 10);
    assert_eq!(e.candidates, 10, "the lowest ids, the same in every band");
    assert!(
        e.warnings.iter().any(|w| matches!(
            w,
            lshdb::Warning::BucketsTruncated { max_bucket: 10, .. }
        ) && w.to_string().contains("max_bucket")
            && !w.to_string().contains("--")),
        "{:?}",
        e.warnings
    );
    assert_eq!(capped.hits.len(), 10);
    assert!(capped.hits.iter().all(|h| h.similarity == 1.0));
    let keys: Vec<&str> = capped.hits.iter().map(|h| h.key.as_str()).collect();
    let first_ten: Vec<String> = (0..10).map(|i| format!("same{i:02}")).collect();
    assert_eq!(keys, first_ten);

    let full = db.query(BOILERPLATE).run().unwrap();
    assert_consistent(&full, bands);
    const { assert!(DEFAULT_MAX_BUCKET >= COPIES) };
    assert!(full.explain.truncated_buckets.is_empty());
    assert!(
        full.explain.warnings.is_empty(),
        "{:?}",
        full.explain.warnings
    );
    assert_eq!(full.hits.len(), COPIES);
    assert!(full
        .hits
        .iter()
        .all(|h| h.similarity == 1.0 && h.key.starts_with("same")));
    assert_eq!(full.explain.candidates, COPIES);

    // max_bucket(0) is treated as 1; by key, the document itself is left out.
    let one = db.query_key("same00").max_bucket(0).run().unwrap();
    assert_consistent(&one, bands);
    assert!(one.explain.posting_sizes.iter().all(|&n| n == 1));
    assert!(one.hits.is_empty(), "only same00 itself was read");
    let by_key = db.query_key("same00").max_bucket(2).run().unwrap();
    assert_eq!(by_key.hits.len(), 1);
    assert_eq!(by_key.hits[0].key, "same01");
}

#[test]
fn explain_is_consistent_and_limit_keeps_the_best() {
    let dir = tempfile::tempdir().unwrap();
    let (db, corpus) = boilerplate_db(&dir);
    let bands = db.settings().bands;
    for family in &corpus {
        for text in family {
            for t in [0.3, 0.5, 0.8, 0.95] {
                for prune in [true, false] {
                    let result = db.query(text).threshold(t).prune(prune).run().unwrap();
                    assert_consistent(&result, bands);
                    assert!(result.hits.iter().all(|h| h.similarity >= t));
                    if !prune {
                        assert_eq!(result.explain.pruned_by_length, 0);
                        assert_eq!(result.explain.pruned_by_signature, 0);
                        assert_eq!(result.explain.verified, result.explain.candidates);
                    }
                    // Pruning never changes the answer here.
                    let other = db.query(text).threshold(t).prune(!prune).run().unwrap();
                    assert_eq!(result.hits, other.hits);
                }
            }
        }
    }

    let text = &corpus[2][0];
    let all = db.query(text).threshold(0.3).run().unwrap().hits;
    assert!(all.len() >= 3, "{all:?}");
    assert_eq!(all[0].similarity, 1.0);
    for k in 0..=all.len() + 1 {
        let limited = db.query(text).threshold(0.3).limit(k).run().unwrap();
        assert_eq!(limited.hits, all[..k.min(all.len())]);
        assert_eq!(limited.explain.returned, k.min(all.len()));
    }
}

#[test]
fn a_query_threshold_below_the_index_threshold_warns() {
    let dir = tempfile::tempdir().unwrap();
    let (db, corpus) = boilerplate_db(&dir);
    let s = db.settings().clone();
    let result = db.query(&corpus[0][0]).threshold(0.5).run().unwrap();
    let p = candidate_probability(0.5, s.bands, s.rows);
    assert_eq!(result.explain.candidate_probability_at_threshold, p);
    assert!(
        p < 0.5,
        "banded for 0.8, a pair at 0.5 is usually missed: {p}"
    );
    let warning = result.explain.warnings[0].to_string();
    assert!(
        matches!(
            result.explain.warnings[0],
            lshdb::Warning::ThresholdBelowIndex { index_threshold, .. } if index_threshold == 0.8
        ),
        "{warning}"
    );
    assert!(
        warning.contains("below the index threshold 0.8"),
        "{warning}"
    );
    assert!(
        warning.contains(&format!("probability {p:.2}")),
        "{warning}"
    );
    // At or above the index threshold there is no such warning.
    for t in [0.8, 0.9] {
        let result = db.query(&corpus[0][0]).threshold(t).run().unwrap();
        assert!(
            result.explain.warnings.is_empty(),
            "{:?}",
            result.explain.warnings
        );
        assert_eq!(
            result.explain.candidate_probability_at_threshold,
            candidate_probability(t, s.bands, s.rows)
        );
    }
}

/// A base text of `words` words and copies with exactly one (different)
/// word changed each.
fn one_word_copies(seed: u64, words: usize, copies: usize) -> Vec<String> {
    let vocab = common::vocabulary(400);
    let mut rng = SplitMix64::new(seed);
    let mut pick = || vocab[(rng.next_u64() % vocab.len() as u64) as usize].clone();
    let base: Vec<String> = (0..words).map(|_| pick()).collect();
    let mut out = vec![base.join(" ")];
    for c in 0..copies {
        let mut copy = base.clone();
        copy[5 + c * 7] = format!("changed{c}");
        out.push(copy.join(" "));
    }
    out
}

#[test]
fn simhash_search_finds_near_fingerprints() {
    let (dir, db) = common::new_db("s.lshdb", Config::jaccard(0.8).simhash(3));
    let texts = one_word_copies(0x51, 120, 1);
    let unrelated = one_word_copies(0x52, 120, 0).remove(0);
    db.insert("original", texts[0].as_str()).unwrap();
    db.insert("copy", texts[1].as_str()).unwrap();
    db.insert("unrelated", unrelated.as_str()).unwrap();

    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    let fingerprint = |t: &str| from_bag(shingler.bag(t).as_slice(), Weighting::TermFrequency);
    let stored = |k: &str| db.get(k).unwrap().unwrap().simhash.unwrap();
    assert_eq!(stored("original"), fingerprint(&texts[0]));
    let distance = hamming(stored("original"), stored("copy"));
    assert!(
        distance <= 3,
        "precondition: the copy is within 3 bits ({distance})"
    );

    let (hits, truncated) = db.query(&texts[1]).near_simhash(3).unwrap();
    assert!(truncated.is_empty());
    let keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
    assert!(
        keys.contains(&"original") && keys.contains(&"copy"),
        "{hits:?}"
    );
    assert!(!keys.contains(&"unrelated"), "{hits:?}");
    let query_fp = fingerprint(&texts[1]);
    for hit in &hits {
        assert_eq!(hit.fingerprint, stored(&hit.key));
        assert_eq!(hit.distance, hamming(query_fp, hit.fingerprint));
        assert!(hit.distance <= 3);
    }
    assert_eq!(hits[0].key, "copy");
    assert_eq!(hits[0].distance, 0);
    for w in hits.windows(2) {
        assert!(w[0].distance <= w[1].distance);
    }

    // By key: the document itself is left out.
    let (hits, _) = db.query_key("copy").near_simhash(3).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].key.as_str(), hits[0].distance),
        ("original", distance)
    );
    // A smaller radius than the distance excludes it.
    if distance > 0 {
        let (hits, _) = db.query_key("copy").near_simhash(distance - 1).unwrap();
        assert!(hits.is_empty(), "{hits:?}");
    }
    let (hits, _) = db.query(&texts[1]).limit(1).near_simhash(3).unwrap();
    assert_eq!(hits.len(), 1);

    match db.query(&texts[0]).near_simhash(4) {
        Err(Error::InvalidParameter { name, reason }) => {
            assert_eq!(name, "max_distance");
            assert!(reason.contains("up to 3"), "{reason}");
        }
        other => panic!("expected InvalidParameter, got {other:?}"),
    }
    assert!(matches!(
        db.query_key("missing").near_simhash(1),
        Err(Error::NotFound(_))
    ));

    let plain = Database::create(dir.path().join("plain.lshdb"), Config::jaccard(0.8)).unwrap();
    plain.insert("original", texts[0].as_str()).unwrap();
    assert_eq!(plain.get("original").unwrap().unwrap().simhash, None);
    assert!(matches!(
        plain.query(&texts[0]).near_simhash(0),
        Err(Error::IndexDisabled(_))
    ));
}

#[test]
fn pairs_and_groups_match_brute_force() {
    let (_dir, db) = common::new_db("g.lshdb", Config::jaccard(0.5));
    // Families of 5, 4, 3, 2 and 1 documents; members differ from their
    // family's base text by one word, from each other by two.
    let mut docs: Vec<(String, String)> = Vec::new();
    for (f, size) in [5usize, 4, 3, 2, 1].into_iter().enumerate() {
        for (m, text) in one_word_copies(0x600 + f as u64, 45, size - 1)
            .into_iter()
            .enumerate()
        {
            docs.push((format!("f{f}-{m}"), text));
        }
    }
    // Insert in an interleaved order, so ids do not follow families.
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by_key(|&i| (i * 7) % docs.len());
    for &i in &order {
        db.insert(&docs[i].0, docs[i].1.as_str()).unwrap();
    }
    let position: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(pos, &i)| (docs[i].0.as_str(), pos))
        .collect();

    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    let sets: Vec<_> = docs.iter().map(|(_, t)| shingler.set(t)).collect();
    let t = 0.6;
    let mut expected: BTreeMap<(String, String), f64> = BTreeMap::new();
    for i in 0..docs.len() {
        for j in i + 1..docs.len() {
            let s = jaccard(sets[i].as_slice(), sets[j].as_slice());
            if s >= t {
                assert!(s >= 0.75, "families are far above the threshold: {s}");
                let (a, b) = (docs[i].0.clone(), docs[j].0.clone());
                expected.insert(if a < b { (a, b) } else { (b, a) }, s);
            } else {
                assert!(s < 0.3, "families are far apart: {s}");
            }
        }
    }
    assert_eq!(expected.len(), 10 + 6 + 3 + 1);

    let mut found: BTreeMap<(String, String), f64> = BTreeMap::new();
    let count = db
        .pairs(t, |p| {
            assert!(
                position[p.a.as_str()] < position[p.b.as_str()],
                "a is stored before b"
            );
            let key = if p.a < p.b { (p.a, p.b) } else { (p.b, p.a) };
            assert!(found.insert(key, p.similarity).is_none(), "each pair once");
            true
        })
        .unwrap();
    assert_eq!(count, expected.len() as u64);
    assert_eq!(found, expected);

    // Early stop.
    let mut seen = 0;
    assert_eq!(
        db.pairs(t, |_| {
            seen += 1;
            seen < 3
        })
        .unwrap(),
        3
    );

    // Groups: the connected components, with each member's best similarity.
    let groups = db.groups(t).unwrap();
    assert_eq!(groups.pairs, expected.len() as u64);
    let sizes: Vec<usize> = groups.groups.iter().map(Vec::len).collect();
    assert_eq!(sizes, [5, 4, 3, 2], "the singleton is in no group");
    for group in &groups.groups {
        let family = &group[0].0[..2];
        let members: BTreeSet<&str> = group.iter().map(|(k, _)| k.as_str()).collect();
        let want: BTreeSet<&str> = docs
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| k.starts_with(&format!("{family}-")))
            .collect();
        assert_eq!(members, want);
        for (key, best) in group {
            let want = expected
                .iter()
                .filter(|((a, b), _)| a == key || b == key)
                .map(|(_, &s)| s)
                .fold(0.0, f64::max);
            assert_eq!(*best, want, "{key}");
        }
        for w in group.windows(2) {
            assert!(w[0].1 >= w[1].1);
        }
    }
}
