//! The lock the handle, its batches and its streams share, and the
//! handle's ways of running an operation under it.
//!
//! **Sharing.** The handle is an `Arc` of a `RwLock<Option<Database>>`.
//! Every operation takes the read lock — `Database` is `Send + Sync`, so
//! any number of Python threads (and the rayon threads of `query_many`)
//! use it at once — with the GIL released. The few operations that need
//! `&mut Database` (`compact`, `rebuild`, `check(pages=True)`) and `close`
//! take the write lock, so they wait for running operations. No lock is
//! ever taken while holding the GIL, and no Python code runs under a lock
//! except the GIL-holding pulls of `insert_many`'s iterator, which take
//! the GIL only after the lock (never the other way round).

use super::Database;
use crate::errors::{run, Fail};
use crate::stream::{Item, Stream};
use lshdb::Database as Db;
use parking_lot::RwLock;
use pyo3::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the handle, its batches and its streams share.
pub(crate) struct Shared {
    pub(crate) db: RwLock<Option<Db>>,
    /// Set by `close` before it waits for the write lock, so that streams
    /// blocked on a full channel give up their read lock.
    pub(crate) closing: AtomicBool,
}

impl Shared {
    /// Runs `f` under the read lock. `read_recursive` does not queue
    /// behind a waiting writer: a thread that already holds the lock
    /// (a Python generator feeding `insert_many` that queries the same
    /// database) takes it again instead of deadlocking against `close`.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Db) -> Result<T, Fail>) -> Result<T, Fail> {
        let guard = self.db.read_recursive();
        f(guard.as_ref().ok_or(Fail::Closed)?)
    }

    fn write<T>(&self, f: impl FnOnce(&mut Db) -> Result<T, Fail>) -> Result<T, Fail> {
        let mut guard = self.db.write();
        f(guard.as_mut().ok_or(Fail::Closed)?)
    }
}

impl Database {
    pub(super) fn read<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Db) -> Result<T, Fail> + Send,
    ) -> PyResult<T> {
        let shared = &self.shared;
        run(py, || shared.read(f))
    }

    pub(super) fn write<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Db) -> Result<T, Fail> + Send,
    ) -> PyResult<T> {
        let shared = &self.shared;
        run(py, || shared.write(f))
    }

    pub(super) fn wrap(db: Db) -> Self {
        let path = db.path().to_owned();
        Self::wrap_named(db, path)
    }

    /// A handle whose `path` reads `path` (`":memory:"` for a database in
    /// memory, whose library path is a placeholder).
    pub(super) fn wrap_named(db: Db, path: std::path::PathBuf) -> Self {
        Self {
            shared: Arc::new(Shared {
                db: RwLock::new(Some(db)),
                closing: AtomicBool::new(false),
            }),
            path,
        }
    }

    /// Starts a background producer; see the module docs.
    pub(super) fn stream(
        &self,
        produce: impl FnOnce(&Db, &mut dyn FnMut(Item) -> bool) -> Result<(), Fail> + Send + 'static,
    ) -> Stream {
        crate::stream::spawn(Arc::clone(&self.shared), produce)
    }
}
