//! The pipeline from a document to what is stored and searched: its
//! shingle set, signature, band keys, SimHash blocks (all computed by the
//! public [`Sketcher`]) and encoded records.
//!
//! [`Pipeline`] is built once from the stored settings and is pure CPU work,
//! so bulk loads run it on every core before the single writer stores the
//! results. Queries sketch their input here too: the pipeline sits below
//! both `db` (writes) and `query` (the planner), so neither imports the
//! other's internals.

use crate::config::Settings;
use crate::shingle::ShingleSet;
use crate::sketch::lsh::Banding;
pub use crate::sketcher::{Document, Sketch, Sketcher};
use crate::store::codec::{self, DocRecord, SignatureRecord};
use crate::store::tables::{Encoded, Reader};
use crate::{Error, Result};

/// The longest accepted external key, in bytes of UTF-8.
pub const MAX_KEY_BYTES: usize = 4096;

/// A document ready to store.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// External key.
    pub key: String,
    /// Sorted, distinct shingle hashes.
    pub set: Vec<u32>,
    /// MinHash signature.
    pub signature: Vec<u32>,
    /// One key per band.
    pub band_keys: Vec<u64>,
    /// SimHash fingerprint, when the index is on.
    pub simhash: Option<u64>,
    /// SimHash block values (empty when off).
    pub blocks: Vec<u64>,
    /// The encoded records (encoded while preparing, so bulk loads encode
    /// on every core and the single writer thread only inserts).
    records: Records,
    /// Whether the writer needs `signature` (the containment index is on).
    keep_signature: bool,
    /// The size of the shingle set.
    set_len: u32,
    /// The document's timestamp for the time index (seconds since the
    /// Unix epoch); `None` stamps it with the time it is written.
    pub timestamp: Option<u64>,
    /// The document's priority, for clusters whose representative is the
    /// member of highest priority; `None`: 0.
    pub priority: Option<i64>,
}

/// The encoded `Tag::Doc`, `Tag::Set` and `Tag::Signature` records.
#[derive(Debug, Clone)]
struct Records {
    doc: Vec<u8>,
    set: Vec<u8>,
    signature: Vec<u8>,
}

impl Prepared {
    /// Frees the decoded set, and the signature unless the containment
    /// index needs it, which only dedup-on-write reads (the encoded records
    /// stay): a bulk load holds two chunks of prepared documents at once,
    /// and this halves them.
    pub(crate) fn trim(&mut self) {
        self.set = Vec::new();
        if !self.keep_signature {
            self.signature = Vec::new();
        }
    }

    /// The bytes this document takes in memory, about: its allocations
    /// and itself.
    pub(crate) fn memory(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.key.capacity()
            + 4 * (self.set.capacity() + self.signature.capacity())
            + 8 * (self.band_keys.capacity() + self.blocks.capacity())
            + self.records.doc.capacity()
            + self.records.set.capacity()
            + self.records.signature.capacity()
    }

    /// The size of the shingle set (kept after [`Prepared::trim`]).
    pub fn set_len(&self) -> u32 {
        self.set_len
    }

    /// The stored records.
    pub fn encode(&self) -> Encoded<'_> {
        Encoded {
            key: &self.key,
            doc: &self.records.doc,
            set: &self.records.set,
            signature: &self.records.signature,
            band_keys: &self.band_keys,
            blocks: &self.blocks,
        }
    }
}

/// The [`Sketcher`] of one database, and what its records need besides.
#[derive(Debug, Clone)]
pub struct Pipeline {
    sketcher: Sketcher,
    store_text: bool,
    containment: Option<crate::sketch::ensemble::Ensemble>,
    timestamps: bool,
    /// The clusters' representative policy and threshold, when kept.
    clusters: Option<(crate::config::Representative, f64)>,
}

impl Pipeline {
    /// The pipeline for stored settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for invalid shingling, signature or
    /// banding; [`Error::Corrupted`] for a SimHash block count that no
    /// configuration resolves to (only a damaged or crafted settings record
    /// holds one, and every write and SimHash search would loop over it).
    pub fn new(settings: &Settings) -> Result<Self> {
        Ok(Self {
            sketcher: Sketcher::new(settings)?,
            store_text: settings.store_text,
            containment: settings.containment,
            timestamps: settings.timestamps,
            clusters: settings.clusters.map(|policy| (policy, settings.threshold)),
        })
    }

    /// The maintained clusters' representative policy and threshold (the
    /// index threshold), when the file keeps clusters.
    pub fn clusters(&self) -> Option<(crate::config::Representative, f64)> {
        self.clusters
    }

    /// The computing half, shared with users.
    pub fn sketcher(&self) -> &Sketcher {
        &self.sketcher
    }

    /// The banding in force.
    pub fn banding(&self) -> Banding {
        self.sketcher.banding()
    }

    /// The containment index's shape, when that index is on.
    pub fn containment(&self) -> Option<crate::sketch::ensemble::Ensemble> {
        self.containment
    }

    /// Whether the time index is on.
    pub fn timestamps(&self) -> bool {
        self.timestamps
    }

    /// The signature length.
    pub fn num_perm(&self) -> usize {
        self.sketcher.hasher().config().num_perm
    }

