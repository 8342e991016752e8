//! Helpers for the CLI's unit tests.

use std::path::PathBuf;

/// A temporary folder and the path `name` inside it; the folder is
/// removed when the returned guard is dropped.
pub fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(name);
    (dir, path)
}

/// A seeded pseudo-random sequence (a 64-bit LCG, top 31 bits), the same
/// on every run: `numbers(seed)` yields the next value at each call.
pub fn numbers(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    }
}
