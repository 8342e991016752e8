//! Dedup-on-write at scale keeps its decisions: a load into an empty
//! database (whose look-ups skip the file through the load's filter), a
//! memory bound that makes the load commit (or spill) early, and the
//! hot-bucket policy (with hundreds of candidates, the first verified
//! near-duplicate answers) all decide as one `insert_unique` per document;
//! with `DuplicateOf::Best` they also name the same near-duplicate, and
//! with `DuplicateOf::First` (the default) a verified one, never more
//! similar than the best.

use lshdb::{BulkOptions, Config, Database, DuplicateOf, Unique};

/// Families of edited copies (two words of 25 changed), interleaved, and a
/// repeated key (a one-by-one chunk).
fn corpus() -> Vec<(String, String)> {
    let mut docs: Vec<(String, String)> = (0..600)
        .map(|i| {
            let family = (i * 7 + i / 13) % 71;
            let words: Vec<String> = (0..25)
                .map(|j| match j == i % 5 * 3 || j == 24 - i % 4 {
                    true => "CHANGED".to_owned(),
                    false => format!("w{}", (family * 7919 + j * 104_729) % 1_000_003),
                })
                .collect();
            (format!("k{i}"), words.join(" "))
        })
        .collect();
    docs.insert(400, ("k17".into(), docs[17].1.clone()));
    docs
}

fn outcome(r: lshdb::Result<Unique>) -> String {
    match r {
        Ok(Unique::Inserted) => "inserted".to_owned(),
        Ok(Unique::Duplicate(hit)) => format!("{} {}", hit.key, hit.similarity),
        Err(e) => format!("error: {e}"),
    }
}

fn bulk(db: &Database, docs: &[(String, String)], options: &BulkOptions) -> (Vec<String>, u64) {
    let mut out = Vec::new();
    let chunks = docs.chunks(16).map(|part| part.to_vec());
    let report = db
        .insert_unique_bulk(chunks, 0.7, options, |decided| {
            out.extend(decided.into_iter().map(outcome));
            true
        })
        .unwrap();
    (out, report.commits)
}

#[test]
fn a_load_into_an_empty_database_decides_as_one_call_per_document() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let create =
        |name: &str| Database::create(dir.path().join(name), Config::jaccard(0.7)).unwrap();
    let one = create("one.lshdb");
    let singly: Vec<String> = docs
        .iter()
        .map(|(k, t)| outcome(one.insert_unique(k, t.as_str(), 0.7)))
        .collect();
    let inserted = singly.iter().filter(|s| *s == "inserted").count();
    assert!(inserted > 71 && inserted < 400, "{inserted}");
    // Commits every 10 accepted documents: most look-ups read a snapshot
    // the load wrote; then a memory bound of a few documents.
    let best = BulkOptions::default().duplicate_of(DuplicateOf::Best);
    let small = best.clone().batch(10);
    let tight = best.max_held_bytes(20_000);
    for (name, options) in [("batch", small), ("memory", tight.clone())] {
        let db = create(&format!("{name}.lshdb"));
        let (decided, commits) = bulk(&db, &docs, &options);
        assert_eq!(singly, decided, "{name}");
        assert!(commits > 3, "{name}: {commits} commits");
        assert!(db.check().unwrap().is_clean());
    }
    // A scratch load under the same memory bound writes what outgrows it.
    let db = create("scratch.lshdb");
    let (decided, commits) = bulk(&db, &docs, &tight.scratch(true));
    assert_eq!(singly, decided);
    assert!(commits > 3, "{commits} commits");
}

/// The default, `DuplicateOf::First`, keeps and drops what `Best` does; a
/// dropped document names a kept one at its exact similarity, at the
/// threshold or above and never above the best one's; and on these
/// families, committed every 10 accepted documents, it names a less
/// similar one for some. Held documents (not committed yet) are all
/// checked: a load that commits only at the end names the best.
#[test]
fn the_first_near_duplicate_found_decides_as_the_best() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let create =
        |name: &str| Database::create(dir.path().join(name), Config::jaccard(0.7)).unwrap();
    let best = BulkOptions::default().duplicate_of(DuplicateOf::Best);
    let (best, _) = bulk(&create("best.lshdb"), &docs, &best.batch(10));
    for options in [BulkOptions::default(), BulkOptions::default().batch(10)] {
        assert_eq!(options.duplicate_of, DuplicateOf::First);
        let db = create(&format!("first-{}.lshdb", options.batch));
        let (first, _) = bulk(&db, &docs, &options);
        let mut less_similar = 0;
        for (i, (f, b)) in first.iter().zip(&best).enumerate() {
            let (Some((f_key, f_sim)), Some((_, b_sim))) = (f.split_once(' '), b.split_once(' '))
            else {
                assert_eq!(f, b, "document {i}: the same decision");
                continue;
            };
            let (f_sim, b_sim): (f64, f64) = (f_sim.parse().unwrap(), b_sim.parse().unwrap());
            assert!(
                (0.7..=b_sim).contains(&f_sim),
                "document {i}: {f} against {b}"
            );
            less_similar += usize::from(f_sim < b_sim);
            // The one named is kept, at that exact similarity.
            let text = docs[i].1.as_str();
            let hits = db.query(text).threshold(0.7).max_bucket(usize::MAX);
            let hits = hits.run().unwrap().hits;
            let named = hits.iter().find(|h| h.key == f_key);
            assert_eq!(
                named.map(|h| h.similarity),
                Some(f_sim),
                "document {i}: {f}"
            );
        }
        match options.batch {
            10 => assert!(less_similar > 0, "no document named a less similar one"),
            _ => assert_eq!(first, best, "nothing committed before the end"),
        }
    }
}

