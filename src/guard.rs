//! Turning a panic of the storage engine into an error.
//!
//! redb 4.5 trusts the pages of a cleanly closed file and may panic when
//! they are damaged (`tests/damaged_files.rs` finds such offsets). lshdb's
//! promise is a clear error, never a panic: every public entry point that
//! touches the file runs inside [`guard`], which catches an unwinding panic
//! and returns [`Error::Corrupted`] naming it. (A build with
//! `panic = "abort"` cannot be protected this way.)

use crate::{Error, Result};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`; a panic inside it becomes [`Error::Corrupted`].
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            Err(Error::Corrupted(format!(
                "the storage engine failed on damaged data ({message})"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_corrupted() {
        let err = guard::<()>(|| panic!("bad page")).unwrap_err();
        assert!(
            matches!(&err, Error::Corrupted(m) if m.contains("bad page")),
            "{err}"
        );
        assert_eq!(guard(|| Ok(3)).unwrap(), 3);
    }
}
