//! Posting runs: the part of the MinHash index that grows with the file,
//! kept as immutable sorted runs of postings (format 2).
//!
//! **Why.** Format 1 kept one B-tree row per posting, `(band, bucket, id)`.
//! Bucket keys are uniform hashes, so every commit of a bulk load touched
//! leaves all over a tree far larger than any cache, and redb's
//! copy-on-write commit rewrote each one: the bytes written per document
//! and the time per commit grew with the file (`CHANGELOG.md`, format 2).
//!
//! **Layout.** A run is a sorted sequence of postings `(band, key, id)`,
//! cut into blocks of at most [`BLOCK_ENTRIES`] postings of one band. Each
//! block is one row of [`RUN_BLOCKS`], keyed by `(run, band, last key,
//! last id)` (format 5; its first posting before) — so redb's B-tree is
//! the run's fence index and nothing has to be loaded at open — with the
//! block's postings as a `Tag::Block`
//! record: `(key u64 LE, id u64 LE)` pairs, fixed width, so a look-up
//! binary-searches a block without decoding it. [`RUNS`] lists the runs and
//! their sizes. New postings of single writes go to the small `buckets`
//! table (the "fresh" postings, as in format 1) until it holds
//! [`FRESH_MAX`] of them; then they become a run. A bulk load writes each
//! of its commits' postings as a run at once: sequential inserts of a few
//! hundred blocks instead of random inserts of every posting.
//!
//! **Merging.** Four runs of one level (⌊log₂ postings / 2⌋) are merged
//! into one run of a higher level ([`policy`]). So each posting is
//! rewritten about log₄(total / first run) times, sequentially, and a
//! look-up probes at most three runs per level (the filters below skip
//! most of them). A merge reads and writes slices of the key space of
//! bounded size, so its memory does not grow with the file. A write makes
//! small merges itself ([`policy::INLINE_MAX`]); larger ones are made by
//! the database's merger thread in transactions of their own
//! ([`background`]), while the inputs keep answering, so that no write
//! pays for them. When the merger falls behind, writes merge inline past
//! [`policy::MAX_RUNS`] runs.
//!
//! **Filters.** Each run has a blocked Bloom filter over its `(band, key)`
//! pairs ([`filter`]), so a look-up reads the blocks of the runs that may
//! hold the bucket only: about one run per bucket that exists, instead of
//! every run.
//!
//! This folder: [`block`] encodes blocks and reads them (look-ups, scans);
//! [`filter`] the run filters; [`merge`] writes runs and merges them;
//! [`policy`] chooses merges; [`background`] makes them off the commit
//! path; this
//! file has the tables, the views a transaction has of them, and the
//! constants.
//!
//! **Deletes.** Removing a document deletes its fresh postings; postings of
//! it already in runs stay there, and its id goes into [`DEAD_IDS`].
//! Readers never return such an id: its document record is gone, and every
//! candidate is read before it is returned. Merges drop the postings of
//! dead ids, and a merge of every run empties the dead-id table.

pub mod background;
mod block;
mod filter;
mod lists;
mod merge;
pub mod policy;
mod whole;

pub use block::RunScan;
/// The block codec, for tests that damage blocks behind lshdb's back.
#[cfg(any(test, feature = "internals"))]
pub use block::{decode_block, encode_block};
pub use filter::{RowCache, RUN_FILTERS, RUN_FILTER_LINES};
pub use merge::{Merged, RunWriter};

use crate::store::probe::Probe;
use crate::Result;
use block::postings_of;
pub(crate) use block::{collect_blocks, context, last_posting};
use redb::{ReadableTable, ReadableTableMetadata, TableDefinition};
use std::collections::HashSet;
use std::sync::Arc;

/// Run blocks: `(run, band, last key, last id)` → `Tag::Block` record
/// (format 5; formats 2 to 4 keyed them by their first posting, in the
/// table `store::legacy::FIRST_KEYED_BLOCKS`). Keyed by its last posting,
/// the block holding the start of a bucket is the first one at or after
/// `(run, band, key, 0)`: a look-up reads its leaf and no other.
pub const RUN_BLOCKS: TableDefinition<(u32, u32, u64, u64), &[u8]> =
    TableDefinition::new("run_blocks_by_last");

/// Runs: run id → number of postings.
pub const RUNS: TableDefinition<u32, u64> = TableDefinition::new("runs");

/// Background merges under way: input run → the run being built from it
/// (unlisted in [`RUNS`] until the merge is published; `background.rs`).
pub const RUN_MERGES: TableDefinition<u32, u32> = TableDefinition::new("run_merges");

/// Runs being built by a background merge: run → (bands of it written
/// whole, postings in them), so that a merge cut off goes on from there.
pub const RUN_BUILDING: TableDefinition<u32, (u32, u64)> = TableDefinition::new("run_building");

