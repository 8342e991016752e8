//! Byte encodings of the hot stored records: shingle sets, MinHash signatures
//! and document records, plus the checksummed frame every stored record
//! (the configuration included) is wrapped in.
//!
//! Frame: `[tag: u8][crc32: u32 LE][payload]`, the CRC-32 (IEEE) taken over
//! the tag byte followed by the payload. Decoders treat their input as
//! hostile: every failure is [`Error::Corrupted`], never a panic, and nothing
//! is allocated beyond what the input's length justifies.

use crate::{Error, Result};

/// The record type of a frame, which is also its encoding version: a new
/// encoding of a record gets a new tag, so old and new records can never be
/// confused. Tag values are part of the file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    /// The database configuration.
    Config = 1,
    /// A document record ([`DocRecord`]).
    Doc = 2,
    /// A shingle set ([`encode_set`]).
    Set = 3,
    /// A MinHash signature ([`SignatureRecord`]).
    Signature = 4,
    /// A block of a posting run (`crate::store::runs`, format 2).
    Block = 5,
    /// A row of a run's filter (`crate::store::runs`, format 2).
    Filter = 6,
}

/// The record kind of a tag byte, as error messages name it.
fn record_name(tag: u8) -> &'static str {
    match tag {
        1 => "config record",
        2 => "document record",
        3 => "set record",
        4 => "signature record",
        5 => "block record",
        6 => "filter record",
        _ => "unknown record",
    }
}

/// Length of the frame header: tag byte and CRC.
const HEADER: usize = 5;

fn checksum(tag: u8, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[tag]);
    hasher.update(payload);
    hasher.finalize()
}

/// A buffer holding a frame header to be filled in by [`seal`].
fn open_frame(tag: Tag, payload_capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload_capacity);
    out.extend_from_slice(&[tag as u8, 0, 0, 0, 0]);
    out
}

/// Writes the CRC of a buffer made by [`open_frame`] into its header.
fn seal(mut out: Vec<u8>) -> Vec<u8> {
    if let Some(([tag, crc @ ..], payload)) = out.split_first_chunk_mut::<HEADER>() {
        *crc = checksum(*tag, payload).to_le_bytes();
    }
    out
}

/// Wraps `payload` in a frame: tag, CRC-32 of tag and payload, payload.
pub fn frame(tag: Tag, payload: &[u8]) -> Vec<u8> {
    let mut out = open_frame(tag, payload.len());
    out.extend_from_slice(payload);
    seal(out)
}

/// Checks a frame's length, tag and checksum and returns its payload.
pub fn unframe(tag: Tag, bytes: &[u8]) -> Result<&[u8]> {
    let what = record_name(tag as u8);
    let Some((&[found, c0, c1, c2, c3], payload)) = bytes.split_first_chunk::<HEADER>() else {
        return Err(Error::corrupted(format!(
            "{what}: {} bytes, shorter than the {HEADER}-byte header",
            bytes.len()
        )));
    };
    if found != tag as u8 {
        return Err(Error::corrupted(format!(
            "{what}: found tag {found} ({}) instead of {}",
            record_name(found),
            tag as u8
        )));
    }
    let stored = u32::from_le_bytes([c0, c1, c2, c3]);
    let computed = checksum(found, payload);
    if stored != computed {
        return Err(Error::corrupted(format!(
            "{what}: checksum mismatch (stored {stored:08x}, computed {computed:08x})"
        )));
    }
    Ok(payload)
}

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A bounds-checked cursor over a record's payload; every failure is
/// [`Error::Corrupted`] naming the record kind.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    /// A reader over the payload of the frame `bytes`, once [`unframe`]
    /// has accepted it.
    pub(crate) fn open(tag: Tag, bytes: &'a [u8]) -> Result<Self> {
        let what = record_name(tag as u8);
        unframe(tag, bytes).map(|bytes| Self {
            bytes,
            pos: 0,
            what,
        })
    }

    /// The error for this record with `problem`.
    pub(crate) fn error(&self, problem: impl std::fmt::Display) -> Error {
        Error::corrupted(format!("{}: {problem}", self.what))
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes; fails (before anything is allocated) when fewer
    /// are left.
    pub(crate) fn bytes(&mut self, n: u64) -> Result<&'a [u8]> {
        let left = self.remaining();
        let slice = usize::try_from(n)
            .ok()
            .and_then(|n| self.bytes.get(self.pos..self.pos.checked_add(n)?));
        match slice {
            Some(slice) => {
                self.pos += slice.len();
                Ok(slice)
            }
            None => Err(self.error(format_args!("length {n} exceeds the {left} bytes left"))),
        }
    }

    /// One byte.
    pub(crate) fn u8(&mut self) -> Result<u8> {
        self.array().map(|[b]| b)
    }

    /// A flags byte with only bit 0 allowed; returns that bit.
    pub(crate) fn flag(&mut self) -> Result<bool> {
        match self.u8()? {
            flags @ 2.. => Err(self.error(format_args!("unknown flag bits {flags:#04x}"))),
            flags => Ok(flags == 1),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let left = self.bytes.get(self.pos..).unwrap_or_default();
        match left.first_chunk::<N>() {
            Some(chunk) => {
                self.pos += N;
                Ok(*chunk)
            }
            None => Err(self.error("truncated")),
        }
    }

    /// A little-endian `u32`.
    pub(crate) fn u32_le(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    pub(crate) fn u64_le(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// An unsigned LEB128 varint in its shortest form; rejects encodings
    /// longer than 10 bytes, values above `u64::MAX` and overlong forms.
    pub(crate) fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let byte = self.u8().map_err(|_| self.error("truncated varint"))?;
            if i == 9 && byte > 1 {
                return Err(self.error("varint overflows 64 bits"));
            }
            if i > 0 && byte == 0 {
                return Err(self.error("overlong varint"));
            }
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }

    /// Succeeds only when every byte has been read.
    pub(crate) fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(format_args!("{n} trailing byte(s)"))),
        }
    }
}

