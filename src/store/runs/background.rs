//! The background merge: a merge the policy calls for, made by the
//! database's merger thread in short write transactions of its own, so
//! that no write pays for it.
//!
//! **Steps.** [`begin`] records the merge in [`RUN_MERGES`] (input run →
//! the run being built) in one short transaction: writes leave those inputs
//! alone, and no new run takes the output's id. [`Job::step`] reads the
//! next postings of the inputs from a read snapshot (inputs never change:
//! only the merger removes them), from where the last step ended, and
//! writes them as blocks and filter rows of the output, about
//! [`TXN_POSTINGS`] postings per transaction, however they fall into
//! buckets: a bucket of millions of postings (one text stored millions of
//! times) is split between steps by document id, so a step's memory is
//! bounded by the step, not by the largest bucket. A step's two halves
//! can be apart: a [`StepReader`] reads steps ahead, outside any write
//! transaction, and [`Job::write`] writes each in its own. The output is
//! not in [`RUNS`], so readers and look-ups never see it.
//! [`Job::publish`] swaps it in, in one transaction: the inputs leave
//! [`RUNS`] for [`RUN_GARBAGE`], the output enters it. A query sees the
//! inputs or the output, never both or neither. [`collect_garbage`] then
//! deletes the retired runs' rows, [`DELETE_ROWS`] per transaction.
//!
//! **Crashes.** Every transaction commits durably, and each leaves the
//! file consistent: until the swap, the inputs answer; after it, the
//! output. A merge that was cut off (a crash, a handle closed or a merger
//! stopped mid-merge) leaves its half-built output, with its progress in
//! [`RUN_BUILDING`] (the bands written whole); [`resume`], the next
//! merger's first act, deletes the rows of the band it was in and goes on
//! from there. Nothing committed is ever lost, and a merge longer than the
//! handles that run it (a command-line tool opened for each load) still
//! ends.
//!
//! **Removed documents.** The dead-id set is read when the merge begins;
//! their postings are left out of the output. Ids that die during the
//! merge stay in [`DEAD_IDS`]. When the inputs were every run at the
//! start, the ids dead then are cleared at the swap: runs written since
//! cannot hold their postings, since ids are never reused. A resumed merge
//! leaves out the ids dead when it resumed, and clears none.

use super::filter::{FilterWriter, RUN_FILTERS, RUN_FILTER_LINES};
use super::merge::{after, bands_of, merged_piece, next_run_id, pending, BlockWriter};
use super::{
    dead_ids, policy, read_list, DEAD_IDS, RUNS, RUN_BLOCKS, RUN_BUILDING, RUN_GARBAGE, RUN_MERGES,
};
use crate::{Error, Result};
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};
use std::collections::HashSet;
use std::sync::Arc;

/// Postings a background merge writes per transaction, about: 1 MiB of
/// blocks, a few milliseconds, so that a write waiting for the lock waits
/// little (a merge of 10⁸ postings makes about 1,500 such commits).
pub const TXN_POSTINGS: u64 = 1 << 16;

/// Rows of a retired run deleted per transaction.
pub const DELETE_ROWS: usize = 8192;

/// A background merge under way.
pub struct Job {
    output: u32,
    inputs: Vec<(u32, u64)>,
    dead: Arc<HashSet<u64>>,
    /// The inputs were every run when the merge began.
    all: bool,
    bands: Vec<u32>,
    slices: u64,
    /// Where the next step to write starts.
    at: At,
    blocks: BlockWriter,
    filter: FilterWriter,
    count: u64,
}

/// A place in a merge's inputs: (index into the bands, slice of the key
/// space, the posting to go on from in it, `None` at its start).
type At = (usize, u64, Option<(u64, u64)>);

/// The reading side of a [`Job`]: reads its next steps from read snapshots
/// (the inputs never change), so that a merger can read one step on a
/// thread of its own while the job writes the last one, and hold the write
/// lock only to write.
pub struct StepReader {
    inputs: Vec<(u32, u64)>,
    dead: Arc<HashSet<u64>>,
    bands: Vec<u32>,
    slices: u64,
    at: At,
}

