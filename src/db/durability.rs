//! How durable a handle's commits are ([`Durability`], chosen with
//! [`Builder::durability`]), [`Database::flush`], and databases held in
//! memory ([`Builder::create_in_memory`]).
//!
//! **What `Durability::None` gives up.** Each commit is still atomic and
//! visible at once to this process's readers, but it is not written to disk
//! until a later durable commit: [`Database::flush`], a maintenance
//! operation (compact, re-band, containment index, check of the pages), or
//! closing the handle cleanly (dropping it, or [`Database::close`]). A crash
//! of the process or the machine loses every commit since the last durable
//! one and leaves the file as it was then — consistent, never half-written.
//! Space freed by non-durable commits is reused only after a durable one,
//! so a long run of them grows the file and memory; flush now and then.
//!
//! Such commits exist only in this process, so a file written this way is
//! opened in redb's exclusive mode: no other process may open it, not even
//! read-only, until the handle is closed.

use super::open::Builder;
use super::Database;
use crate::config::Config;
use crate::Result;

/// How durable each commit of a handle is ([`Builder::durability`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Durability {
    /// Every commit is on disk when it returns (the default).
    #[default]
    Immediate,
    /// Commits are written to disk only by the next durable commit
    /// ([`Database::flush`], maintenance, or a clean close); a crash loses
    /// the commits since. See the module docs of `durability`.
    None,
}

impl Builder {
    /// Creates a new database held in memory (redb's in-memory backend):
    /// nothing is written to a file, and everything is gone when the handle
    /// is dropped. For tests and short jobs. [`Database::path`] is the
    /// placeholder `<backend>`.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let db = Database::builder().create_in_memory(Config::jaccard(0.8))?;
    /// db.insert("a", "The quick brown fox jumps over the lazy dog")?;
    /// assert_eq!(db.query("The quick brown fox jumps over the lazy dog!").run()?.hits[0].key, "a");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::InvalidParameter`] for an invalid configuration.
    pub fn create_in_memory(&self, config: Config) -> Result<Database> {
        self.create_with_backend(redb::backends::InMemoryBackend::new(), config)
    }
}

impl Database {
    /// The durability this handle's commits have.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Makes every commit so far durable: one durable (empty) commit. A
    /// no-op in effect for a handle with [`Durability::Immediate`].
    ///
    /// ```
    /// use lshdb::{Config, Database, Durability};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::builder()
    ///     .durability(Durability::None)
    ///     .create(dir.path().join("fast.lshdb"), Config::jaccard(0.8))?;
    /// db.insert("a", "The quick brown fox jumps over the lazy dog")?; // not on disk yet
    /// db.flush()?; // now it is
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::ReadOnly`], [`crate::Error::Poisoned`], storage errors.
    pub fn flush(&self) -> Result<()> {
        self.check_poisoned()?;
        crate::guard::guard(|| Ok(self.writable()?.begin_write()?.commit()?))
            .map_err(|e| self.poison(e))
    }

    /// A write transaction with this handle's durability. Every write of
    /// documents or labels begins here; maintenance commits stay durable.
    pub(crate) fn begin_write(&self) -> Result<redb::WriteTransaction> {
        self.begin_write_from(self.writable()?)
    }

    /// [`Database::begin_write`] for a dedup-on-write load that marked its
    /// thread as holding the transaction (`db/holding.rs`), between two of
    /// its own transactions.
    pub(crate) fn begin_write_holding(&self) -> Result<redb::WriteTransaction> {
        self.begin_write_from(self.store().writable()?)
    }

    fn begin_write_from(&self, db: &redb::Database) -> Result<redb::WriteTransaction> {
        let mut txn = db.begin_write()?;
        if self.durability == Durability::None {
            txn.set_durability(redb::Durability::None)?;
        }
        Ok(txn)
    }
}
