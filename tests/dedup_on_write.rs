//! Dedup-on-write: `insert_unique` stores a document only when no stored
//! document (other than its own key) is a verified near-duplicate at the
//! given threshold, and otherwise names the best one and stores nothing —
//! on the database and inside an uncommitted batch.

mod common;

use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::measures::jaccard;
use lshdb::{Config, Database, DuplicateOf, Unique};

const BASE: &str = "the committee approved the new budget for the city library after a long \
                    debate about opening hours staff salaries and the renovation of the old \
                    reading room on the second floor";

/// `text` with the words at positions `at` replaced by `with`.
fn change(text: &str, at: &[usize], with: &str) -> String {
    text.split(' ')
        .enumerate()
        .map(|(i, w)| if at.contains(&i) { with } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn exact(a: &str, b: &str) -> f64 {
    let s = Shingler::new(ShingleConfig::default()).unwrap();
    jaccard(s.set(a).as_slice(), s.set(b).as_slice())
}

const OTHER: &str = "a recipe for sourdough bread needs flour water salt and a lively starter \
                     kept warm overnight before shaping and baking in a very hot oven";

#[test]
fn near_duplicate_is_refused_and_named() {
    let (_dir, db) = common::new_db("d.lshdb", Config::jaccard(0.8));
    assert_eq!(
        db.insert_unique("first", BASE, 0.8).unwrap(),
        Unique::Inserted
    );
    assert_eq!(db.len().unwrap(), 1);

    let near = change(BASE, &[4], "revised");
    let expected = exact(BASE, &near);
    assert!((0.8..1.0).contains(&expected), "precondition: {expected}");
    match db.insert_unique("second", near.as_str(), 0.8).unwrap() {
        Unique::Duplicate(hit) => {
            assert_eq!(hit.key, "first");
            assert!(hit.similarity >= 0.8);
            assert_eq!(hit.similarity, expected);
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    assert_eq!(db.len().unwrap(), 1);
    assert!(!db.contains("second").unwrap());
    assert_eq!(db.get("second").unwrap(), None);

    // A stricter threshold than the pair's similarity lets it in.
    assert!(expected < 0.95);
    assert_eq!(
        db.insert_unique("second", near.as_str(), 0.95).unwrap(),
        Unique::Inserted
    );
    assert_eq!(db.len().unwrap(), 2);

    // A dissimilar document is inserted.
    assert_eq!(
        db.insert_unique("other", OTHER, 0.5).unwrap(),
        Unique::Inserted
    );
    assert_eq!(db.len().unwrap(), 3);
    assert!(db.contains("other").unwrap());
}

#[test]
fn the_best_near_duplicate_is_reported() {
    let (_dir, db) = common::new_db("best.lshdb", Config::jaccard(0.7));
    let far = change(BASE, &[20], "zebra");
    db.insert("far", far.as_str()).unwrap();
    db.insert("close", BASE).unwrap();
    let probe = change(BASE, &[12], "quickly");
    let (to_close, to_far) = (exact(&probe, BASE), exact(&probe, &far));
    assert!(to_close > to_far && to_far >= 0.7, "{to_close} {to_far}");
    match db.insert_unique("probe", probe.as_str(), 0.7).unwrap() {
        Unique::Duplicate(hit) => {
            assert_eq!(hit.key, "close");
            assert_eq!(hit.similarity, to_close);
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    assert_eq!(db.len().unwrap(), 2);
}

#[test]
fn own_key_is_not_its_own_duplicate() {
    let (_dir, db) = common::new_db("own.lshdb", Config::jaccard(0.8).store_text(true));
    db.insert("a", BASE).unwrap();
    // Same key, same text: the stored version under the same key is
    // excluded, so this is an (idempotent) replacement, not a duplicate.
    assert_eq!(db.insert_unique("a", BASE, 0.8).unwrap(), Unique::Inserted);
    assert_eq!(db.len().unwrap(), 1);
    // Same key, a near-duplicate text: also a replacement.
    let near = change(BASE, &[4], "revised");
    assert_eq!(
        db.insert_unique("a", near.as_str(), 0.8).unwrap(),
        Unique::Inserted
    );
    assert_eq!(db.len().unwrap(), 1);
    assert_eq!(
        db.get("a").unwrap().unwrap().text.as_deref(),
        Some(near.as_str())
    );

    // But another key's near-duplicate refuses the replacement, and the
    // stored version under this key is left as it was.
    db.insert("b", OTHER).unwrap();
    match db.insert_unique("a", OTHER, 0.8).unwrap() {
        Unique::Duplicate(hit) => {
            assert_eq!(hit.key, "b");
            assert_eq!(hit.similarity, 1.0);
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    assert_eq!(
        db.get("a").unwrap().unwrap().text.as_deref(),
        Some(near.as_str())
    );
    assert_eq!(db.len().unwrap(), 2);
}

#[test]
fn batch_sees_its_own_earlier_writes() {
    let (_dir, path, db) = common::new_db_at("batch.lshdb", Config::jaccard(0.8));
    let near = change(BASE, &[4], "revised");
    let near_other = change(OTHER, &[3], "dough");

    let mut batch = db.batch().unwrap();
    batch.insert("x", BASE).unwrap();
    match batch.insert_unique("y", near.as_str(), 0.8).unwrap() {
        Unique::Duplicate(hit) => {
            assert_eq!(hit.key, "x");
            assert_eq!(hit.similarity, exact(BASE, &near));
        }
        other => panic!("expected a duplicate of the batch's own insert, got {other:?}"),
    }
    assert_eq!(
        batch.insert_unique("z", OTHER, 0.8).unwrap(),
        Unique::Inserted
    );
    match batch.insert_unique("w", near_other.as_str(), 0.8).unwrap() {
        Unique::Duplicate(hit) => assert_eq!(hit.key, "z"),
        other => panic!("expected a duplicate of z, got {other:?}"),
    }
    // Nothing is visible outside the batch before it commits.
    assert_eq!(db.len().unwrap(), 0);
    batch.commit().unwrap();
    assert_eq!(db.len().unwrap(), 2);
    assert!(db.contains("x").unwrap() && db.contains("z").unwrap());
    assert!(!db.contains("y").unwrap() && !db.contains("w").unwrap());

    // A removal earlier in the batch frees the slot.
    let mut batch = db.batch().unwrap();
    assert!(batch.remove("x").unwrap());
    assert_eq!(
        batch.insert_unique("y", near.as_str(), 0.8).unwrap(),
        Unique::Inserted
    );
    batch.commit().unwrap();
    drop(db);
    let db = Database::open(&path).unwrap();
    assert!(!db.contains("x").unwrap());
    assert!(db.contains("y").unwrap());
    assert_eq!(db.len().unwrap(), 2);
}

#[test]
fn insert_unique_many_decides_as_one_call_per_document() {
    let dir = tempfile::tempdir().unwrap();
    let one = Database::create(dir.path().join("one.lshdb"), Config::jaccard(0.7)).unwrap();
    let many = Database::create(dir.path().join("many.lshdb"), Config::jaccard(0.7)).unwrap();
    // Families of edited copies (one word of 25 changed), interleaved.
    let mut docs: Vec<(String, String)> = Vec::new();
    for i in 0..60 {
        let family = i % 7;
        let base: Vec<String> = (0..25).map(|j| format!("word{family}x{j}")).collect();
        let text = change(&base.join(" "), &[i % 5 * 3], "CHANGED");
        docs.push((format!("k{i}"), text));
    }
    docs.push(("empty".into(), String::new()));
    docs.push(("k3".into(), docs[10].1.clone()));
    // Stored before: a near-duplicate of family 2, and a key the batch
    // writes again (the one-by-one way inside `insert_unique_many`).
    for db in [&one, &many] {
        db.insert("stored-2", docs[2].1.as_str()).unwrap();
        db.insert(
            "stored-x",
            "an unrelated stored text about gardening and tomatoes",
        )
        .unwrap();
    }
    docs.push(("stored-x".into(), docs[4].1.clone()));
    docs.push(("after".into(), docs[5].1.clone()));
    let mut batch = one.batch().unwrap();
    let singly: Vec<String> = docs
        .iter()
        .map(|(k, t)| match batch.insert_unique(k, t.as_str(), 0.7) {
            Ok(Unique::Inserted) => "inserted".to_owned(),
            Ok(Unique::Duplicate(hit)) => format!("{} {}", hit.key, hit.similarity),
            Err(e) => format!("error: {e}"),
        })
        .collect();
    batch.commit().unwrap();
    let mut batch = many.batch().unwrap();
    let together: Vec<String> = batch
        .insert_unique_many(&docs, 0.7)
        .unwrap()
        .into_iter()
        .map(|r| match r {
            Ok(Unique::Inserted) => "inserted".to_owned(),
            Ok(Unique::Duplicate(hit)) => format!("{} {}", hit.key, hit.similarity),
            Err(e) => format!("error: {e}"),
        })
        .collect();
    batch.commit().unwrap();
    assert_eq!(singly, together);
    assert!(together.iter().any(|s| s == "inserted"));
    assert!(together.iter().any(|s| s.starts_with('k')));
    assert!(together.iter().any(|s| s.starts_with("error")));
    assert!(together.iter().any(|s| s.starts_with("stored-2 ")));
    assert_eq!(one.len().unwrap(), many.len().unwrap());
    assert!(many.check().unwrap().is_clean());
    // A bad threshold is refused before anything is written.
    let mut batch = many.batch().unwrap();
    assert!(batch
        .insert_unique_many(&[("x", "some text")], 1.5)
        .is_err());
}

/// What one dedup-on-write call decided, as text for comparing.
fn outcome(r: lshdb::Result<Unique>) -> String {
    match r {
        Ok(Unique::Inserted) => "inserted".to_owned(),
        Ok(Unique::Duplicate(hit)) => format!("{} {}", hit.key, hit.similarity),
        Err(e) => format!("error: {e}"),
    }
}

/// What an [`outcome`] was: inserted, a duplicate (of whichever
/// document), or an error.
fn kind(outcome: &str) -> &str {
    match outcome {
        "inserted" => "inserted",
        s if s.starts_with("error") => s,
        _ => "duplicate",
    }
}

/// `n` documents of 61 interleaved families of edited copies (one or two
/// words of 25 changed).
fn edited_families(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let family = (i * 7 + i / 13) % 61;
            let base: Vec<String> = (0..25)
                .map(|j| format!("w{}", (family * 7919 + j * 104_729) % 1_000_003))
                .collect();
            let text = change(&base.join(" "), &[i % 5 * 3, 24 - i % 4], "CHANGED");
            (format!("k{i}"), text)
        })
        .collect()
}

#[test]
fn a_load_into_an_empty_file_decides_the_same_when_its_filter_outgrows_its_memory() {
    // The load's filter of what it wrote (a load into an empty file) is
    // dropped when it passes `load_filter_bytes`; from then on every
    // look-up reads the file. Decisions stay those of one call per
    // document, with the filter whole, dropped mid-load, or never there.
    let docs = edited_families(600);
    let dir = tempfile::tempdir().unwrap();
    let one = Database::create(dir.path().join("one.lshdb"), Config::jaccard(0.7)).unwrap();
    let singly: Vec<String> = docs
        .iter()
        .map(|(k, t)| outcome(one.insert_unique(k, t.as_str(), 0.7)))
        .collect();
    for filter_bytes in [lshdb::DEFAULT_LOAD_FILTER_BYTES, 2048, 0] {
        let path = dir.path().join(format!("bulk-{filter_bytes}.lshdb"));
        let db = Database::create(path, Config::jaccard(0.7)).unwrap();
        let options = lshdb::BulkOptions::default()
            .batch(40)
            .load_filter_bytes(filter_bytes)
            .duplicate_of(DuplicateOf::Best);
        let mut decided = Vec::new();
        let chunks = docs.chunks(25).map(|part| part.to_vec());
        db.insert_unique_bulk(chunks, 0.7, &options, |outcomes| {
            decided.extend(outcomes.into_iter().map(outcome));
            true
        })
        .unwrap();
        assert_eq!(singly, decided, "filter of {filter_bytes} bytes");
        assert!(db.check().unwrap().is_clean());
    }
    let inserted = singly.iter().filter(|s| *s == "inserted").count();
    assert!(inserted > 61 && inserted < 450, "{inserted}");
}

#[test]
fn insert_unique_bulk_decides_as_insert_unique_many_chunk_after_chunk() {
    // Families of edited copies (one or two words of 25 changed),
    // interleaved, so near-duplicates meet within a chunk, across chunks
    // and across commits; an empty text, a repeated key within a chunk, a
    // key accepted in an earlier chunk and a stored key (those chunks go
    // the one-by-one way).
    let mut docs = edited_families(400);
    docs.insert(150, ("empty".into(), String::new()));
    docs.insert(200, ("k198".into(), docs[40].1.clone()));
    docs.insert(300, ("k12".into(), docs[12].1.clone()));
    docs.insert(333, ("stored-x".into(), docs[4].1.clone()));
    for (chunk, batch) in [(7, 10), (64, 32_768), (1, 3), (400, 50)] {
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str| {
            let db = Database::create(dir.path().join(name), Config::jaccard(0.7)).unwrap();
            db.insert("stored-2", docs[2].1.as_str()).unwrap();
            db.insert("stored-x", "an unrelated stored text about gardening")
                .unwrap();
            db
        };
        let (one, many, bulk) = (open("one.lshdb"), open("many.lshdb"), open("bulk.lshdb"));
        let singly: Vec<String> = docs
            .iter()
            .map(|(k, t)| outcome(one.insert_unique(k, t.as_str(), 0.7)))
            .collect();
        let mut by_chunk = Vec::new();
        for part in docs.chunks(chunk) {
            let mut txn = many.batch().unwrap();
            by_chunk.extend(
                txn.insert_unique_many(part, 0.7)
                    .unwrap()
                    .into_iter()
                    .map(outcome),
            );
            txn.commit().unwrap();
        }
        let mut pipelined = Vec::new();
        // One load with a look-up cache too small for any run filter:
        // every probe reads rows, with the same decisions.
        let look_up = match chunk {
            1 => 1024,
            _ => lshdb::DEFAULT_LOOK_UP_BYTES,
        };
        let options = lshdb::BulkOptions::default()
            .batch(batch)
            .look_up_bytes(look_up)
            .duplicate_of(DuplicateOf::Best);
        // Now and then an empty chunk, as a stream gives when its input
        // waits: decided at once, as nothing.
        let chunks = docs.chunks(chunk).enumerate().flat_map(|(i, part)| {
            let empty = (i % 3 == 1).then(Vec::new);
            std::iter::once(part.to_vec()).chain(empty)
        });
        let empties = docs.chunks(chunk).enumerate().filter(|(i, _)| i % 3 == 1);
        let mut empty_outcomes = 0;
        let report = bulk
            .insert_unique_bulk(chunks, 0.7, &options, |decided| {
                empty_outcomes += usize::from(decided.is_empty());
                pipelined.extend(decided.into_iter().map(outcome));
                true
            })
            .unwrap();
        assert_eq!(empty_outcomes, empties.count());
        assert_eq!(by_chunk, pipelined, "chunks of {chunk}, batch {batch}");
        assert_eq!(singly, pipelined, "chunks of {chunk}, batch {batch}");
        let inserted = pipelined.iter().filter(|s| *s == "inserted").count();
        assert_eq!(report.inserted, inserted as u64);
        assert!(pipelined.iter().any(|s| s.starts_with("stored-2 ")));
        assert!(pipelined.iter().any(|s| s.starts_with("error")));
        assert!(inserted > 61 && inserted < 300, "{inserted}");
        // The same documents stored, under the same ids.
        let contents = |db: &Database| {
            let mut all = Vec::new();
            db.for_each(|doc| {
                all.push((doc.key, doc.shingles));
                true
            })
            .unwrap();
            all
        };
        let (a, b) = (contents(&many), contents(&bulk));
        let ka: Vec<_> = a.iter().map(|d| d.0.clone()).collect();
        let kb: Vec<_> = b.iter().map(|d| d.0.clone()).collect();
        assert_eq!(ka, kb, "chunks of {chunk}, batch {batch}");
        let bad: Vec<_> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .map(|(x, _)| x.0.clone())
            .collect();
        assert!(bad.is_empty(), "chunks of {chunk}, batch {batch}: {bad:?}");
        assert!(bulk.check().unwrap().is_clean());
        if batch < 100 && chunk < 100 {
            assert!(report.commits > 2, "{}", report.commits);
        }
        // A scratch load decides the same, holding the accepted documents
        // in memory and writing them only when they outgrow it (here, with
        // small bounds, every few hundred shingles); naming the first
        // near-duplicate found, it keeps and drops the same documents.
        let cases =
            [usize::MAX / 4, 1000].map(|b| [(b, DuplicateOf::Best), (b, DuplicateOf::First)]);
        for (bytes, which) in cases.into_iter().flatten() {
            let scratch = open(&format!("scratch-{bytes}-{which:?}.lshdb"));
            let options = lshdb::BulkOptions::default()
                .batch(batch)
                .max_chunk_bytes(bytes)
                .scratch(true)
                .duplicate_of(which);
            let mut decided_scratch = Vec::new();
            let chunks = docs.chunks(chunk).map(|part| part.to_vec());
            scratch
                .insert_unique_bulk(chunks, 0.7, &options, |decided| {
                    decided_scratch.extend(decided.into_iter().map(outcome));
                    true
                })
                .unwrap();
            if which == DuplicateOf::First {
                let kinds =
                    |all: &[String]| all.iter().map(|s| kind(s).to_owned()).collect::<Vec<_>>();
                let first = kinds(&decided_scratch);
                assert_eq!(
                    kinds(&singly),
                    first,
                    "first, chunks of {chunk}, {bytes} bytes"
                );
                continue;
            }
            assert_eq!(
                singly, decided_scratch,
                "scratch, chunks of {chunk}, {bytes} bytes"
            );
            assert!(scratch.check().unwrap().is_clean());
        }
    }
}

#[test]
fn insert_unique_bulk_stops_when_asked_and_keeps_what_it_decided() {
    let (_dir, db) = common::new_db("s.lshdb", Config::jaccard(0.7));
    let chunks = (0..10).map(|c| {
        (0..5)
            .map(|i| {
                (
                    format!("c{c}-{i}"),
                    format!("{OTHER} {c} {i} {}", "x ".repeat(c * 5 + i)),
                )
            })
            .collect::<Vec<_>>()
    });
    let mut seen = 0;
    let report = db
        .insert_unique_bulk(chunks, 0.99, &Default::default(), |decided| {
            seen += decided.len();
            seen < 15
        })
        .unwrap();
    assert!(report.stopped);
    assert_eq!(seen, 15);
    assert_eq!(db.len().unwrap(), report.inserted);
    assert!(db
        .insert_unique_bulk(
            Vec::<Vec<(&str, &str)>>::new(),
            1.5,
            &Default::default(),
            |_| true
        )
        .is_err());
}

#[test]
fn item_sets_load_in_bulk_and_dedup_in_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let db = lshdb::Database::create(dir.path().join("items.lshdb"), lshdb::Config::jaccard(0.5))
        .unwrap();
    let basket: Vec<&[u8]> = vec![b"milk", b"bread", b"eggs", b"butter", b"jam"];
    let other: Vec<&[u8]> = vec![b"nails", b"hammer", b"saw"];
    let docs = vec![("alice", basket.as_slice()), ("bob", other.as_slice())];
    let report = db
        .insert_bulk(docs, &lshdb::BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!(report.inserted, 2);
    let same: Vec<&[u8]> = vec![b"milk", b"bread", b"eggs", b"butter"];
    let chunks = vec![vec![("carol", same.as_slice()), ("dave", &other[..1])]];
    let mut outcomes = Vec::new();
    db.insert_unique_bulk(chunks, 0.5, &lshdb::BulkOptions::default(), |chunk| {
        outcomes.extend(chunk.into_iter().map(Result::unwrap));
        true
    })
    .unwrap();
    assert!(matches!(&outcomes[0], lshdb::Unique::Duplicate(hit) if hit.key == "alice"));
    assert_eq!(outcomes[1], lshdb::Unique::Inserted);
    // The same item set as insert_items stores it.
    assert_eq!(db.query_items(&basket).run().unwrap().hits[0].key, "alice");
}

#[test]
fn a_load_on_a_pool_of_many_threads_ends() {
    // The writer adds what it accepts to the load's filter on the pool
    // while the next chunk's look-ups read that filter on the same pool.
    // While it set the bits under the filter's lock, a writer waiting for
    // the pool could be handed a look-up and wait for its own lock: with
    // four threads this test hung in its first run (and `lshdb dedup --db
    // NEW` of 300,000 PyPI summaries hung with 3, 4 or 8 threads).
    let docs = edited_families(20_000);
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let mut runs = Vec::new();
        for run in 0..6 {
            let dir = tempfile::tempdir().unwrap();
            let db = Database::create(dir.path().join("p.lshdb"), Config::jaccard(0.7)).unwrap();
            let options = lshdb::BulkOptions::default().batch(1000 + run);
            let mut decided = Vec::new();
            let chunks = docs.chunks(2000).map(|part| part.to_vec());
            pool.install(|| {
                db.insert_unique_bulk(chunks, 0.7, &options, |outcomes| {
                    decided.extend(outcomes.into_iter().map(|o| kind(&outcome(o)).to_owned()));
                    true
                })
            })
            .unwrap();
            runs.push(decided);
        }
        let _ = done.send(runs);
    });
    let runs = ended
        .recv_timeout(std::time::Duration::from_secs(300))
        .expect("a load on a pool of four threads hung");
    let inserted = runs[0].iter().filter(|k| *k == "inserted").count();
    assert!(inserted > 61 && inserted < 15_000, "{inserted}");
    assert!(
        runs.iter().all(|r| r == &runs[0]),
        "the same decisions every run"
    );
}
