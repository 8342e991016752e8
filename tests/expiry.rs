//! Timestamps and expiry: `expire` removes exactly the documents stamped
//! before its time, across several commits, and queries no longer find
//! them while the rest stay; every write keeps the time index in step
//! (insert, replace, remove, batches, bulk loads, dedup on write), `check`
//! verifies it, and files without it say how to add it. The Rust block
//! of `docs/expiry.md` is [`docs_example`], line for line, and runs.

mod common;

use lshdb::{BulkOptions, Config, Database, Error, Timestamped, Unique};

const DAY: u64 = 86_400;
const T0: u64 = 1_700_000_000;

/// 6 families of 4 near-duplicates; family f is stamped T0 + f days.
fn stamped_db(dir: &tempfile::TempDir) -> (Database, Vec<Vec<String>>) {
    let corpus = common::families(0x77, 6, 4, 30);
    let config = Config::jaccard(0.6).timestamps(true);
    let db = Database::create(dir.path().join("t.lshdb"), config).unwrap();
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            db.insert_at(&common::key(f, m), text, T0 + f as u64 * DAY)
                .unwrap();
        }
    }
    (db, corpus)
}

fn assert_clean(db: &Database) {
    let report = db.check().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn expire_removes_exactly_the_older_documents_across_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (db, corpus) = stamped_db(&dir);
    // Families 0, 1 and 2 (12 documents) are older than T0 + 3 days;
    // 5 per commit takes 3 commits.
    let mut seen = Vec::new();
    let report = db
        .expire_with(T0 + 3 * DAY, 5, |r| {
            seen.push(r.removed);
            true
        })
        .unwrap();
    assert_eq!((report.removed, report.commits), (12, 3));
    assert_eq!(seen, [5, 10, 12]);
    assert!(!report.stopped);
    assert_eq!(db.len().unwrap(), 12);
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            let key = common::key(f, m);
            let hits = db.query(text).run().unwrap().hits;
            if f < 3 {
                assert!(!db.contains(&key).unwrap(), "{key} stayed");
                assert!(hits
                    .iter()
                    .all(|h| !h.key.starts_with(&format!("fam{f:03}"))));
            } else {
                assert_eq!(db.timestamp(&key).unwrap(), Some(T0 + f as u64 * DAY));
                assert_eq!(hits[0].key, key);
                assert_eq!(hits.len(), 4, "its whole family stays");
            }
        }
    }
    assert_clean(&db);
    // Nothing older is left: a second run removes nothing, commits nothing.
    let again = db.expire(T0 + 3 * DAY).unwrap();
    assert_eq!((again.removed, again.commits), (0, 0));
    // The boundary is strict: a document stamped exactly `older_than` stays.
    assert_eq!(db.expire(T0 + 3 * DAY + 1).unwrap().removed, 4);
    assert!(!db.contains(&common::key(3, 0)).unwrap());
    assert_eq!(db.len().unwrap(), 8);
    assert_clean(&db);
}

#[test]
fn expire_stops_when_progress_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = stamped_db(&dir);
    let report = db.expire_with(u64::MAX, 7, |_| false).unwrap();
    assert_eq!(
        (report.removed, report.commits, report.stopped),
        (7, 1, true)
    );
    assert_eq!(db.len().unwrap(), 17);
    // The oldest went first.
    assert!(!db.contains(&common::key(0, 0)).unwrap());
    assert!(db.contains(&common::key(5, 0)).unwrap());
    assert_clean(&db);
}

#[test]
fn replace_takes_the_new_stamp_and_remove_deletes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, corpus) = stamped_db(&dir);
    let key = common::key(0, 0);
    db.insert_at(&key, &corpus[0][0], T0 + 10 * DAY).unwrap();
    assert_eq!(db.timestamp(&key).unwrap(), Some(T0 + 10 * DAY));
    // A replacement without a stamp gets the time it is written.
    let before = now();
    db.insert(&common::key(0, 1), "a replaced text of its own")
        .unwrap();
    let stamp = db.timestamp(&common::key(0, 1)).unwrap().unwrap();
    assert!(stamp >= before && stamp <= now());
    assert!(db.remove(&common::key(0, 2)).unwrap());
    assert_eq!(db.timestamp(&common::key(0, 2)).unwrap(), None);
    assert_clean(&db);
    // Family 0's replaced documents are newer than day 1 now.
    assert_eq!(db.expire(T0 + DAY).unwrap().removed, 1); // (0, 3)
    assert!(db.contains(&key).unwrap());
    assert_clean(&db);
}

