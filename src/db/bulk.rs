//! Bulk loading: many documents, one commit per chunk, with shingling and
//! hashing of the next chunk running on every core while the current chunk
//! is written.

use super::bulk_options::BulkOptions;
use super::clusters::run::StoredView;
use super::load_filter::LoadFilter;
use super::writer::Writer;
use super::Database;
use crate::pipeline::{Document, Prepared};
use crate::store::tables::Index;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// Anything a bulk load can index: text (`String`, `&str`), an item set
/// (`&[&[u8]]`), pre-hashed shingles (`Vec<u32>`), or a mix ([`DocumentBuf`]).
pub trait AsDocument {
    /// The document to index.
    fn as_document(&self) -> Document<'_>;

    /// Its timestamp for the time index, seconds since the Unix epoch
    /// (`None`, the default: the time it is written; see [`crate::Timestamped`]).
    fn timestamp(&self) -> Option<u64> {
        None
    }

    /// Its priority, for clusters that choose their representatives by
    /// priority (`None`, the default: 0; see [`crate::Prioritised`]).
    fn priority(&self) -> Option<i64> {
        None
    }
}

impl AsDocument for String {
    fn as_document(&self) -> Document<'_> {
        Document::Text(self)
    }
}

impl AsDocument for &str {
    fn as_document(&self) -> Document<'_> {
        Document::Text(self)
    }
}

/// An item set (each item hashed whole, as [`Database::insert_items`]
/// hashes it).
impl AsDocument for &[&[u8]] {
    fn as_document(&self) -> Document<'_> {
        Document::Items(self)
    }
}

/// A borrowed document of any kind (as the single-document writes take
/// it), for wrapping in [`crate::Prioritised`] or [`crate::Timestamped`].
impl AsDocument for Document<'_> {
    fn as_document(&self) -> Document<'_> {
        *self
    }
}

impl AsDocument for Vec<u32> {
    fn as_document(&self) -> Document<'_> {
        Document::Shingles(self)
    }
}

/// An owned document of either kind, for inputs that mix them (imports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentBuf {
    /// Text.
    Text(String),
    /// Pre-hashed shingles.
    Shingles(Vec<u32>),
}

impl AsDocument for DocumentBuf {
    fn as_document(&self) -> Document<'_> {
        match self {
            DocumentBuf::Text(text) => Document::Text(text),
            DocumentBuf::Shingles(hashes) => Document::Shingles(hashes),
        }
    }
}

/// The bytes a document counts for [`BulkOptions::max_chunk_bytes`].
fn document_bytes(doc: &Document<'_>) -> usize {
    match doc {
        Document::Text(text) => text.len(),
        Document::Items(items) => items.iter().map(|i| i.len()).sum(),
        Document::Shingles(hashes) => hashes.len() * 4,
    }
}

/// What a bulk load did. Serialises `rejected` as `[key, message]` pairs.
#[derive(Debug, Default, serde::Serialize)]
#[non_exhaustive]
pub struct BulkReport {
    /// Documents stored (new or replaced), all committed.
    pub inserted: u64,
    /// Of those, how many replaced a document with the same key.
    pub replaced: u64,
    /// Documents refused, with their key and the reason, in input order;
    /// nothing was stored for them. The most recent
    /// [`BulkOptions::max_rejected`] (by default all).
    #[serde(serialize_with = "rejected")]
    pub rejected: Vec<(String, Error)>,
    /// Documents refused in all, kept in `rejected` or not.
    pub rejected_count: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Whether the progress callback asked to stop early.
    pub stopped: bool,
}

fn rejected<S: serde::Serializer>(
    rows: &[(String, Error)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().map(|(key, err)| (key, err.to_string())))
}

