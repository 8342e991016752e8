//! Reopening a database — in this process and in a new process — gives
//! exactly the answers it gave before it was closed: the same keys, the same
//! similarities to the bit, the same stored documents and settings.

mod common;

use lshdb::{Config, Database};
use std::path::Path;
use std::process::Command;

const PATH_VAR: &str = "LSHDB_TEST_REOPEN_PATH";
const FAMILIES: usize = 40;
const MEMBERS: usize = 5;

fn corpus() -> Vec<Vec<String>> {
    common::families(0xabcd_0042, FAMILIES, MEMBERS, 30)
}

fn config() -> Config {
    Config::jaccard(0.7).store_text(true)
}

fn build(path: &Path) -> Database {
    let db = Database::create(path, config()).unwrap();
    let mut batch = db.batch().unwrap();
    for (f, family) in corpus().iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            batch.insert(&common::key(f, m), text).unwrap();
        }
    }
    batch.commit().unwrap();
    assert_eq!(db.len().unwrap(), (FAMILIES * MEMBERS) as u64);
    db
}

/// Every answer the database gives to a fixed set of questions, one line
/// each; similarities as their exact bit patterns.
fn answers(db: &Database) -> Vec<String> {
    let mut out = vec![
        format!("len {}", db.len().unwrap()),
        format!("settings {:?}", db.settings()),
    ];
    let corpus = corpus();
    let mut push_hits = |label: String, hits: Vec<lshdb::Hit>| {
        out.push(format!("{label} {} hits", hits.len()));
        for hit in hits {
            out.push(format!(
                "{label} {} {:016x}",
                hit.key,
                hit.similarity.to_bits()
            ));
        }
    };
    for f in (0..FAMILIES).step_by(3) {
        let text = format!("{} and one more clause", corpus[f][0]);
        push_hits(format!("text{f}"), db.query(&text).run().unwrap().hits);
        let low = db.query(&corpus[f][1]).threshold(0.4).run().unwrap();
        push_hits(format!("low{f}"), low.hits);
        let key_hits = db.query_key(&common::key(f, 2)).run().unwrap().hits;
        push_hits(format!("key{f}"), key_hits);
        let limited = db.query(&corpus[f][0]).limit(2).run().unwrap().hits;
        push_hits(format!("limit{f}"), limited);
    }
    let mut pairs = Vec::new();
    db.pairs(0.7, |p| {
        pairs.push(format!(
            "pair {} {} {:016x}",
            p.a,
            p.b,
            p.similarity.to_bits()
        ));
        true
    })
    .unwrap();
    out.push(format!("pairs {}", pairs.len()));
    out.extend(pairs);
    let groups = db.groups(0.7).unwrap();
    out.push(format!(
        "groups {} from {} pairs",
        groups.groups.len(),
        groups.pairs
    ));
    for group in groups.groups {
        let members: Vec<String> = group
            .iter()
            .map(|(k, s)| format!("{k}:{:016x}", s.to_bits()))
            .collect();
        out.push(format!("group {}", members.join(",")));
    }
    for f in (0..FAMILIES).step_by(7) {
        out.push(format!("get {:?}", db.get(&common::key(f, 0)).unwrap()));
    }
    out.push(format!("get-missing {:?}", db.get("no such key").unwrap()));
    out
}

/// Run by [`reopen_in_a_new_process_gives_identical_answers`] as a child
/// process: reopens the database named by the environment and prints its
/// answers.
#[test]
#[ignore = "helper: run as a child process by the reopen test"]
fn child_reopen_and_answer() {
    let Ok(path) = std::env::var(PATH_VAR) else {
        return; // run by hand without a parent: nothing to do
    };
    let db = Database::open(&path).unwrap();
    for line in answers(&db) {
        println!("ANSWER\t{line}");
    }
}

#[test]
fn reopen_in_a_new_process_gives_identical_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reopen.lshdb");
    let before = {
        let db = build(&path);
        answers(&db)
    }; // dropped: closed
    assert!(before.iter().any(|l| l.starts_with("groups 40 from ")));
    // The answers are substantive: families are found.
    assert!(before.iter().any(|l| l.starts_with("key0 fam000-m")));
    assert!(
        before.iter().any(|l| l == "groups 40 from 400 pairs") || {
            before.iter().any(|l| l.starts_with("groups "))
        }
    );

    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_reopen_and_answer",
            "--nocapture",
            "--ignored",
        ])
        .env(PATH_VAR, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let after: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("ANSWER\t"))
        .map(str::to_owned)
        .collect();
    assert_eq!(after.len(), before.len(), "child output:\n{stdout}");
    for (i, (a, b)) in before.iter().zip(&after).enumerate() {
        assert_eq!(
            a, b,
            "answer line {i} differs after reopening in a new process"
        );
    }
}

#[test]
fn reopen_in_process_keeps_documents_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reopen.lshdb");
    let db = build(&path);
    let settings = db.settings().clone();
    let keys: Vec<String> = (0..FAMILIES)
        .flat_map(|f| (0..MEMBERS).map(move |m| common::key(f, m)))
        .collect();
    let docs: Vec<_> = keys.iter().map(|k| db.get(k).unwrap().unwrap()).collect();
    let first = answers(&db);
    drop(db);

    let db = Database::open(&path).unwrap();
    assert_eq!(db.settings(), &settings);
    assert_eq!(db.settings(), &config().resolve().unwrap());
    assert_eq!(db.len().unwrap(), (FAMILIES * MEMBERS) as u64);
    let corpus = corpus();
    for (key, doc) in keys.iter().zip(&docs) {
        let again = db.get(key).unwrap().unwrap();
        assert_eq!(&again, doc);
        assert_eq!(&again.key, key);
        let (f, m) = (common::family_of(key), key.as_bytes()[key.len() - 1] - b'0');
        assert_eq!(again.text.as_deref(), Some(corpus[f][m as usize].as_str()));
        assert!(again.shingles > 0);
    }
    assert_eq!(answers(&db), first);

    // Still writable after reopening, and the id counter continues.
    db.insert("new", "a brand new document about nothing in particular")
        .unwrap();
    assert_eq!(db.len().unwrap(), (FAMILIES * MEMBERS + 1) as u64);
    drop(db);
    let db = Database::open(&path).unwrap();
    assert!(db.contains("new").unwrap());
    assert_eq!(db.len().unwrap(), (FAMILIES * MEMBERS + 1) as u64);
}
