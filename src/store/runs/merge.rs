//! Writing runs and merging them: the k-way merge of sorted posting
//! streams, the blocks of a new run, and [`RunWriter`], the run tables of a
//! write transaction with the merge policy.

use super::block::{encode_block, postings_from};
use super::filter::{self, FilterWriter, RUN_FILTERS, RUN_FILTER_LINES};
use super::policy::{self, INLINE_MAX};
use super::whole::WholeFilter;
use super::{
    lines_of, read_list, Posting, RunTables, BLOCK_ENTRIES, DEAD_IDS, RUNS, RUN_BLOCKS,
    RUN_BUILDING, RUN_GARBAGE, RUN_MERGES, SLICE_POSTINGS,
};
use crate::{Error, Result};
use redb::{ReadableTable, ReadableTableMetadata, Table};
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

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

/// Writes sorted postings as the blocks of run `run` and their filter
/// rows; returns how many.
fn write_run(
    tables: &mut Output<'_, '_>,
    filter: &mut FilterWriter,
    run: u32,
    postings: impl Iterator<Item = Result<Posting>>,
) -> Result<u64> {
    let mut block: Vec<(u64, u64)> = Vec::with_capacity(BLOCK_ENTRIES);
    let mut band = 0;
    let mut count = 0;
    for posting in postings {
        let (b, key, id) = posting?;
        if b != band || block.len() == BLOCK_ENTRIES {
            flush_block(tables.blocks, run, band, &mut block)?;
            band = b;
        }
        filter.add(tables.filters, b, key)?;
        block.push((key, id));
        count += 1;
    }
    flush_block(tables.blocks, run, band, &mut block)?;
    Ok(count)
}

fn flush_block(
    blocks: &mut Table<'_, (u32, u32, u64, u64), &'static [u8]>,
    run: u32,
    band: u32,
    block: &mut Vec<(u64, u64)>,
) -> Result<()> {
    if let Some(&(key, id)) = block.last() {
        blocks.insert((run, band, key, id), encode_block(block).as_slice())?;
        block.clear();
    }
    Ok(())
}

/// The tables a new run is written to.
struct Output<'a, 't> {
    blocks: &'a mut Table<'t, (u32, u32, u64, u64), &'static [u8]>,
    filters: &'a mut Table<'t, (u32, u32, u32), &'static [u8]>,
}

/// The write side: adds runs, flushes fresh postings and merges.
pub struct RunWriter<'t> {
    blocks: Table<'t, (u32, u32, u64, u64), &'static [u8]>,
    runs: Table<'t, u32, u64>,
    dead: Table<'t, u64, ()>,
    filters: Table<'t, (u32, u32, u32), &'static [u8]>,
    sizes: Table<'t, u32, u64>,
    /// Background merges under way: input run → the run being built.
    merges: Table<'t, u32, u32>,
    /// Unlisted runs whose rows remain to be deleted.
    garbage: Table<'t, u32, ()>,
    /// The progress of runs being built.
    building: Table<'t, u32, (u32, u64)>,
    /// The runs table's contents, kept in step with it.
    list: Vec<(u32, u64)>,
    /// The filter sizes table's contents (run, lines), kept in step.
    lines: Vec<(u32, u64)>,
    /// Filter rows read by this transaction's look-ups.
    cache: filter::RowCache,
    /// Runs the background merger is merging: no write merges them.
    busy: Vec<u32>,
    /// The highest id of a run being built or being deleted: not reused.
    reserved: u32,
    /// Whole filters of runs listed at open, from a load's cache
    /// ([`RunWriter::share_filters`]), by run.
    whole: Vec<(u32, Arc<WholeFilter>)>,
    /// The highest run id issued by this transaction or, through
    /// [`RunWriter::share_filters`], the load's earlier ones: never issued
    /// again, so that a run id in the load's cache always names one run.
    issued: u32,
}

