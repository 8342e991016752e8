//! [`Batch`]: many writes committed as one durable transaction.

use super::holding::Holding;
use super::{AsDocument, Database, Unique};
use crate::db::writer::Writer;
use crate::pipeline::{Document, Prepared};
use crate::Result;
use rayon::prelude::*;
use redb::WriteTransaction;

/// A write transaction. Operations apply in order and later ones see earlier
/// ones; nothing is visible to readers or durable until [`Batch::commit`].
/// Dropping a batch without committing discards it.
///
/// ```
/// use lshdb::{Config, Database};
/// let dir = tempfile::tempdir()?;
/// let db = Database::create(dir.path().join("b.lshdb"), Config::jaccard(0.8))?;
/// let mut batch = db.batch()?;
/// batch.insert("a", "first document text")?;
/// batch.insert("b", "second document text")?;
/// batch.remove("a")?;
/// batch.commit()?; // one fsync for all three
/// assert_eq!(db.len()?, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Batch<'db> {
    db: &'db Database,
    txn: WriteTransaction,
    /// Marks this thread as holding the transaction: a write through the
    /// handle here fails instead of waiting for it forever.
    _holding: Holding<'db>,
}

impl<'db> Batch<'db> {
    pub(super) fn new(db: &'db Database, txn: WriteTransaction, holding: Holding<'db>) -> Self {
        Self {
            db,
            txn,
            _holding: holding,
        }
    }

    fn apply<T>(&mut self, f: impl FnOnce(&mut Writer<'_, '_>) -> Result<T>) -> Result<T> {
        self.db.store().check_process()?;
        crate::guard::guard(|| {
            let mut writer = Writer::open(&self.txn, self.db.pipeline())?;
            let out = f(&mut writer)?;
            writer.finish()?;
            Ok(out)
        })
        .map_err(|e| self.db.poison(e))
    }

    /// Inserts or replaces a document.
    pub fn insert<'a>(&mut self, key: &str, doc: impl Into<Document<'a>>) -> Result<()> {
        let prepared = self.db.pipeline().prepare(key, doc.into())?;
        self.apply(|w| w.insert(&prepared).map(|_| ()))
    }

    /// Inserts or replaces a document stamped with `at` (seconds since the
    /// Unix epoch), as [`Database::insert_at`].
    pub fn insert_at<'a>(
        &mut self,
        key: &str,
        doc: impl Into<Document<'a>>,
        at: u64,
    ) -> Result<()> {
        let prepared = self.db.prepare_at(key, doc.into(), at)?;
        self.apply(|w| w.insert(&prepared).map(|_| ()))
    }

    /// Inserts or replaces a document with what it carries (a timestamp, a
    /// priority), as [`Database::insert_document`].
    pub fn insert_document(&mut self, key: &str, doc: &impl AsDocument) -> Result<()> {
        let prepared = self.db.prepare_document(key, doc)?;
        self.apply(|w| w.insert(&prepared).map(|_| ()))
    }

    /// Removes a document; false when there was none.
    pub fn remove(&mut self, key: &str) -> Result<bool> {
        self.apply(|w| w.remove(key))
    }

    /// Dedup-on-write within the batch (sees the batch's earlier writes).
    pub fn insert_unique<'a>(
        &mut self,
        key: &str,
        doc: impl Into<Document<'a>>,
        threshold: f64,
    ) -> Result<Unique> {
        crate::config::check_threshold("threshold", threshold)?;
        let prepared = self.db.pipeline().prepare(key, doc.into())?;
        self.apply(|w| w.insert_unique(&prepared, threshold))
    }

    /// Dedup-on-write of many documents: [`Batch::insert_unique`] of each
    /// in order (each sees the ones before it), with the documents
    /// prepared in parallel, the write tables opened once, and the
    /// accepted documents written together as one posting run, which is
    /// several times faster than one call per document. (Only in buckets
    /// larger than the query's `max_bucket` can a decision differ from
    /// one call's.) A document that
    /// cannot be indexed (empty, too large, bad key) gets its error in its
    /// slot and the others go on; a storage error fails the call.
    ///
    /// ```
    /// use lshdb::{Config, Database, Unique};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("u.lshdb"), Config::jaccard(0.8))?;
    /// let text = "the quick brown fox jumps over the lazy dog";
    /// let mut batch = db.batch()?;
    /// let done = batch.insert_unique_many(&[("a", text), ("b", text), ("c", "")], 0.8)?;
    /// batch.commit()?;
    /// assert!(matches!(done[0], Ok(Unique::Inserted)));
    /// assert!(matches!(&done[1], Ok(Unique::Duplicate(hit)) if hit.key == "a"));
    /// assert!(done[2].is_err()); // empty
    /// assert_eq!(db.len()?, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_unique_many<K, T>(
        &mut self,
        docs: &[(K, T)],
        threshold: f64,
    ) -> Result<Vec<Result<Unique>>>
    where
        K: AsRef<str> + Sync,
        T: AsDocument + Sync,
    {
        crate::config::check_threshold("threshold", threshold)?;
        let pipeline = self.db.pipeline();
        let prepared: Vec<Result<Prepared>> = docs
            .par_iter()
            .map(|(key, doc)| {
                let prepared = pipeline.prepare(key.as_ref(), doc.as_document());
                prepared.map(|p| super::clusters::priority::carried(p, doc))
            })
            .collect();
        self.apply(|w| w.insert_unique_many(prepared, threshold))
    }

    /// Commits every operation durably, at once.
    pub fn commit(self) -> Result<()> {
        let (db, txn) = (self.db, self.txn);
        if let Err(err) = db.store().check_process() {
            // A forked child: ending the transaction would touch the parent's locks.
            std::mem::forget(txn);
            return Err(err);
        }
        crate::guard::guard(|| Ok(txn.commit()?)).map_err(|e| db.poison(e))
    }

    /// Discards every operation.
    pub fn abort(self) -> Result<()> {
        if let Err(err) = self.db.store().check_process() {
            std::mem::forget(self.txn); // as in `commit`
            return Err(err);
        }
        crate::guard::guard(|| {
            self.txn.abort()?;
            Ok(())
        })
    }
}
