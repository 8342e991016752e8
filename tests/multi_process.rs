//! One writer process, any number of reader processes: read-only opens
//! see the writer's commits, never a removed document or the old text of a
//! replaced one once their snapshot has the change, never error, and never
//! change the file.
//!
//! The processes are this test binary run again as children (the ignored
//! test `child` with `LSHDB_MP_ROLE` set), so they are real processes with
//! their own record caches, sharing only the file.

mod common;

use lshdb::{Config, Database, Error};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Keys the writer cycles through.
const KEYS: u64 = 20;

/// What commit `c` (1, 2, ...) does to key `c % KEYS`: removes it every
/// third round, else stores version `c` of its text.
fn removes(c: u64) -> bool {
    (c / KEYS) % 3 == 2
}

/// Version `v` of key `k`'s text: versions of one key are near-duplicates
/// (similarity well above the index threshold, below 1).
fn text(k: u64, v: u64) -> String {
    format!(
        "document {k} about topic {k}: a fairly long shared body of words, alpha beta gamma \
         delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma, \
         revision {v}"
    )
}

/// The state of key `k` after commit `c`: the version stored, or None.
fn state(k: u64, c: u64) -> Option<u64> {
    let last = (1..=c).rev().find(|&x| x % KEYS == k)?;
    (!removes(last)).then_some(last)
}

/// The commit the clock document says the snapshot holds.
fn clock(db: &Database) -> lshdb::Result<u64> {
    Ok(match db.get("clock")? {
        None => 0,
        Some(doc) => doc
            .text
            .and_then(|t| t.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
            .unwrap_or(u64::MAX),
    })
}

fn spawn(role: &str, db: &Path, seconds: f64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child", "--nocapture"])
        .env("LSHDB_MP_ROLE", role)
        .env("LSHDB_MP_DB", db)
        .env("LSHDB_MP_SECONDS", seconds.to_string())
        .spawn()
        .unwrap()
}

/// The entry point of the child processes (run only by the test below).
#[test]
#[ignore = "a child process of writer_and_readers_in_separate_processes"]
fn child() {
    let role = std::env::var("LSHDB_MP_ROLE").expect("run by the multi-process test");
    let path = PathBuf::from(std::env::var("LSHDB_MP_DB").unwrap());
    let seconds: f64 = std::env::var("LSHDB_MP_SECONDS").unwrap().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    match role.as_str() {
        "writer" => write_until(&path, deadline),
        "reader" => read_until(&path, deadline),
        other => panic!("unknown role {other}"),
    }
}

fn write_until(path: &Path, deadline: Instant) {
    let db = Database::open(path).unwrap();
    let mut c = clock(&db).unwrap();
    while Instant::now() < deadline {
        c += 1;
        let k = c % KEYS;
        let mut batch = db.batch().unwrap();
        if removes(c) {
            batch.remove(&format!("k{k}")).unwrap();
        } else {
            batch.insert(&format!("k{k}"), text(k, c).as_str()).unwrap();
        }
        batch
            .insert("clock", format!("clock {c} ticks on").as_str())
            .unwrap();
        batch.commit().unwrap();
    }
    println!("writer: {c} commits");
}

fn read_until(path: &Path, deadline: Instant) {
    let db = Database::builder().read_only(true).open(path).unwrap();
    let (mut checks, mut rounds) = (0u64, 0u64);
    while Instant::now() < deadline {
        rounds += 1;
        let before = clock(&db).unwrap();
        for k in 0..KEYS {
            let key = format!("k{k}");
            // get: never older than the state at `before`.
            let got = db.get(&key).unwrap();
            let after = clock(&db).unwrap();
            let version = got.as_ref().map(|doc| {
                let t = doc.text.as_deref().unwrap();
                t.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
            });
            let allowed: Vec<Option<u64>> = (before..=after).map(|c| state(k, c)).collect();
            assert!(
                allowed.contains(&version),
                "get({key}) = {version:?} between commits {before} and {after}, allowed {allowed:?}"
            );
            checks += 1;

            // query: an old version of k must not come back with similarity
            // 1 (the old set), and a removed k must not come back at all.
            let Some(old) = (1..before).rev().find(|&x| x % KEYS == k && !removes(x)) else {
                continue;
            };
            let q0 = clock(&db).unwrap();
            let hits = db.query(&text(k, old)).run().unwrap().hits;
            let q1 = clock(&db).unwrap();
            let hit = hits.iter().find(|h| h.key == key);
            let states: Vec<Option<u64>> = (q0..=q1).map(|c| state(k, c)).collect();
            if let Some(hit) = hit {
                assert!(
                    states.iter().any(Option::is_some),
                    "query returned removed {key} (absent in commits {q0}..={q1})"
                );
                if states.iter().all(|s| s.is_some_and(|v| v != old)) {
                    assert!(
                        hit.similarity < 1.0,
                        "query returned {key} with the old text of version {old} \
                         (stored versions {states:?})"
                    );
                }
            }
            checks += 1;
        }
    }
    println!("reader: {rounds} rounds, {checks} checks");
}

/// A writer process inserts, replaces and removes for a few seconds while
/// three reader processes query in a loop; then the file checks clean.
#[test]
fn writer_and_readers_in_separate_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mp.lshdb");
    drop(Database::create(&path, Config::jaccard(0.8).store_text(true)).unwrap());
    let writer = spawn("writer", &path, 4.0);
    // Readers start once the writer holds the file, and also find an empty
    // database at first.
    std::thread::sleep(Duration::from_millis(300));
    let readers: Vec<Child> = (0..3).map(|_| spawn("reader", &path, 3.5)).collect();
    for (name, mut child) in
        std::iter::once(("writer", writer)).chain(readers.into_iter().map(|r| ("reader", r)))
    {
        let status = child.wait().unwrap();
        assert!(status.success(), "the {name} process failed: {status}");
    }
    let mut db = Database::open(&path).unwrap();
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert!(clock(&db).unwrap() > 20, "the writer made too few commits");
}

