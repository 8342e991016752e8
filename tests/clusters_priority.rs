//! The priority representative policy (`docs/clusters.md`): documents
//! carry a priority ([`Prioritised`]) through every write; the member of
//! highest priority represents its cluster (ties to the first stored);
//! priorities follow replacements, leave with removals, survive reopens,
//! re-bandings and rebuilds under the same policy, are dropped with the
//! policy, and `check` verifies them. (The random property test over all
//! writes is `tests/clusters.rs`.)

use lshdb::{Config, Database, Error, Prioritised, Representative, Timestamped};
use std::path::Path;

const FOX: [&str; 3] = [
    "the quick brown fox jumps over the lazy dog near the river bank today",
    "the quick brown fox jumped over the lazy dog near the river bank today",
    "the quick brown fox jumps over the lazy dogs near the river bank today",
];

fn priority_db(path: &Path) -> Database {
    let config = Config::jaccard(0.6).cluster_representative(Representative::Priority);
    Database::create(path, config).unwrap()
}

fn representative(db: &Database, key: &str) -> String {
    db.cluster_of(key).unwrap().unwrap().representative
}

fn assert_clean(db: &Database) {
    let report = db.check().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn the_highest_priority_represents_and_ties_go_to_the_first_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = priority_db(&dir.path().join("p.lshdb"));
    db.insert("a", FOX[0]).unwrap(); // priority 0
    db.insert_document("b", &Prioritised::new(FOX[1], 0))
        .unwrap();
    assert_eq!(
        representative(&db, "a"),
        "a",
        "a tie goes to the first stored"
    );
    db.insert_document("c", &Prioritised::new(FOX[2], -5))
        .unwrap();
    assert_eq!(representative(&db, "a"), "a");
    // A replacement takes its new priority (and counts as stored now).
    db.insert_document("c", &Prioritised::new(FOX[2], 9))
        .unwrap();
    assert_eq!(representative(&db, "a"), "c");
    db.insert_document("c", &Prioritised::new(FOX[2], 0))
        .unwrap();
    assert_eq!(representative(&db, "a"), "a");
    // Removing the representative hands the cluster to the best left.
    db.insert_document("b", &Prioritised::new(FOX[1], 3))
        .unwrap();
    assert_eq!(representative(&db, "a"), "b");
    let id = db.cluster_of("a").unwrap().unwrap().id;
    db.remove("b").unwrap();
    let cluster = db.cluster_of("a").unwrap().unwrap();
    assert_eq!((cluster.id, cluster.representative.as_str()), (id, "a"));
    assert_clean(&db);
}

#[test]
fn priorities_survive_reopens_rebandings_and_rebuilds_and_go_with_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.lshdb");
    let db = priority_db(&path);
    let docs = vec![
        ("a", Prioritised::new(FOX[0], 1)),
        ("b", Prioritised::new(FOX[1], i64::MAX)),
        ("c", Prioritised::new(FOX[2], i64::MIN)),
    ];
    db.insert_bulk(docs, &Default::default(), |_| true).unwrap();
    assert_eq!(representative(&db, "a"), "b");
    drop(db);
    let mut db = Database::open(&path).unwrap();
    assert_eq!(representative(&db, "c"), "b");
    db.reband(0.55, None).unwrap();
    assert_eq!(representative(&db, "c"), "b");
    db.build_clusters(Representative::Priority).unwrap();
    assert_eq!(representative(&db, "c"), "b");
    assert_clean(&db);
    // Another policy drops the priorities: back on priority, all are 0.
    db.build_clusters(Representative::SmallestKey).unwrap();
    assert!(matches!(
        db.insert_document("d", &Prioritised::new("other text entirely here", 1)),
        Err(Error::InvalidParameter { .. })
    ));
    db.build_clusters(Representative::Priority).unwrap();
    assert_eq!(representative(&db, "c"), "a");
    assert_clean(&db);
}