    /// Whether signatures use independent permutations (whose agreement is a
    /// binomial estimate at every set size).
    pub fn is_permutation_scheme(&self) -> bool {
        self.sketcher.hasher().config().scheme == crate::sketch::minhash::Scheme::Permutations
    }

    /// Checks a key against the documented limits.
    pub fn check_key(key: &str) -> Result<()> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(Error::InvalidKey {
                len: key.len(),
                max: MAX_KEY_BYTES,
            });
        }
        Ok(())
    }

    /// Everything stored for `doc` under `key`.
    ///
    /// # Errors
    /// [`Error::InvalidKey`], [`Error::DocumentTooLarge`],
    /// [`Error::EmptyDocument`].
    pub fn prepare(&self, key: &str, doc: Document<'_>) -> Result<Prepared> {
        Self::check_key(key)?;
        let simhash_blocks = self.sketcher.simhash_blocks();
        let (set, fingerprint) =
            self.sketcher
                .checked_shingle(key, doc, simhash_blocks.is_some())?;
        let signature = self.sketcher.signature(&set);
        let mut band_keys = Vec::with_capacity(self.banding().bands());
        self.sketcher.band_keys_into(&signature, &mut band_keys);
        let simhash = simhash_blocks.map(|_| fingerprint);
        let mut blocks = Vec::new();
        self.simhash_blocks_into(simhash, &mut blocks);
        let text = match doc {
            Document::Text(text) if self.store_text => Some(text.to_owned()),
            _ => None,
        };
        let set_len = u32::try_from(set.len()).unwrap_or(u32::MAX);
        let records = Records {
            doc: codec::encode_doc(&DocRecord {
                key: key.to_owned(),
                text,
            }),
            set: codec::encode_set(&set),
            // Format 3 stores no MinHash values: they are recomputed from
            // the stored set where needed (`Pipeline::stored_signature`).
            signature: codec::encode_signature(set_len, simhash, &[]),
        };
        Ok(Prepared {
            keep_signature: self.containment.is_some(),
            set_len,
            key: key.to_owned(),
            set,
            signature,
            band_keys,
            simhash,
            blocks,
            records,
            timestamp: None,
            priority: None,
        })
    }

    /// The sketch of a query document (no key limits apply); its SimHash
    /// only when `with_simhash`.
    pub fn sketch(&self, doc: Document<'_>, with_simhash: bool) -> Result<Sketch> {
        let (set, simhash) = self
            .sketcher
            .checked_shingle("(query)", doc, with_simhash)?;
        Ok(self.sketch_of_set(ShingleSet::from_hashes(set), simhash))
    }

    /// The sketch of an already shingled set.
    pub fn sketch_of_set(&self, set: ShingleSet, simhash: u64) -> Sketch {
        self.sketcher.sketch_of_set(set, simhash)
    }

    /// The signature record of stored document `id` with its MinHash
    /// values: those the record holds (files written before format 3), or
    /// else recomputed from the stored shingle set, which is read into
    /// `set` (format 3 stores no values). False when `id` is absent.
    ///
    /// # Errors
    /// [`Error::Corrupted`] when the set is missing or a record is damaged.
    pub fn stored_signature(
        &self,
        reader: &(impl Reader + ?Sized),
        id: u64,
        record: &mut SignatureRecord,
        set: &mut Vec<u32>,
    ) -> Result<bool> {
        if !reader.signature_into(id, record)? {
            return Ok(false);
        }
        if record.values.is_empty() {
            if !reader.set_into(id, set)? {
                return Err(Error::corrupted(format!(
                    "document {id} has a signature record but no shingle set"
                )));
            }
            self.complete_signature(record, set);
        }
        Ok(true)
    }

    /// Fills `record.values` from the document's shingle set `set` when the
    /// record holds none (format 3); leaves stored values as they are.
    pub fn complete_signature(&self, record: &mut SignatureRecord, set: &[u32]) {
        if record.values.is_empty() {
            self.sketcher
                .hasher()
                .signature_into(set, &mut record.values);
        }
    }

    /// The MinHash signature of a shingle set.
    pub fn signature_of(&self, set: &[u32]) -> Vec<u32> {
        self.sketcher.signature(set)
    }

    /// The band keys and SimHash blocks of a complete signature record
    /// ([`Pipeline::stored_signature`]): what removal, re-banding and
    /// `check` recompute instead of storing.
    pub fn index_keys(
        &self,
        record: &SignatureRecord,
        band_keys: &mut Vec<u64>,
        blocks: &mut Vec<u64>,
    ) {
        self.sketcher.band_keys_into(&record.values, band_keys);
        self.simhash_blocks_into(record.simhash, blocks);
    }

    /// The block values of a fingerprint (nothing when the index is off).
    pub fn simhash_blocks_into(&self, simhash: Option<u64>, out: &mut Vec<u64>) {
        self.sketcher.simhash_blocks_into(simhash, out);
    }

    /// The number of SimHash blocks, when the index is on.
    pub fn simhash_blocks(&self) -> Option<u32> {
        self.sketcher.simhash_blocks()
    }
}