/// Runs no longer (or never) listed in [`RUNS`] whose rows remain to be
/// deleted: inputs of a published merge, outputs of an abandoned one.
pub const RUN_GARBAGE: TableDefinition<u32, ()> = TableDefinition::new("run_garbage");

/// Ids of removed documents whose postings may still be in runs.
pub const DEAD_IDS: TableDefinition<u64, ()> = TableDefinition::new("dead_ids");

/// Postings per block at most: 3,840 bytes of entries, so that a block
/// and its key fit in one 4 KiB page of redb (a larger leaf takes 8 KiB,
/// and every look-up reads one).
pub const BLOCK_ENTRIES: usize = 240;

/// Fresh postings (the `buckets` table) at most before they become a run.
pub const FRESH_MAX: u64 = 1 << 16;

/// Postings a merge made inside a write reads at a time, about: a piece
/// of a band, however large its buckets (`merge::merged_piece`).
pub(super) const SLICE_POSTINGS: u64 = 1 << 21;

/// Bytes of one posting in a block: key and id, u64 LE each.
const ENTRY: usize = 16;

/// A posting: (band, band key, document id).
pub type Posting = (u32, u64, u64);

/// The size class of a run of `postings` postings.
pub(super) fn class(postings: u64) -> u32 {
    63 - postings.max(1).leading_zeros()
}

/// The run tables as a transaction sees them: the blocks, and the list of
/// runs (oldest first, as (run id, postings)).
pub trait RunTables {
    /// The blocks table type.
    type Blocks: ReadableTable<(u32, u32, u64, u64), &'static [u8]>;
    /// The filters table type.
    type Filters: ReadableTable<(u32, u32, u32), &'static [u8]>;
    /// The blocks.
    fn blocks(&self) -> &Self::Blocks;
    /// The filter rows, when the file has a filter table.
    fn filters(&self) -> Option<&Self::Filters>;
    /// The lines per band of run `run`'s filter; `None` when it has none.
    fn filter_lines(&self, run: u32) -> Option<u64>;
    /// The runs, oldest first.
    fn list(&self) -> &[(u32, u64)];
    /// A cache of the filter rows this transaction has read, if it keeps one.
    fn row_cache(&self) -> Option<&filter::RowCache> {
        None
    }
    /// Run `run`'s whole filter, when this transaction holds it in memory.
    fn whole_filter(&self, _run: u32) -> Option<&whole::WholeFilter> {
        None
    }
    /// True when the blocks are keyed by their first posting (a file of
    /// format 2 to 4 read as it is: `store::legacy`).
    fn first_keyed(&self) -> bool {
        false
    }
    /// The dead-id table (see the module comment).
    fn dead(&self) -> &impl ReadableTable<u64, ()>;

    /// Postings in all runs (dead ones included).
    fn postings_count(&self) -> u64 {
        self.list().iter().map(|r| r.1).sum()
    }