#[test]
fn hot_buckets_answer_with_a_verified_near_duplicate() {
    // 400 stored copies of one text, each with one word of its own: every
    // one a candidate of every other, far past the planner's policy bound.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("hot.lshdb"), Config::jaccard(0.7)).unwrap();
    let base: Vec<String> = (0..40).map(|j| format!("word{j}")).collect();
    let copy = |i: usize| {
        let mut words = base.clone();
        words[i % 40] = format!("own{i}");
        words.join(" ")
    };
    let docs: Vec<(String, String)> = (0..400).map(|i| (format!("c{i}"), copy(i))).collect();
    db.insert_bulk(docs.clone(), &BulkOptions::default(), |_| true)
        .unwrap();
    let explain = db
        .query(copy(999).as_str())
        .threshold(0.7)
        .max_bucket(usize::MAX)
        .run()
        .unwrap();
    assert!(
        explain.explain.candidates > 256,
        "{}",
        explain.explain.candidates
    );
    match db.insert_unique("new", copy(999).as_str(), 0.7).unwrap() {
        Unique::Duplicate(hit) => {
            assert!(hit.similarity >= 0.7, "{}", hit.similarity);
            let stored = db
                .query(copy(999).as_str())
                .threshold(0.7)
                .max_bucket(usize::MAX)
                .run()
                .unwrap();
            assert!(stored.hits.iter().any(|h| h.key == hit.key));
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    // A text unlike all of them is still inserted.
    let other = "an unrelated text about harbours lighthouses and the tides of the sea";
    assert_eq!(
        db.insert_unique("other", other, 0.7).unwrap(),
        Unique::Inserted
    );
}

/// Under the hot-bucket policy, which kept record a dropped one names
/// depends on which kept records were committed when it was looked up
/// (`docs/cli.md`: it can change with `--memory` and `--batch`); whether
/// it is dropped does not. Records that share a bucket with hundreds of
/// kept ones decide the same one by one, and in loads that commit every 10
/// or every 1,000 accepted records.
#[test]
fn hot_bucket_decisions_do_not_depend_on_the_commits() {
    // One long common text and a part of each record's own: 800 records
    // near each other (about 0.7) but none at 0.85, then 200 more: copies
    // of one of them with a few characters added (dropped) or with half
    // of its own part replaced (kept).
    let common: String = (0..50).map(|j| format!("common{j} ")).collect();
    let part = |seed: u64, words: usize| -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..words)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{:08x} ", x & 0xFFFF_FFFF)
            })
            .collect()
    };
    let mut docs: Vec<(String, String)> = (0..800u64)
        .map(|i| (format!("k{i}"), format!("{common}{}", part(i, 8))))
        .collect();
    for i in 0..200u64 {
        let text = if i % 2 == 0 {
            format!("{}{}", docs[i as usize * 3].1, "plus")
        } else {
            let own = part(i * 3, 8);
            let kept: String = own.split(' ').take(4).map(|w| format!("{w} ")).collect();
            format!("{common}{kept}{}", part(10_000 + i, 4))
        };
        docs.push((format!("c{i}"), text));
    }
    let dir = tempfile::tempdir().unwrap();
    let create =
        |name: &str| Database::create(dir.path().join(name), Config::jaccard(0.7)).unwrap();
    // The decision only: inserted, a duplicate (of whichever record), or
    // the error in full.
    let fate = |r: lshdb::Result<Unique>| match r {
        Ok(Unique::Duplicate(_)) => "duplicate".to_owned(),
        other => outcome(other),
    };
    let one = create("one.lshdb");
    let singly: Vec<String> = docs
        .iter()
        .map(|(k, t)| fate(one.insert_unique(k, t.as_str(), 0.85)))
        .collect();
    let explain = one
        .query(docs[900].1.as_str())
        .threshold(0.85)
        .run()
        .unwrap();
    assert!(
        explain.explain.candidates > 256,
        "not a hot bucket: {} candidates",
        explain.explain.candidates
    );
    let dropped = singly.iter().filter(|f| *f == "duplicate").count();
    assert!((50..=150).contains(&dropped), "{dropped} dropped");
    for batch in [10, 1000] {
        let db = create(&format!("batch{batch}.lshdb"));
        let mut decided = Vec::new();
        let chunks = docs.chunks(16).map(|part| part.to_vec());
        let options = BulkOptions::default().batch(batch);
        db.insert_unique_bulk(chunks, 0.85, &options, |outcomes| {
            decided.extend(outcomes.into_iter().map(fate));
            true
        })
        .unwrap();
        assert_eq!(singly, decided, "batch {batch}");
    }
}
