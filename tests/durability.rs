//! Durability modes: `Durability::None` commits are visible at once but
//! reach the disk only with a durable commit (`flush`, a clean close), so a
//! power cut loses exactly the commits since; such a file is opened by one
//! process alone; and a database held in memory works as a file does.

mod common_backend;

use common_backend::FaultyBackend;
use lshdb::{Config, Database, Durability, Error};

const FOX: &str = "The quick brown fox jumps over the lazy dog";
const LOREM: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit";

fn non_durable() -> lshdb::Builder {
    Database::builder().durability(Durability::None)
}

/// A non-durable database on a disk whose power can be cut.
fn non_durable_on_faulty_disk() -> (FaultyBackend, Database) {
    let disk = FaultyBackend::new();
    let db = non_durable()
        .create_with_backend(disk.clone(), Config::jaccard(0.8))
        .unwrap();
    (disk, db)
}

/// The database as a power cut now would leave it: what `disk` holds
/// durably, opened.
fn after_power_cut(disk: &FaultyBackend) -> Database {
    Database::builder()
        .open_with_backend(FaultyBackend::from_image(&disk.durable_image()))
        .unwrap()
}

#[test]
fn a_power_cut_loses_the_commits_since_the_last_flush_and_nothing_else() {
    let (disk, db) = non_durable_on_faulty_disk();
    assert_eq!(db.durability(), Durability::None);
    db.insert("a", FOX).unwrap();
    db.flush().unwrap();
    db.insert("b", LOREM).unwrap();
    db.set_label("note", "after the flush").unwrap();
    // Visible to this handle at once.
    assert_eq!(db.len().unwrap(), 2);
    assert_eq!(db.query(FOX).run().unwrap().hits[0].key, "a");

    let cut = after_power_cut(&disk);
    assert_eq!(cut.len().unwrap(), 1, "only the flushed commit is on disk");
    assert!(cut.contains("a").unwrap());
    assert!(!cut.contains("b").unwrap());
    assert_eq!(cut.label("note").unwrap(), None);
    assert!(cut.check().unwrap().is_clean());

    // A clean close makes the rest durable.
    drop(db);
    let closed = after_power_cut(&disk);
    assert_eq!(closed.len().unwrap(), 2);
    assert_eq!(
        closed.label("note").unwrap().as_deref(),
        Some("after the flush")
    );
}

#[test]
fn bulk_loads_and_dedup_on_write_follow_the_handles_durability() {
    let (disk, db) = non_durable_on_faulty_disk();
    let docs = vec![("a", FOX), ("b", LOREM)];
    db.insert_bulk(docs, &lshdb::BulkOptions::default(), |_| true)
        .unwrap();
    let chunks = vec![vec![("c", FOX)]];
    let report = db
        .insert_unique_bulk(chunks, 0.8, &lshdb::BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!(report.duplicates, 1);
    let cut = after_power_cut(&disk);
    assert_eq!(cut.len().unwrap(), 0, "nothing was flushed");
    db.flush().unwrap();
    let flushed = after_power_cut(&disk);
    assert_eq!(flushed.len().unwrap(), 2);
}

#[test]
fn a_non_durable_file_is_opened_by_one_process_alone_and_keeps_its_commits_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fast.lshdb");
    let db = non_durable().create(&path, Config::jaccard(0.8)).unwrap();
    db.insert("a", FOX).unwrap();
    let reader = Database::builder().read_only(true).open(&path);
    assert!(
        matches!(reader, Err(Error::AlreadyOpen { .. })),
        "{reader:?}"
    );
    db.close().unwrap();
    let db = non_durable().open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 1);
    db.insert("b", LOREM).unwrap();
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.durability(), Durability::Immediate);
    assert_eq!(db.len().unwrap(), 2);
    db.flush().unwrap(); // harmless when every commit is durable
    assert!(db.check().unwrap().is_clean());
}

#[test]
fn flush_on_a_read_only_handle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.lshdb");
    Database::create(&path, Config::jaccard(0.8)).unwrap();
    let reader = Database::builder().read_only(true).open(&path).unwrap();
    assert!(matches!(reader.flush(), Err(Error::ReadOnly { .. })));
}

#[test]
fn a_database_in_memory_works_as_a_file_does() {
    for durability in [Durability::Immediate, Durability::None] {
        let config = Config::jaccard(0.8).containment(true);
        let db = Database::builder()
            .durability(durability)
            .create_in_memory(config)
            .unwrap();
        db.insert("a", FOX).unwrap();
        db.insert("b", LOREM).unwrap();
        assert_eq!(db.query(FOX).run().unwrap().hits[0].key, "a");
        let passage = "quick brown fox jumps over the lazy";
        let found = db.query(passage).containment(0.9).run().unwrap();
        assert_eq!(found.hits[0].key, "a");
        assert!(db.remove("b").unwrap());
        db.flush().unwrap();
        assert_eq!(db.len().unwrap(), 1);
        assert!(db.check().unwrap().is_clean());
        assert_eq!(db.stats().unwrap().file_bytes, 0);
    }
}
