//! Run blocks: their encoding (a `Tag::Block` record of fixed-width
//! `(key, id)` pairs), look-ups of one bucket in one run, and scans.

use super::{Posting, ENTRY};
use crate::store::codec::{frame, unframe, Tag};
use crate::store::probe::Probe;
use crate::{Error, Result};
use redb::ReadableTable;

/// The encoded block of `entries` (sorted `(key, id)` pairs of one band).
pub fn encode_block(entries: &[(u64, u64)]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(entries.len() * ENTRY);
    for &(key, id) in entries {
        payload.extend_from_slice(&key.to_le_bytes());
        payload.extend_from_slice(&id.to_le_bytes());
    }
    frame(Tag::Block, &payload)
}

/// A block's checked payload: whole entries, at least one.
fn block_payload(bytes: &[u8]) -> Result<&[u8]> {
    let payload = unframe(Tag::Block, bytes)?;
    if payload.is_empty() || payload.len() % ENTRY != 0 {
        return Err(Error::corrupted(format!(
            "block record: {} bytes is not a whole number of postings",
            payload.len()
        )));
    }
    Ok(payload)
}

/// The last `(key, id)` of a block record: its key in [`super::RUN_BLOCKS`]
/// (format 5), checked as a block.
pub(crate) fn last_posting(bytes: &[u8]) -> Result<(u64, u64)> {
    let payload = block_payload(bytes)?;
    Ok(entry(payload, payload.len() / ENTRY - 1))
}

fn entry(payload: &[u8], i: usize) -> (u64, u64) {
    let at = i * ENTRY;
    let word = |from: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&payload[from..from + 8]);
        u64::from_le_bytes(bytes)
    };
    (word(at), word(at + 8))
}

/// Decodes a block record into `(key, id)` pairs, checking they ascend.
pub fn decode_block(bytes: &[u8], out: &mut Vec<(u64, u64)>) -> Result<()> {
    let payload = block_payload(bytes)?;
    out.clear();
    out.extend((0..payload.len() / ENTRY).map(|i| entry(payload, i)));
    if out.windows(2).any(|w| w[0] >= w[1]) {
        out.clear();
        return Err(Error::corrupted("block record: postings out of order"));
    }
    Ok(())
}

/// Appends to `out` the ids of `probe`'s list (its `index` a band) in run
/// `run`, ascending, at most its `cap`; true when cut there. Blocks keyed by
/// their last posting (format 5; `store::legacy` reads older files).
pub(super) fn postings_of(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    run: u32,
    probe: Probe,
    out: &mut Vec<u64>,
) -> Result<bool> {
    let Some(start) = probe.start() else {
        return Ok(false);
    };
    let Probe {
        index: band,
        key,
        cap,
        ..
    } = probe;
    // The first block whose last posting is at or after (key, start)
    // holds the bucket's first posting from `start` on, if any; an open
    // end, so that only one side of the range descends.
    let rows = blocks.range((run, band, key, start)..)?;
    collect_blocks(rows, run, band, key, start, cap, out)
}

/// Appends to `out` the ids posted under `key` from id `start` on, at most
/// `cap`, from `rows` (blocks of run `run` from the one holding the first
/// such posting on); true when cut at `cap`. Stops at the bucket's end or
/// at the first row of another run or band.
pub(crate) fn collect_blocks<'a>(
    rows: impl Iterator<
        Item = std::result::Result<
            (
                redb::AccessGuard<'a, (u32, u32, u64, u64)>,
                redb::AccessGuard<'a, &'static [u8]>,
            ),
            redb::StorageError,
        >,
    >,
    run: u32,
    band: u32,
    key: u64,
    start: u64,
    cap: usize,
    out: &mut Vec<u64>,
) -> Result<bool> {
    let mut taken = 0;
    for row in rows {
        let (k, bytes) = row?;
        let (r, b, _, _) = k.value();
        if (r, b) != (run, band) {
            return Ok(false);
        }
        let payload = block_payload(bytes.value()).map_err(|e| context(e, run, band))?;
        match collect_block(payload, key, start, cap, &mut taken, out) {
            Some(cut) => return Ok(cut),
            None => continue,
        }
    }
    Ok(false)
}