#[test]
fn batches_bulk_loads_and_dedup_on_write_stamp_documents() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::jaccard(0.6).timestamps(true);
    let db = Database::create(dir.path().join("b.lshdb"), config).unwrap();
    let corpus = common::families(0x91, 4, 3, 30);
    let mut batch = db.batch().unwrap();
    batch.insert_at("b0", corpus[0][0].as_str(), T0).unwrap();
    batch.insert("b1", corpus[1][0].as_str()).unwrap();
    batch.commit().unwrap();
    let docs = vec![
        ("k0", Timestamped::new(corpus[2][0].clone(), T0 + DAY)),
        ("k1", Timestamped::new(corpus[3][0].clone(), T0 + 2 * DAY)),
    ];
    let report = db
        .insert_bulk(docs, &BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!(report.inserted, 2);
    let plain = vec![("k2", corpus[0][1].clone())];
    db.insert_bulk(plain, &BulkOptions::default(), |_| true)
        .unwrap();
    let unique = vec![
        ("u0", Timestamped::new(corpus[3][1].clone(), T0)),
        (
            "u1",
            Timestamped::new("a wholly new text".to_owned(), T0 + 3 * DAY),
        ),
    ];
    let report = db
        .insert_unique_bulk(vec![unique], 0.6, &BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!(report.inserted, 1);
    let mut batch = db.batch().unwrap();
    let many = [(
        "m0",
        Timestamped::new("one more new text here", T0 + 4 * DAY),
    )];
    assert!(matches!(
        batch.insert_unique_many(&many, 0.6).unwrap()[0],
        Ok(Unique::Inserted)
    ));
    batch.commit().unwrap();
    assert_eq!(db.timestamp("m0").unwrap(), Some(T0 + 4 * DAY));
    assert!(matches!(
        db.insert_unique("u2", corpus[2][1].as_str(), 0.6).unwrap(),
        Unique::Duplicate(_)
    ));
    assert_eq!(db.timestamp("b0").unwrap(), Some(T0));
    assert_eq!(db.timestamp("k0").unwrap(), Some(T0 + DAY));
    assert_eq!(db.timestamp("k1").unwrap(), Some(T0 + 2 * DAY));
    assert_eq!(db.timestamp("u1").unwrap(), Some(T0 + 3 * DAY));
    assert!(db.timestamp("b1").unwrap().unwrap() >= now() - 60);
    assert!(db.timestamp("k2").unwrap().unwrap() >= now() - 60);
    assert_clean(&db);
    assert_eq!(db.len().unwrap(), 7);
    assert_eq!(db.expire(T0 + 2 * DAY).unwrap().removed, 2); // b0, k0
    assert_eq!(db.len().unwrap(), 5);
    assert_clean(&db);
}

#[test]
fn a_file_without_the_index_says_how_to_add_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.lshdb");
    let mut db = Database::create(&path, Config::jaccard(0.6)).unwrap();
    db.insert("a", "the first document of the file").unwrap();
    assert!(!db.has_time_index());
    let err = db.expire(now()).unwrap_err();
    assert!(matches!(err, Error::NoTimeIndex), "{err:?}");
    assert!(err.to_string().contains("build it on this file"), "{err}");
    assert!(!err.to_string().contains("--"), "no CLI flags: {err}");
    assert!(matches!(
        db.insert_at("b", "another document here", T0),
        Err(Error::NoTimeIndex)
    ));
    assert!(matches!(db.timestamp("a"), Err(Error::NoTimeIndex)));
    // Built on the existing file: documents stored so far get its time.
    db.build_time_index(T0).unwrap();
    assert!(db.has_time_index());
    assert_eq!(db.timestamp("a").unwrap(), Some(T0));
    db.insert_at("b", "another document here", T0 + DAY)
        .unwrap();
    // Building again keeps the stamps.
    db.build_time_index(T0 + 5 * DAY).unwrap();
    assert_eq!(db.timestamp("b").unwrap(), Some(T0 + DAY));
    assert_clean(&db);
    drop(db);
    // Reopened: the settings keep it.
    let mut db = Database::open(&path).unwrap();
    assert!(db.has_time_index());
    assert_eq!(db.expire(T0 + 1).unwrap().removed, 1);
    assert_eq!(db.len().unwrap(), 1);
    db.drop_time_index().unwrap();
    assert!(matches!(db.expire(now()), Err(Error::NoTimeIndex)));
    assert_clean(&db);
}

#[test]
fn check_finds_a_damaged_time_index() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = stamped_db(&dir);
    let path = db.path().to_owned();
    drop(db);
    {
        let file = redb::Database::open(&path).unwrap();
        let txn = file.begin_write().unwrap();
        {
            use lshdb::store::times::{STAMPS, TIMES};
            let mut stamps = txn.open_table(STAMPS).unwrap();
            let at = stamps.remove(3).unwrap().unwrap().value();
            drop(stamps);
            let mut times = txn.open_table(TIMES).unwrap();
            times.insert((at + 1, 999), ()).unwrap();
        }
        txn.commit().unwrap();
    }
    let db = Database::open(&path).unwrap();
    let report = db.check().unwrap();
    assert!(!report.is_clean());
    let problems = report.problems.join("\n");
    assert!(
        problems.contains("document 3 has no timestamp"),
        "{problems}"
    );
    assert!(problems.contains("(1700000001, 999)"), "{problems}");
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `docs/expiry.md`'s Rust block, between the BEGIN and END lines (not
/// formatted: it is the document's text).
#[rustfmt::skip]
fn docs_example() -> Result<(), Box<dyn std::error::Error>> {
    // BEGIN DOCS
    let dir = tempfile::tempdir()?;
    let db = Database::create(dir.path().join("news.lshdb"), Config::jaccard(0.8).timestamps(true))?;
    db.insert_at("storm", "Storm closes the coast road for a week", 1_736_035_200)?; // 2025-01-05
    db.insert("bridge", "Council approves the new bridge over the river")?; // stamped now
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let report = db.expire(now - 30 * 86_400)?; // older than 30 days
    assert_eq!((report.removed, report.commits), (1, 1));
    assert!(!db.contains("storm")? && db.contains("bridge")?);
    // END DOCS
    Ok(())
}

/// The lines of `text` from the line after `start` up to the line `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| l.trim() != start);
    lines.next().unwrap_or_else(|| panic!("no line `{start}`"));
    lines.take_while(|l| l.trim() != end).collect()
}

#[test]
fn the_docs_block_is_this_example_and_runs() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/expiry.md"))
        .expect("docs/expiry.md");
    let block = between(&docs, "```rust", "```");
    let ours: Vec<&str> = between(include_str!("expiry.rs"), "// BEGIN DOCS", "// END DOCS")
        .iter()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    assert_eq!(block[0], "use lshdb::{Config, Database};");
    assert_eq!(block[1], "");
    assert_eq!(
        &block[2..],
        &ours[..],
        "docs/expiry.md's rust block differs"
    );
    docs_example().unwrap();
}
