//! Run filters: one blocked Bloom filter per run over the `(band, key)`
//! pairs it posts under, so that a look-up skips the runs that cannot hold
//! the bucket — most of them, since most buckets are in one run or none.
//!
//! **Layout.** A run's filter has, for every band, `lines` lines of
//! [`LINE_BITS`] bits (`lines` from the run's postings per band, about
//! [`BITS_PER_POSTING`] bits each, in [`RUN_FILTER_LINES`]). A key's line
//! is `⌊key · lines / 2⁶⁴⌋`: monotone in the key, so a run written in key
//! order writes its filter in order too, one row at a time, and a merge's
//! memory does not grow with the run. Within the line, [`PROBES`] bits,
//! 9 bits each of `mix64(key ^ (band + 1) · γ)`, are set. [`ROW_LINES`]
//! lines make a row of [`RUN_FILTERS`], keyed by `(run, band, row)`, as a
//! CRC-framed `Tag::Filter` record; rows with no bit set are not stored.
//! With 10 bits per posting, about 1% of the runs without a bucket are
//! read anyway.
//!
//! A run without an entry in [`RUN_FILTER_LINES`] (one written before
//! filters existed) has no filter and is always read.

use super::lists::ListCache;
use super::whole::WholeFilter;
use crate::hash::{mix64, GOLDEN_GAMMA};
use crate::store::codec::{frame, unframe, Tag};
use crate::{Error, Result};
use parking_lot::Mutex;
use redb::{ReadableTable, Table, TableDefinition};
use std::collections::HashMap;
use std::sync::Arc;

/// Filter rows: `(run, band, row)` → `Tag::Filter` record of
/// [`ROW_LINES`] lines.
pub const RUN_FILTERS: TableDefinition<(u32, u32, u32), &[u8]> =
    TableDefinition::new("run_filters");

/// Runs that have a filter: run id → its lines per band.
pub const RUN_FILTER_LINES: TableDefinition<u32, u64> = TableDefinition::new("run_filter_lines");

/// Bits of a line: one cache line.
pub const LINE_BITS: u64 = 512;

/// Lines per row of [`RUN_FILTERS`].
pub const ROW_LINES: u64 = 8;

/// Filter bits per posting of a band.
pub const BITS_PER_POSTING: u64 = 10;

/// Bits set per key.
pub const PROBES: u32 = 7;

pub(super) const LINE_BYTES: usize = (LINE_BITS / 8) as usize;
pub(super) const ROW_BYTES: usize = LINE_BYTES * ROW_LINES as usize;

/// The bits of one row.
type Row = Box<[u8; ROW_BYTES]>;

/// Lines per band of a run with about `per_band` postings in each band.
pub fn lines_for(per_band: u64) -> u64 {
    per_band
        .saturating_mul(BITS_PER_POSTING)
        .div_ceil(LINE_BITS)
        .max(1)
}

/// The line of `key` among `lines`.
pub fn line_of(key: u64, lines: u64) -> u64 {
    ((u128::from(key) * u128::from(lines)) >> 64) as u64
}

/// The bits `(band, key)` sets in its line.
pub fn bits_of(band: u32, key: u64) -> [u16; PROBES as usize] {
    let h = mix64(key ^ (u64::from(band) + 1).wrapping_mul(GOLDEN_GAMMA));
    std::array::from_fn(|i| ((h >> (9 * i)) & (LINE_BITS - 1)) as u16)
}

fn row_key(run: u32, band: u32, line: u64) -> Result<(u32, u32, u32)> {
    let row = u32::try_from(line / ROW_LINES)
        .map_err(|_| Error::corrupted(format!("run {run}: filter of more than 2³² rows")))?;
    Ok((run, band, row))
}

