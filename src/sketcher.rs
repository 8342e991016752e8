//! The document pipeline's computing half, public: a document (text, items
//! or shingle hashes) → its shingle set, MinHash signature, band keys and
//! SimHash fingerprint, with a database's settings.
//!
//! The database runs every write and every query through a [`Sketcher`]
//! (inside its private pipeline, which adds the stored records), so the
//! values here are the ones it stores and searches; the Python `Sketcher`
//! and the Spark kernels call this type too (`tests/sketcher.rs` pins that
//! the three agree).

use crate::config::Settings;
use crate::shingle::{ShingleSet, Shingler};
use crate::sketch::lsh::Banding;
use crate::sketch::minhash::MinHasher;
use crate::sketch::signer::TextSigner;
use crate::sketch::simhash::{self, Weighting};
use crate::{Error, Result};
use rayon::prelude::*;

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

/// The sketches of one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sketch {
    /// Sorted, distinct shingle hashes.
    pub set: Vec<u32>,
    /// MinHash signature.
    pub signature: Vec<u32>,
    /// One key per band.
    pub band_keys: Vec<u64>,
    /// SimHash fingerprint: term-frequency weighted for text, unit weights
    /// for items and shingle hashes (what the database's SimHash index
    /// stores). Inside the database, 0 where a query does not need it.
    pub simhash: u64,
}

/// Shingler, MinHash hasher and banding of one database's settings: the
/// values the database stores for a document, computed without a database.
///
/// ```
/// use lshdb::{Config, Document, Sketcher};
/// let settings = Config::jaccard(0.8).resolve()?;
/// let sketcher = Sketcher::new(&settings)?;
/// let sketch = sketcher.sketch(Document::Text("An embedded similarity database"))?;
/// assert_eq!(sketch.signature.len(), 128);
/// assert_eq!(sketch.band_keys.len(), settings.bands);
/// assert_eq!(sketch.set, sketcher.shingle_set(Document::Text("an  EMBEDDED similarity database")));
/// # Ok::<(), lshdb::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sketcher {
    shingler: Shingler,
    hasher: MinHasher,
    banding: Banding,
    simhash_blocks: Option<u32>,
}

impl Sketcher {
    /// The sketcher of resolved (or stored) settings.
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
        })
    }

    /// The shingler in force.
    pub fn shingler(&self) -> &Shingler {
        &self.shingler
    }

    /// The MinHash hasher in force.
    pub fn hasher(&self) -> &MinHasher {
        &self.hasher
    }

    /// The banding in force.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// The number of SimHash blocks, when the SimHash index is on.
    pub fn simhash_blocks(&self) -> Option<u32> {
        self.simhash_blocks
    }

    /// The sorted, distinct shingle hashes of `doc` (empty when it has
    /// none; no size limit is checked).
    pub fn shingle_set(&self, doc: Document<'_>) -> Vec<u32> {
        self.shingle(doc, false).0.into_vec()
    }

    /// The SimHash fingerprint of `doc` ([`Sketch::simhash`]).
    pub fn simhash(&self, doc: Document<'_>) -> u64 {
        match doc {
            Document::Text(text) => {
                simhash::from_bag(self.shingler.bag(text).as_slice(), Weighting::TermFrequency)
            }
            _ => self.shingle(doc, true).1,
        }
    }

    /// The MinHash signature of a shingle set.
    pub fn signature(&self, set: &[u32]) -> Vec<u32> {
        self.hasher.signature(set)
    }

    /// The band keys of a signature, into `out` (cleared first).
    pub fn band_keys_into(&self, signature: &[u32], out: &mut Vec<u64>) {
        self.banding.band_keys(signature, out);
    }

    /// A signer that turns texts into signatures with reused buffers
    /// (equal to `signature(&shingle_set(text))`).
    pub fn text_signer(&self) -> TextSigner<'_> {
        TextSigner::new(&self.shingler, &self.hasher)
    }

    /// Every sketch of `doc`, as the database computes it for a write.
    ///
    /// # Errors
    /// [`Error::DocumentTooLarge`] above [`MAX_DOCUMENT_BYTES`],
    /// [`Error::EmptyDocument`] for a document without shingles (both name
    /// the document `(document)`).
    pub fn sketch(&self, doc: Document<'_>) -> Result<Sketch> {
        let (set, simhash) = self.checked_shingle("(document)", doc, true)?;
        Ok(self.sketch_of_set(ShingleSet::from_hashes(set), simhash))
    }

    /// [`Sketcher::sketch`] of every document, on every core.
    pub fn sketch_many(&self, docs: &[Document<'_>]) -> Vec<Result<Sketch>> {
        docs.par_iter().map(|doc| self.sketch(*doc)).collect()
    }

    /// The sketch of an already shingled set, with its SimHash `simhash`.
    pub fn sketch_of_set(&self, set: ShingleSet, simhash: u64) -> Sketch {
        let set = set.into_vec();
        let signature = self.hasher.signature(&set);
        let mut band_keys = Vec::with_capacity(self.banding.bands());
        self.banding.band_keys(&signature, &mut band_keys);
        Sketch {
            set,
            signature,
            band_keys,
            simhash,
        }
    }

    /// The block values of a fingerprint (nothing when the index is off).
    pub fn simhash_blocks_into(&self, simhash: Option<u64>, out: &mut Vec<u64>) {
        out.clear();
        if let (Some(count), Some(fp)) = (self.simhash_blocks, simhash) {
            out.extend((0..count).filter_map(|i| simhash::block(fp, i, count).ok()));
        }
    }

    /// The shingle set of a document within the limits, and its SimHash
    /// when `with_simhash` (computing it costs as much as shingling);
    /// errors name the document `key`.
    pub(crate) fn checked_shingle(
        &self,
        key: &str,
        doc: Document<'_>,
        with_simhash: bool,
    ) -> Result<(Vec<u32>, u64)> {
        let size = doc.size();
        if size > MAX_DOCUMENT_BYTES {
            return Err(Error::DocumentTooLarge {
                key: key.to_owned(),
                len: size,
                max: MAX_DOCUMENT_BYTES,
            });
        }
        let (set, simhash) = self.shingle(doc, with_simhash);
        if set.is_empty() {
            return Err(Error::EmptyDocument {
                key: key.to_owned(),
            });
        }
        Ok((set.into_vec(), simhash))
    }

    /// The shingle set of a document, and its SimHash when `with_simhash`
    /// (else 0).
    fn shingle(&self, doc: Document<'_>, with_simhash: bool) -> (ShingleSet, u64) {
        let unit = |set: &ShingleSet| {
            if with_simhash {
                simhash::from_bag(set.as_slice(), Weighting::Unit)
            } else {
                0
            }
        };
        match doc {
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
        }
    }
}
