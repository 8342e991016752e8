//! The context of one command run, made by `main` and passed in (never a
//! global): what the running command tells the code that reports its end.

use crate::interrupt::Interrupt;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What the running command has told the code that reports its end.
#[derive(Default)]
pub struct Context {
    /// The database file the command opened, for hints in error messages;
    /// shared with the Ctrl-C handler ([`Context::opened_shared`]).
    opened: Arc<OnceLock<PathBuf>>,
    /// Whether the command prints its summary as JSON (`--json`), also
    /// when a storage error ends a load.
    json: Cell<bool>,
    /// The run's Ctrl-C state, shared with the handler.
    interrupt: Interrupt,
}

impl Context {
    /// Records the database file the command opened (the first one only).
    pub fn opened(&self, path: &Path) {
        let _ = self.opened.set(path.to_owned());
    }

    /// The database file the command opened, if any.
    pub fn opened_file(&self) -> Option<&Path> {
        self.opened.get().map(PathBuf::as_path)
    }

    /// The opened file as the Ctrl-C handler (another thread) sees it.
    pub fn opened_shared(&self) -> Arc<OnceLock<PathBuf>> {
        Arc::clone(&self.opened)
    }

    /// The run's Ctrl-C state.
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// Sets whether the command's summary is JSON.
    pub fn set_json(&self, on: bool) {
        self.json.set(on);
    }

    /// Whether the command's summary is JSON.
    pub fn json(&self) -> bool {
        self.json.get()
    }
}
