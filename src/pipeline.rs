//! The pipeline from a document to what is stored and searched: its
//! shingle set, signature, band keys, SimHash blocks and encoded records.
//!
//! [`Pipeline`] is built once from the stored settings and is pure CPU work,
//! so bulk loads run it on every core before the single writer stores the
//! results. Queries sketch their input here too: the pipeline sits below
//! both `db` (writes) and `query` (the planner), so neither imports the
//! other's internals.

use crate::config::Settings;
use crate::shingle::{ShingleSet, Shingler};
use crate::sketch::lsh::Banding;
use crate::sketch::minhash::MinHasher;
use crate::sketch::simhash::{self, Weighting};
use crate::store::codec::{self, DocRecord, SignatureRecord};
use crate::store::tables::{Encoded, Reader};
use crate::{Error, Result};

/// The longest accepted external key, in bytes of UTF-8.
pub const MAX_KEY_BYTES: usize = 4096;

/// The largest accepted document: bytes of text, or total bytes of items.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// What a document is: text to shingle, or a set of items (a customer's
/// purchases, a film's raters) hashed whole.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Document<'a> {
    /// Text, normalised and shingled by the database's settings.
    Text(&'a str),
    /// Items, each hashed whole with the database's shingle seed.
    Items(&'a [&'a [u8]]),
    /// Shingle hashes computed elsewhere (an export, another tool), used
    /// as they are: sorted and de-duplicated, never re-hashed.
    Shingles(&'a [u32]),
}

impl<'a> From<&'a str> for Document<'a> {
    fn from(text: &'a str) -> Self {
        Document::Text(text)
    }
}

impl<'a> From<&'a String> for Document<'a> {
    fn from(text: &'a String) -> Self {
        Document::Text(text)
    }
}

impl<'a> From<&'a [&'a [u8]]> for Document<'a> {
    fn from(items: &'a [&'a [u8]]) -> Self {
        Document::Items(items)
    }
}

impl Document<'_> {
    fn size(&self) -> usize {
        match self {
            Document::Text(text) => text.len(),
            Document::Items(items) => items.iter().map(|i| i.len()).sum(),
            Document::Shingles(hashes) => hashes.len() * 4,
        }
    }
}

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

/// The sketches of a query document.
#[derive(Debug, Clone, Default)]
pub struct Sketch {
    /// Sorted, distinct shingle hashes.
    pub set: Vec<u32>,
    /// MinHash signature.
    pub signature: Vec<u32>,
    /// One key per band.
    pub band_keys: Vec<u64>,
    /// SimHash fingerprint (0 unless asked for).
    pub simhash: u64,
}

