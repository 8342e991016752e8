//! The open tables of one transaction, and the record-level reads and
//! writes on them.
//!
//! [`Tables`] is generic over redb's read-only and writable table types, so
//! the query planner runs unchanged inside a read transaction (queries) and
//! inside a write transaction (`insert_unique`). Writes exist only on
//! [`WriteTables`].

use crate::hash::key_hash;
use crate::store::codec::{self, DocRecord, SignatureRecord};
pub use crate::store::keys::key_posting;
pub use crate::store::legacy::LegacyKeys;
use crate::store::probe::Probe;
use crate::store::runs::{Merged, ReadRuns, RunTables, RunWriter, RunsView, FRESH_MAX};
use crate::store::schema::{BLOCKS, BUCKETS, DOCS, KEY_BAND, SETS, SIGS};
use crate::{Error, Result};
use redb::{
    ReadOnlyTable, ReadTransaction, ReadableTable, ReadableTableMetadata, Table, WriteTransaction,
};
use std::collections::HashSet;
use std::sync::Arc;

/// One transaction's view of the document and index tables.
pub struct Tables<K, D, S, G, B, H, R> {
    /// The `keys` table of a file of format 1 to 3 opened read-only
    /// ([`LegacyKeys`]); format 4 indexes keys by postings.
    pub keys: K,
    /// Id → document record.
    pub docs: D,
    /// Id → shingle set record.
    pub sets: S,
    /// Id → signature record.
    pub sigs: G,
    /// MinHash postings.
    pub buckets: B,
    /// SimHash block postings.
    pub blocks: H,
    /// The posting runs (format 2): MinHash postings beyond the fresh
    /// ones in `buckets`.
    pub runs: R,
}

type Bytes = &'static [u8];
type Posting = (u32, u64, u64);

/// Tables of a read transaction.
pub type ReadTables = Tables<
    Option<ReadOnlyTable<&'static str, u64>>,
    ReadOnlyTable<u64, Bytes>,
    ReadOnlyTable<u64, Bytes>,
    ReadOnlyTable<u64, Bytes>,
    ReadOnlyTable<Posting, ()>,
    ReadOnlyTable<Posting, ()>,
    Option<ReadRuns>,
>;

/// Tables of a write transaction.
pub type WriteTables<'t> = Tables<
    (),
    Table<'t, u64, Bytes>,
    Table<'t, u64, Bytes>,
    Table<'t, u64, Bytes>,
    Table<'t, Posting, ()>,
    Table<'t, Posting, ()>,
    RunWriter<'t>,
>;

impl ReadTables {
    /// Opens every table in a read transaction.
    pub fn open(txn: &ReadTransaction) -> Result<Self> {
        Ok(Tables {
            keys: crate::store::legacy::open_keys_table(txn)?,
            docs: txn.open_table(DOCS)?,
            sets: txn.open_table(SETS)?,
            sigs: txn.open_table(SIGS)?,
            buckets: txn.open_table(BUCKETS)?,
            blocks: txn.open_table(BLOCKS)?,
            runs: ReadRuns::open(txn)?,
        })
    }

    /// Reads run filter rows through `rows`, a cache shared with other
    /// snapshots of the same file ([`ReadRuns::share_rows`]).
    ///
    /// # Errors
    /// Reading the runs' filters fails.
    pub fn share_rows(&mut self, rows: std::sync::Arc<crate::store::runs::RowCache>) -> Result<()> {
        match &mut self.runs {
            Some(runs) => runs.share_rows(rows),
            None => Ok(()),
        }
    }

    /// Every MinHash posting of a live document — fresh ones and those in
    /// runs, without the postings runs still hold for removed documents —
    /// in (band, key, id) order.
    pub fn all_postings(&self) -> Result<impl Iterator<Item = Result<Posting>> + '_> {
        self.postings_in(0..=KEY_BAND - 1)
    }

    /// Every key posting (format 4) of a live document, in (band, key, id)
    /// order.
    pub fn key_postings(&self) -> Result<impl Iterator<Item = Result<Posting>> + '_> {
        self.postings_in(KEY_BAND..=KEY_BAND)
    }

    /// The postings of live documents in `bands`, fresh and in runs.
    fn postings_in(
        &self,
        bands: std::ops::RangeInclusive<u32>,
    ) -> Result<impl Iterator<Item = Result<Posting>> + '_> {
        let (first, last) = (*bands.start(), *bands.end());
        let fresh = self
            .buckets
            .range((first, 0, 0)..=(last, u64::MAX, u64::MAX))?
            .map(|entry| entry.map(|(k, _)| k.value()).map_err(Error::from));
        let mut sources: Vec<Box<dyn Iterator<Item = Result<Posting>> + '_>> =
            vec![Box::new(fresh)];
        let mut dead = HashSet::new();
        if let Some(runs) = &self.runs {
            for &(run, _) in runs.list() {
                sources.push(Box::new(runs.scan(run, bands.clone())?));
            }
            dead = runs.dead_ids()?;
        }
        Ok(Merged::new(sources)
            .filter(move |posting| !matches!(posting, Ok((_, _, id)) if dead.contains(id))))
    }
}

