//! Helpers for the crate's unit tests: a path in a temporary folder, and
//! a new database there.

use std::path::PathBuf;

/// A temporary folder and the path `name` inside it; the folder is
/// removed when the returned guard is dropped.
pub(crate) fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(name);
    (dir, path)
}

/// A new database `name` (Jaccard, threshold 0.8) in a temporary folder.
pub(crate) fn new_db(name: &str) -> (tempfile::TempDir, PathBuf, crate::Database) {
    let (dir, path) = temp_path(name);
    let db = crate::Database::create(&path, crate::Config::jaccard(0.8)).expect("create");
    (dir, path, db)
}
