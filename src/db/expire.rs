//! Timestamps and expiry: inserting with a timestamp, reading one,
//! removing every document older than a time ([`Database::expire`]), and
//! building or dropping the time index of an existing file.
//!
//! Expiry walks the time index from its oldest entry (no scan of the
//! documents) and removes each document through the ordinary removal path
//! ([`Writer::remove`], as [`Database::remove`] does), a bounded number per
//! commit: each commit is a consistent file, so a crash between commits
//! loses nothing but the rest of the work.

use super::writer::Writer;
use super::{AsDocument, CheckReport, Database};
use crate::config::Settings;
use crate::pipeline::{Document, Prepared};
use crate::store::codec;
use crate::store::schema::DOCS;
use crate::store::tables::{context, Index, ReadTables};
use crate::store::times::{self, STAMPS, TIMES};
use crate::{Error, Result};
use redb::{ReadableTable, WriteTransaction};

/// Documents [`Database::expire`] removes per commit.
pub const EXPIRE_BATCH: usize = 10_000;

/// What [`Database::expire`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ExpireReport {
    /// Documents removed, all committed.
    pub removed: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Whether the progress callback asked to stop early (older documents
    /// may remain).
    pub stopped: bool,
}

/// A document with a timestamp, for bulk loads
/// ([`Database::insert_bulk`]): `(key, Timestamped::new(text, at))`.
/// The timestamp is in seconds since the Unix epoch; without the time
/// index it is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timestamped<T> {
    /// The document.
    pub doc: T,
    /// Its timestamp, seconds since the Unix epoch.
    pub at: u64,
}

impl<T> Timestamped<T> {
    /// `doc` stamped with `at` (seconds since the Unix epoch).
    pub fn new(doc: T, at: u64) -> Self {
        Self { doc, at }
    }
}

impl<T: AsDocument> AsDocument for Timestamped<T> {
    fn as_document(&self) -> Document<'_> {
        self.doc.as_document()
    }

    fn timestamp(&self) -> Option<u64> {
        Some(self.at)
    }

    fn priority(&self) -> Option<i64> {
        self.doc.priority()
    }
}

impl Database {
    /// Whether the file keeps a time index (see
    /// [`crate::Config::timestamps`]).
    pub fn has_time_index(&self) -> bool {
        self.settings.timestamps
    }

    /// Inserts (or atomically replaces) the document under `key`, durably,
    /// stamped with `at` (seconds since the Unix epoch) instead of the
    /// current time. A replacement takes the new stamp.
    ///
    /// # Errors
    /// [`Error::NoTimeIndex`] when the file keeps no time index; those of
    /// [`Database::insert`].
    pub fn insert_at<'a>(&self, key: &str, doc: impl Into<Document<'a>>, at: u64) -> Result<()> {
        let prepared = self.prepare_at(key, doc.into(), at)?;
        self.write(|w| w.insert(&prepared).map(|_| ()))
    }

    /// `doc` prepared for storing under `key` with the stamp `at`.
    pub(super) fn prepare_at(&self, key: &str, doc: Document<'_>, at: u64) -> Result<Prepared> {
        self.require_time_index()?;
        Ok(stamped(self.pipeline.prepare(key, doc)?, Some(at)))
    }

    /// The timestamp of the document under `key` (seconds since the Unix
    /// epoch); `None` when no document is stored under it.
    ///
    /// # Errors
    /// [`Error::NoTimeIndex`] when the file keeps no time index;
    /// [`Error::Corrupted`] when a stored document has no stamp.
    pub fn timestamp(&self, key: &str) -> Result<Option<u64>> {
        self.require_time_index()?;
        crate::guard::guard(|| {
            let txn = self.db.begin_read()?;
            let Some(id) = ReadTables::open(&txn)?.id_of(key)? else {
                return Ok(None);
            };
            let stamp = match times::open_read(&txn)? {
                Some((_, stamps)) => times::stamp_of(&stamps, id)?,
                None => None,
            };
            stamp
                .map(Some)
                .ok_or_else(|| Error::corrupted(format!("document {id} has no timestamp")))
        })
    }

    /// Removes every document stamped before `older_than` (seconds since
    /// the Unix epoch), oldest first, [`EXPIRE_BATCH`] per commit, walking
    /// the time index (no scan of the documents). Each removal is the one
    /// [`Database::remove`] makes.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("t.lshdb"), Config::jaccard(0.8).timestamps(true))?;
    /// db.insert_at("old", "a story from last year", 1_700_000_000)?;
    /// db.insert_at("new", "a story from this morning", 1_800_000_000)?;
    /// let report = db.expire(1_750_000_000)?;
    /// assert_eq!(report.removed, 1);
    /// assert!(!db.contains("old")? && db.contains("new")?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NoTimeIndex`] when the file keeps no time index;
    /// [`Error::Poisoned`], storage errors (documents removed by earlier
    /// commits stay removed).
    pub fn expire(&self, older_than: u64) -> Result<ExpireReport> {
        self.expire_with(older_than, EXPIRE_BATCH, |_| true)
    }

    /// [`Database::expire`] with `batch` removals per commit; `progress` is
    /// called after each commit with the report so far, and returning
    /// false stops after that commit.
    ///
    /// # Errors
    /// As [`Database::expire`].
    pub fn expire_with(
        &self,
        older_than: u64,
        batch: usize,
        mut progress: impl FnMut(&ExpireReport) -> bool,
    ) -> Result<ExpireReport> {
        self.require_time_index()?;
        self.check_poisoned()?;
        let mut report = ExpireReport::default();
        loop {
            let removed = self.expire_once(older_than, batch.max(1))?;
            if removed == 0 {
                return Ok(report);
            }
            report.removed += removed;
            report.commits += 1;
            if !progress(&report) {
                report.stopped = true;
                return Ok(report);
            }
        }
    }

    /// Removes up to `batch` documents stamped before `older_than` in one
    /// commit; returns how many (0: none is left, nothing committed).
    fn expire_once(&self, older_than: u64, batch: usize) -> Result<u64> {
        crate::guard::guard(|| {
            let txn = self.begin_write()?;
            let mut keys = expired_keys(&txn, older_than, batch)?;
            // Removed in id order: the records' B-trees are walked, not
            // sought (one commit, so the order is not seen).
            keys.sort_unstable();
            if keys.is_empty() {
                txn.abort()?;
                return Ok(0);
            }
            {
                let mut writer = Writer::open(&txn, &self.pipeline)?;
                for (_, key) in &keys {
                    if !writer.remove(key)? {
                        return Err(Error::corrupted(format!(
                            "the time index holds document `{key}`, which its key does not find"
                        )));
                    }
                }
                writer.finish()?;
            }
            txn.commit()?;
            Ok(keys.len() as u64)
        })
        .map_err(|e| self.poison(e))
    }

    /// Builds the time index of an existing database, stamping every
    /// stored document with `at` (seconds since the Unix epoch; the time
    /// of the build, as the surfaces do, unless told otherwise), in one
    /// transaction, and records it in the settings: from then on every
    /// write maintains it. Does nothing when the index exists (stamps are
    /// kept).
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::Poisoned`], storage errors.
    pub fn build_time_index(&mut self, at: u64) -> Result<()> {
        if self.settings.timestamps {
            return Ok(());
        }
        self.set_time_index(true, at)
    }

    /// Drops the time index and its tables (every stamp is lost).
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::Poisoned`], storage errors.
    pub fn drop_time_index(&mut self) -> Result<()> {
        self.set_time_index(false, 0)
    }

    fn set_time_index(&mut self, on: bool, at: u64) -> Result<()> {
        crate::guard::guard(|| {
            self.check_poisoned()?;
            let settings = Settings {
                timestamps: on,
                ..self.settings.clone()
            };
            self.change_settings(settings, |txn, _| {
                txn.delete_table(TIMES)?;
                txn.delete_table(STAMPS)?;
                if on {
                    stamp_all(txn, at)?;
                }
                Ok(())
            })
        })
    }

    /// [`Error::NoTimeIndex`] unless the file keeps a time index.
    fn require_time_index(&self) -> Result<()> {
        match self.settings.timestamps {
            true => Ok(()),
            false => Err(Error::NoTimeIndex),
        }
    }
}

