//! The settings record's payload, encoded field by field, apart from the
//! public config types (which may change without changing files).
//!
//! Layout 1 (formats 1 to 4; `docs/format.md`), in this order: shingle kind
//! (varint variant: 0 chars, 1 words, 2 stop words) and its k (varint),
//! white space (varint variant: 0 collapse, 1 remove), shingle seed
//! (varint), stop words (option byte; when 1, a varint count of varint
//! length-prefixed UTF-8 words), scheme (varint variant: 0 permutations,
//! 1 one-permutation), num_perm (varint), MinHash seed (varint), threshold
//! (f64 little-endian), bands and rows (varints), SimHash blocks (option
//! byte, then a varint), store text (byte 0 or 1); then, only when the
//! containment index is on, its trees, depth and classes per octave
//! (varints); then, only when an index added later is on, a varint of
//! feature bits (bit 0: the time index, `store::times`; bit 1: maintained
//! clusters, `store::clusters`), with the containment index's place
//! holding a single 0 when it is off; then, only when bit 1 is set, the
//! representative policy (varint: 0 first inserted, 1 longest, 2 smallest
//! key). A build that knows no features refuses such a record (zero trees,
//! or trailing bytes) instead of writing to the file without keeping its
//! indexes. Varints are unsigned LEB128; option and bool bytes are 0 or 1.
//! These are the bytes the postcard encoding of the settings struct wrote,
//! so every existing file reads unchanged (`tests/settings_record.rs`).

use crate::config::{Representative, Settings};
use crate::shingle::{ShingleConfig, ShingleKind, Whitespace};
use crate::sketch::ensemble::Ensemble;
use crate::sketch::minhash::{MinHashConfig, Scheme};
use crate::{Error, Result};

/// Encodes the payload of a settings record (layout 1).
pub fn encode(settings: &Settings) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    let shingle = &settings.shingle;
    let (kind, k) = match shingle.kind {
        ShingleKind::Chars(k) => (0, k),
        ShingleKind::Words(k) => (1, k),
        ShingleKind::StopWords(k) => (2, k),
    };
    varint(&mut out, kind);
    varint(&mut out, k as u64);
    varint(
        &mut out,
        match shingle.whitespace {
            Whitespace::Collapse => 0,
            Whitespace::Remove => 1,
        },
    );
    varint(&mut out, u64::from(shingle.seed));
    match &shingle.stop_words {
        None => out.push(0),
        Some(words) => {
            out.push(1);
            varint(&mut out, words.len() as u64);
            for word in words {
                varint(&mut out, word.len() as u64);
                out.extend_from_slice(word.as_bytes());
            }
        }
    }
    let minhash = &settings.minhash;
    varint(
        &mut out,
        match minhash.scheme {
            Scheme::Permutations => 0,
            Scheme::OnePermutation => 1,
        },
    );
    varint(&mut out, minhash.num_perm as u64);
    varint(&mut out, minhash.seed);
    out.extend_from_slice(&settings.threshold.to_le_bytes());
    varint(&mut out, settings.bands as u64);
    varint(&mut out, settings.rows as u64);
    match settings.simhash_blocks {
        None => out.push(0),
        Some(blocks) => {
            out.push(1);
            varint(&mut out, u64::from(blocks));
        }
    }
    out.push(u8::from(settings.store_text));
    let features = feature_bits(settings);
    match &settings.containment {
        Some(ensemble) => {
            varint(&mut out, ensemble.trees() as u64);
            varint(&mut out, ensemble.depth() as u64);
            varint(&mut out, u64::from(ensemble.classes_per_octave()));
        }
        // No containment index, but features follow: 0 trees says so (a
        // build that knows no features refuses the file: no index has 0 trees).
        None if features != 0 => varint(&mut out, 0),
        None => {}
    }
    if features != 0 {
        varint(&mut out, features);
    }
    if let Some(policy) = settings.clusters {
        varint(&mut out, policy_code(policy));
    }
    out
}

/// Feature bit of the time index.
const TIME_INDEX: u64 = 1;
/// Feature bit of maintained clusters (the representative policy follows).
const CLUSTERS: u64 = 2;

/// The feature bits of `settings` (0 when none is on).
fn feature_bits(settings: &Settings) -> u64 {
    let mut bits = 0;
    if settings.timestamps {
        bits |= TIME_INDEX;
    }
    if settings.clusters.is_some() {
        bits |= CLUSTERS;
    }
    bits
}

/// A representative policy's number in the record.
fn policy_code(policy: Representative) -> u64 {
    match policy {
        Representative::FirstInserted => 0,
        Representative::Longest => 1,
        Representative::SmallestKey => 2,
        Representative::Priority => 3,
    }
}