impl Database {
    /// Inserts (or replaces) many documents, committing every
    /// [`BulkOptions::batch`] documents, or sooner when a chunk's documents
    /// reach [`BulkOptions::max_chunk_bytes`]. The input is read lazily,
    /// one chunk ahead. Documents that cannot be indexed
    /// (empty, too large, bad key) are reported in
    /// [`BulkReport::rejected`] and skipped.
    ///
    /// `progress` is called after each commit with the report so far;
    /// returning false stops the load after that commit (everything
    /// reported as inserted is durable).
    ///
    /// # Errors
    /// A storage error stops the load; documents of earlier commits stay
    /// stored.
    pub fn insert_bulk<I, K, T>(
        &self,
        docs: I,
        options: &BulkOptions,
        mut progress: impl FnMut(&BulkReport) -> bool,
    ) -> Result<BulkReport>
    where
        I: IntoIterator<Item = (K, T)>,
        K: AsRef<str> + Send,
        T: AsDocument + Send,
    {
        self.check_poisoned()?;
        let chunk_size = options.batch.max(1);
        let max_bytes = options.max_chunk_bytes.max(1);
        let mut report = BulkReport::default();
        let mut input = docs.into_iter();
        let mut next_chunk = || -> Vec<(K, T)> {
            let mut chunk = Vec::new();
            let mut bytes = 0usize;
            while chunk.len() < chunk_size && bytes < max_bytes {
                let Some((key, doc)) = input.next() else {
                    break;
                };
                bytes = bytes.saturating_add(document_bytes(&doc.as_document()));
                chunk.push((key, doc));
            }
            chunk
        };
        let clusters = self.pipeline().clusters().is_some();
        let mut runs = LoadRuns::new(clusters, options.load_filter_bytes);
        report.stopped = pipeline(
            || Some(next_chunk()).filter(|chunk| !chunk.is_empty()),
            |chunk| self.prepare_chunk(chunk),
            |prepared| {
                let start = std::time::Instant::now();
                let out = self.write_chunk(&prepared, &mut runs)?;
                // The clusters' probes read every run: the merger gets the
                // write lock for as long as the chunk held it, so that runs
                // stay few (10 M: 15.2k -> 18.9k docs/s).
                if runs.clusters {
                    self.give_merger_turns(start.elapsed());
                }
                Ok((out, prepared))
            },
            |((inserted, replaced), prepared)| {
                report.inserted += inserted;
                report.replaced += replaced;
                report.commits += 1;
                let before = report.rejected.len();
                report.rejected.extend(
                    prepared
                        .into_iter()
                        .filter_map(|(key, p)| p.err().map(|e| (key, e))),
                );
                report.rejected_count += (report.rejected.len() - before) as u64;
                let over = report.rejected.len().saturating_sub(options.max_rejected);
                report.rejected.drain(..over);
                progress(&report)
            },
        )?;
        Ok(report)
    }

    fn prepare_chunk<K, T>(&self, chunk: Vec<(K, T)>) -> Vec<(String, Result<Prepared>)>
    where
        K: AsRef<str> + Send,
        T: AsDocument + Send,
    {
        let pipeline = self.pipeline();
        let clusters = pipeline.clusters().is_some();
        chunk
            .into_par_iter()
            .map(|(key, doc)| {
                let key = key.as_ref();
                let prepared = pipeline.prepare(key, doc.as_document()).map(|mut p| {
                    // The clusters' upkeep verifies new documents on their sets.
                    if !clusters {
                        p.trim();
                    }
                    super::clusters::priority::carried(p, &doc)
                });
                (key.to_owned(), prepared)
            })
            .collect()
    }

    /// Writes the prepared documents of one chunk in one transaction;
    /// returns (stored, replaced).
    fn write_chunk(
        &self,
        chunk: &[(String, Result<Prepared>)],
        runs: &mut LoadRuns,
    ) -> Result<(u64, u64)> {
        crate::guard::guard(|| {
            let txn = self.begin_write()?;
            let docs: Vec<&Prepared> = chunk.iter().filter_map(|(_, p)| p.as_ref().ok()).collect();
            // The write lock is held: no other write waits on this one.
            let mut kept = self.kept_filters.lock();
            let (replaced, issued) = {
                let mut writer = Writer::open(&txn, self.pipeline())?;
                if runs.clusters {
                    kept.share(&mut writer)?;
                    // Begun under the write lock: the last commit's state.
                    let txn = self.store().begin_read()?;
                    let view = StoredView {
                        txn,
                        rows: kept.rows(),
                        cache: self.cache(),
                    };
                    writer.look_in(Arc::new(view));
                }
                if let Some(filter) = runs.load_filter(&mut writer)? {
                    writer.know_load(filter);
                }
                let replaced = writer.insert_many(&docs)?;
                runs.written(&docs, writer.take_ids(0));
                (replaced, writer.finish_runs()?)
            };
            txn.commit()?;
            kept.committed(issued);
            Ok((docs.len() as u64, replaced))
        })
        .map_err(|e| self.poison(e))
    }
}