/// `doc` with the stamp `at` (`None`: the time it is written).
pub(super) fn stamped(mut doc: Prepared, at: Option<u64>) -> Prepared {
    doc.timestamp = at;
    doc
}

/// The ids and keys of up to `limit` documents stamped before
/// `older_than`, oldest first, read in the write transaction `txn` (whose
/// tables are closed again on return, for the writer).
fn expired_keys(
    txn: &WriteTransaction,
    older_than: u64,
    limit: usize,
) -> Result<Vec<(u64, String)>> {
    let times = txn.open_table(TIMES)?;
    let docs = txn.open_table(DOCS)?;
    let mut keys = Vec::new();
    for entry in times.range(..(older_than, 0))?.take(limit) {
        let id = entry?.0.value().1;
        let Some(bytes) = docs.get(id)? else {
            return Err(Error::corrupted(format!(
                "the time index holds document {id}, which is not stored"
            )));
        };
        let doc = codec::decode_doc(bytes.value()).map_err(|e| context(e, "document", id))?;
        keys.push((id, doc.key));
    }
    Ok(keys)
}

/// Stamps every stored document with `at`, in the new time index.
fn stamp_all(txn: &WriteTransaction, at: u64) -> Result<()> {
    let docs = txn.open_table(DOCS)?;
    let mut times = txn.open_table(TIMES)?;
    let mut stamps = txn.open_table(STAMPS)?;
    for entry in docs.iter()? {
        let id = entry?.0.value();
        stamps.insert(id, at)?;
        times.insert((at, id), ())?;
    }
    Ok(())
}

/// Checks the time index of a file that keeps one against its documents
/// (`check`'s part): one stamp and one time entry per document, and no
/// others.
pub(super) fn check_time_index(
    db: &Database,
    txn: &redb::ReadTransaction,
    tables: &ReadTables,
    report: &mut CheckReport,
) -> Result<()> {
    if !db.settings.timestamps {
        return Ok(());
    }
    let Some((times, stamps)) = times::open_read(txn)? else {
        if report.documents > 0 {
            report.problem(format!(
                "the time index is missing ({} documents have no timestamp)",
                report.documents
            ));
        }
        return Ok(());
    };
    let ids = tables
        .docs
        .iter()?
        .map(|entry| entry.map(|(id, _)| id.value()).map_err(Error::from));
    let documents = report.documents;
    times::check(&times, &stamps, ids, documents, |p| report.problem(p))
}