/// Whether run `run` (with `lines` filter lines per band) may post under
/// (`band`, `key`); false means it certainly does not. Rows are read
/// through `cache` when there is one.
pub fn may_contain(
    filters: &impl ReadableTable<(u32, u32, u32), &'static [u8]>,
    cache: Option<&RowCache>,
    run: u32,
    lines: u64,
    band: u32,
    key: u64,
) -> Result<bool> {
    let (at, line) = locate(run, lines, band, key)?;
    let has = |row: &Option<Row>| {
        row.as_ref()
            .is_some_and(|bits| line_has(bits, line, band, key))
    };
    let Some(cache) = cache else {
        return Ok(has(&read_row(filters, at)?));
    };
    if let Some(row) = cache.rows.lock().get(&at) {
        return Ok(has(row));
    }
    let row = read_row(filters, at)?;
    let found = has(&row);
    let mut rows = cache.rows.lock();
    if rows.len() < cache.max_rows() {
        rows.insert(at, row);
    }
    Ok(found)
}

/// The row of (`band`, `key`) in run `run`'s filter, and its line.
fn locate(run: u32, lines: u64, band: u32, key: u64) -> Result<((u32, u32, u32), u64)> {
    let line = line_of(key, lines);
    Ok((row_key(run, band, line)?, line))
}

/// A row's checked bits; `None` when the row is not stored (no bit set).
fn read_row(
    filters: &impl ReadableTable<(u32, u32, u32), &'static [u8]>,
    at: (u32, u32, u32),
) -> Result<Option<Row>> {
    let (run, band, _) = at;
    let Some(row) = filters.get(at)? else {
        return Ok(None);
    };
    let payload =
        unframe(Tag::Filter, row.value()).map_err(|e| super::block::context(e, run, band))?;
    let bits: Box<[u8; ROW_BYTES]> =
        payload
            .to_vec()
            .into_boxed_slice()
            .try_into()
            .map_err(|_| {
                super::block::context(
                    Error::corrupted(format!(
                        "filter record: {} bytes instead of {ROW_BYTES}",
                        payload.len()
                    )),
                    run,
                    band,
                )
            })?;
    Ok(Some(bits))
}

/// Whether `line` of a row has every bit of (`band`, `key`).
fn line_has(row: &[u8; ROW_BYTES], line: u64, band: u32, key: u64) -> bool {
    let at = (line % ROW_LINES) as usize * LINE_BYTES;
    line_bits_have(&row[at..at + LINE_BYTES], band, key)
}

/// Whether a line's bits (its [`LINE_BYTES`] bytes) have every bit of
/// (`band`, `key`).
pub(super) fn line_bits_have(bits: &[u8], band: u32, key: u64) -> bool {
    bits_of(band, key)
        .iter()
        .all(|&b| bits[usize::from(b / 8)] & (1 << (b % 8)) != 0)
}

/// Filter rows read, kept for later look-ups: a dedup-on-write
/// transaction, and the snapshots a dedup-on-write load looks its chunks
/// up in, probe the same rows again and again. At most
/// [`RowCache::MAX_ROWS`] rows unless sized otherwise; emptied whenever a
/// run is removed (run ids may then be issued again). Shared by threads
/// (a load's look-ups run on every core). A cache sized in bytes
/// ([`RowCache::with_parts`]) also keeps whole filters of runs
/// ([`WholeFilter`]), in up to seven eighths of its filter bytes.
#[derive(Default)]
pub struct RowCache {
    rows: Mutex<HashMap<(u32, u32, u32), Option<Row>>>,
    /// The most rows kept; 0: [`RowCache::MAX_ROWS`].
    limit: usize,
    /// The runs whose rows may be kept (see [`RowCache::follow`]).
    runs: Mutex<Vec<u32>>,
    /// Whole filters, by run, and the bytes they take.
    whole: Mutex<WholeFilters>,
    /// The bytes whole filters may take.
    whole_bytes: usize,
    /// Posting lists read from runs (only in a cache sized in bytes).
    lists: Option<ListCache>,
}

impl RowCache {
    /// Rows kept at most by default (8 MiB of bits).
    pub const MAX_ROWS: usize = 16 * 1024;

    /// A cache of at most `filter_bytes` bytes of rows and whole filters,
    /// the whole filters taking up to seven eighths of them (a look-up
    /// probes every run: whole filters answer without a lock), and
    /// `list_bytes` of posting lists.
    pub fn with_parts(filter_bytes: usize, list_bytes: usize) -> Self {
        Self {
            limit: (filter_bytes / ROW_BYTES).max(1),
            whole_bytes: (filter_bytes / 8 * 7).max(1),
            lists: Some(ListCache::with_bytes(list_bytes)),
            ..Self::default()
        }
    }

