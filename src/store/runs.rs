//! Posting runs: the part of the MinHash index that grows with the file,
//! kept as immutable sorted runs of postings (format 2).
//!
//! **Why.** Format 1 kept one B-tree row per posting, `(band, bucket, id)`.
//! Bucket keys are uniform hashes, so every commit of a bulk load touched
//! leaves all over a tree far larger than any cache, and redb's
//! copy-on-write commit rewrote each one: the bytes written per document
//! and the time per commit grew with the file (`docs/benchmarks.md`).
//!
//! **Layout.** A run is a sorted sequence of postings `(band, key, id)`,
//! cut into blocks of at most [`BLOCK_ENTRIES`] postings of one band. Each
//! block is one row of [`RUN_BLOCKS`], keyed by `(run, band, first key,
//! first id)` — so redb's B-tree is the run's fence index and nothing has
//! to be loaded at open — with the block's postings as a `Tag::Block`
//! record: `(key u64 LE, id u64 LE)` pairs, fixed width, so a look-up
//! binary-searches a block without decoding it. [`RUNS`] lists the runs and
//! their sizes. New postings of single writes go to the small `buckets`
//! table (the "fresh" postings, as in format 1) until it holds
//! [`FRESH_MAX`] of them; then they become a run. A bulk load writes each
//! of its commits' postings as a run at once: sequential inserts of a few
//! hundred blocks instead of random inserts of every posting.
//!
//! **Merging.** Runs are merged like a binary counter: whenever the two
//! newest runs are of the same size class (⌊log₂ postings⌋), they become
//! one. A run count stays below log₂ of the postings, and each posting is
//! rewritten about log₂(total / first run) times, sequentially. A merge
//! reads and writes slices of the key space of bounded size, so its memory
//! does not grow with the file.
//!
//! **Deletes.** Removing a document deletes its fresh postings; postings of
//! it already in runs stay there, and its id goes into [`DEAD_IDS`].
//! Readers never return such an id: its document record is gone, and every
//! candidate is read before it is returned. Merges drop the postings of
//! dead ids, and a merge of every run empties the dead-id table.

use crate::store::codec::{frame, unframe, Tag};
use crate::{Error, Result};
use redb::{ReadableTable, ReadableTableMetadata, Table, TableDefinition};
use std::collections::{BinaryHeap, HashSet};

/// Run blocks: `(run, band, first key, first id)` → `Tag::Block` record.
pub const RUN_BLOCKS: TableDefinition<(u32, u32, u64, u64), &[u8]> =
    TableDefinition::new("run_blocks");

/// Runs: run id → number of postings.
pub const RUNS: TableDefinition<u32, u64> = TableDefinition::new("runs");

/// Ids of removed documents whose postings may still be in runs.
pub const DEAD_IDS: TableDefinition<u64, ()> = TableDefinition::new("dead_ids");

/// Postings per block at most: 3,840 bytes of entries, so that a block
/// and its key fit in one 4 KiB page of redb (a larger leaf takes 8 KiB,
/// and every look-up reads one).
pub const BLOCK_ENTRIES: usize = 240;

/// Fresh postings (the `buckets` table) at most before they become a run.
pub const FRESH_MAX: u64 = 1 << 16;

/// Postings a merge holds in memory per slice of the key space, about.
const SLICE_POSTINGS: u64 = 1 << 21;

const ENTRY: usize = 16;

/// A posting: (band, band key, document id).
pub type Posting = (u32, u64, u64);

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

/// The size class of a run of `postings` postings.
fn class(postings: u64) -> u32 {
    63 - postings.max(1).leading_zeros()
}

/// The run tables as a transaction sees them: the blocks, and the list of
/// runs (oldest first, as (run id, postings)).
pub trait RunTables {
    /// The blocks table type.
    type Blocks: ReadableTable<(u32, u32, u64, u64), &'static [u8]>;
    /// The blocks.
    fn blocks(&self) -> &Self::Blocks;
    /// The runs, oldest first.
    fn list(&self) -> &[(u32, u64)];
    /// The dead-id table (see the module comment).
    fn dead(&self) -> &impl ReadableTable<u64, ()>;

