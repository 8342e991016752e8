//! A read-only open repairs a file whose writer crashed, when it may write
//! the file and no writer has it open, and goes on read-only; when the
//! file or its folder is read-only it refuses with `Error::NeedsRepair`,
//! as before. The crashed writer is a forked child that commits and exits
//! without closing the file.
#![cfg(unix)]
// fork() and _exit() stand in for a writer killed after its commits.
#![allow(unsafe_code)]

use lshdb::{Config, Database, Error};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Creates `path` with `n` documents in a child process that exits
/// without closing it, as a killed writer does.
fn crashed_writer(path: &Path, n: usize) {
    // SAFETY: the child opens its own handle, writes and _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = (|| -> lshdb::Result<()> {
            let db = Database::create(path, Config::jaccard(0.8))?;
            for i in 0..n {
                db.insert(
                    &format!("doc{i}"),
                    format!("document {i} in words {}", i * 31).as_str(),
                )?;
            }
            std::mem::forget(db); // never closed
            Ok(())
        })()
        .is_ok();
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
}

fn read_only(path: &Path) -> lshdb::Result<Database> {
    Database::builder().read_only(true).open(path)
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_read_only_open_repairs_a_crashed_writers_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crashed.lshdb");
    crashed_writer(&path, 30);
    let db = read_only(&path).unwrap();
    assert!(db.is_read_only());
    assert_eq!(db.len().unwrap(), 30);
    assert!(db.check().unwrap().is_clean());
    // Repaired for good: a writer opens it, and readers meanwhile.
    drop(db);
    let writer = Database::open(&path).unwrap();
    writer
        .insert("more", "a document after the repair")
        .unwrap();
    assert_eq!(read_only(&path).unwrap().len().unwrap(), 31);
}

#[test]
fn a_read_only_file_or_folder_is_not_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("data");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("crashed.lshdb");
    crashed_writer(&path, 3);
    let before = std::fs::read(&path).unwrap();
    for locked in [&path, &folder] {
        set_mode(locked, 0o555);
        let err = read_only(&path).unwrap_err();
        set_mode(locked, 0o755);
        assert!(matches!(err, Error::NeedsRepair { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("not closed cleanly"), "{message}");
        assert!(!message.contains("--pages"), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    }
    assert_eq!(read_only(&path).unwrap().len().unwrap(), 3);
}
