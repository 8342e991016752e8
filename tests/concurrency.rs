//! Concurrency: `Database` is `Send + Sync`; readers on several threads see
//! only committed, whole batches while a writer commits (every answer comes
//! from one snapshot); and a file open in one handle cannot be opened again,
//! by this process or another one. Writes of other threads between the
//! transactions of a dedup-on-write load lose nothing.

mod common;

use lshdb::{BulkOptions, Config, Database, Error};
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const FAMILIES: usize = 24;
const MEMBERS: usize = 4;
const PATH_VAR: &str = "LSHDB_TEST_CONCURRENCY_PATH";

#[test]
fn database_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Database>();
    assert_send_sync::<Arc<Database>>();
}

/// The families that are stored once the writer is done: family f is
/// inserted in one batch; every third family, the family three before it
/// is removed in one batch.
fn final_families() -> Vec<usize> {
    let mut present = Vec::new();
    for f in 0..FAMILIES {
        present.push(f);
        if f % 3 == 2 && f >= 3 {
            present.retain(|&g| g != f - 3);
        }
    }
    present
}

/// Checks, on one query's snapshot, that the family of `probe` is either
/// absent or present whole and alone. Returns whether it was present.
fn check_family_snapshot(db: &Database, corpus: &[Vec<String>], f: usize) -> bool {
    let result = db.query(&corpus[f][0]).threshold(0.5).run().unwrap();
    let mut by_family: BTreeMap<usize, usize> = BTreeMap::new();
    for hit in &result.hits {
        *by_family.entry(common::family_of(&hit.key)).or_default() += 1;
    }
    let seen = by_family.remove(&f).unwrap_or(0);
    assert!(
        by_family.is_empty(),
        "other families matched: {by_family:?}"
    );
    assert!(
        seen == 0 || seen == MEMBERS,
        "family {f}: a snapshot showed {seen} of {MEMBERS} members: {:?}",
        result.hits
    );
    seen == MEMBERS
}

#[test]
fn readers_see_whole_batches_while_a_writer_commits() {
    let (_dir, db) = common::new_db("c.lshdb", Config::jaccard(0.5));
    let corpus = common::families(0xc0c0, FAMILIES, MEMBERS, 30);
    let done = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let partial_states = AtomicUsize::new(0);

    std::thread::scope(|scope| {
        for reader in 0..3 {
            let (db, corpus, done, reads, partial) = (&db, &corpus, &done, &reads, &partial_states);
            scope.spawn(move || {
                let mut round = 0usize;
                while !done.load(Ordering::Acquire) || round < FAMILIES {
                    let f = (round * 7 + reader * 5) % FAMILIES;
                    check_family_snapshot(db, corpus, f);
                    // len() reads one snapshot: whole families only.
                    let len = db.len().unwrap();
                    assert_eq!(len % MEMBERS as u64, 0, "len {len}");
                    if len > 0 && (len as usize) < final_families().len() * MEMBERS {
                        partial.fetch_add(1, Ordering::Relaxed);
                    }
                    if round % 16 == reader {
                        // groups() walks one snapshot too.
                        let groups = db.groups(0.5).unwrap();
                        for group in &groups.groups {
                            assert_eq!(group.len(), MEMBERS, "{group:?}");
                            let f = common::family_of(&group[0].0);
                            assert!(group.iter().all(|(k, _)| common::family_of(k) == f));
                        }
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                    round += 1;
                }
            });
        }
        scope.spawn(|| {
            for (f, family) in corpus.iter().enumerate() {
                let mut batch = db.batch().unwrap();
                for (m, text) in family.iter().enumerate() {
                    batch.insert(&common::key(f, m), text).unwrap();
                }
                batch.commit().unwrap();
                if f % 3 == 2 && f >= 3 {
                    let mut batch = db.batch().unwrap();
                    for m in 0..MEMBERS {
                        assert!(batch.remove(&common::key(f - 3, m)).unwrap());
                    }
                    batch.commit().unwrap();
                }
            }
            done.store(true, Ordering::Release);
        });
    });

    assert!(reads.load(Ordering::Relaxed) >= 3 * FAMILIES);
    // The final state: exactly the expected families, each found whole.
    let present = final_families();
    assert_eq!(db.len().unwrap(), (present.len() * MEMBERS) as u64);
    for f in 0..FAMILIES {
        assert_eq!(
            check_family_snapshot(&db, &corpus, f),
            present.contains(&f),
            "family {f}"
        );
    }
    eprintln!(
        "reads: {}, of which during partial states: {}",
        reads.load(Ordering::Relaxed),
        partial_states.load(Ordering::Relaxed)
    );
}

#[test]
fn shared_handle_behind_arc_serves_threads() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::create(dir.path().join("a.lshdb"), Config::jaccard(0.8)).unwrap());
    let corpus = Arc::new(common::families(0xa4c, 8, 1, 20));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (db, corpus) = (Arc::clone(&db), Arc::clone(&corpus));
            std::thread::spawn(move || {
                for f in (t..8).step_by(4) {
                    db.insert(&format!("t{t}-{f}"), &corpus[f][0]).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(db.len().unwrap(), 8);
    for f in 0..8 {
        let hits = db.query(&corpus[f][0]).run().unwrap().hits;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].key, format!("t{}-{f}", f % 4));
    }
}