/// A candidate's decoded records, as [`Reader::entry`] returns them: its
/// set size, MinHash signature and, when it was asked for, its shingle set.
///
/// One shared allocation, `[set_len, n, has_set, signature.., set..]`:
/// verification touches thousands of cached entries per query, and each
/// separate allocation is another cache miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry(Arc<[u32]>);

impl Entry {
    const HEADER: usize = 3;

    /// An entry of `set_len` shingles with `signature`, and `set` if read.
    pub fn new(set_len: u32, signature: &[u32], set: Option<&[u32]>) -> Self {
        let n = signature.len();
        let mut words = Vec::with_capacity(Self::HEADER + n + set.map_or(0, <[u32]>::len));
        // Signatures have at most MAX_PERM (4,096) values.
        words.extend([set_len, n as u32, u32::from(set.is_some())]);
        words.extend_from_slice(signature);
        words.extend_from_slice(set.unwrap_or_default());
        Self(words.into())
    }

    /// Number of shingles in the document's set.
    pub fn set_len(&self) -> u32 {
        self.0[0]
    }

    /// The MinHash signature.
    pub fn signature(&self) -> &[u32] {
        &self.0[Self::HEADER..Self::HEADER + self.0[1] as usize]
    }

    /// The shingle set, when it was read.
    pub fn set(&self) -> Option<&[u32]> {
        (self.0[2] != 0).then(|| &self.0[Self::HEADER + self.0[1] as usize..])
    }

    /// Decoded bytes held.
    pub fn bytes(&self) -> usize {
        self.0.len() * 4
    }
}

/// Which posting table a look-up reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Postings {
    /// MinHash band buckets.
    Buckets,
    /// SimHash blocks.
    Blocks,
}

/// Look-ups in the key and posting tables, for any transaction. Readers
/// that cache or walk records ([`Reader::index`]) pass these through.
pub trait Index {
    /// The id of an external key.
    fn id_of(&self, key: &str) -> Result<Option<u64>>;
    /// Appends to `out` the ids of `probe`'s list in `table`, ascending.
    /// Returns true when the list was cut at the probe's `cap`.
    fn postings(&self, table: Postings, probe: Probe, out: &mut Vec<u64>) -> Result<bool>;
    /// The number of stored documents.
    fn len(&self) -> Result<u64>;
}