/// Decodes the payload of a settings record (layout 1).
///
/// # Errors
/// [`Error::Corrupted`] for a payload cut short, with trailing bytes, or
/// with a value outside its field's range.
pub fn decode(payload: &[u8]) -> Result<Settings> {
    let mut r = Bytes(payload);
    let shingle = shingle_config(&mut r)?;
    let scheme = match r.u32()? {
        0 => Scheme::Permutations,
        1 => Scheme::OnePermutation,
        v => return Err(bad(format!("no signature scheme {v}"))),
    };
    let minhash = MinHashConfig {
        scheme,
        num_perm: r.usize()?,
        seed: r.varint(10)?,
    };
    let threshold = f64::from_le_bytes(r.take_array()?);
    let (bands, rows) = (r.usize()?, r.usize()?);
    let simhash_blocks = if r.flag()? { Some(r.u32()?) } else { None };
    let store_text = r.flag()?;
    let containment_place = !r.0.is_empty();
    let containment = match if containment_place { r.u32()? } else { 0 } {
        0 => None,
        trees => {
            let (depth, classes) = (r.u32()?, r.u32()?);
            let ensemble = Ensemble::new(trees, depth, classes, minhash.num_perm)
                .map_err(|e| bad(format!("containment index: {e}")))?;
            Some(ensemble)
        }
    };
    let features = if r.0.is_empty() {
        0
    } else {
        // Written only when some feature is on.
        match r.varint(10)? {
            0 => return Err(bad("trailing bytes")),
            bits => bits,
        }
    };
    if containment_place && containment.is_none() && features == 0 {
        return Err(bad("a containment shape cut short"));
    }
    if features & !(TIME_INDEX | CLUSTERS) != 0 {
        return Err(bad(format!(
            "unknown features {features:#x} (written by a newer lshdb?)"
        )));
    }
    let clusters = if features & CLUSTERS == 0 {
        None
    } else {
        Some(match r.u32()? {
            0 => Representative::FirstInserted,
            1 => Representative::Longest,
            2 => Representative::SmallestKey,
            3 => Representative::Priority,
            v => return Err(bad(format!("no representative policy {v}"))),
        })
    };
    if !r.0.is_empty() {
        return Err(bad("trailing bytes"));
    }
    Ok(Settings {
        shingle,
        minhash,
        threshold,
        bands,
        rows,
        simhash_blocks,
        store_text,
        containment,
        timestamps: features & TIME_INDEX != 0,
        clusters,
    })
}

/// The shingling fields, first in the record.
fn shingle_config(r: &mut Bytes<'_>) -> Result<ShingleConfig> {
    let kind = match (r.u32()?, r.usize()?) {
        (0, k) => ShingleKind::Chars(k),
        (1, k) => ShingleKind::Words(k),
        (2, k) => ShingleKind::StopWords(k),
        (v, _) => return Err(bad(format!("no shingle kind {v}"))),
    };
    let whitespace = match r.u32()? {
        0 => Whitespace::Collapse,
        1 => Whitespace::Remove,
        v => return Err(bad(format!("no white-space rule {v}"))),
    };
    let seed = r.u32()?;
    let stop_words = if r.flag()? {
        let count = r.usize()?;
        // Grown word by word: a damaged count cannot allocate ahead.
        let mut words = Vec::new();
        for _ in 0..count {
            let len = r.usize()?;
            let bytes = r.take(len)?;
            let word = std::str::from_utf8(bytes).map_err(|_| bad("a stop word is not UTF-8"))?;
            words.push(word.to_owned());
        }
        Some(words)
    } else {
        None
    };
    Ok(ShingleConfig {
        kind,
        whitespace,
        seed,
        stop_words,
    })
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::corrupted(format!("settings record: {what}"))
}

/// Appends `value` as an unsigned LEB128 varint.
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A cursor over the payload.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        if len > self.0.len() {
            return Err(bad("cut short"));
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// A byte that must be 0 or 1 (options and booleans).
    fn flag(&mut self) -> Result<bool> {
        match self.take(1)? {
            [0] => Ok(false),
            [1] => Ok(true),
            [v] => Err(bad(format!("{v} where 0 or 1 belongs"))),
            _ => Err(bad("cut short")),
        }
    }

    /// A varint of at most `max_len` bytes whose value fits in
    /// `7 * max_len` bits and in a u64 (5 bytes for a u32, 10 for a u64).
    fn varint(&mut self, max_len: usize) -> Result<u64> {
        let bits = if max_len >= 10 { 64 } else { 32 };
        let mut value: u64 = 0;
        for i in 0..max_len {
            let [byte] = self.take_array::<1>()?;
            let part = u64::from(byte & 0x7f);
            let shift = 7 * i as u32;
            if shift + 7 > bits && part >> (bits - shift) != 0 {
                return Err(bad("a number overflows"));
            }
            value |= part << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad("a number overflows"))
    }

    fn u32(&mut self) -> Result<u32> {
        u32::try_from(self.varint(5)?).map_err(|_| bad("a number overflows"))
    }

    fn usize(&mut self) -> Result<usize> {
        usize::try_from(self.varint(10)?).map_err(|_| bad("a number overflows"))
    }
}