    /// Postings in all runs (dead ones included).
    fn postings_count(&self) -> u64 {
        self.list().iter().map(|r| r.1).sum()
    }

    /// Appends to `out` the ids every run posts under (`band`, `key`) that
    /// are greater than `after`, ascending per run, at most `cap` per run;
    /// true when a run's list was cut at `cap`. Ids of removed documents
    /// are left out: they must never reach a reader, whose record cache
    /// may still hold their records.
    fn postings(
        &self,
        band: u32,
        key: u64,
        after: Option<u64>,
        cap: usize,
        out: &mut Vec<u64>,
    ) -> Result<bool> {
        let from = out.len();
        let mut cut = false;
        for &(run, _) in self.list() {
            cut |= postings_of(self.blocks(), run, band, key, after, cap, out)?;
        }
        let dead = self.dead();
        if out.len() > from && !dead.is_empty()? {
            let mut kept = from;
            for i in from..out.len() {
                if dead.get(out[i])?.is_none() {
                    out[kept] = out[i];
                    kept += 1;
                }
            }
            out.truncate(kept);
        }
        Ok(cut)
    }

    /// Every posting of run `run`, in order.
    fn scan(&self, run: u32) -> Result<RunScan<'_>> {
        let range = self
            .blocks()
            .range((run, 0, 0, 0)..=(run, u32::MAX, u64::MAX, u64::MAX))?;
        Ok(RunScan {
            range,
            band: 0,
            entries: Vec::new(),
            next: 0,
        })
    }
}

/// What a snapshot's readers need of the runs, whether or not the file has
/// run tables (a format-1 file opened read-only has none).
pub trait RunsView {
    /// [`RunTables::postings`]; nothing without runs.
    fn run_postings(
        &self,
        band: u32,
        key: u64,
        after: Option<u64>,
        cap: usize,
        out: &mut Vec<u64>,
    ) -> Result<bool>;
}

impl<T: RunTables> RunsView for T {
    fn run_postings(
        &self,
        band: u32,
        key: u64,
        after: Option<u64>,
        cap: usize,
        out: &mut Vec<u64>,
    ) -> Result<bool> {
        self.postings(band, key, after, cap, out)
    }
}

impl RunsView for Option<ReadRuns> {
    fn run_postings(
        &self,
        band: u32,
        key: u64,
        after: Option<u64>,
        cap: usize,
        out: &mut Vec<u64>,
    ) -> Result<bool> {
        match self {
            Some(runs) => runs.postings(band, key, after, cap, out),
            None => Ok(false),
        }
    }
}

/// The run tables of a read transaction.
pub struct ReadRuns {
    blocks: redb::ReadOnlyTable<(u32, u32, u64, u64), &'static [u8]>,
    list: Vec<(u32, u64)>,
    dead: redb::ReadOnlyTable<u64, ()>,
}

impl ReadRuns {
    /// Opens the run tables; a file of format 1 has none, and reads as
    /// having no runs.
    pub fn open(txn: &redb::ReadTransaction) -> Result<Option<Self>> {
        let blocks = match txn.open_table(RUN_BLOCKS) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(err) => return Err(err.into()),
        };
        let runs = txn.open_table(RUNS)?;
        let dead = txn.open_table(DEAD_IDS)?;
        Ok(Some(Self {
            blocks,
            list: read_list(&runs)?,
            dead,
        }))
    }

    /// The ids of removed documents whose postings may be in runs.
    pub fn dead_ids(&self) -> Result<HashSet<u64>> {
        dead_ids(&self.dead)
    }
}

impl RunTables for ReadRuns {
    type Blocks = redb::ReadOnlyTable<(u32, u32, u64, u64), &'static [u8]>;
    fn blocks(&self) -> &Self::Blocks {
        &self.blocks
    }
    fn list(&self) -> &[(u32, u64)] {
        &self.list
    }
    fn dead(&self) -> &impl ReadableTable<u64, ()> {
        &self.dead
    }
}

fn read_list(runs: &impl ReadableTable<u32, u64>) -> Result<Vec<(u32, u64)>> {
    let mut list = Vec::new();
    for entry in runs.iter()? {
        let (run, postings) = entry?;
        list.push((run.value(), postings.value()));
    }
    Ok(list)
}