/// Encodes a shingle set, which must be strictly increasing: varint count,
/// first value, then each gap to the previous value (≥ 1), all varints.
///
/// A set that is not strictly increasing is a caller bug: debug builds
/// assert, release builds write a record that [`decode_set`] rejects.
pub fn encode_set(set: &[u32]) -> Vec<u8> {
    debug_assert!(
        set.windows(2).all(|w| w[0] < w[1]),
        "set not strictly increasing"
    );
    let mut out = open_frame(Tag::Set, 5 + set.len() * 5);
    put_varint(&mut out, set.len() as u64);
    let mut prev = None;
    for &v in set {
        let delta = match prev {
            None => u64::from(v),
            Some(p) if v > p => u64::from(v - p),
            // Out of order: the decoded value would exceed u32::MAX, so it is rejected.
            Some(p) => u64::from(v) + (1 << 32) - u64::from(p),
        };
        put_varint(&mut out, delta);
        prev = Some(v);
    }
    seal(out)
}

/// Decodes a record made by [`encode_set`].
#[cfg(any(test, feature = "internals"))]
pub fn decode_set(bytes: &[u8]) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    decode_set_into(bytes, &mut out)?;
    Ok(out)
}

/// Decodes a record made by [`encode_set`] into `out`, replacing its contents
/// and reusing its allocation. On error `out` is left empty.
pub fn decode_set_into(bytes: &[u8], out: &mut Vec<u32>) -> Result<()> {
    out.clear();
    parse_set(bytes, out).inspect_err(|_| out.clear())
}

fn parse_set(bytes: &[u8], out: &mut Vec<u32>) -> Result<()> {
    let mut r = Cursor::open(Tag::Set, bytes)?;
    let count = r.varint()?;
    // Every value takes at least one byte: this bounds the allocation.
    let Some(count) = usize::try_from(count).ok().filter(|&n| n <= r.remaining()) else {
        return Err(r.error(format_args!(
            "count {count} exceeds the {} bytes left",
            r.remaining()
        )));
    };
    out.reserve(count);
    // The hot loop of every query and of `pairs`: gaps are decoded straight
    // from the payload slice (a gap of a u32 set needs at most 5 bytes), with
    // the same checks as `Cursor::varint` (no overlong or overflowing
    // varint, strictly increasing values).
    let payload = r.bytes(r.remaining() as u64)?;
    let mut pos = 0;
    let mut prev = 0u64;
    for i in 0..count {
        let (mut gap, mut shift) = (0u64, 0u32);
        loop {
            let Some(&byte) = payload.get(pos) else {
                return Err(r.error("truncated varint"));
            };
            pos += 1;
            if shift > 0 && byte == 0 {
                return Err(r.error("overlong varint"));
            }
            gap |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                break;
            }
            shift += 7;
            if shift > 28 {
                return Err(r.error("value above u32::MAX"));
            }
        }
        if i > 0 && gap == 0 {
            return Err(r.error("values not strictly increasing"));
        }
        prev += gap;
        let value = u32::try_from(prev).map_err(|_| r.error("value above u32::MAX"))?;
        out.push(value);
    }
    if pos != payload.len() {
        return Err(r.error(format_args!("{} trailing byte(s)", payload.len() - pos)));
    }
    Ok(())
}

