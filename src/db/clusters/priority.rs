//! Documents that carry a priority (and a timestamp): [`Prioritised`], for
//! files whose clusters choose the member of highest priority as their
//! representative ([`Representative::Priority`], `docs/clusters.md`), and
//! the single-document writes that honour what a document carries
//! ([`Database::insert_document`], [`Database::insert_unique_document`],
//! [`crate::Batch::insert_document`]).

use crate::config::Representative;
use crate::db::{AsDocument, Database, Unique};
use crate::pipeline::{Document, Prepared};
use crate::{Error, Result};

/// A document with a priority, for files whose clusters choose their
/// representatives by priority ([`Representative::Priority`]): the member
/// of highest priority represents its cluster, ties going to the member
/// stored first. Documents given none have priority 0.
///
/// Bulk loads and dedup-on-write of many documents take it as any
/// [`AsDocument`]: `(key, Prioritised::new(text, 5))`, and ignore the
/// priority in files with another policy, as they ignore a
/// [`crate::Timestamped`] document's stamp in files without a time index;
/// [`Database::insert_document`] refuses it there. It nests with
/// [`crate::Timestamped`] either way round.
///
/// ```
/// use lshdb::{Config, Database, Prioritised, Representative};
/// let dir = tempfile::tempdir()?;
/// let config = Config::jaccard(0.7).cluster_representative(Representative::Priority);
/// let db = Database::create(dir.path().join("p.lshdb"), config)?;
/// db.insert("mirror", "The quick brown fox jumps over the lazy dog")?; // priority 0
/// db.insert_document("origin", &Prioritised::new("The quick brown fox jumped over the lazy dog", 10))?;
/// assert_eq!(db.cluster_of("mirror")?.unwrap().representative, "origin");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prioritised<T> {
    /// The document.
    pub doc: T,
    /// Its priority: the higher, the likelier it represents its cluster.
    pub priority: i64,
}

impl<T> Prioritised<T> {
    /// `doc` with priority `priority`.
    pub fn new(doc: T, priority: i64) -> Self {
        Self { doc, priority }
    }
}

impl<T: AsDocument> AsDocument for Prioritised<T> {
    fn as_document(&self) -> Document<'_> {
        self.doc.as_document()
    }

    fn timestamp(&self) -> Option<u64> {
        self.doc.timestamp()
    }

    fn priority(&self) -> Option<i64> {
        Some(self.priority)
    }
}

/// `prepared` with the timestamp and priority `doc` carries.
pub(crate) fn carried(mut prepared: Prepared, doc: &impl AsDocument) -> Prepared {
    prepared.timestamp = doc.timestamp();
    prepared.priority = doc.priority();
    prepared
}

impl Database {
    /// Inserts (or atomically replaces) the document under `key`, durably,
    /// as [`Database::insert`] does, with what it carries: the timestamp of
    /// a [`crate::Timestamped`] (instead of the current time) and the
    /// priority of a [`Prioritised`] (instead of 0). A replacement takes
    /// the new timestamp and priority.
    ///
    /// # Errors
    /// [`Error::NoTimeIndex`] for a timestamp in a file without the time
    /// index; [`Error::InvalidParameter`] for a priority in a file whose
    /// clusters do not rank by priority; those of [`Database::insert`].
    pub fn insert_document(&self, key: &str, doc: &impl AsDocument) -> Result<()> {
        let prepared = self.prepare_document(key, doc)?;
        self.write(|w| w.insert(&prepared).map(|_| ()))
    }

    /// Dedup-on-write, as [`Database::insert_unique`], of a document with
    /// what it carries (as [`Database::insert_document`]).
    ///
    /// # Errors
    /// As [`Database::insert_document`] and [`Database::insert_unique`].
    pub fn insert_unique_document(
        &self,
        key: &str,
        doc: &impl AsDocument,
        threshold: f64,
    ) -> Result<Unique> {
        crate::config::check_threshold("threshold", threshold)?;
        let prepared = self.prepare_document(key, doc)?;
        self.write(|w| w.insert_unique(&prepared, threshold))
    }

    /// `doc` prepared for storing under `key` with what it carries, which
    /// the file must be able to keep.
    pub(crate) fn prepare_document(&self, key: &str, doc: &impl AsDocument) -> Result<Prepared> {
        if doc.timestamp().is_some() && !self.has_time_index() {
            return Err(Error::NoTimeIndex);
        }
        if doc.priority().is_some() && self.settings.clusters != Some(Representative::Priority) {
            return Err(Error::invalid(
                "priority",
                "this database's clusters do not choose their representatives by priority \
                 (only a file with that policy stores priorities)",
            ));
        }
        let prepared = self.pipeline().prepare(key, doc.as_document())?;
        Ok(carried(prepared, doc))
    }
}