/// Record-level reads, for any transaction.
pub trait Reader {
    /// The key and posting look-ups of the same snapshot.
    fn index(&self) -> &dyn Index;
    /// The document record of an id.
    fn doc(&self, id: u64) -> Result<Option<DocRecord>>;
    /// The external key of an id (what a hit reports).
    fn key(&self, id: u64) -> Result<Option<Arc<str>>> {
        Ok(self.doc(id)?.map(|doc| Arc::from(doc.key)))
    }
    /// Decodes the shingle set of `id` into `out`; false when absent.
    fn set_into(&self, id: u64, out: &mut Vec<u32>) -> Result<bool>;
    /// Decodes the signature record of `id` into `out`; false when absent.
    fn signature_into(&self, id: u64, out: &mut SignatureRecord) -> Result<bool>;
    /// The signature record of `id` and, when `want_set` says so after
    /// seeing that record, its shingle set too; `None` when `id` is absent.
    /// This is how the query planner reads a candidate: one call, and no
    /// set decoded for a candidate the signature already rules out.
    ///
    /// `want_set` gets the set size and the signature.
    fn entry(
        &self,
        id: u64,
        want_set: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> Result<Option<Entry>> {
        let mut record = SignatureRecord::default();
        if !self.signature_into(id, &mut record)? {
            return Ok(None);
        }
        let mut set = Vec::new();
        let with_set = want_set(record.set_len, &record.values) && self.set_into(id, &mut set)?;
        let set = with_set.then_some(set.as_slice());
        Ok(Some(Entry::new(record.set_len, &record.values, set)))
    }
}

impl<K, D, S, G, B, H, R> Index for Tables<K, D, S, G, B, H, R>
where
    R: RunsView,
    K: LegacyKeys,
    D: ReadableTable<u64, Bytes>,
    S: ReadableTable<u64, Bytes>,
    G: ReadableTable<u64, Bytes>,
    B: ReadableTable<Posting, ()>,
    H: ReadableTable<Posting, ()>,
{
    fn id_of(&self, key: &str) -> Result<Option<u64>> {
        if let Some(found) = self.keys.legacy_id(key)? {
            return Ok(found);
        }
        // Every id under the hash: more than one means keys that share a
        // 64-bit hash (which keys made on purpose can), told apart by the
        // key each document record stores; no cap, so none is missed.
        let mut ids = Vec::new();
        let probe = Probe::all(KEY_BAND, key_hash(key), usize::MAX);
        self.postings(Postings::Buckets, probe, &mut ids)?;
        for id in ids {
            match self.doc(id)? {
                Some(doc) if doc.key == key => return Ok(Some(id)),
                Some(_) => {} // another key of the same hash
                // Key postings of removed documents never reach here.
                None => {
                    return Err(Error::corrupted(format!(
                        "the key index points at missing document {id}"
                    )))
                }
            }
        }
        Ok(None)
    }

    fn postings(&self, table: Postings, probe: Probe, out: &mut Vec<u64>) -> Result<bool> {
        let Some(start) = probe.start() else {
            return Ok(false);
        };
        let Probe {
            index, key, cap, ..
        } = probe;
        let range = (index, key, start)..=(index, key, u64::MAX);
        let iter = match table {
            Postings::Buckets => self.buckets.range(range)?,
            Postings::Blocks => self.blocks.range(range)?,
        };
        let from = out.len();
        let mut cut = false;
        for (taken, entry) in iter.enumerate() {
            if taken == cap {
                cut = true;
                break;
            }
            out.push(entry?.0.value().2);
        }
        if table == Postings::Buckets {
            if let Some(runs) = self.runs.runs() {
                cut |= runs.postings(probe, out)?;
            }
            // The lowest `cap` ids of the bucket, ascending, as from one list.
            let list = &mut out[from..];
            list.sort_unstable();
            if list.len() > cap {
                cut = true;
                out.truncate(from + cap);
            }
        }
        Ok(cut)
    }

    fn len(&self) -> Result<u64> {
        Ok(self.docs.len()?)
    }
}

impl<K, D, S, G, B, H, R> Reader for Tables<K, D, S, G, B, H, R>
where
    R: RunsView,
    K: LegacyKeys,
    D: ReadableTable<u64, Bytes>,
    S: ReadableTable<u64, Bytes>,
    G: ReadableTable<u64, Bytes>,
    B: ReadableTable<Posting, ()>,
    H: ReadableTable<Posting, ()>,
{
    fn index(&self) -> &dyn Index {
        self
    }

    fn doc(&self, id: u64) -> Result<Option<DocRecord>> {
        match self.docs.get(id)? {
            None => Ok(None),
            Some(v) => codec::decode_doc(v.value())
                .map(Some)
                .map_err(|e| context(e, "document", id)),
        }
    }

    fn set_into(&self, id: u64, out: &mut Vec<u32>) -> Result<bool> {
        match self.sets.get(id)? {
            None => Ok(false),
            Some(v) => codec::decode_set_into(v.value(), out)
                .map(|()| true)
                .map_err(|e| context(e, "shingle set", id)),
        }
    }

    fn signature_into(&self, id: u64, out: &mut SignatureRecord) -> Result<bool> {
        match self.sigs.get(id)? {
            None => Ok(false),
            Some(v) => codec::decode_signature(v.value(), out)
                .map(|()| true)
                .map_err(|e| context(e, "signature", id)),
        }
    }
}

/// Adds the record and id to a decoding error's message.
pub(crate) fn context(err: Error, what: &str, id: u64) -> Error {
    match err {
        Error::Corrupted(msg) => Error::Corrupted(format!("{what} record of document {id}: {msg}")),
        other => other,
    }
}

/// Everything stored for one document, encoded and ready to write.
pub struct Encoded<'a> {
    /// External key.
    pub key: &'a str,
    /// `Tag::Doc` record.
    pub doc: &'a [u8],
    /// `Tag::Set` record.
    pub set: &'a [u8],
    /// `Tag::Signature` record.
    pub signature: &'a [u8],
    /// One key per band.
    pub band_keys: &'a [u64],
    /// One value per SimHash block (empty when the index is off).
    pub blocks: &'a [u64],
}

impl<'t> WriteTables<'t> {
    /// A load's cache of whole run filters, and the highest run id it has
    /// issued ([`RunWriter::share_filters`]).
    pub fn share_run_filters(
        &mut self,
        cache: &crate::store::runs::RowCache,
        issued: u32,
    ) -> Result<()> {
        self.runs.share_filters(cache, issued)
    }