/// Run by [`second_open_is_refused_while_the_first_is_open`] as a child
/// process: tries to open the database named by the environment.
#[test]
#[ignore = "helper: run as a child process by the already-open test"]
fn child_try_open() {
    let Ok(path) = std::env::var(PATH_VAR) else {
        return;
    };
    match Database::open(&path) {
        Ok(db) => println!("RESULT\topened {}", db.len().unwrap()),
        Err(Error::AlreadyOpen { path: p, .. }) => {
            println!("RESULT\talready-open {}", p.display())
        }
        Err(other) => println!("RESULT\terror {other:?}"),
    }
}

fn open_in_child(path: &std::path::Path) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_try_open", "--nocapture", "--ignored"])
        .env(PATH_VAR, path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT\t"))
        .unwrap_or_else(|| panic!("no result from child:\n{stdout}"))
        .to_owned()
}

#[test]
fn second_open_is_refused_while_the_first_is_open() {
    let (_dir, path, db) = common::new_db_at("locked.lshdb", Config::jaccard(0.8));
    db.insert("a", "some document text").unwrap();

    // In this process.
    match Database::open(&path) {
        Err(Error::AlreadyOpen { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected AlreadyOpen, got {other:?}"),
    }
    let err = Database::open(&path).unwrap_err();
    assert!(
        err.to_string().contains("open for writing in another"),
        "{err}"
    );
    // The refused open did not disturb the first handle.
    db.insert("b", "another document text").unwrap();
    assert_eq!(db.len().unwrap(), 2);

    // In another process.
    assert_eq!(
        open_in_child(&path),
        format!("already-open {}", path.display())
    );

    // Once closed, both can open it.
    drop(db);
    assert_eq!(open_in_child(&path), "opened 2");
    let db = Database::open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 2);
}

/// A text of 30 words of its own.
fn own_text(i: usize) -> String {
    (0..30u64)
        .map(|w| {
            let mut z = (i as u64 * 1000 + w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            format!("{:x}", (z ^ (z >> 32)) % 1_000_000_007)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Another thread inserts documents while `insert_unique_bulk` commits
/// chunk after chunk (a tiny memory budget: a commit per chunk): its
/// writes land between the load's transactions, and every document of
/// both is stored with its own text. (The load used to number its new
/// documents from the id counter it had read before them, so it wrote
/// over the other thread's documents.)
#[test]
fn inserts_between_the_transactions_of_a_dedup_load_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::jaccard(0.8).store_text(true);
    let db = Arc::new(Database::create(dir.path().join("r.lshdb"), config).unwrap());
    let (chunks, per_chunk) = (40, 50);
    // The chunks the load has taken; the other thread inserts while the
    // load is between its 3rd and its 37th chunk, when every write of its
    // lands between two of the load's transactions.
    let taken = Arc::new(AtomicUsize::new(0));
    let other = {
        let (db, taken) = (Arc::clone(&db), Arc::clone(&taken));
        std::thread::spawn(move || {
            while taken.load(Ordering::SeqCst) < 3 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let mut n = 0;
            while taken.load(Ordering::SeqCst) < chunks - 3 {
                let key = format!("other{n}");
                db.insert(&key, own_text(100_000 + n).as_str()).unwrap();
                n += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            n
        })
    };
    let input = (0..chunks).map(|c| {
        taken.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        (0..per_chunk)
            .map(move |i| (format!("d{c}-{i}"), own_text(c * per_chunk + i)))
            .collect::<Vec<_>>()
    });
    let options = BulkOptions::default().memory(4096);
    let report = db
        .insert_unique_bulk(input, 0.8, &options, |_| true)
        .unwrap();
    let others = other.join().unwrap();
    assert!(report.commits > 10 && others >= 1, "{report:?}, {others}");
    assert_eq!(report.inserted, (chunks * per_chunk) as u64);
    let stored = |key: &str| db.get(key).unwrap().and_then(|d| d.text);
    for n in 0..others {
        let key = format!("other{n}");
        assert_eq!(stored(&key), Some(own_text(100_000 + n)), "{key}");
    }
    for c in 0..chunks {
        for i in 0..per_chunk {
            let key = format!("d{c}-{i}");
            assert_eq!(stored(&key), Some(own_text(c * per_chunk + i)), "{key}");
        }
    }
    assert_eq!(db.len().unwrap(), (chunks * per_chunk + others) as u64);
    assert!(db.check().unwrap().is_clean());
}