    /// Appends to `out` the ids of `probe`'s list (its `index` a band) in
    /// every run, ascending per run, at most its `cap` per run; true when a
    /// run's list was cut there. Ids of removed documents are left out:
    /// they must never reach a reader, whose record cache may still hold
    /// their records.
    fn postings(&self, probe: Probe, out: &mut Vec<u64>) -> Result<bool> {
        let (band, key) = (probe.index, probe.key);
        let from = out.len();
        let mut cut = false;
        for &(run, _) in self.list() {
            if let Some(whole) = self.whole_filter(run) {
                if !whole.may_contain(band, key) {
                    continue;
                }
            } else if let (Some(filters), Some(lines)) = (self.filters(), self.filter_lines(run)) {
                let cache = self.row_cache();
                if !filter::may_contain(filters, cache, run, lines, band, key)? {
                    continue;
                }
            }
            let read = |out: &mut Vec<u64>| match self.first_keyed() {
                true => crate::store::legacy::first_keyed_postings(self.blocks(), run, probe, out),
                false => postings_of(self.blocks(), run, probe, out),
            };
            cut |= match self.row_cache().and_then(|c| c.lists()) {
                Some(lists) => lists.postings(run, probe, out, read)?,
                None => read(out)?,
            };
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

    /// Every posting of run `run` in the bands `bands`, in order.
    fn scan(&self, run: u32, bands: std::ops::RangeInclusive<u32>) -> Result<RunScan<'_>> {
        let range = self
            .blocks()
            .range((run, *bands.start(), 0, 0)..=(run, *bands.end(), u64::MAX, u64::MAX))?;
        Ok(RunScan::new(range))
    }
}

/// What a snapshot's readers need of the runs, whether or not the file has
/// run tables (a format-1 file opened read-only has none).
pub trait RunsView {
    /// The run tables, when the file has them.
    type Runs: RunTables;
    /// The runs to read postings from ([`RunTables::postings`]); `None`
    /// without runs.
    fn runs(&self) -> Option<&Self::Runs>;
}

impl<T: RunTables> RunsView for T {
    type Runs = T;
    fn runs(&self) -> Option<&T> {
        Some(self)
    }
}

impl RunsView for Option<ReadRuns> {
    type Runs = ReadRuns;
    fn runs(&self) -> Option<&ReadRuns> {
        self.as_ref()
    }
}

/// The filter rows table of a read transaction.
type ReadFilters = redb::ReadOnlyTable<(u32, u32, u32), &'static [u8]>;

/// The run tables of a read transaction.
pub struct ReadRuns {
    blocks: redb::ReadOnlyTable<(u32, u32, u64, u64), &'static [u8]>,
    /// The blocks are keyed by their first posting (formats 2 to 4).
    first_keyed: bool,
    list: Vec<(u32, u64)>,
    dead: redb::ReadOnlyTable<u64, ()>,
    filters: Option<ReadFilters>,
    /// (run, filter lines per band), by run.
    lines: Vec<(u32, u64)>,
    /// Filter rows shared with other snapshots of the same load.
    rows: Option<Arc<filter::RowCache>>,
    /// Whole filters of runs, by run, from `rows`.
    whole: Vec<(u32, Arc<whole::WholeFilter>)>,
}

impl ReadRuns {
    /// Opens the run tables; a file of format 1 has none, and reads as
    /// having no runs.
    pub fn open(txn: &redb::ReadTransaction) -> Result<Option<Self>> {
        let (blocks, first_keyed) = match txn.open_table(RUN_BLOCKS) {
            Ok(table) => (table, false),
            Err(redb::TableError::TableDoesNotExist(_)) => {
                match crate::store::legacy::open_first_keyed_blocks(txn)? {
                    Some(table) => (table, true),
                    None => return Ok(None),
                }
            }
            Err(err) => return Err(err.into()),
        };
        let runs = txn.open_table(RUNS)?;
        let dead = txn.open_table(DEAD_IDS)?;
        // Files written before run filters have none: every run is read.
        let (filters, lines) = match txn.open_table(RUN_FILTER_LINES) {
            Ok(sizes) => (Some(txn.open_table(RUN_FILTERS)?), read_list(&sizes)?),
            Err(redb::TableError::TableDoesNotExist(_)) => (None, Vec::new()),
            Err(err) => return Err(err.into()),
        };
        Ok(Some(Self {
            blocks,
            first_keyed,
            list: read_list(&runs)?,
            dead,
            filters,
            lines,
            rows: None,
            whole: Vec::new(),
        }))
    }

    /// Reads filter rows through `rows`, a cache shared with other
    /// snapshots of the same file, which follows this snapshot's runs, and
    /// holds the whole filters that fit in it.
    pub fn share_rows(&mut self, rows: Arc<filter::RowCache>) -> Result<()> {
        rows.follow(&self.list);
        if let Some(filters) = &self.filters {
            self.whole = rows.whole_filters(filters, &self.list, &self.lines)?;
        }
        self.rows = Some(rows);
        Ok(())
    }

    /// The ids of removed documents whose postings may be in runs.
    pub fn dead_ids(&self) -> Result<HashSet<u64>> {
        dead_ids(&self.dead)
    }
}

impl RunTables for ReadRuns {
    type Blocks = redb::ReadOnlyTable<(u32, u32, u64, u64), &'static [u8]>;
    type Filters = ReadFilters;
    fn blocks(&self) -> &Self::Blocks {
        &self.blocks
    }
    fn filters(&self) -> Option<&Self::Filters> {
        self.filters.as_ref()
    }
    fn filter_lines(&self, run: u32) -> Option<u64> {
        lines_of(&self.lines, run)
    }
    fn list(&self) -> &[(u32, u64)] {
        &self.list
    }
    fn row_cache(&self) -> Option<&filter::RowCache> {
        self.rows.as_deref()
    }
    fn first_keyed(&self) -> bool {
        self.first_keyed
    }
    fn whole_filter(&self, run: u32) -> Option<&whole::WholeFilter> {
        let at = self.whole.binary_search_by_key(&run, |w| w.0).ok()?;
        Some(&self.whole[at].1)
    }
    fn dead(&self) -> &impl ReadableTable<u64, ()> {
        &self.dead
    }
}

pub(super) fn read_list(runs: &impl ReadableTable<u32, u64>) -> Result<Vec<(u32, u64)>> {
    let mut list = Vec::new();
    for entry in runs.iter()? {
        let (run, postings) = entry?;
        list.push((run.value(), postings.value()));
    }
    Ok(list)
}

/// The entry of `run` in a list sorted by run.
pub(super) fn lines_of(lines: &[(u32, u64)], run: u32) -> Option<u64> {
    lines
        .binary_search_by_key(&run, |e| e.0)
        .ok()
        .map(|i| lines[i].1)
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
    fn size_classes() {
        assert_eq!(class(0), 0);
        assert_eq!(class(1), 0);
        assert_eq!(class(2), 1);
        assert_eq!(class(3), 1);
        assert_eq!(class(1 << 20), 20);
    }
}
