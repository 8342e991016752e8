//! [`Database`]: create and open a file, and every write to it.
//!
//! Each single operation is its own durable transaction; [`Batch`] commits
//! many at once and [`Database::insert_bulk`] loads large inputs with the
//! shingling and hashing spread over every core, as
//! [`Database::insert_unique_bulk`] deduplicates them. After a failed write the
//! handle is poisoned and refuses further writes until reopened.
//!
//! A write that returned `Ok` is durable. A write that failed on storage
//! may or may not be in the file — all of it or none of it, never a part:
//! the engine can fail after the commit reached the disk (a failed `fsync`,
//! or the file shrink that follows a commit). Reopen and read to find out.

mod batch;
mod bulk;
mod bulk_options;
mod clusters;
mod containment;
mod durability;
mod expire;
mod header;
mod held;
mod holding;
mod kept_filters;
mod keys;
mod labels;
mod load_filter;
mod maintain;
mod merger;
mod open;
mod pairs;
mod query;
mod reband;
mod salvage;
mod stats;
mod store;
mod unique;
mod upgrade;
mod writer;

pub use batch::Batch;
pub use bulk::{AsDocument, BulkReport, DocumentBuf};
pub use bulk_options::{
    BulkOptions, DuplicateOf, DEFAULT_BATCH, DEFAULT_LOAD_FILTER_BYTES, DEFAULT_LOOK_UP_BYTES,
    DEFAULT_MAX_CHUNK_BYTES, DEFAULT_MAX_HELD_BYTES,
};
pub use clusters::priority::Prioritised;
pub use clusters::{ClusterInfo, Clusters, DocumentCluster, DocumentClusters, Members};
pub use containment::ContainmentQuery;
pub use durability::Durability;
pub use expire::{ExpireReport, Timestamped, EXPIRE_BATCH};
pub use labels::MAX_LABEL_BYTES;
pub use maintain::CheckReport;
pub use open::Builder;
pub use query::Query;
pub use salvage::SkippedDocument;
pub use stats::{DeepStats, Stats};
pub use unique::UniqueReport;

use crate::config::{Config, Settings};
use crate::pipeline::{Document, Pipeline};
use crate::query::{Hit, QueryInput};
use crate::store::cache::RecordCache;
use crate::store::tables::{Index, ReadTables, Reader};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use store::Store;
use writer::Writer;

/// A persistent similarity index in one file.
///
/// `Database` is `Send + Sync`: share it between threads behind an `Arc`.
/// Readers see consistent snapshots while one writer commits.
///
/// A handle belongs to the process that opened it: in a child made by
/// `fork()` every call fails with [`Error::WrongProcess`] and changes
/// nothing, while the parent's handle keeps working. Open the database
/// again in the child.
///
/// ```
/// use lshdb::{Config, Database};
/// let dir = tempfile::tempdir()?;
/// let db = Database::create(dir.path().join("pages.lshdb"), Config::jaccard(0.7))?;
/// db.insert("a", "The quick brown fox jumps over the lazy dog")?; // durable on return
/// db.insert("b", "The quick brown fox jumped over the lazy dog")?;
/// db.insert("c", "An entirely different sentence about databases")?;
/// let hits = db.query("the quick brown fox jumps over the lazy dog!").run()?.hits;
/// assert_eq!(hits[0].key, "a");
/// assert!(hits.iter().all(|h| h.key != "c"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Database {
    /// First, so that it is dropped (stopped) before the store closes.
    merger: merger::Merger,
    db: Store,
    path: PathBuf,
    settings: Settings,
    pipeline: Pipeline,
    poisoned: Mutex<Option<String>>,
    cache: RecordCache,
    durability: Durability,
    /// Whole run filters kept between writes, for the clusters' upkeep
    /// (empty unless the file keeps clusters).
    kept_filters: Mutex<kept_filters::KeptFilters>,
    /// The thread holding a write transaction open while the caller's
    /// code runs, if any.
    holder: holding::Holder,
}