/// The postings of one step, merged, for [`Job::write`].
pub struct Step {
    pieces: Vec<Piece>,
    /// Where the step after it starts.
    next: At,
}

/// A piece of a step: the next entries of one band, and whether they end
/// it.
struct Piece {
    /// The band's index in [`Job::bands`].
    index: usize,
    band: u32,
    entries: Vec<(u64, u64)>,
    ends_band: bool,
}

/// The merge an earlier merger left unfinished, if any, made ready to go
/// on: the output's rows in and after the first band not written whole
/// are deleted. A merge whose inputs are no longer all listed (not made by
/// this build) is abandoned instead: its output goes to [`RUN_GARBAGE`].
pub fn resume(db: &redb::Database) -> Result<Option<Job>> {
    // Most opens find none: look in a read snapshot first.
    if !any_rows(&db.begin_read()?, RUN_MERGES)? {
        return Ok(None);
    }
    let txn = db.begin_write()?;
    let job = {
        let mut merges = txn.open_table(RUN_MERGES)?;
        let mut building = txn.open_table(RUN_BUILDING)?;
        let mut recorded = Vec::new();
        for entry in merges.iter()? {
            let (input, output) = entry?;
            recorded.push((input.value(), output.value()));
        }
        let Some(&(_, output)) = recorded.first() else {
            return Ok(None);
        };
        let list = read_list(&txn.open_table(RUNS)?)?;
        let inputs: Vec<(u32, u64)> = list
            .iter()
            .copied()
            .filter(|r| recorded.iter().any(|m| m.0 == r.0))
            .collect();
        let progress = building.get(output)?.map(|v| v.value());
        let whole = inputs.len() == recorded.len() && recorded.iter().all(|m| m.1 == output);
        match progress.filter(|_| whole) {
            None => {
                let mut garbage = txn.open_table(RUN_GARBAGE)?;
                for &(_, output) in &recorded {
                    garbage.insert(output, ())?;
                }
                merges.retain(|_, _| false)?;
                building.retain(|_, _| false)?;
                None
            }
            Some((done, count)) => {
                let dead = dead_ids(&txn.open_table(DEAD_IDS)?)?;
                let mut job = Job::new(&txn, output, inputs, dead, false)?;
                // Every band may be whole (only the swap was missing).
                if let Some(&from) = job.bands.get(done as usize) {
                    txn.open_table(RUN_BLOCKS)?.retain_in(
                        (output, from, 0, 0)..=(output, u32::MAX, u64::MAX, u64::MAX),
                        |_, _| false,
                    )?;
                    txn.open_table(RUN_FILTERS)?
                        .retain_in((output, from, 0)..=(output, u32::MAX, u32::MAX), |_, _| {
                            false
                        })?;
                }
                job.at = (done as usize, 0, None);
                job.count = count;
                Some(job)
            }
        }
    };
    txn.commit()?;
    Ok(job)
}

/// Whether a merger has anything to do in `db` now: a merge to go on
/// with ([`resume`]), a retired run to delete ([`collect_garbage`]) or a
/// merge due ([`begin`]). One read snapshot, taken on the opening thread:
/// a merger that finds nothing skips its first pass and begins by
/// waiting, so that no snapshot of its own is live while the handle's
/// first writes commit.
pub fn has_work(db: &redb::Database) -> Result<bool> {
    let txn = db.begin_read()?;
    Ok(any_rows(&txn, RUN_MERGES)? || any_rows(&txn, RUN_GARBAGE)? || merge_due(&txn)?)
}

