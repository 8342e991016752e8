//! A handle does not cross `fork()`: in a forked child every call fails
//! with `Error::WrongProcess` and changes nothing, dropping the inherited
//! handle neither writes to the file nor releases the parent's writer
//! lock, and the parent's handle keeps working.
#![cfg(unix)]
// fork() and _exit() are the point of this test.
#![allow(unsafe_code)]

use lshdb::{BulkOptions, Config, Database, Error};
use std::path::Path;
use std::process::Command;

/// Runs `child` in a forked process and returns its exit code; the child
/// exits with 0 when `child` returns true, without running any destructor
/// of the parent's state other than those `child` runs itself.
fn in_child(child: impl FnOnce() -> bool) -> i32 {
    // SAFETY: the child only calls lshdb (which refuses at once) and exits
    // with _exit, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(false);
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status), "the child did not exit: {status}");
    libc::WEXITSTATUS(status)
}

fn wrong_process<T>(result: lshdb::Result<T>) -> bool {
    matches!(result, Err(Error::WrongProcess { opened_in, .. }) if opened_in != std::process::id())
}

fn filled(path: &Path, n: usize) -> Database {
    let db = Database::create(path, Config::jaccard(0.8).store_text(true)).unwrap();
    for i in 0..n {
        db.insert(
            &format!("doc{i}"),
            format!("document number {i} with its own words").as_str(),
        )
        .unwrap();
    }
    db
}

#[test]
fn every_call_in_a_forked_child_fails_and_the_parent_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fork.lshdb");
    let db = filled(&path, 20);
    let code = in_child(|| {
        let refused = [
            wrong_process(db.insert("child", "a document the child tries to add")),
            wrong_process(db.remove("doc0")),
            wrong_process(db.len()),
            wrong_process(db.get("doc1")),
            wrong_process(db.contains("doc1")),
            wrong_process(db.query("document number 1").run()),
            wrong_process(db.batch().map(|_| ())),
            wrong_process(db.stats()),
            wrong_process(db.insert_bulk(
                vec![("k", "a bulk document")],
                &BulkOptions::default(),
                |_| true,
            )),
        ];
        let message = db.insert("x", "some text").unwrap_err().to_string();
        refused.iter().all(|&r| r) && message.contains("open the database again in this process")
    });
    assert_eq!(code, 0, "a call in the child was not refused");
    db.insert("after", "the parent writes after the child")
        .unwrap();
    assert_eq!(db.len().unwrap(), 21);
    assert!(!db.contains("child").unwrap());
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 21);
    assert!(db.check().unwrap().is_clean());
}

#[test]
fn a_batch_begun_before_the_fork_is_refused_in_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fork.lshdb");
    let db = filled(&path, 3);
    let mut batch = Some(db.batch().unwrap());
    batch
        .as_mut()
        .unwrap()
        .insert("parent", "a document of the parent's batch")
        .unwrap();
    let code = in_child(|| {
        let mut batch = batch.take().unwrap();
        wrong_process(batch.insert("child", "a document of the child"))
            && wrong_process(batch.commit())
    });
    assert_eq!(code, 0);
    batch.unwrap().commit().unwrap();
    assert_eq!(db.len().unwrap(), 4);
    assert!(db.contains("parent").unwrap() && !db.contains("child").unwrap());
}

#[test]
fn a_child_dropping_the_handle_leaves_the_parents_file_and_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fork.lshdb");
    // Options, so that the child can drop them; the parent's stay (the
    // closure runs only in the child's copy of memory).
    let mut db = Some(filled(&path, 5));
    let mut reader = Some(Database::builder().read_only(true).open(&path).unwrap());
    let before = std::fs::read(&path).unwrap();
    let code = in_child(|| {
        let ok = reader.as_ref().is_some_and(|r| wrong_process(r.len()));
        drop(reader.take());
        drop(db.take());
        ok
    });
    let (db, reader) = (db.unwrap(), reader.unwrap());
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&path).unwrap(), before, "the child wrote");
    // Another process still finds the parent's writer there.
    let out = Command::new(env!("CARGO_BIN_EXE_lshdb"))
        .args(["remove", path.to_str().unwrap(), "doc0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("open for writing"), "{stderr}");
    db.insert("after", "the parent still writes").unwrap();
    assert_eq!(reader.len().unwrap(), 6);
}
