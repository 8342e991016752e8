//! [`Store`]: a handle's open redb database, bound to the process that
//! opened it.
//!
//! **fork().** A forked child inherits the parent's open file and its
//! in-memory state, but not its place as the file's writer: writes made
//! through an inherited handle would be lost or would damage the file, and
//! reads would see a stale snapshot. As SQLite does with a connection, a
//! handle must not cross `fork()`. Every way into the file goes through
//! [`Store::begin_read`] or [`Store::writable`], and both refuse with
//! [`Error::WrongProcess`] in any process but the one that opened the
//! handle — before the storage engine is touched, so nothing is written
//! and no lock the parent holds is released.
//!
//! Dropping the handle in the child does not close the engine either: its
//! close would write a header from the child's stale state and release the
//! parent's locks (redb's locks belong to the open file, which parent and
//! child share). The child leaks it instead; the operating system frees it
//! when the child exits.
//!
//! The writable engine is shared (`Arc`) with the handle's merger thread
//! (`merger.rs`), which the handle stops before anything that needs the
//! engine alone: compaction, the page check, close.

use crate::{Error, Result};
use redb::{ReadTransaction, ReadableDatabase};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The open redb database: writable, or read-only.
pub(crate) enum Engine {
    Write(Arc<redb::Database>),
    Read(redb::ReadOnlyDatabase),
}

/// A handle's redb database, with the process that opened it.
pub(crate) struct Store {
    /// `None` only while the store is being dropped.
    engine: Option<Engine>,
    opened_in: u32,
    path: PathBuf,
}

impl Store {
    /// A store of `engine`, opened in this process, for errors naming `path`.
    pub(crate) fn new(engine: Engine, path: &Path) -> Self {
        Self {
            engine: Some(engine),
            opened_in: std::process::id(),
            path: path.to_owned(),
        }
    }

    /// [`Error::WrongProcess`] unless this is the process that opened it.
    pub(crate) fn check_process(&self) -> Result<()> {
        let current = std::process::id();
        if current == self.opened_in {
            Ok(())
        } else {
            Err(Error::WrongProcess {
                path: self.path.clone(),
                opened_in: self.opened_in,
                current,
            })
        }
    }

    fn engine(&self) -> Result<&Engine> {
        self.check_process()?;
        self.engine.as_ref().ok_or_else(closing)
    }

    /// A read snapshot of the latest commit.
    pub(crate) fn begin_read(&self) -> Result<ReadTransaction> {
        Ok(match self.engine()? {
            Engine::Write(db) => db.begin_read()?,
            Engine::Read(db) => db.begin_read()?,
        })
    }

    /// Whether the store was opened read-only.
    pub(crate) fn is_read_only(&self) -> bool {
        matches!(self.engine, Some(Engine::Read(_)))
    }

    /// The writable database: [`Error::ReadOnly`] when opened read-only.
    pub(crate) fn writable(&self) -> Result<&redb::Database> {
        match self.engine()? {
            Engine::Write(db) => Ok(db),
            Engine::Read(_) => Err(self.read_only()),
        }
    }

    /// The writable database, shared with a merger thread: `None` when
    /// opened read-only.
    pub(crate) fn shared(&self) -> Option<Arc<redb::Database>> {
        match &self.engine {
            Some(Engine::Write(db)) => Some(Arc::clone(db)),
            _ => None,
        }
    }

    /// The writable database, mutably: [`Error::ReadOnly`] when opened
    /// read-only. The merger must be stopped first.
    pub(crate) fn writable_mut(&mut self) -> Result<&mut redb::Database> {
        self.check_process()?;
        match self.engine.as_mut() {
            Some(Engine::Write(db)) => Arc::get_mut(db).ok_or_else(|| {
                Error::Poisoned("the database is in use by its merger thread".to_owned())
            }),
            Some(Engine::Read(_)) => Err(Error::ReadOnly {
                path: self.path.clone(),
            }),
            None => Err(closing()),
        }
    }

    /// Takes the engine out to close it explicitly ([`Database::close`]):
    /// [`Error::WrongProcess`] in a forked child, whose drop leaks it.
    ///
    /// [`Database::close`]: super::Database::close
    pub(crate) fn into_engine(mut self) -> Result<Engine> {
        self.check_process()?;
        self.engine.take().ok_or_else(closing)
    }

    fn read_only(&self) -> Error {
        Error::ReadOnly {
            path: self.path.clone(),
        }
    }
}

/// The error for a store without an engine, which only its drop sees.
fn closing() -> Error {
    Error::Poisoned("the handle is closing".to_owned())
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.take() {
            if self.check_process().is_err() {
                // A forked child: closing would write to the parent's file
                // and release the parent's locks (see the module comment).
                std::mem::forget(engine);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_process_is_refused_before_the_engine() {
        let (_dir, path) = crate::testing::temp_path("s.redb");
        let db = redb::Database::create(&path).unwrap();
        let mut store = Store::new(Engine::Write(Arc::new(db)), &path);
        store.opened_in = store.opened_in.wrapping_add(1);
        assert!(matches!(
            store.begin_read(),
            Err(Error::WrongProcess { .. })
        ));
        assert!(matches!(store.writable(), Err(Error::WrongProcess { .. })));
        let err = store.writable_mut().err().unwrap();
        assert!(err.to_string().contains("open the database again"), "{err}");
        drop(store); // leaks the engine rather than closing it
    }
}