    /// The highest run id issued or listed ([`RunWriter::issued`]).
    pub fn run_ids_issued(&self) -> u32 {
        self.runs.issued()
    }

    /// Opens (creating when absent) every table in a write transaction.
    pub fn open(txn: &'t WriteTransaction) -> Result<Self> {
        Ok(Tables {
            keys: (),
            docs: txn.open_table(DOCS)?,
            sets: txn.open_table(SETS)?,
            sigs: txn.open_table(SIGS)?,
            buckets: txn.open_table(BUCKETS)?,
            blocks: txn.open_table(BLOCKS)?,
            runs: RunWriter::open(txn)?,
        })
    }

    /// Stores a document under `id` with its postings. The id must be free
    /// (remove the old version first).
    pub fn put(&mut self, id: u64, doc: &Encoded<'_>) -> Result<()> {
        self.put_records(id, doc)?;
        let postings: Vec<Posting> = doc
            .band_keys
            .iter()
            .enumerate()
            .map(|(band, &key)| (band as u32, key, id))
            .chain([key_posting(doc.key, id)])
            .collect();
        let blocks: Vec<Posting> = doc
            .blocks
            .iter()
            .enumerate()
            .map(|(block, &value)| (block as u32, value, id))
            .collect();
        self.put_postings(&postings, &blocks)
    }

    /// Stores a document's id-keyed records (document, set, signature).
    pub fn put_records(&mut self, id: u64, doc: &Encoded<'_>) -> Result<()> {
        self.docs.insert(id, doc.doc)?;
        self.sets.insert(id, doc.set)?;
        self.sigs.insert(id, doc.signature)?;
        Ok(())
    }

    /// Stores fresh postings: band and key postings in `buckets`, SimHash
    /// ones in `blocks` (sorted input makes the B-tree inserts sequential).
    pub fn put_postings(&mut self, buckets: &[Posting], blocks: &[Posting]) -> Result<()> {
        for &posting in buckets {
            self.buckets.insert(posting, ())?;
        }
        for &posting in blocks {
            self.blocks.insert(posting, ())?;
        }
        Ok(())
    }

    /// Removes document `id` stored under `key` and its postings: its
    /// `band_keys` and SimHash `blocks`, which the caller recomputed from
    /// the stored records (`Pipeline::stored_signature`).
    pub fn delete(&mut self, id: u64, key: &str, band_keys: &[u64], blocks: &[u64]) -> Result<()> {
        for (band, &bucket) in band_keys.iter().enumerate() {
            self.buckets.remove((band as u32, bucket, id))?;
        }
        for (block, &value) in blocks.iter().enumerate() {
            self.blocks.remove((block as u32, value, id))?;
        }
        self.buckets.remove(key_posting(key, id))?;
        self.docs.remove(id)?;
        self.sets.remove(id)?;
        self.sigs.remove(id)?;
        // Postings of it already in runs stay there until a merge drops them.
        self.runs.mark_dead(id)
    }

    /// Stores SimHash postings, and writes `buckets` (the sorted band and
    /// key postings of new documents) as a new posting run: what a bulk
    /// load's commit does instead of one B-tree row per posting.
    pub fn put_run(&mut self, buckets: Vec<Posting>, blocks: &[Posting]) -> Result<()> {
        self.put_postings(&[], blocks)?;
        let per_band = most_per_band(&buckets);
        self.runs.add_run(buckets.into_iter().map(Ok), per_band)
    }

    /// When the fresh postings (the `buckets` table) have grown past
    /// [`FRESH_MAX`], moves them into a new run.
    pub fn flush_fresh(&mut self) -> Result<()> {
        if self.buckets.len()? <= FRESH_MAX {
            return Ok(());
        }
        self.flush_fresh_all()
    }

    /// Moves every fresh posting into a new run.
    pub fn flush_fresh_all(&mut self) -> Result<()> {
        let mut fresh = Vec::new();
        for entry in self.buckets.iter()? {
            fresh.push(entry?.0.value());
        }
        self.buckets.retain(|_, _| false)?;
        let per_band = most_per_band(&fresh);
        self.runs.add_run(fresh.into_iter().map(Ok), per_band)
    }
}

/// The most postings of one band in `postings` (sorted by band).
fn most_per_band(postings: &[Posting]) -> u64 {
    postings
        .chunk_by(|a, b| a.0 == b.0)
        .map(|band| band.len() as u64)
        .max()
        .unwrap_or(0)
}