impl<'t> RunTables for RunWriter<'t> {
    type Blocks = Table<'t, (u32, u32, u64, u64), &'static [u8]>;
    type Filters = Table<'t, (u32, u32, u32), &'static [u8]>;
    fn blocks(&self) -> &Self::Blocks {
        &self.blocks
    }
    fn filters(&self) -> Option<&Self::Filters> {
        Some(&self.filters)
    }
    fn filter_lines(&self, run: u32) -> Option<u64> {
        lines_of(&self.lines, run)
    }
    fn row_cache(&self) -> Option<&filter::RowCache> {
        Some(&self.cache)
    }
    fn whole_filter(&self, run: u32) -> Option<&WholeFilter> {
        let at = self.whole.binary_search_by_key(&run, |w| w.0).ok()?;
        Some(&self.whole[at].1)
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
        let sizes = txn.open_table(RUN_FILTER_LINES)?;
        let lines = read_list(&sizes)?;
        let merges = txn.open_table(RUN_MERGES)?;
        let garbage = txn.open_table(RUN_GARBAGE)?;
        let (busy, reserved) = pending(&merges, &garbage)?;
        Ok(Self {
            merges,
            garbage,
            building: txn.open_table(RUN_BUILDING)?,
            blocks: txn.open_table(RUN_BLOCKS)?,
            runs,
            dead: txn.open_table(DEAD_IDS)?,
            filters: txn.open_table(RUN_FILTERS)?,
            sizes,
            list,
            lines,
            cache: filter::RowCache::default(),
            busy,
            reserved,
            whole: Vec::new(),
            issued: 0,
        })
    }

    /// For a load of several transactions: probes the runs listed now
    /// through their whole filters kept in `cache` (read now for those
    /// not kept yet; see [`filter::RowCache::whole_filters`]), and issues
    /// no run id at or below `issued` (what [`RunWriter::issued`] said in
    /// the load's last transaction): the cache's ids stay unambiguous.
    pub fn share_filters(&mut self, cache: &filter::RowCache, issued: u32) -> Result<()> {
        self.issued = self.issued.max(issued);
        cache.follow(&self.list);
        self.whole = cache.whole_filters(&self.filters, &self.list, &self.lines)?;
        Ok(())
    }

    /// The highest run id issued or listed so far (see
    /// [`RunWriter::share_filters`]).
    pub fn issued(&self) -> u32 {
        let listed = self.list.iter().map(|r| r.0).max().unwrap_or(0);
        self.issued.max(listed)
    }

    fn next_run_id(&mut self) -> Result<u32> {
        let run = next_run_id(&self.list, self.reserved.max(self.issued))?;
        self.issued = run;
        Ok(run)
    }

    /// Writes sorted `postings` (about `per_band` in each band, which
    /// sizes the run's filter) as a new run, when there are any, then
    /// merges runs as the policy says.
    pub fn add_run(
        &mut self,
        postings: impl Iterator<Item = Result<Posting>>,
        per_band: u64,
    ) -> Result<()> {
        let run = self.next_run_id()?;
        let mut filter = FilterWriter::new(run, per_band);
        let mut output = Output {
            blocks: &mut self.blocks,
            filters: &mut self.filters,
        };
        let count = write_run(&mut output, &mut filter, run, postings)?;
        if count > 0 {
            self.finish_run(run, count, filter)?;
            self.merge_by_policy()?;
        }
        Ok(())
    }

    /// Records new run `run` of `count` postings, and its filter.
    fn finish_run(&mut self, run: u32, count: u64, filter: FilterWriter) -> Result<()> {
        self.whole.retain(|w| w.0 != run);
        self.runs.insert(run, count)?;
        self.list.push((run, count));
        let lines = filter.lines();
        filter.finish(&mut self.filters, &mut self.sizes)?;
        self.lines.push((run, lines));
        Ok(())
    }