    /// A cache of whole run filters only, of at most `bytes` bytes: for a
    /// load's write transactions, whose own probes read rows through a
    /// cache of the transaction (rows and lists a transaction reads may be
    /// of a run it writes, which an abort would take back).
    pub fn whole_filters_only(bytes: usize) -> Self {
        Self {
            limit: (bytes.saturating_mul(2) / ROW_BYTES).max(1),
            whole_bytes: bytes,
            ..Self::default()
        }
    }

    /// The posting lists kept, when this cache keeps them.
    pub fn lists(&self) -> Option<&ListCache> {
        self.lists.as_ref()
    }

    fn max_rows(&self) -> usize {
        if self.limit == 0 {
            Self::MAX_ROWS
        } else {
            let whole = self.whole.lock().1;
            self.limit.saturating_sub(whole / ROW_BYTES)
        }
    }

    /// Forgets every row.
    pub fn clear(&self) {
        self.rows.lock().clear();
        *self.whole.lock() = Default::default();
        if let Some(lists) = &self.lists {
            lists.clear();
        }
    }

    /// The whole filters of the runs of `list` ((run, postings)) that have
    /// a filter (`lines`: (run, lines per band), by run), by run, read now
    /// for those not kept yet, as long as they fit in their share of the
    /// cache's bytes; runs left out are probed row by row. None kept in a cache
    /// not sized in bytes.
    pub fn whole_filters(
        &self,
        filters: &impl ReadableTable<(u32, u32, u32), &'static [u8]>,
        list: &[(u32, u64)],
        lines: &[(u32, u64)],
    ) -> Result<Vec<(u32, Arc<WholeFilter>)>> {
        if self.limit == 0 {
            return Ok(Vec::new());
        }
        let budget = self.whole_bytes;
        let mut whole = self.whole.lock();
        let mut out = Vec::new();
        for &(run, postings) in list {
            let Some(run_lines) = super::lines_of(lines, run) else {
                continue;
            };
            if let Some(at) = whole.0.iter().position(|w| w.0 == run) {
                let kept = &whole.0[at].1;
                if kept.is_of(run_lines, postings) {
                    out.push((run, Arc::clone(kept)));
                    continue;
                }
                let gone = whole.0.swap_remove(at);
                whole.1 = whole.1.saturating_sub(gone.1.bytes());
            }
            // About BITS_PER_POSTING bits per posting, and a row per band.
            let size = postings.saturating_mul(BITS_PER_POSTING) / 8;
            if whole.1 as u64 + size > budget as u64 {
                continue;
            }
            let read = Arc::new(WholeFilter::read(filters, run, run_lines, postings)?);
            whole.1 += read.bytes();
            whole.0.push((run, Arc::clone(&read)));
            out.push((run, read));
        }
        out.sort_unstable_by_key(|w| w.0);
        Ok(out)
    }

    /// Follows the run list of a newer snapshot of the same file: forgets
    /// the rows of runs it no longer lists, and every row when it lists a
    /// run not listed before under an id at or below one seen before (an
    /// id issued again, whose rows would be stale).
    pub fn follow(&self, list: &[(u32, u64)]) {
        let mut runs = self.runs.lock();
        if runs.len() == list.len() && runs.iter().zip(list).all(|(a, b)| *a == b.0) {
            return;
        }
        let highest = runs.iter().copied().max().unwrap_or(0);
        let reissued = list
            .iter()
            .any(|&(run, _)| run <= highest && !runs.contains(&run));
        let mut rows = self.rows.lock();
        let mut whole = self.whole.lock();
        let listed = |run: u32| list.iter().any(|r| r.0 == run);
        if reissued {
            rows.clear();
            *whole = Default::default();
            if let Some(lists) = &self.lists {
                lists.clear();
            }
        } else {
            rows.retain(|&(run, _, _), _| listed(run));
            whole.0.retain(|w| listed(w.0));
            whole.1 = whole.0.iter().map(|w| w.1.bytes()).sum();
            if let Some(lists) = &self.lists {
                lists.retain(listed);
            }
        }
        *runs = list.iter().map(|r| r.0).collect();
    }
}