/// What a bulk load keeps from one of its transactions to the next (the
/// whole run filters its clusters' upkeep probes are the database's
/// [`super::kept_filters::KeptFilters`]).
struct LoadRuns {
    /// Whether the file keeps clusters.
    clusters: bool,
    /// On a file empty when the load began: what the load has written,
    /// so that a document whose key it rules out is not looked up, and,
    /// with clusters, the upkeep probes only the bands where a new
    /// document may meet a stored one.
    filter: Option<Arc<LoadFilter>>,
    /// [`BulkOptions::load_filter_bytes`].
    filter_bytes: usize,
    /// The document-id counter after the load's last transaction: another
    /// value at the next one means another writer stored documents between
    /// them, past the filter.
    next_id: Option<u64>,
}

impl LoadRuns {
    /// What a load keeps, before its first transaction; its filter takes
    /// at most `filter_bytes`.
    fn new(clusters: bool, filter_bytes: usize) -> Self {
        Self {
            clusters,
            filter: None,
            filter_bytes,
            next_id: None,
        }
    }

    /// The load's filter for `writer`'s transaction, if it still answers:
    /// made at the first transaction of a load into an empty file (of
    /// keys only without clusters), and turned off for good once another
    /// writer came between two of the load's transactions.
    fn load_filter(&mut self, writer: &mut Writer<'_, '_>) -> Result<Option<Arc<LoadFilter>>> {
        let next = writer.take_ids(0);
        match (self.next_id, &self.filter) {
            // Without clusters, only the keys: whether a document replaces
            // a stored one is the load's only look-up (at 7 M documents it
            // took 41 % of the load's CPU, reading every run's filter rows).
            (None, _) if writer.tables_mut().len()? == 0 => {
                self.filter = Some(Arc::new(match self.clusters {
                    true => LoadFilter::with_budget(self.filter_bytes),
                    false => LoadFilter::keys_only(self.filter_bytes),
                }));
            }
            (Some(expected), Some(filter)) if expected != next => filter.turn_off(),
            _ => {}
        }
        Ok(self.filter.clone())
    }

    /// Notes the documents of a transaction, written before its commit,
    /// and the id counter after them.
    fn written(&mut self, docs: &[&Prepared], next_id: u64) {
        if let Some(filter) = &self.filter {
            filter.add_many(docs);
        }
        self.next_id = Some(next_id);
    }
}

/// The pipeline of the bulk loaders: while `work` takes one chunk on this
/// side (writing it), `ready` prepares the next — from `next`, read one
/// chunk ahead — on the other cores. `after` sees each chunk's work in
/// order, back on the calling thread, and returns false to stop. Returns
/// whether `after` stopped it.
pub(super) fn pipeline<C: Send, P: Send, W: Send>(
    mut next: impl FnMut() -> Option<C>,
    ready: impl Fn(C) -> P + Sync,
    mut work: impl FnMut(P) -> Result<W> + Send,
    mut after: impl FnMut(W) -> bool,
) -> Result<bool> {
    let Some(first) = next() else {
        return Ok(false);
    };
    let mut current = ready(first);
    loop {
        let upcoming = next();
        let (done, prepared) = rayon::join(|| work(current), || upcoming.map(&ready));
        if !after(done?) {
            return Ok(true);
        }
        match prepared {
            Some(prepared) => current = prepared,
            None => return Ok(false),
        }
    }
}