/// A decoded signature record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SignatureRecord {
    /// Number of shingles in the document's set.
    pub set_len: u32,
    /// The SimHash fingerprint, when that index is enabled.
    pub simhash: Option<u64>,
    /// The MinHash signature.
    pub values: Vec<u32>,
}

/// Encodes a signature record: `set_len: u32 LE`, `flags: u8` (bit 0:
/// SimHash present), the SimHash as `u64 LE` if present, `count: u32 LE`,
/// then the values as `u32 LE`. (More than `u32::MAX` values, impossible in
/// practice, would be cut to the first `u32::MAX`.)
pub fn encode_signature(set_len: u32, simhash: Option<u64>, signature: &[u32]) -> Vec<u8> {
    let count = u32::try_from(signature.len()).unwrap_or(u32::MAX);
    let mut out = open_frame(Tag::Signature, 17 + signature.len() * 4);
    out.extend_from_slice(&set_len.to_le_bytes());
    out.push(u8::from(simhash.is_some()));
    if let Some(h) = simhash {
        out.extend_from_slice(&h.to_le_bytes());
    }
    out.extend_from_slice(&count.to_le_bytes());
    for v in signature.iter().take(count as usize) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    seal(out)
}

/// Decodes a record made by [`encode_signature`] into `out`, reusing the
/// allocation of `out.values`. On error `out`'s contents are unspecified.
pub fn decode_signature(bytes: &[u8], out: &mut SignatureRecord) -> Result<()> {
    let mut r = Cursor::open(Tag::Signature, bytes)?;
    out.set_len = r.u32_le()?;
    out.simhash = if r.flag()? { Some(r.u64_le()?) } else { None };
    let count = r.u32_le()?;
    if u64::from(count) * 4 != r.remaining() as u64 {
        return Err(r.error(format_args!(
            "count {count} does not match the {} bytes left",
            r.remaining()
        )));
    }
    out.values.clear();
    out.values.reserve(count as usize);
    for _ in 0..count {
        out.values.push(r.u32_le()?);
    }
    r.finish()
}

/// Verifies a signature record's frame and returns only its `set_len`.
pub fn peek_set_len(bytes: &[u8]) -> Result<u32> {
    Cursor::open(Tag::Signature, bytes)?.u32_le()
}

/// A decoded document record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocRecord {
    /// The document's key.
    pub key: String,
    /// The document's text, when stored.
    pub text: Option<String>,
}

/// Encodes a document record: varint key length and UTF-8 bytes, `flags: u8`
/// (bit 0: text present), then varint text length and UTF-8 bytes if present.
pub fn encode_doc(doc: &DocRecord) -> Vec<u8> {
    let text_len = doc.text.as_ref().map_or(0, |t| t.len() + 10);
    let mut out = open_frame(Tag::Doc, 11 + doc.key.len() + text_len);
    put_varint(&mut out, doc.key.len() as u64);
    out.extend_from_slice(doc.key.as_bytes());
    out.push(u8::from(doc.text.is_some()));
    if let Some(text) = &doc.text {
        put_varint(&mut out, text.len() as u64);
        out.extend_from_slice(text.as_bytes());
    }
    seal(out)
}

/// Decodes a record made by [`encode_doc`].
pub fn decode_doc(bytes: &[u8]) -> Result<DocRecord> {
    let mut r = Cursor::open(Tag::Doc, bytes)?;
    let key = utf8(&mut r, "key")?;
    let text = r.flag()?.then(|| utf8(&mut r, "text")).transpose()?;
    r.finish()?;
    Ok(DocRecord { key, text })
}

/// A varint length followed by that many bytes of UTF-8.
fn utf8(r: &mut Cursor<'_>, field: &str) -> Result<String> {
    let len = r.varint()?;
    let bytes = r.bytes(len)?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => Err(r.error(format_args!("{field} is not UTF-8 ({e})"))),
    }
}

#[cfg(test)]
mod tests;