    /// Deletes run `run`: its blocks, its filter, its entries.
    fn remove_run(&mut self, run: u32) -> Result<()> {
        self.blocks.retain_in(
            (run, 0, 0, 0)..=(run, u32::MAX, u64::MAX, u64::MAX),
            |_, _| false,
        )?;
        self.runs.remove(run)?;
        filter::remove(&mut self.filters, &mut self.sizes, run)?;
        self.list.retain(|r| r.0 != run);
        self.lines.retain(|r| r.0 != run);
        self.whole.retain(|w| w.0 != run);
        self.cache.clear();
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

    /// Makes the merges the policy calls for that are small enough for a
    /// write ([`policy::INLINE_MAX`]; larger ones are left to the
    /// background merger), then, while more than [`policy::MAX_RUNS`] runs
    /// are listed, merges inline whatever is due, and the smallest runs:
    /// so a look-up never probes more runs than that, even when the merger
    /// falls behind. Runs the merger is merging are left alone.
    fn merge_by_policy(&mut self) -> Result<()> {
        loop {
            let list = self.list.clone();
            if let Some(inputs) = policy::next_merge(&list, &self.busy, INLINE_MAX, true) {
                self.merge(&inputs, inputs.len() == list.len())?;
                continue;
            }
            if list.len() <= policy::MAX_RUNS {
                return Ok(());
            }
            let due = policy::next_merge(&list, &self.busy, u64::MAX, false);
            match due.or_else(|| policy::overflow_merge(&list, &self.busy)) {
                Some(inputs) => self.merge(&inputs, inputs.len() == list.len())?,
                None => return Ok(()),
            }
        }
    }

    /// Merges every run into one (dropping dead postings).
    /// A merge the background merger left unfinished, and runs waiting to
    /// be deleted, are deleted first: call it only while no merger runs.
    pub fn merge_all(&mut self) -> Result<()> {
        self.drop_pending()?;
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
        // A slice holds up to about two slices' worth: an input with more
        // is a large bucket, read a piece at a time.
        let cap = 2 * SLICE_POSTINGS as usize;
        let mut writer = BlockWriter::new(output);
        let mut filter = FilterWriter::new(output, per_band);
        let mut count = 0;
        for band in bands {
            for s in 0..slices {
                let hi = (s + 1 < slices).then(|| (s + 1) * width);
                let mut start = Some((s * width, 0));
                while let Some(from) = start {
                    let (entries, cut) =
                        merged_piece(&self.blocks, inputs, (band, from, hi, cap), &dead)?;
                    count += entries.len() as u64;
                    writer.push_band(&mut self.blocks, band, &entries)?;
                    for &(key, _) in &entries {
                        filter.add(&mut self.filters, band, key)?;
                    }
                    start = cut.and_then(after);
                }
            }
        }
        for &(run, _) in inputs {
            self.remove_run(run)?;
        }
        if count > 0 {
            self.finish_run(output, count, filter)?;
        }
        if all {
            self.dead.retain(|_, _| false)?;
        }
        Ok(())
    }

    /// Deletes every unlisted run: those the background merger was
    /// building and those it retired.
    fn drop_pending(&mut self) -> Result<()> {
        let mut runs: Vec<u32> = Vec::new();
        for entry in self.merges.iter()? {
            runs.push(entry?.1.value());
        }
        for entry in self.garbage.iter()? {
            runs.push(entry?.0.value());
        }
        runs.sort_unstable();
        runs.dedup();
        for run in runs {
            if self.list.iter().all(|r| r.0 != run) {
                self.remove_run(run)?;
            }
        }
        self.merges.retain(|_, _| false)?;
        self.garbage.retain(|_, _| false)?;
        self.building.retain(|_, _| false)?;
        self.busy.clear();
        self.reserved = 0;
        Ok(())
    }

    /// The bands that runs `inputs` have blocks in.
    fn bands_of(&self, inputs: &[(u32, u64)]) -> Result<Vec<u32>> {
        bands_of(&self.blocks, inputs)
    }
}

/// The bands that runs `inputs` have blocks in.
pub(super) fn bands_of(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    inputs: &[(u32, u64)],
) -> Result<Vec<u32>> {
    let mut bands = Vec::new();
    for &(run, _) in inputs {
        let mut band = 0u32;
        loop {
            let next = blocks
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

/// The runs background merges are merging, and the highest id of a run
/// being built or waiting to be deleted (0 when none).
pub(super) fn pending(
    merges: &impl ReadableTable<u32, u32>,
    garbage: &impl ReadableTable<u32, ()>,
) -> Result<(Vec<u32>, u32)> {
    let (mut busy, mut reserved) = (Vec::new(), 0);
    for entry in merges.iter()? {
        let (input, output) = entry?;
        busy.push(input.value());
        reserved = reserved.max(output.value());
    }
    if let Some(last) = garbage.last()? {
        reserved = reserved.max(last.0.value());
    }
    Ok((busy, reserved))
}

/// The id of a new run: after every listed run and every `reserved` one.
pub(super) fn next_run_id(list: &[(u32, u64)], reserved: u32) -> Result<u32> {
    let last = list.iter().map(|r| r.0).max().unwrap_or(0).max(reserved);
    last.checked_add(1)
        .ok_or_else(|| Error::corrupted("run ids exhausted; rebuild the database"))
}

/// Cuts the entries of one band after another into blocks of a run.
/// The postings of band `band` of the runs `inputs` from posting `start`
/// on with keys below `hi` (`None`: to the band's end), merged: sorted,
/// without duplicates and without the ids in `dead`. Each input gives
/// whole blocks until `cap` postings at least; when one has more, the
/// piece ends at the least of the last postings read from such inputs, so
/// that every posting up to it is in, and that end is returned (`None`:
/// the range is whole). A slice of the key space is so read whole as one
/// piece when it is small, and a piece at a time when a bucket makes it
/// large (one text stored millions of times makes one of millions).
/// A merged piece and where it ended ([`merged_piece`]).
type Piece = (Vec<(u64, u64)>, Option<(u64, u64)>);

pub(super) fn merged_piece(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    inputs: &[(u32, u64)],
    (band, start, hi, cap): (u32, (u64, u64), Option<u64>, usize),
    dead: &HashSet<u64>,
) -> Result<Piece> {
    let (mut entries, mut cut) = (Vec::new(), None);
    for &(run, _) in inputs {
        let (part, more) = postings_from(blocks, (run, band), start, hi, cap)?;
        if let (true, Some(&last)) = (more, part.last()) {
            cut = Some(cut.map_or(last, |c: (u64, u64)| c.min(last)));
        }
        entries.extend(part);
    }
    if let Some(cut) = cut {
        entries.retain(|&posting| posting <= cut);
    }
    entries.sort_unstable();
    entries.retain(|e| !dead.contains(&e.1));
    entries.dedup();
    Ok((entries, cut))
}

/// The posting after `posting`, in (key, id) order; `None` after the last.
pub(super) fn after(posting: (u64, u64)) -> Option<(u64, u64)> {
    match posting {
        (key, u64::MAX) => key.checked_add(1).map(|key| (key, 0)),
        (key, id) => Some((key, id + 1)),
    }
}

pub(super) struct BlockWriter {
    run: u32,
}

impl BlockWriter {
    pub(super) fn new(run: u32) -> Self {
        Self { run }
    }

    pub(super) fn push_band(
        &mut self,
        blocks: &mut Table<'_, (u32, u32, u64, u64), &'static [u8]>,
        band: u32,
        entries: &[(u64, u64)],
    ) -> Result<()> {
        for chunk in entries.chunks(BLOCK_ENTRIES) {
            let (key, id) = chunk[chunk.len() - 1];
            blocks.insert((self.run, band, key, id), encode_block(chunk).as_slice())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::new_db;

    /// A load's later transactions issue no run id at or below the highest
    /// it issued before, even when the runs of those ids are gone: its
    /// cache of whole filters names runs by id.
    #[test]
    fn a_load_never_issues_a_run_id_again() {
        let (_dir, _path, db) = new_db("ids.lshdb");
        let txn = db.begin_write().unwrap();
        let cache = filter::RowCache::whole_filters_only(1 << 20);
        let mut runs = RunWriter::open(&txn).unwrap();
        runs.share_filters(&cache, 41).unwrap();
        assert_eq!(runs.issued(), 41);
        assert_eq!(runs.next_run_id().unwrap(), 42);
        assert_eq!(
            runs.next_run_id().unwrap(),
            43,
            "issued, even if never listed"
        );
        assert_eq!(runs.issued(), 43);
    }

    /// Without a floor, ids follow the listed runs (none here).
    #[test]
    fn without_a_floor_ids_follow_the_listed_runs() {
        let (_dir, _path, db) = new_db("ids.lshdb");
        let txn = db.begin_write().unwrap();
        let mut runs = RunWriter::open(&txn).unwrap();
        assert_eq!(runs.next_run_id().unwrap(), 1);
    }
}
