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
//!
//! **Writers are not starved.** The lock is task-fair: while the write
//! lock is wanted, new readers queue behind it, so eight threads querying
//! in a loop (whose read locks always overlap) cannot keep `compact` or
//! `close` waiting forever. Two exceptions keep that from deadlocking: a
//! thread that holds the read lock already (a generator feeding
//! `insert_many` that queries the same handle) takes it again at once,
//! and after [`PATIENCE`] of waiting for a writer that still has not got
//! the lock (it waits for a long reader, perhaps a stream this very
//! reader consumes), readers stop queueing behind it.
//!
//! **Queries take a place** ([`Gate`], `gate.rs`) for the whole Python
//! call: at most one per core runs at once, so that a writer thread keeps
//! a core and the GIL.

use super::gate::Gate;
use super::Database;
use crate::errors::{run, Fail};
use crate::stream::{Item, Stream};
use lshdb::Database as Db;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How long readers queue behind a writer that waits for the lock.
pub(crate) const PATIENCE: Duration = Duration::from_secs(1);

/// What the handle, its batches and its streams share.
pub(crate) struct Shared {
    pub(crate) db: RwLock<Option<Db>>,
    /// Set by `close` before it waits for the write lock, so that streams
    /// blocked on a full channel give up their read lock.
    pub(crate) closing: AtomicBool,
    /// Places for single queries.
    pub(crate) queries: Gate,
    /// Threads holding the read lock now (one entry per hold).
    holders: Mutex<Vec<ThreadId>>,
    /// Writers waiting for the write lock, and since when the first of
    /// them waits (milliseconds after `epoch`).
    writers: AtomicUsize,
    writer_since: AtomicU64,
    epoch: Instant,
}

impl Shared {
    pub(crate) fn new(db: Db) -> Self {
        Self {
            db: RwLock::new(Some(db)),
            closing: AtomicBool::new(false),
            queries: Gate::per_core(),
            holders: Mutex::new(Vec::new()),
            writers: AtomicUsize::new(0),
            writer_since: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    /// Runs `f` under the read lock (see the module docs for the order).
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Db) -> Result<T, Fail>) -> Result<T, Fail> {
        let me = std::thread::current().id();
        let guard = self.read_lock(me);
        self.holders.lock().push(me);
        let _held = Held(self, me);
        f(guard.as_ref().ok_or(Fail::Closed)?)
    }

    /// The read lock: behind a waiting writer, unless this thread holds it
    /// already or the writer has waited [`PATIENCE`].
    fn read_lock(&self, me: ThreadId) -> RwLockReadGuard<'_, Option<Db>> {
        if self.holders.lock().contains(&me) {
            return self.db.read_recursive();
        }
        if let Some(guard) = self.db.try_read() {
            return guard;
        }
        let waited = self
            .millis()
            .saturating_sub(self.writer_since.load(Ordering::Acquire));
        let left = PATIENCE.saturating_sub(Duration::from_millis(waited));
        if self.writers.load(Ordering::Acquire) > 0 && !left.is_zero() {
            if let Some(guard) = self.db.try_read_for(left) {
                return guard;
            }
        }
        self.db.read_recursive()
    }

    /// The write lock, waiting for the running operations; readers that
    /// arrive meanwhile queue behind it (for up to [`PATIENCE`]).
    pub(crate) fn write_lock(&self) -> RwLockWriteGuard<'_, Option<Db>> {
        if self.writers.fetch_add(1, Ordering::AcqRel) == 0 {
            self.writer_since.store(self.millis(), Ordering::Release);
        }
        let guard = self.db.write();
        self.writers.fetch_sub(1, Ordering::AcqRel);
        guard
    }

    fn write<T>(&self, f: impl FnOnce(&mut Db) -> Result<T, Fail>) -> Result<T, Fail> {
        let mut guard = self.write_lock();
        f(guard.as_mut().ok_or(Fail::Closed)?)
    }

    fn millis(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}

/// One hold of the read lock by a thread, listed in `Shared::holders`.
struct Held<'a>(&'a Shared, ThreadId);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut holders = self.0.holders.lock();
        if let Some(i) = holders.iter().position(|t| *t == self.1) {
            holders.swap_remove(i);
        }
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

    /// [`Database::read`] for a single write: while it runs, queries have
    /// one place fewer (`gate.rs`).
    pub(super) fn write_call<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Db) -> Result<T, Fail> + Send,
    ) -> PyResult<T> {
        let shared = &self.shared;
        run(py, || {
            let _writing = shared.queries.writing();
            shared.read(f)
        })
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
            shared: Arc::new(Shared::new(db)),
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