#[test]
fn a_file_without_the_policy_refuses_a_priority_given_alone_and_ignores_it_in_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::jaccard(0.6).clusters(true);
    let db = Database::create(dir.path().join("f.lshdb"), config).unwrap();
    let err = db
        .insert_document("a", &Prioritised::new(FOX[0], 2))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { .. }), "{err}");
    assert!(!err.to_string().contains("--"), "no CLI flag: {err}");
    assert!(matches!(
        db.insert_document("a", &Timestamped::new(FOX[0], 5)),
        Err(Error::NoTimeIndex)
    ));
    let docs = vec![
        ("a", Prioritised::new(FOX[0], 0)),
        ("b", Prioritised::new(FOX[1], 7)),
    ];
    db.insert_bulk(docs, &Default::default(), |_| true).unwrap();
    assert_eq!(representative(&db, "b"), "a");
    assert_clean(&db);
}

#[test]
fn timestamps_and_priorities_travel_together() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::jaccard(0.6)
        .timestamps(true)
        .cluster_representative(Representative::Priority);
    let db = Database::create(dir.path().join("t.lshdb"), config).unwrap();
    db.insert_document("a", &Timestamped::new(Prioritised::new(FOX[0], 1), 100))
        .unwrap();
    db.insert_document("b", &Prioritised::new(Timestamped::new(FOX[1], 200), 4))
        .unwrap();
    let mut batch = db.batch().unwrap();
    batch
        .insert_document("c", &Prioritised::new(Timestamped::new(FOX[2], 300), 2))
        .unwrap();
    batch.commit().unwrap();
    assert_eq!(db.timestamp("a").unwrap(), Some(100));
    assert_eq!(db.timestamp("b").unwrap(), Some(200));
    assert_eq!(representative(&db, "a"), "b");
    assert_eq!(db.expire(250).unwrap().removed, 2);
    assert_eq!(representative(&db, "c"), "c");
    let unique = db
        .insert_unique_document("d", &Prioritised::new(FOX[1], 5), 0.95)
        .unwrap();
    assert_eq!(unique, lshdb::Unique::Inserted);
    assert_eq!(representative(&db, "c"), "d");
    assert_clean(&db);
}

#[test]
fn check_finds_damaged_priorities() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.lshdb");
    let db = priority_db(&path);
    db.insert_document("a", &Prioritised::new(FOX[0], 1))
        .unwrap();
    db.insert_document("b", &Prioritised::new(FOX[1], 2))
        .unwrap();
    let b = db.cluster_of("b").unwrap().unwrap().representative;
    assert_eq!(b, "b");
    drop(db);
    {
        let file = redb::Database::open(&path).unwrap();
        let txn = file.begin_write().unwrap();
        {
            use lshdb::store::priorities::PRIORITIES;
            let mut table = txn.open_table(PRIORITIES).unwrap();
            // Document 2 ("b") loses its priority; 999 is no document.
            table.remove(2).unwrap().unwrap();
            table.insert(999, 4).unwrap();
            table.insert(1, 0).unwrap();
        }
        txn.commit().unwrap();
    }
    let db = Database::open(&path).unwrap();
    let problems = db.check().unwrap().problems.join("\n");
    assert!(
        problems.contains("document 999, which is not stored"),
        "{problems}"
    );
    assert!(
        problems.contains("document 1 has a stored priority of 0"),
        "{problems}"
    );
    assert!(problems.contains("the policy picks 1"), "{problems}");
}

/// Files of the other policies are what they were: no `priorities` table,
/// even when their bulk loads carry priorities (ignored), so older builds
/// read them as before; a priority file has it from its creation.
#[test]
fn only_priority_files_have_a_priorities_table() {
    use redb::{ReadableDatabase, TableHandle};
    let dir = tempfile::tempdir().unwrap();
    let tables = |path: &Path| -> Vec<String> {
        let file = redb::Database::open(path).unwrap();
        let txn = file.begin_read().unwrap();
        let names = txn.list_tables().unwrap().map(|t| t.name().to_owned());
        names.collect()
    };
    for (name, config) in [
        ("plain.lshdb", Config::jaccard(0.6)),
        ("first.lshdb", Config::jaccard(0.6).clusters(true)),
    ] {
        let path = dir.path().join(name);
        let db = Database::create(&path, config).unwrap();
        let docs = vec![("a", Prioritised::new(FOX[0], 3))];
        db.insert_bulk(docs, &Default::default(), |_| true).unwrap();
        drop(db);
        assert!(!tables(&path).contains(&"priorities".to_owned()), "{name}");
    }
    let path = dir.path().join("p.lshdb");
    drop(priority_db(&path));
    assert!(tables(&path).contains(&"priorities".to_owned()));
}