/// Whether `table` exists in `txn` and holds a row. A table that exists
/// but cannot be opened (another type: a damaged or foreign file) is an
/// error, not "no work": a merge left half done would otherwise never be
/// finished, and its output run never collected.
fn any_rows<V: redb::Value + 'static>(
    txn: &redb::ReadTransaction,
    table: redb::TableDefinition<u32, V>,
) -> Result<bool> {
    match txn.open_table(table) {
        Ok(rows) => Ok(!rows.is_empty()?),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// Whether the policy calls for a merge of the runs listed in `txn`.
fn merge_due(txn: &redb::ReadTransaction) -> Result<bool> {
    let runs = match txn.open_table(RUNS) {
        Ok(runs) => runs,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(false),
        Err(err) => return Err(err.into()),
    };
    Ok(policy::next_merge(&read_list(&runs)?, &[], u64::MAX, false).is_some())
}

/// Deletes up to [`DELETE_ROWS`] rows of the oldest run in
/// [`RUN_GARBAGE`]; false when there was none.
pub fn collect_garbage(db: &redb::Database) -> Result<bool> {
    if !any_rows(&db.begin_read()?, RUN_GARBAGE)? {
        return Ok(false);
    }
    let txn = db.begin_write()?;
    {
        let mut garbage = txn.open_table(RUN_GARBAGE)?;
        let Some(run) = garbage.first()?.map(|e| e.0.value()) else {
            return Ok(false);
        };
        let mut blocks = txn.open_table(RUN_BLOCKS)?;
        let mut filters = txn.open_table(RUN_FILTERS)?;
        let range = (run, 0, 0, 0)..=(run, u32::MAX, u64::MAX, u64::MAX);
        let mut deleted = 0;
        for row in blocks
            .extract_from_if(range, |_, _| true)?
            .take(DELETE_ROWS)
        {
            row?;
            deleted += 1;
        }
        let rows = (run, 0, 0)..=(run, u32::MAX, u32::MAX);
        for row in filters
            .extract_from_if(rows, |_, _| true)?
            .take(DELETE_ROWS - deleted)
        {
            row?;
            deleted += 1;
        }
        if deleted < DELETE_ROWS {
            garbage.remove(run)?;
            txn.open_table(RUN_FILTER_LINES)?.remove(run)?;
        }
    }
    txn.commit()?;
    Ok(true)
}

/// Begins the next merge the policy calls for, if any: records it, and
/// returns the job that builds it.
pub fn begin(db: &redb::Database) -> Result<Option<Job>> {
    // Most calls find nothing due: look in a read snapshot first.
    if !merge_due(&db.begin_read()?)? {
        return Ok(None);
    }
    let txn = db.begin_write()?;
    let job = {
        let list = read_list(&txn.open_table(RUNS)?)?;
        let mut merges = txn.open_table(RUN_MERGES)?;
        let (busy, reserved) = pending(&merges, &txn.open_table(RUN_GARBAGE)?)?;
        let Some(inputs) = policy::next_merge(&list, &busy, u64::MAX, false) else {
            return Ok(None);
        };
        let output = next_run_id(&list, reserved)?;
        for &(run, _) in &inputs {
            merges.insert(run, output)?;
        }
        txn.open_table(RUN_BUILDING)?.insert(output, (0, 0))?;
        let all = busy.is_empty() && inputs.len() == list.len();
        let dead = dead_ids(&txn.open_table(DEAD_IDS)?)?;
        Job::new(&txn, output, inputs, dead, all)?
    };
    txn.commit()?;
    Ok(Some(job))
}

impl StepReader {
    /// The next postings, about [`TXN_POSTINGS`], merged: the next slices
    /// of the key space, and a slice that a large bucket makes larger than
    /// a step a piece at a time (`merge::merged_piece`). Empty once every
    /// slice is read.
    pub fn read(&mut self, db: &redb::Database) -> Result<Step> {
        let txn = db.begin_read()?;
        let blocks = txn.open_table(RUN_BLOCKS)?;
        let width = u64::MAX / self.slices;
        // A slice holds up to about two steps' worth: an input with more
        // than four is a large bucket, read a piece at a time.
        let cap = 4 * TXN_POSTINGS as usize;
        let (mut pieces, mut read) = (Vec::new(), 0);
        while read < TXN_POSTINGS && !self.is_done() {
            let (band, s) = (self.bands[self.at.0], self.at.1);
            let hi = (s + 1 < self.slices).then(|| (s + 1) * width);
            let start = self.at.2.unwrap_or((s * width, 0));
            let (entries, cut) =
                merged_piece(&blocks, &self.inputs, (band, start, hi, cap), &self.dead)?;
            read += entries.len() as u64;
            let next = cut.and_then(after);
            let ends_band = next.is_none() && hi.is_none();
            pieces.push(Piece {
                index: self.at.0,
                band,
                entries,
                ends_band,
            });
            self.at = match (next, ends_band) {
                (Some(next), _) => (self.at.0, s, Some(next)),
                (None, true) => (self.at.0 + 1, 0, None),
                (None, false) => (self.at.0, s + 1, None),
            };
        }
        Ok(Step {
            pieces,
            next: self.at,
        })
    }

    /// Whether every slice is read.
    pub fn is_done(&self) -> bool {
        self.at.0 >= self.bands.len()
    }
}

impl Job {
    /// The job of merging `inputs` into run `output`, from the start.
    fn new(
        txn: &redb::WriteTransaction,
        output: u32,
        inputs: Vec<(u32, u64)>,
        dead: HashSet<u64>,
        all: bool,
    ) -> Result<Self> {
        let total: u64 = inputs.iter().map(|r| r.1).sum();
        let bands = bands_of(&txn.open_table(RUN_BLOCKS)?, &inputs)?;
        let per_band = total / u64::from(bands.len().max(1) as u32);
        Ok(Job {
            output,
            all,
            dead: Arc::new(dead),
            inputs,
            bands,
            slices: (per_band / TXN_POSTINGS).clamp(1, 1 << 16),
            at: (0, 0, None),
            blocks: BlockWriter::new(output),
            filter: FilterWriter::new(output, per_band),
            count: 0,
        })
    }

    /// Reads the next slices (about [`TXN_POSTINGS`] postings) from a read
    /// snapshot and writes them to the output in one transaction, with the
    /// progress; true when every slice is written.
    pub fn step(&mut self, db: &redb::Database) -> Result<bool> {
        let step = self.reader().read(db)?;
        self.write(db, step)
    }

    /// A reader of the steps from where the job is.
    pub fn reader(&self) -> StepReader {
        StepReader {
            inputs: self.inputs.clone(),
            dead: Arc::clone(&self.dead),
            bands: self.bands.clone(),
            slices: self.slices,
            at: self.at,
        }
    }

    /// Whether every slice is written.
    pub fn is_built(&self) -> bool {
        self.at.0 >= self.bands.len()
    }

    /// Writes `step` (the next one, read by [`StepReader::read`]) to the
    /// output in one transaction, with the progress; true when every slice
    /// is written.
    pub fn write(&mut self, db: &redb::Database, step: Step) -> Result<bool> {
        let txn = db.begin_write()?;
        {
            self.check_recorded(&txn.open_table(RUN_MERGES)?)?;
            let mut blocks = txn.open_table(RUN_BLOCKS)?;
            let mut filters = txn.open_table(RUN_FILTERS)?;
            let mut progress = None;
            for piece in step.pieces {
                self.count += piece.entries.len() as u64;
                self.blocks
                    .push_band(&mut blocks, piece.band, &piece.entries)?;
                for &(key, _) in &piece.entries {
                    self.filter.add(&mut filters, piece.band, key)?;
                }
                if piece.ends_band {
                    // The band is whole, its filter rows too: a resumed
                    // merge starts after it.
                    self.filter.flush(&mut filters)?;
                    progress = Some((piece.index as u32 + 1, self.count));
                }
            }
            if let Some(done) = progress {
                txn.open_table(RUN_BUILDING)?.insert(self.output, done)?;
            }
        }
        txn.commit()?;
        self.at = step.next;
        Ok(self.is_built())
    }

    /// Swaps the output in for the inputs, in one transaction (see the
    /// module comment).
    pub fn publish(self, db: &redb::Database) -> Result<()> {
        let txn = db.begin_write()?;
        {
            let mut merges = txn.open_table(RUN_MERGES)?;
            self.check_recorded(&merges)?;
            let mut runs = txn.open_table(RUNS)?;
            let mut sizes = txn.open_table(RUN_FILTER_LINES)?;
            let mut garbage = txn.open_table(RUN_GARBAGE)?;
            for &(run, _) in &self.inputs {
                if runs.remove(run)?.is_none() {
                    return Err(Error::corrupted(format!(
                        "run {run} went away while the background merge into run {} read it",
                        self.output
                    )));
                }
                sizes.remove(run)?;
                merges.remove(run)?;
                garbage.insert(run, ())?;
            }
            txn.open_table(RUN_BUILDING)?.remove(self.output)?;
            if self.count > 0 {
                runs.insert(self.output, self.count)?;
                self.filter
                    .finish(&mut txn.open_table(RUN_FILTERS)?, &mut sizes)?;
            } else {
                garbage.insert(self.output, ())?;
            }
            if self.all {
                let mut dead = txn.open_table(DEAD_IDS)?;
                for &id in self.dead.iter() {
                    dead.remove(id)?;
                }
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// [`Error::Corrupted`] unless the merge is still recorded as under way.
    fn check_recorded(&self, merges: &impl ReadableTable<u32, u32>) -> Result<()> {
        for &(run, _) in &self.inputs {
            if merges.get(run)?.map(|v| v.value()) != Some(self.output) {
                return Err(Error::corrupted(format!(
                    "the background merge into run {} is no longer recorded",
                    self.output
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::runs::{encode_block, ReadRuns, RunTables, BLOCK_ENTRIES};

    /// Missing tables mean no work; a table of another type is an error
    /// (it used to read as "no work", leaving a merge unfinished unseen).
    #[test]
    fn a_merge_table_of_another_type_is_an_error_not_no_work() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        assert!(!has_work(&db).unwrap());
        let txn = db.begin_write().unwrap();
        let foreign: redb::TableDefinition<u64, u64> = redb::TableDefinition::new("run_merges");
        txn.open_table(foreign).unwrap().insert(1, 2).unwrap();
        txn.commit().unwrap();
        assert!(has_work(&db).is_err());
        assert!(resume(&db).is_err());
    }

    /// A database with runs 1 to 4, each of `postings(run)`: (band, its
    /// sorted postings), in blocks keyed by their last posting, as writes
    /// make them.
    fn four_runs_of(postings: impl Fn(u32) -> Vec<(u32, Vec<(u64, u64)>)>) -> redb::Database {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut blocks = txn.open_table(RUN_BLOCKS).unwrap();
            let mut runs = txn.open_table(RUNS).unwrap();
            txn.open_table(DEAD_IDS).unwrap();
            for run in 1..=4u32 {
                let mut count = 0;
                for (band, entries) in postings(run) {
                    for chunk in entries.chunks(BLOCK_ENTRIES) {
                        let (key, id) = chunk[chunk.len() - 1];
                        let block = encode_block(chunk);
                        blocks
                            .insert((run, band, key, id), block.as_slice())
                            .unwrap();
                    }
                    count += entries.len() as u64;
                }
                runs.insert(run, count).unwrap();
            }
        }
        txn.commit().unwrap();
        db
    }

    /// Four runs of one level, each with postings in bands 0, 1 and the
    /// key band (`u32::MAX`).
    fn four_runs() -> redb::Database {
        four_runs_of(|run| {
            let entries: Vec<(u64, u64)> = (0..3)
                .map(|i| (i * 1000, u64::from(run) * 10 + i))
                .collect();
            [0, 1, u32::MAX]
                .map(|band| (band, entries.clone()))
                .to_vec()
        })
    }

    /// Four runs whose band 0 is one bucket (key 7) of 400,000 postings
    /// each, ids interleaved across the runs, as a bucket's are.
    fn four_runs_of_one_bucket() -> redb::Database {
        four_runs_of(|run| {
            let ids = (0..400_000u64).map(|i| (7, i * 4 + u64::from(run)));
            vec![(0, ids.collect())]
        })
    }

    /// The runs listed, and every posting of them.
    fn listed(db: &redb::Database) -> (Vec<u32>, Vec<(u32, u64, u64)>) {
        let txn = db.begin_read().unwrap();
        let runs = ReadRuns::open(&txn).unwrap().unwrap();
        let ids: Vec<u32> = runs.list().iter().map(|r| r.0).collect();
        let mut postings = Vec::new();
        for &run in &ids {
            for p in runs.scan(run, 0..=u32::MAX).unwrap() {
                postings.push(p.unwrap());
            }
        }
        postings.sort_unstable();
        (ids, postings)
    }

    /// A bucket larger than a step is split between steps by id: no step
    /// reads more than four steps' worth from each input (before, a step
    /// read a whole bucket, millions of postings for a text stored
    /// millions of times), and a merge cut off inside the bucket resumes
    /// and loses nothing.
    #[test]
    fn a_bucket_larger_than_a_step_is_split_between_steps() {
        let db = four_runs_of_one_bucket();
        let (_, before) = listed(&db);
        assert_eq!(before.len(), 1_600_000);
        let job = begin(&db).unwrap().expect("four runs of a level are due");
        let mut reader = job.reader();
        let mut steps = 0;
        loop {
            let pieces = reader.read(&db).unwrap().pieces;
            let read: usize = pieces.iter().map(|p| p.entries.len()).sum();
            // Each input gives four steps' worth at most (and a block).
            assert!(
                read <= 4 * (4 * TXN_POSTINGS as usize + BLOCK_ENTRIES),
                "{read}"
            );
            steps += 1;
            if pieces.iter().any(|p| p.ends_band) {
                break;
            }
        }
        assert!(steps >= 2, "{steps} steps");
        drop(job);
        // Cut off after one step written, inside the bucket.
        let mut job = resume(&db).unwrap().expect("a merge under way");
        job.step(&db).unwrap();
        drop(job);
        let mut job = resume(&db).unwrap().expect("a merge under way");
        while !job.step(&db).unwrap() {}
        job.publish(&db).unwrap();
        let (ids, after) = listed(&db);
        assert_eq!(ids, vec![5]);
        assert_eq!(after, before);
    }

    /// Steps read ahead of their writes (the merger reads the next step
    /// while it writes one) make the same run as steps read and written
    /// in turn, and a merge cut off with steps read but not written
    /// resumes from what was written.
    #[test]
    fn steps_read_ahead_of_their_writes_make_the_same_run() {
        let db = four_runs_of_one_bucket();
        let (_, before) = listed(&db);
        let mut job = begin(&db).unwrap().expect("four runs of a level are due");
        let mut reader = job.reader();
        let mut steps = Vec::new();
        while !reader.is_done() {
            steps.push(reader.read(&db).unwrap());
        }
        assert!(steps.len() >= 2, "{} steps", steps.len());
        let mut steps = steps.into_iter();
        assert!(!job.write(&db, steps.next().unwrap()).unwrap());
        drop(job); // cut off: the other steps were read, never written
        let mut job = resume(&db).unwrap().expect("a merge under way");
        let mut reader = job.reader();
        let mut built = false;
        while !reader.is_done() {
            let step = reader.read(&db).unwrap();
            built = job.write(&db, step).unwrap();
        }
        assert!(built && job.is_built());
        job.publish(&db).unwrap();
        let (ids, after) = listed(&db);
        assert_eq!(ids, vec![5]);
        assert_eq!(after, before);
    }

    #[test]
    fn a_merge_cut_off_anywhere_is_resumed_and_loses_nothing() {
        for cut_after_steps in [0, 1] {
            let db = four_runs();
            let (_, before) = listed(&db);
            let mut job = begin(&db).unwrap().expect("four runs of a level are due");
            for _ in 0..cut_after_steps {
                job.step(&db).unwrap();
            }
            drop(job); // cut off: the inputs still answer, the output is unseen
            assert_eq!(listed(&db), (vec![1, 2, 3, 4], before.clone()));
            let mut job = resume(&db).unwrap().expect("a merge under way");
            while !job.step(&db).unwrap() {}
            job.publish(&db).unwrap();
            let (ids, after) = listed(&db);
            assert_eq!(ids, vec![5]);
            assert_eq!(after, before, "cut after {cut_after_steps} steps");
            while collect_garbage(&db).unwrap() {}
            let txn = db.begin_read().unwrap();
            let blocks = txn.open_table(RUN_BLOCKS).unwrap();
            assert_eq!(
                blocks.len().unwrap(),
                3,
                "only the merged run's blocks remain"
            );
            assert!(txn.open_table(RUN_MERGES).unwrap().is_empty().unwrap());
            assert!(txn.open_table(RUN_BUILDING).unwrap().is_empty().unwrap());
            assert!(resume(&db).unwrap().is_none());
            assert!(begin(&db).unwrap().is_none());
        }
    }
}