/// Appends the ids of `payload` (a block) posted under `key` from id
/// `start` on, up to `cap` in all (`taken` so far). `Some(cut)` when the
/// bucket ended in this block or was cut; `None` when it may go on in the
/// next block.
fn collect_block(
    payload: &[u8],
    key: u64,
    start: u64,
    cap: usize,
    taken: &mut usize,
    out: &mut Vec<u64>,
) -> Option<bool> {
    let n = payload.len() / ENTRY;
    // The first entry ≥ (key, start): binary search on the fixed width.
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if entry(payload, mid) < (key, start) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    for i in lo..n {
        let (k, id) = entry(payload, i);
        if k != key {
            return Some(false);
        }
        if *taken == cap {
            return Some(true);
        }
        out.push(id);
        *taken += 1;
    }
    None
}

/// The postings of run `run`'s band `band` from posting `start` on
/// (inclusive) with keys below `hi` (`None`: to the band's end), in
/// order: whole blocks until at least `cap` are read. True when it
/// stopped at `cap` with more blocks in the band. Blocks are keyed by
/// their last posting (format 5), so the first block read is the one
/// holding `start`'s place.
pub(super) fn postings_from(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    (run, band): (u32, u32),
    start: (u64, u64),
    hi: Option<u64>,
    cap: usize,
) -> Result<(Vec<(u64, u64)>, bool)> {
    let mut out = Vec::new();
    let mut block = Vec::new();
    for row in blocks.range((run, band, start.0, start.1)..)? {
        let (k, bytes) = row?;
        let (r, b, last, _) = k.value();
        if (r, b) != (run, band) {
            break;
        }
        if out.len() >= cap {
            return Ok((out, true));
        }
        decode_block(bytes.value(), &mut block).map_err(|e| context(e, run, b))?;
        out.extend(
            block
                .iter()
                .filter(|&&posting| posting >= start && hi.is_none_or(|hi| posting.0 < hi)),
        );
        if hi.is_some_and(|hi| last >= hi) {
            break;
        }
    }
    Ok((out, false))
}

pub(crate) fn context(err: Error, run: u32, band: u32) -> Error {
    match err {
        Error::Corrupted(msg) => Error::Corrupted(format!("run {run}, band {band}: {msg}")),
        other => other,
    }
}

/// The postings of one run, in order.
pub struct RunScan<'a> {
    range: redb::Range<'a, (u32, u32, u64, u64), &'static [u8]>,
    band: u32,
    entries: Vec<(u64, u64)>,
    next: usize,
}

impl<'a> RunScan<'a> {
    /// A scan of the blocks in `range`.
    pub(super) fn new(range: redb::Range<'a, (u32, u32, u64, u64), &'static [u8]>) -> Self {
        Self {
            range,
            band: 0,
            entries: Vec::new(),
            next: 0,
        }
    }
}

impl Iterator for RunScan<'_> {
    type Item = Result<Posting>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.next == self.entries.len() {
            let (key, bytes) = match self.range.next()? {
                Ok(row) => row,
                Err(err) => return Some(Err(err.into())),
            };
            let (run, band, _, _) = key.value();
            if let Err(err) = decode_block(bytes.value(), &mut self.entries) {
                return Some(Err(context(err, run, band)));
            }
            self.band = band;
            self.next = 0;
        }
        let (key, id) = self.entries[self.next];
        self.next += 1;
        Some(Ok((self.band, key, id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_reject_damage() {
        let entries = vec![(1, 5), (1, 9), (7, 2)];
        let bytes = encode_block(&entries);
        let mut out = Vec::new();
        decode_block(&bytes, &mut out).unwrap();
        assert_eq!(out, entries);
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(decode_block(&bad, &mut out).is_err());
        let unordered = encode_block(&[(7, 2), (1, 5)]);
        assert!(decode_block(&unordered, &mut out).is_err());
    }

    #[test]
    fn block_bytes_are_pinned() {
        // Tag 5, CRC-32 of tag and payload, then (key, id) pairs as u64 LE.
        let bytes = encode_block(&[(0x0102_0304_0506_0708, 1), (u64::MAX, 2)]);
        assert_eq!(bytes.len(), 5 + 32);
        assert_eq!(bytes[0], 5);
        assert_eq!(
            &bytes[5..],
            &[
                8, 7, 6, 5, 4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, //
                255, 255, 255, 255, 255, 255, 255, 255, 2, 0, 0, 0, 0, 0, 0, 0,
            ]
        );
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..1]);
        crc.update(&bytes[5..]);
        assert_eq!(&bytes[1..5], &crc.finalize().to_le_bytes());
    }
}