/// Appends to `out` the ids that run `run` posts under (`band`, `key`) and
/// that are greater than `after`, ascending, at most `cap`; true when cut
/// at `cap`.
fn postings_of(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    run: u32,
    band: u32,
    key: u64,
    after: Option<u64>,
    cap: usize,
    out: &mut Vec<u64>,
) -> Result<bool> {
    let start = match after {
        Some(u64::MAX) => return Ok(false),
        Some(id) => id + 1,
        None => 0,
    };
    // The common case in one descent: the last block starting at or before
    // (key, MAX). When it starts before `key`, the next block starts after
    // the bucket, so the whole bucket (if any) is in this one.
    // (An open start: a bounded one would descend to the range's first
    // block too, one more page read per look-up.)
    let last = blocks
        .range(..=(run, band, key, u64::MAX))?
        .next_back()
        .transpose()?;
    let Some((last_key, last_block)) = last else {
        return Ok(false);
    };
    let (r, b, first_key, _) = last_key.value();
    if (r, b) != (run, band) {
        return Ok(false); // the run has no block of this band at or before the key
    }
    if first_key < key {
        let payload = block_payload(last_block.value()).map_err(|e| context(e, run, band))?;
        let mut taken = 0;
        return Ok(collect_block(payload, key, start, cap, &mut taken, out).unwrap_or(false));
    }
    drop((last_key, last_block));
    // The bucket fills whole blocks: start at the last block starting at
    // or before (key, start); its postings from `start` on are there or in
    // the blocks after it.
    let first = blocks
        .range(..=(run, band, key, start))?
        .next_back()
        .transpose()?
        .map(|(k, _)| k.value())
        .filter(|k| (k.0, k.1) == (run, band));
    let from = first.unwrap_or((run, band, key, start));
    let mut taken = 0;
    for block in blocks.range(from..=(run, band, key, u64::MAX))? {
        let (_, bytes) = block?;
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

/// The postings of run `run` in band `band` with keys in `lo..hi` (`hi`
/// None: to the end), in order.
fn slice(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    run: u32,
    band: u32,
    lo: u64,
    hi: Option<u64>,
) -> Result<Vec<(u64, u64)>> {
    let first = blocks
        .range((run, band, 0, 0)..=(run, band, lo, 0))?
        .next_back()
        .transpose()?
        .map(|(k, _)| k.value());
    let from = first.unwrap_or((run, band, lo, 0));
    let to = match hi {
        Some(hi) => (run, band, hi, 0),
        None => (run, band, u64::MAX, u64::MAX),
    };
    let mut out = Vec::new();
    let mut block = Vec::new();
    for row in blocks.range(from..=to)? {
        let (k, bytes) = row?;
        if hi.is_some() && k.value() == to {
            break;
        }
        decode_block(bytes.value(), &mut block).map_err(|e| context(e, run, k.value().1))?;
        out.extend(
            block
                .iter()
                .filter(|&&(key, _)| key >= lo && hi.is_none_or(|hi| key < hi)),
        );
    }
    Ok(out)
}

fn context(err: Error, run: u32, band: u32) -> Error {
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

/// Merges sorted posting streams into one sorted stream (k-way).
pub struct Merged<I> {
    sources: Vec<I>,
    heap: BinaryHeap<std::cmp::Reverse<(Posting, usize)>>,
    failed: Option<Error>,
}

impl<I: Iterator<Item = Result<Posting>>> Merged<I> {
    /// The merge of `sources`, each sorted.
    pub fn new(mut sources: Vec<I>) -> Self {
        let mut heap = BinaryHeap::new();
        let mut failed = None;
        for (i, source) in sources.iter_mut().enumerate() {
            match source.next() {
                Some(Ok(p)) => heap.push(std::cmp::Reverse((p, i))),
                Some(Err(e)) => failed = Some(e),
                None => {}
            }
        }
        Self {
            sources,
            heap,
            failed,
        }
    }
}

impl<I: Iterator<Item = Result<Posting>>> Iterator for Merged<I> {
    type Item = Result<Posting>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(err) = self.failed.take() {
            return Some(Err(err));
        }
        let std::cmp::Reverse((posting, i)) = self.heap.pop()?;
        match self.sources[i].next() {
            Some(Ok(p)) => self.heap.push(std::cmp::Reverse((p, i))),
            Some(Err(e)) => self.failed = Some(e),
            None => {}
        }
        Some(Ok(posting))
    }
}

/// Writes sorted postings as the blocks of run `run`; returns how many.
pub fn write_run(
    blocks: &mut Table<'_, (u32, u32, u64, u64), &'static [u8]>,
    run: u32,
    postings: impl Iterator<Item = Result<Posting>>,
) -> Result<u64> {
    let mut block: Vec<(u64, u64)> = Vec::with_capacity(BLOCK_ENTRIES);
    let mut band = 0;
    let mut count = 0;
    let mut flush = |band: u32, block: &mut Vec<(u64, u64)>| -> Result<()> {
        if let Some(&(key, id)) = block.first() {
            blocks.insert((run, band, key, id), encode_block(block).as_slice())?;
            block.clear();
        }
        Ok(())
    };
    for posting in postings {
        let (b, key, id) = posting?;
        if b != band || block.len() == BLOCK_ENTRIES {
            flush(band, &mut block)?;
            band = b;
        }
        block.push((key, id));
        count += 1;
    }
    flush(band, &mut block)?;
    Ok(count)
}

/// The write side: adds runs, flushes fresh postings and merges.
pub struct RunWriter<'t> {
    blocks: Table<'t, (u32, u32, u64, u64), &'static [u8]>,
    runs: Table<'t, u32, u64>,
    dead: Table<'t, u64, ()>,
    /// The runs table's contents, kept in step with it.
    list: Vec<(u32, u64)>,
}

impl<'t> RunTables for RunWriter<'t> {
    type Blocks = Table<'t, (u32, u32, u64, u64), &'static [u8]>;
    fn blocks(&self) -> &Self::Blocks {
        &self.blocks
    }
    fn dead(&self) -> &impl ReadableTable<u64, ()> {
        &self.dead
    }
    fn list(&self) -> &[(u32, u64)] {
        &self.list
    }
}

impl<'t> RunWriter<'t> {
    /// Opens (creating when absent) the run tables of a write transaction.
    pub fn open(txn: &'t redb::WriteTransaction) -> Result<Self> {
        let runs = txn.open_table(RUNS)?;
        let list = read_list(&runs)?;
        Ok(Self {
            blocks: txn.open_table(RUN_BLOCKS)?,
            runs,
            dead: txn.open_table(DEAD_IDS)?,
            list,
        })
    }

    fn next_run_id(&self) -> Result<u32> {
        Ok(match self.list.last() {
            Some(&(id, _)) => id
                .checked_add(1)
                .ok_or_else(|| Error::corrupted("run ids exhausted; rebuild the database"))?,
            None => 1,
        })
    }

    /// Writes sorted `postings` as a new run (when there are any), then
    /// merges runs as the policy says.
    pub fn add_run(&mut self, postings: impl Iterator<Item = Result<Posting>>) -> Result<()> {
        let run = self.next_run_id()?;
        let count = write_run(&mut self.blocks, run, postings)?;
        if count > 0 {
            self.runs.insert(run, count)?;
            self.list.push((run, count));
            self.merge_by_policy()?;
        }
        Ok(())
    }

    /// Records that document `id` was removed while runs may hold its
    /// postings.
    pub fn mark_dead(&mut self, id: u64) -> Result<()> {
        if !self.list.is_empty() {
            self.dead.insert(id, ())?;
        }
        Ok(())
    }

    /// Keeps the runs' size classes strictly decreasing from the oldest
    /// run to the newest, like the digits of a binary counter: while a run
    /// is of no larger a class than the run after it, the two are merged.
    /// So there are at most as many runs as size classes (log₂ of the
    /// postings), whatever the sizes of the runs added — comparing only the
    /// two newest runs, an odd-sized run (a load's last, short commit)
    /// would stop every merge behind it, and runs would pile up.
    fn merge_by_policy(&mut self) -> Result<()> {
        loop {
            let list = self.list.clone();
            let Some(i) = (0..list.len().saturating_sub(1))
                .rev()
                .find(|&i| class(list[i].1) <= class(list[i + 1].1))
            else {
                return Ok(());
            };
            self.merge(&list[i..=i + 1], list.len() == 2)?;
        }
    }

    /// Merges every run into one (dropping dead postings).
    pub fn merge_all(&mut self) -> Result<()> {
        let list = self.list.clone();
        if list.len() > 1 || !self.dead.is_empty()? {
            self.merge(&list, true)?;
        }
        Ok(())
    }

    /// Merges `inputs` into a new run, slice by slice of the key space;
    /// `all` says they are every run, so the dead-id table empties.
    fn merge(&mut self, inputs: &[(u32, u64)], all: bool) -> Result<()> {
        let mut dead = HashSet::new();
        for entry in self.dead.iter()? {
            dead.insert(entry?.0.value());
        }
        let output = self.next_run_id()?;
        let total: u64 = inputs.iter().map(|r| r.1).sum();
        let bands = self.bands_of(inputs)?;
        let per_band = total / u64::from(bands.len().max(1) as u32);
        let slices = (per_band / SLICE_POSTINGS).clamp(1, 1 << 16);
        let width = u64::MAX / slices;
        let mut writer = BlockWriter::new(output);
        let mut count = 0;
        for band in bands {
            for s in 0..slices {
                let lo = s * width;
                let hi = (s + 1 < slices).then(|| (s + 1) * width);
                let mut entries = Vec::new();
                for &(run, _) in inputs {
                    entries.extend(slice(&self.blocks, run, band, lo, hi)?);
                }
                entries.sort_unstable();
                entries.retain(|e| !dead.contains(&e.1));
                entries.dedup();
                count += entries.len() as u64;
                writer.push_band(&mut self.blocks, band, &entries)?;
            }
        }
        for &(run, _) in inputs {
            self.blocks.retain_in(
                (run, 0, 0, 0)..=(run, u32::MAX, u64::MAX, u64::MAX),
                |_, _| false,
            )?;
            self.runs.remove(run)?;
        }
        self.list.retain(|r| !inputs.contains(r));
        if count > 0 {
            self.runs.insert(output, count)?;
            self.list.push((output, count));
        }
        if all {
            self.dead.retain(|_, _| false)?;
        }
        Ok(())
    }

    /// The bands that runs `inputs` have blocks in.
    fn bands_of(&self, inputs: &[(u32, u64)]) -> Result<Vec<u32>> {
        let mut bands = Vec::new();
        for &(run, _) in inputs {
            let mut band = 0u32;
            loop {
                let next = self
                    .blocks
                    .range((run, band, 0, 0)..=(run, u32::MAX, u64::MAX, u64::MAX))?
                    .next()
                    .transpose()?;
                let Some((key, _)) = next else { break };
                let b = key.value().1;
                bands.push(b);
                match b.checked_add(1) {
                    Some(n) => band = n,
                    None => break,
                }
            }
        }
        bands.sort_unstable();
        bands.dedup();
        Ok(bands)
    }
}

/// Cuts the entries of one band after another into blocks of a run.
struct BlockWriter {
    run: u32,
}

impl BlockWriter {
    fn new(run: u32) -> Self {
        Self { run }
    }

    fn push_band(
        &mut self,
        blocks: &mut Table<'_, (u32, u32, u64, u64), &'static [u8]>,
        band: u32,
        entries: &[(u64, u64)],
    ) -> Result<()> {
        for chunk in entries.chunks(BLOCK_ENTRIES) {
            let (key, id) = chunk[0];
            blocks.insert((self.run, band, key, id), encode_block(chunk).as_slice())?;
        }
        Ok(())
    }
}

/// The dead ids of a snapshot.
pub fn dead_ids(table: &impl ReadableTable<u64, ()>) -> Result<HashSet<u64>> {
    let mut dead = HashSet::new();
    for entry in table.iter()? {
        dead.insert(entry?.0.value());
    }
    Ok(dead)
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

    #[test]
    fn size_classes() {
        assert_eq!(class(0), 0);
        assert_eq!(class(1), 0);
        assert_eq!(class(2), 1);
        assert_eq!(class(3), 1);
        assert_eq!(class(1 << 20), 20);
    }
}
