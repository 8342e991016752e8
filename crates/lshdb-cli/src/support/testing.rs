//! Helpers for the CLI's unit tests.

use std::path::PathBuf;

/// A temporary folder and the path `name` inside it; the folder is
/// removed when the returned guard is dropped.
pub fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(name);
    (dir, path)
}