/// Whole filters of runs, by run, and the bytes they take.
type WholeFilters = (Vec<(u32, Arc<WholeFilter>)>, usize);

/// Writes a run's filter as its postings go by in `(band, key)` order,
/// holding one row.
pub struct FilterWriter {
    run: u32,
    lines: u64,
    /// The row being filled: its key and bits.
    row: Option<((u32, u32, u32), Vec<u8>)>,
}

impl FilterWriter {
    /// The writer of run `run`'s filter, sized for about `per_band`
    /// postings in each band.
    pub fn new(run: u32, per_band: u64) -> Self {
        Self {
            run,
            lines: lines_for(per_band),
            row: None,
        }
    }

    /// The filter's lines per band.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Adds a posting's `(band, key)`; they must come in ascending order.
    pub fn add(
        &mut self,
        filters: &mut Table<'_, (u32, u32, u32), &'static [u8]>,
        band: u32,
        key: u64,
    ) -> Result<()> {
        let line = line_of(key, self.lines);
        let at = row_key(self.run, band, line)?;
        if self.row.as_ref().is_some_and(|(k, _)| *k != at) {
            self.flush(filters)?;
        }
        let (_, bits) = self.row.get_or_insert_with(|| (at, vec![0u8; ROW_BYTES]));
        let base = (line % ROW_LINES) as usize * LINE_BYTES;
        for b in bits_of(band, key) {
            bits[base + usize::from(b / 8)] |= 1 << (b % 8);
        }
        Ok(())
    }

    /// Writes the row being filled, if any.
    pub fn flush(&mut self, filters: &mut Table<'_, (u32, u32, u32), &'static [u8]>) -> Result<()> {
        if let Some((at, bits)) = self.row.take() {
            filters.insert(at, frame(Tag::Filter, &bits).as_slice())?;
        }
        Ok(())
    }

    /// Writes the last row and records the filter's size.
    pub fn finish(
        mut self,
        filters: &mut Table<'_, (u32, u32, u32), &'static [u8]>,
        sizes: &mut Table<'_, u32, u64>,
    ) -> Result<()> {
        self.flush(filters)?;
        sizes.insert(self.run, self.lines)?;
        Ok(())
    }
}

/// Deletes run `run`'s filter.
pub fn remove(
    filters: &mut Table<'_, (u32, u32, u32), &'static [u8]>,
    sizes: &mut Table<'_, u32, u64>,
    run: u32,
) -> Result<()> {
    filters.retain_in((run, 0, 0)..=(run, u32::MAX, u32::MAX), |_, _| false)?;
    sizes.remove(run)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter's hashing is part of the file format: pinned.
    #[test]
    fn golden_values() {
        for (per_band, lines) in [(0, 1), (51, 1), (52, 2), (1_000_000, 19_532)] {
            assert_eq!(lines_for(per_band), lines, "lines_for({per_band})");
        }
        for (key, lines, line) in [(0, 19_532, 0), (u64::MAX, 19_532, 19_531), (1 << 63, 10, 5)] {
            assert_eq!(line_of(key, lines), line, "line_of({key}, {lines})");
        }
        assert_eq!(
            bits_of(3, 0x0123_4567_89ab_cdef),
            GOLDEN_BITS,
            "run filter bits changed: this breaks every file written before"
        );
    }

    /// Computed independently (Python: SplitMix64 finaliser, 9-bit fields).
    const GOLDEN_BITS: [u16; 7] = [352, 147, 357, 24, 216, 127, 106];

    #[test]
    fn lines_are_monotone_in_the_key() {
        let lines = 977;
        let mut last = 0;
        for i in 0..10_000u64 {
            let line = line_of(i.wrapping_mul(u64::MAX / 10_000), lines);
            assert!(line >= last && line < lines);
            last = line;
        }
    }
}