/// While a writer holds the file, a second writer is refused with a clear
/// error, or waits for it; readers open meanwhile.
#[test]
fn a_second_writer_is_refused_or_waits() {
    let (_dir, path, db) = common::new_db_at("w.lshdb", Config::jaccard(0.8));
    db.insert("a", "the only document in the file").unwrap();
    let err = Database::open(&path).unwrap_err();
    assert!(matches!(err, Error::AlreadyOpen { .. }), "{err:?}");
    // The library names no CLI flag: each surface words its own hint.
    assert!(err.to_string().contains("wait for it"), "{err}");
    assert!(!err.to_string().contains("--wait"), "{err}");
    let reader = Database::builder().read_only(true).open(&path).unwrap();
    assert_eq!(reader.len().unwrap(), 1);

    let started = Instant::now();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(db);
    });
    let second = Database::builder()
        .wait(Duration::from_secs(10))
        .open(&path)
        .unwrap();
    closer.join().unwrap();
    assert!(started.elapsed() >= Duration::from_millis(250));
    second.insert("b", "another document").unwrap();
    // The reader follows the new writer's commits.
    assert_eq!(reader.len().unwrap(), 2);
    let err = Database::builder()
        .wait(Duration::from_millis(200))
        .open(&path)
        .unwrap_err();
    assert!(
        matches!(err, Error::AlreadyOpen { waited: Some(w), .. } if w == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("after waiting 0.2 seconds"),
        "{err}"
    );
}

/// A read-only handle answers everything a reader asks, refuses writes,
/// and leaves every byte of the file as it was.
#[test]
fn a_read_only_handle_never_changes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.lshdb");
    {
        let db = Database::create(&path, Config::jaccard(0.5).store_text(true).simhash(3)).unwrap();
        db.insert("a", "near duplicate text about read only handles")
            .unwrap();
        db.insert("b", "near duplicate text about read-only handles!")
            .unwrap();
        db.insert("c", "something else entirely, with other words")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    {
        let db = Database::builder().read_only(true).open(&path).unwrap();
        assert!(db.is_read_only());
        assert_eq!(
            db.query("near duplicate text about read only handles")
                .run()
                .unwrap()
                .hits[0]
                .key,
            "a"
        );
        assert!(db.get("b").unwrap().is_some());
        assert_eq!(db.pairs(0.5, |_| true).unwrap(), 1);
        assert_eq!(db.groups(0.5).unwrap().groups.len(), 1);
        assert_eq!(db.stats().unwrap().documents, 3);
        assert!(db.check().unwrap().is_clean());
        let mut keys = Vec::new();
        db.for_each(|doc| {
            keys.push(doc.key);
            true
        })
        .unwrap();
        assert_eq!(keys, ["a", "b", "c"]);
        for err in [
            db.insert("d", "text").unwrap_err(),
            db.remove("a").unwrap_err(),
            db.batch().map(|_| ()).unwrap_err(),
        ] {
            assert!(matches!(err, Error::ReadOnly { .. }), "{err:?}");
        }
    }
    assert!(
        std::fs::read(&path).unwrap() == before,
        "a read-only open changed the file"
    );
}