/// A stored document as `get` returns it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredDocument {
    /// External key.
    pub key: String,
    /// Raw text, when the database stores text.
    pub text: Option<String>,
    /// Number of distinct shingles.
    pub shingles: usize,
    /// SimHash fingerprint, when the SimHash index is on.
    pub simhash: Option<u64>,
}

/// A document as [`Database::for_each`] yields it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExportedDocument {
    /// External key.
    pub key: String,
    /// Raw text, when the database stores text.
    pub text: Option<String>,
    /// The sorted, distinct shingle hashes.
    pub shingles: Vec<u32>,
}

/// What [`Database::insert_unique`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Unique {
    /// No stored near-duplicate: the document was inserted.
    Inserted,
    /// A stored near-duplicate at or above the threshold; nothing stored.
    Duplicate(Hit),
}

impl Database {
    /// Creates a new database file at `path` with the default options;
    /// [`Database::builder`] sets others.
    ///
    /// # Errors
    /// [`Error::FileExists`] when the path exists; [`Error::InvalidParameter`]
    /// for an invalid configuration; storage errors.
    pub fn create(path: impl AsRef<Path>, config: Config) -> Result<Self> {
        Builder::default().create(path, config)
    }

    /// Opens an existing database for writing, with the default options;
    /// its configuration comes from the file. [`Database::builder`] opens
    /// read-only, waits for another writer, and sets cache sizes.
    ///
    /// # Errors
    /// [`Error::NotADatabase`], [`Error::FormatVersion`],
    /// [`Error::AlreadyOpen`] (another process writes it),
    /// [`Error::Corrupted`], [`Error::Io`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Builder::default().open(path)
    }

    /// A [`Builder`] for opening or creating with options: read-only
    /// access, waiting for another writer, cache sizes, an expected
    /// configuration, a storage backend instead of a file.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Whether this handle was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.db.is_read_only()
    }

    /// The stored settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The [`crate::Sketcher`] this database shingles, signs and bands
    /// every document and query with (clone it to sketch elsewhere).
    pub fn sketcher(&self) -> &crate::Sketcher {
        self.pipeline.sketcher()
    }

    /// The file's path; `<backend>` for a database on a storage backend
    /// (see [`Builder::create_with_backend`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Inserts (or atomically replaces) the document under `key`, durably.
    ///
    /// # Errors
    /// [`Error::InvalidKey`], [`Error::EmptyDocument`],
    /// [`Error::DocumentTooLarge`], [`Error::Poisoned`], storage errors.
    pub fn insert<'a>(&self, key: &str, doc: impl Into<Document<'a>>) -> Result<()> {
        let prepared = self.pipeline.prepare(key, doc.into())?;
        self.write(|w| w.insert(&prepared).map(|_| ()))
    }

    /// Inserts a set of items (for example the products a customer bought).
    pub fn insert_items<T: AsRef<[u8]>>(&self, key: &str, items: &[T]) -> Result<()> {
        let items: Vec<&[u8]> = items.iter().map(AsRef::as_ref).collect();
        self.insert(key, Document::Items(&items))
    }

    /// Removes the document under `key`; false when there was none.
    pub fn remove(&self, key: &str) -> Result<bool> {
        self.write(|w| w.remove(key))
    }

    /// Dedup-on-write: in one write transaction, returns the best stored
    /// near-duplicate with verified similarity ≥ `threshold` and stores
    /// nothing, or inserts the document when there is none.
    pub fn insert_unique<'a>(
        &self,
        key: &str,
        doc: impl Into<Document<'a>>,
        threshold: f64,
    ) -> Result<Unique> {
        crate::config::check_threshold("threshold", threshold)?;
        let prepared = self.pipeline.prepare(key, doc.into())?;
        self.write(|w| w.insert_unique(&prepared, threshold))
    }

    /// The document stored under `key`.
    pub fn get(&self, key: &str) -> Result<Option<StoredDocument>> {
        crate::guard::guard(|| {
            let txn = self.db.begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let Some(id) = tables.id_of(key)? else {
                return Ok(None);
            };
            let doc = tables.doc(id)?.ok_or_else(|| {
                Error::corrupted(format!("key `{key}` points at missing document {id}"))
            })?;
            let mut signature = crate::store::codec::SignatureRecord::default();
            if !tables.signature_into(id, &mut signature)? {
                return Err(Error::corrupted(format!("document {id} has no signature")));
            }
            Ok(Some(StoredDocument {
                key: doc.key,
                text: doc.text,
                shingles: signature.set_len as usize,
                simhash: signature.simhash,
            }))
        })
    }

    /// Calls `f` with every stored document in id order (the order they
    /// were stored in), from one snapshot, with its shingle set; stops when
    /// `f` returns false. Export and incremental scans build on this.
    pub fn for_each(&self, mut f: impl FnMut(ExportedDocument) -> bool) -> Result<()> {
        crate::guard::guard(|| {
            use redb::ReadableTable;
            let txn = self.db.begin_read()?;
            let tables = ReadTables::open(&txn)?;
            for entry in tables.docs.iter()? {
                let (id, bytes) = entry?;
                let id = id.value();
                let doc = crate::store::codec::decode_doc(bytes.value())
                    .map_err(|e| crate::store::tables::context(e, "document", id))?;
                let mut shingles = Vec::new();
                if !tables.set_into(id, &mut shingles)? {
                    return Err(Error::corrupted(format!(
                        "document {id} has no shingle set"
                    )));
                }
                if !f(ExportedDocument {
                    key: doc.key,
                    text: doc.text,
                    shingles,
                }) {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Whether a document is stored under `key`.
    pub fn contains(&self, key: &str) -> Result<bool> {
        crate::guard::guard(|| {
            let txn = self.db.begin_read()?;
            Ok(ReadTables::open(&txn)?.id_of(key)?.is_some())
        })
    }

    /// The number of stored documents.
    pub fn len(&self) -> Result<u64> {
        crate::guard::guard(|| {
            let txn = self.db.begin_read()?;
            ReadTables::open(&txn)?.len()
        })
    }

    /// Whether the database holds no document.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// A query for near-duplicates of a text.
    pub fn query(&self, text: &str) -> Query<'_> {
        Query::new(self, QueryInput::Text(text.to_owned()))
    }

    /// A query for near-duplicates of an item set.
    pub fn query_items<T: AsRef<[u8]>>(&self, items: &[T]) -> Query<'_> {
        let items = items.iter().map(|i| i.as_ref().to_vec()).collect();
        Query::new(self, QueryInput::Items(items))
    }

    /// A query for near-duplicates of the stored document `key` (which is
    /// itself left out of the hits).
    pub fn query_key(&self, key: &str) -> Query<'_> {
        Query::new(self, QueryInput::Key(key.to_owned()))
    }

    /// A write transaction committing many operations at once.
    pub fn batch(&self) -> Result<Batch<'_>> {
        crate::guard::guard(|| {
            self.check_poisoned()?;
            let txn = self.begin_write()?;
            Ok(Batch::new(self, txn, self.holder.hold("a batch")))
        })
    }

    /// Runs `f` in a write transaction and commits it durably. Any failure
    /// after the transaction began poisons the handle.
    fn write<T>(&self, f: impl FnOnce(&mut Writer<'_, '_>) -> Result<T>) -> Result<T> {
        self.check_poisoned()?;
        crate::guard::guard(|| {
            let txn = self.begin_write()?;
            // The write lock is held: no other write waits on this one.
            let mut kept = self.kept_filters.lock();
            let (out, issued) = {
                let mut writer = Writer::open(&txn, &self.pipeline)?;
                if self.pipeline.clusters().is_some() {
                    kept.share(&mut writer)?;
                }
                let out = f(&mut writer)?;
                (out, writer.finish_runs()?)
            };
            txn.commit()?;
            kept.committed(issued);
            Ok(out)
        })
        .map_err(|e| self.poison(e))
    }

    /// The writable redb database: [`Error::ReadOnly`] on a read-only
    /// handle, [`Error::WrongProcess`] in a forked child.
    /// [`Error::WriteInProgress`] on the thread that holds a batch or a
    /// dedup-on-write load open.
    pub(crate) fn writable(&self) -> Result<&redb::Database> {
        self.holder.check(&self.path)?;
        self.db.writable()
    }

    /// What every write checks first: [`Error::WrongProcess`] in a forked
    /// child (before any parallel work, whose thread pool a child lacks),
    /// then [`Error::Poisoned`] after a failed write.
    pub(crate) fn check_poisoned(&self) -> Result<()> {
        self.db.check_process()?;
        match &*self.poisoned.lock() {
            Some(reason) => Err(Error::Poisoned(reason.clone())),
            None => Ok(()),
        }
    }

    /// Records `err` as the reason to refuse further writes, when it is a
    /// failure of storage rather than a rejected input.
    pub(crate) fn poison(&self, err: Error) -> Error {
        if matches!(
            err,
            Error::Storage(_) | Error::Io { .. } | Error::Corrupted(_)
        ) {
            *self.poisoned.lock() = Some(err.to_string());
        }
        err
    }

    /// Stores `settings` in place of the current ones, in one transaction
    /// in which `rebuild` first rewrites what they change (postings, an
    /// index) with the new pipeline; on success the handle uses them.
    pub(crate) fn change_settings(
        &mut self,
        settings: Settings,
        rebuild: impl FnOnce(&redb::WriteTransaction, &Pipeline) -> Result<()>,
    ) -> Result<()> {
        let pipeline = Pipeline::new(&settings)?;
        let merging = self.pause_merger();
        let result = (|| {
            let txn = self.writable()?.begin_write()?;
            rebuild(&txn, &pipeline)?;
            let mut meta_table = txn.open_table(crate::store::schema::META)?;
            crate::store::meta::write_header(&mut meta_table, &settings)?;
            drop(meta_table);
            txn.commit()?;
            Ok::<(), Error>(())
        })();
        self.resume_merger(merging);
        result.map_err(|e| self.poison(e))?;
        self.settings = settings;
        self.pipeline = pipeline;
        Ok(())
    }

    pub(crate) fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Stops the merger thread for what needs the storage engine alone;
    /// true when there was one ([`Database::resume_merger`] restarts it).
    pub(crate) fn pause_merger(&mut self) -> bool {
        let was = self.merger.is_running();
        self.merger.stop();
        was
    }

    /// Starts a merger again after [`Database::pause_merger`] returned
    /// `was` true (in the process that opened the handle only).
    pub(crate) fn resume_merger(&mut self, was: bool) {
        if was && self.db.check_process().is_ok() {
            if let Some(engine) = self.db.shared() {
                self.merger = merger::Merger::start(engine);
            }
        }
    }

    /// Waits until the background merger has made every run merge due now
    /// (see `docs/format.md`, posting runs) and deleted the runs it
    /// retired; at once for a read-only handle. Merges too large for a
    /// write are made in the background: a benchmark or a test calls this
    /// to measure or check the file after them. Must not be called while
    /// this thread holds a [`Batch`] (the merger needs the write lock).
    ///
    /// # Errors
    /// [`Error::WrongProcess`] in a forked child; [`Error::Poisoned`] when
    /// a storage error stopped the merger (writes then merge inline).
    pub fn wait_for_merges(&self) -> Result<()> {
        self.db.check_process()?;
        self.merger.wait_idle()
    }

    /// Lets the background merger have write transactions for about
    /// `budget` if it waits for one: a load that reads its own runs calls
    /// this between two of its transactions, or the merger would not get
    /// the lock until the load ends.
    pub(crate) fn give_merger_turns(&self, budget: std::time::Duration) {
        self.merger.give_turns(budget);
    }

    pub(crate) fn store(&self) -> &Store {
        &self.db
    }

    pub(crate) fn cache(&self) -> &RecordCache {
        &self.cache
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("path", &self.path)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