/// Shingler, hasher and banding of one database.
#[derive(Debug, Clone)]
pub struct Pipeline {
    shingler: Shingler,
    hasher: MinHasher,
    banding: Banding,
    simhash_blocks: Option<u32>,
    store_text: bool,
    containment: Option<crate::sketch::ensemble::Ensemble>,
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
        let max_blocks = crate::config::MAX_SIMHASH_DISTANCE + 1;
        if let Some(blocks) = settings.simhash_blocks {
            if !(1..=max_blocks).contains(&blocks) {
                return Err(Error::corrupted(format!(
                    "settings record: {blocks} SimHash blocks, outside 1 to {max_blocks}"
                )));
            }
        }
        Ok(Self {
            shingler: Shingler::new(settings.shingle.clone())?,
            hasher: MinHasher::new(settings.minhash)?,
            banding: settings.banding()?,
            simhash_blocks: settings.simhash_blocks,
            store_text: settings.store_text,
            containment: settings.containment,
        })
    }

    /// The banding in force.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// The containment index's shape, when that index is on.
    pub fn containment(&self) -> Option<crate::sketch::ensemble::Ensemble> {
        self.containment
    }

    /// The signature length.
    pub fn num_perm(&self) -> usize {
        self.hasher.config().num_perm
    }

    /// Whether signatures use independent permutations (whose agreement is a
    /// binomial estimate at every set size).
    pub fn is_permutation_scheme(&self) -> bool {
        self.hasher.config().scheme == crate::sketch::minhash::Scheme::Permutations
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

    /// The shingle set of a document, and its SimHash when `with_simhash`
    /// (computing it costs as much as shingling, so only when needed).
    fn shingle(&self, key: &str, doc: Document<'_>, with_simhash: bool) -> Result<(Vec<u32>, u64)> {
        let size = doc.size();
        if size > MAX_DOCUMENT_BYTES {
            return Err(Error::DocumentTooLarge {
                key: key.to_owned(),
                len: size,
                max: MAX_DOCUMENT_BYTES,
            });
        }
        let unit = |set: &ShingleSet| {
            if with_simhash {
                simhash::from_bag(set.as_slice(), Weighting::Unit)
            } else {
                0
            }
        };
        let (set, simhash) = match doc {
            Document::Text(text) if with_simhash => {
                let bag = self.shingler.bag(text);
                let simhash = simhash::from_bag(bag.as_slice(), Weighting::TermFrequency);
                (bag.to_set(), simhash)
            }
            Document::Text(text) => (self.shingler.set(text), 0),
            Document::Items(items) => {
                let set = crate::shingle::item_set(items.iter(), self.shingler.config().seed);
                let simhash = unit(&set);
                (set, simhash)
            }
            Document::Shingles(hashes) => {
                let set = ShingleSet::from_hashes(hashes.to_vec());
                let simhash = unit(&set);
                (set, simhash)
            }
        };
        if set.is_empty() {
            return Err(Error::EmptyDocument {
                key: key.to_owned(),
            });
        }
        Ok((set.into_vec(), simhash))
    }

    /// Everything stored for `doc` under `key`.
    ///
    /// # Errors
    /// [`Error::InvalidKey`], [`Error::DocumentTooLarge`],
    /// [`Error::EmptyDocument`].
    pub fn prepare(&self, key: &str, doc: Document<'_>) -> Result<Prepared> {
        Self::check_key(key)?;
        let (set, fingerprint) = self.shingle(key, doc, self.simhash_blocks.is_some())?;
        let signature = self.hasher.signature(&set);
        let mut band_keys = Vec::with_capacity(self.banding.bands());
        self.banding.band_keys(&signature, &mut band_keys);
        let simhash = self.simhash_blocks.map(|_| fingerprint);
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
        })
    }

    /// The sketch of a query document (no key limits apply); its SimHash
    /// only when `with_simhash`.
    pub fn sketch(&self, doc: Document<'_>, with_simhash: bool) -> Result<Sketch> {
        let (set, simhash) = self.shingle("(query)", doc, with_simhash)?;
        Ok(self.sketch_of_set(ShingleSet::from_hashes(set), simhash))
    }

    /// The sketch of an already shingled set.
    pub fn sketch_of_set(&self, set: ShingleSet, simhash: u64) -> Sketch {
        let set = set.into_vec();
        let signature = self.hasher.signature(&set);
        let mut band_keys = Vec::new();
        self.banding.band_keys(&signature, &mut band_keys);
        Sketch {
            set,
            signature,
            band_keys,
            simhash,
        }
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
            self.hasher.signature_into(set, &mut record.values);
        }
    }

    /// The MinHash signature of a shingle set.
    pub fn signature_of(&self, set: &[u32]) -> Vec<u32> {
        self.hasher.signature(set)
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
        self.banding.band_keys(&record.values, band_keys);
        self.simhash_blocks_into(record.simhash, blocks);
    }

    /// The block values of a fingerprint (nothing when the index is off).
    pub fn simhash_blocks_into(&self, simhash: Option<u64>, out: &mut Vec<u64>) {
        out.clear();
        if let (Some(count), Some(fp)) = (self.simhash_blocks, simhash) {
            out.extend((0..count).filter_map(|i| simhash::block(fp, i, count).ok()));
        }
    }

    /// The number of SimHash blocks, when the index is on.
    pub fn simhash_blocks(&self) -> Option<u32> {
        self.simhash_blocks
    }
}
