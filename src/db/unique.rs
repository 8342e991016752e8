//! Dedup-on-write in bulk ([`Database::insert_unique_bulk`]): chunks of
//! documents, each decided as [`super::Batch::insert_unique_many`] decides
//! it, on the bulk loaders' pipeline. While one chunk is checked against
//! the documents accepted since the last commit (held in memory) and
//! written, the next one is prepared and looked up in the last committed
//! snapshot on the other cores.

use super::bulk::{pipeline, AsDocument};
use super::bulk_options::{BulkOptions, DuplicateOf};
use super::held::{Before, Held, Search};
use super::load_filter::LoadFilter;
use super::writer::Writer;
use super::{Database, Unique};
use crate::pipeline::{Prepared, Sketch};
use crate::query::plan::{self, PlanOptions};
use crate::query::Hit;
use crate::store::runs::RowCache;
use crate::store::tables::{Index, ReadTables, Reader};
use crate::Result;
use parking_lot::Mutex;
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// What [`Database::insert_unique_bulk`] did.
#[derive(Debug, Default, serde::Serialize)]
#[non_exhaustive]
pub struct UniqueReport {
    /// Documents accepted ([`Unique::Inserted`]): stored and committed,
    /// except, with [`BulkOptions::scratch`], those still held in memory at
    /// the end, which are not stored.
    pub inserted: u64,
    /// Documents not stored, being near-duplicates of stored ones.
    pub duplicates: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Whether the callback asked to stop early.
    pub stopped: bool,
}

/// The ranks of held documents that have no id yet: above every id, in the
/// order they were accepted.
const UNNUMBERED: u64 = 1 << 63;

/// A committed state the look-ups read, after `commits` commits of this
/// load.
struct Snapshot {
    commits: u64,
    txn: redb::ReadTransaction,
    /// The run filter rows the load's look-ups read, kept from snapshot to
    /// snapshot: the look-ups probe every run's filter in every band.
    rows: Arc<RowCache>,
    /// What the load has written, when it began on an empty database.
    filter: Option<Arc<LoadFilter>>,
}

/// A chunk prepared and looked up in a snapshot.
struct Looked {
    /// The snapshot's `commits`.
    commits: u64,
    docs: Vec<Result<(Prepared, Found)>>,
}

/// What a snapshot holds for a document.
#[derive(Default)]
struct Found {
    /// A document under its key.
    own: bool,
    /// The best near-duplicate.
    best: Option<Hit>,
}

impl Database {
    /// Dedup-on-write of a stream of chunks: each chunk is decided as
    /// [`super::Batch::insert_unique_many`] decides it, seeing every
    /// document accepted before it, and `decided` gets the chunk's
    /// outcomes, in order, before the next chunk's. Much faster than
    /// `insert_unique_many` chunk after chunk: the next chunk is shingled,
    /// hashed and looked up in the last committed state on every core
    /// while this one is checked against the documents accepted since and
    /// written, and the accepted documents' postings are written as one
    /// run per transaction. A transaction commits once it holds
    /// [`BulkOptions::batch`] accepted documents (or shingles for
    /// [`BulkOptions::max_chunk_bytes`] bytes, 4 each), and at the end;
    /// `decided` returning false stops the load there, after committing
    /// what was decided. A chunk with a key that is stored, accepted
    /// earlier, or repeated in it goes the one-by-one way. With
    /// [`BulkOptions::scratch`] (a database thrown away after the load) a
    /// transaction commits only when memory needs it, and not at the end.
    /// A chunk is decided once the next one is taken from `chunks` (it is
    /// prepared beside it): a stream that waits for its input can give an
    /// empty chunk, decided at once as nothing, to have what came before
    /// it decided first.
    ///
    /// ```
    /// use lshdb::{BulkOptions, Config, Database, Unique};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("u.lshdb"), Config::jaccard(0.8))?;
    /// let text = "the quick brown fox jumps over the lazy dog";
    /// let chunks = vec![vec![("a", text), ("b", "another text entirely")], vec![("c", text)]];
    /// let mut outcomes = Vec::new();
    /// let report = db.insert_unique_bulk(chunks, 0.8, &BulkOptions::default(), |chunk| {
    ///     outcomes.extend(chunk.into_iter().map(|o| o.map_err(|e| e.to_string())));
    ///     true
    /// })?;
    /// assert_eq!(report.inserted, 2);
    /// assert!(matches!(&outcomes[2], Ok(Unique::Duplicate(hit)) if hit.key == "a"));
    /// assert_eq!(db.len()?, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A document that cannot be indexed (empty, too large, bad key) gets
    /// its error in its slot; a storage error stops the load, documents of
    /// earlier commits staying stored.
    pub fn insert_unique_bulk<I, K, T>(
        &self,
        chunks: I,
        threshold: f64,
        options: &BulkOptions,
        mut decided: impl FnMut(Vec<Result<Unique>>) -> bool,
    ) -> Result<UniqueReport>
    where
        I: IntoIterator<Item = Vec<(K, T)>>,
        K: AsRef<str> + Send,
        T: AsDocument + Send,
    {
        crate::config::check_threshold("threshold", threshold)?;
        self.check_poisoned()?;
        let first = options.duplicate_of == DuplicateOf::First;
        let plan = PlanOptions::dedup(threshold, first);
        // The write transaction first: no other commit can come between it
        // and the snapshot.
        let (txn, snapshot, next_id) = crate::guard::guard(|| {
            let txn = self.begin_write()?;
            let txn_read = self.store().begin_read()?;
            let empty = ReadTables::open(&txn_read)?.len()? == 0;
            let snapshot = Snapshot {
                commits: 0,
                txn: txn_read,
                rows: Arc::new(RowCache::with_parts(
                    options.look_up_bytes / 4 * 3,
                    options.look_up_bytes / 4,
                )),
                filter: empty.then(|| Arc::new(LoadFilter::with_budget(options.load_filter_bytes))),
            };
            let next_id = Writer::open(&txn, self.pipeline())?.take_ids(0);
            Ok((txn, Mutex::new(Arc::new(snapshot)), next_id))
        })?;
        // The input and `decided` run on this thread while the transaction
        // is open: a write of theirs through this handle fails, not hangs.
        let _holding = self.holder.hold("a dedup-on-write load");
        let mut state = Writing {
            db: self,
            txn: Some(txn),
            snapshot: &snapshot,
            commits: 0,
            relooked_from: 0,
            older: Vec::new(),
            held: Held::default(),
            run: Vec::new(),
            plan: plan.clone(),
            batch: options.batch.max(1),
            max_shingles: (options.max_chunk_bytes / 4).max(1),
            max_held: options.max_held_bytes.max(1),
            scratch: options.scratch,
            next_id,
            written: 0,
            since_turn: std::time::Instant::now(),
        };
        let mut report = UniqueReport::default();
        let mut chunks = chunks.into_iter();
        report.stopped = pipeline(
            || chunks.next(),
            |chunk| crate::guard::guard(|| self.look_up(chunk, &snapshot, &plan)),
            |looked| crate::guard::guard(|| state.decide(looked?)),
            |outcomes| {
                for outcome in &outcomes {
                    match outcome {
                        Ok(Unique::Inserted) => report.inserted += 1,
                        Ok(Unique::Duplicate(_)) => report.duplicates += 1,
                        Err(_) => {}
                    }
                }
                decided(outcomes)
            },
        )
        .map_err(|e| self.poison(e))?;
        if options.scratch {
            state.txn = None; // nothing more to keep: aborted
        } else {
            crate::guard::guard(|| state.finish()).map_err(|e| self.poison(e))?;
        }
        report.commits = state.commits;
        let held = (
            std::mem::take(&mut state.held),
            std::mem::take(&mut state.older),
        );
        rayon::spawn(move || drop(held));
        Ok(report)
    }

    /// Prepares a chunk and looks its documents up in the latest snapshot,
    /// on every core.
    fn look_up<K, T>(
        &self,
        chunk: Vec<(K, T)>,
        snapshot: &Mutex<Arc<Snapshot>>,
        plan: &PlanOptions,
    ) -> Result<Looked>
    where
        K: AsRef<str> + Send,
        T: AsDocument + Send,
    {
        let snapshot = Arc::clone(&snapshot.lock());
        let pipeline = self.pipeline();
        let docs = chunk
            .into_par_iter()
            .map(|(key, doc)| {
                let prepared = pipeline.prepare(key.as_ref(), doc.as_document());
                prepared.map(|p| super::clusters::priority::carried(p, &doc))
            })
            .collect();
        self.look_up_prepared(docs, &snapshot, plan)
    }

    /// Looks prepared documents up in `snapshot`, on every core.
    fn look_up_prepared(
        &self,
        docs: Vec<Result<Prepared>>,
        snapshot: &Snapshot,
        plan: &PlanOptions,
    ) -> Result<Looked> {
        let mut tables = ReadTables::open(&snapshot.txn)?;
        tables.share_rows(Arc::clone(&snapshot.rows))?;
        let empty = tables.len()? == 0;
        let reader = self.cache().reader(&tables);
        let pipeline = self.pipeline();
        let docs = docs
            .into_par_iter()
            .map(|doc| {
                let mut doc = doc?;
                let (key_met, bands) = match &snapshot.filter {
                    Some(filter) => filter.may_meet(&doc),
                    None => (true, u64::MAX),
                };
                if empty || (!key_met && bands == 0) {
                    return Ok((doc, Found::default()));
                }
                if key_met && reader.index().id_of(&doc.key)?.is_some() {
                    let found = Found {
                        own: true,
                        best: None,
                    };
                    return Ok((doc, found));
                }
                let plan = PlanOptions {
                    bands,
                    ..plan.clone()
                };
                let sketch = Sketch {
                    set: std::mem::take(&mut doc.set),
                    signature: std::mem::take(&mut doc.signature),
                    band_keys: std::mem::take(&mut doc.band_keys),
                    simhash: 0,
                };
                let planned = plan::run(&reader, pipeline, &sketch, &plan);
                (doc.set, doc.signature, doc.band_keys) =
                    (sketch.set, sketch.signature, sketch.band_keys);
                let best = plan::resolve(&reader, planned?.hits)?.into_iter().next();
                Ok((doc, Found { own: false, best }))
            })
            .collect::<Vec<Result<(Prepared, Found)>>>();
        // A storage error fails the load; a document's own error stays in
        // its slot.
        let docs = docs
            .into_iter()
            .map(|doc| match doc {
                Err(err) if is_storage(&err) => Err(err),
                other => Ok(other),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Looked {
            commits: snapshot.commits,
            docs,
        })
    }
}

/// Whether `err` is a failure of storage (stops the load) rather than of a
/// document.
fn is_storage(err: &crate::Error) -> bool {
    matches!(
        err,
        crate::Error::Storage(_) | crate::Error::Io { .. } | crate::Error::Corrupted(_)
    )
}

/// The error of a load whose transaction a failed commit ended.
fn ended() -> crate::Error {
    crate::Error::Poisoned("the load's transaction ended".into())
}

/// The writing side of [`Database::insert_unique_bulk`].
struct Writing<'a> {
    db: &'a Database,
    /// Open until the end.
    txn: Option<redb::WriteTransaction>,
    /// The snapshot the next look-ups read.
    snapshot: &'a Mutex<Arc<Snapshot>>,
    /// Commits so far.
    commits: u64,
    /// Chunks looked up in a snapshot older than this many commits are
    /// looked up again (a one-by-one chunk was committed since).
    relooked_from: u64,
    /// Documents accepted in committed transactions that a chunk may have
    /// been looked up without: (the commits that made them visible, them).
    older: Vec<(u64, Held)>,
    /// Documents accepted in the open transaction.
    held: Held,
    /// The postings of `held`, for one run at commit.
    run: Vec<(u32, u64, u64)>,
    plan: PlanOptions,
    batch: usize,
    max_shingles: usize,
    /// The bytes `held` and `older` may take together, about.
    max_held: usize,
    /// Commit only when memory needs it, never at the end
    /// ([`BulkOptions::scratch`]).
    scratch: bool,
    /// The id the next accepted document gets.
    next_id: u64,
    /// How many of `held` are written to the transaction.
    written: usize,
    /// When the merger's last turns ended.
    since_turn: std::time::Instant,
}

/// The merger's time at the write lock, as a share of the load's own
/// since its last turns: the merges keep pace with the runs the load
/// writes (at 10 M, 5 to 10 runs instead of 48), and each look-up probes
/// fewer runs.
const MERGE_SHARE: f64 = 1.0;

impl Writing<'_> {
    fn txn(&self) -> Result<&redb::WriteTransaction> {
        self.txn.as_ref().ok_or_else(ended)
    }

    /// Decides a looked-up chunk, writes the documents it accepts, and
    /// commits when the transaction is full.
    fn decide(&mut self, mut looked: Looked) -> Result<Vec<Result<Unique>>> {
        if looked.commits < self.relooked_from {
            let snapshot = Arc::clone(&self.snapshot.lock());
            let docs = looked
                .docs
                .into_iter()
                .map(|d| d.map(|(doc, _)| doc))
                .collect();
            looked = self.db.look_up_prepared(docs, &snapshot, &self.plan)?;
        }
        // Later chunks are looked up in this snapshot or a newer one: the
        // documents it holds are let go, on another core (freeing tens of
        // thousands of documents is not free).
        let (gone, older) = std::mem::take(&mut self.older)
            .into_iter()
            .partition(|(visible, _)| *visible <= looked.commits);
        self.older = older;
        if !gone.is_empty() {
            rayon::spawn(move || drop(gone));
        }
        if self.one_by_one(&looked) {
            return self.decide_one_by_one(looked);
        }
        let start = self.held.len();
        let before = self.held_before(&looked);
        let mut out = Vec::with_capacity(looked.docs.len());
        for (doc, before) in looked.docs.into_iter().zip(before) {
            let (doc, found) = match doc {
                Ok(doc) => doc,
                Err(err) => {
                    out.push(Err(err));
                    continue;
                }
            };
            // `DuplicateOf::First`: a stored one found ends the search.
            if self.plan.first_found {
                if let Some(hit) = found.best {
                    out.push(Ok(Unique::Duplicate(hit)));
                    continue;
                }
            }
            let held = self
                .search()
                .best_held(&self.older, &self.held, &doc, before, start);
            // Ties go to the lower id: stored documents come before held ones.
            let stored = found
                .best
                .filter(|hit| held.is_none_or(|(b, _, _)| hit.similarity >= b));
            if let Some(hit) = stored {
                out.push(Ok(Unique::Duplicate(hit)));
            } else if let Some((similarity, _, key)) = held {
                out.push(Ok(Unique::Duplicate(Hit {
                    key: key.to_owned(),
                    similarity,
                })));
            } else {
                let rank = UNNUMBERED + self.held.len() as u64;
                self.held.push(doc, rank);
                out.push(Ok(Unique::Inserted));
            }
        }
        self.number(start);
        // Written chunk by chunk, beside the next chunk's look-ups: written
        // all at the commit, they took a core for half a second while the
        // other, its look-up done, waited (2 M heavy records: 42 s against
        // 38 s).
        self.write_held()?;
        // Half the bound: the documents of the last commit stay held (in
        // `older`) until the look-ups see them.
        let full = self.held.bytes() >= self.max_held / 2
            || if self.scratch {
                self.held.shingles() >= self.max_shingles.saturating_mul(2)
            } else {
                self.held.len() >= self.batch || self.held.shingles() >= self.max_shingles
            };
        if full {
            self.commit()?;
        }
        Ok(out)
    }

    /// Each document's best near-duplicates among those held before the
    /// chunk ([`Search::before_chunk`]), searched on every core. Nothing is
    /// searched for a document that needs no search: an error, or a
    /// stored duplicate found under [`DuplicateOf::First`].
    fn held_before(&self, looked: &Looked) -> Vec<Before> {
        let search = self.search();
        let start = self.held.len();
        looked
            .docs
            .par_iter()
            .map(|doc| match doc {
                Ok((_, found)) if self.plan.first_found && found.best.is_some() => {
                    Before::default()
                }
                Ok((doc, _)) => search.before_chunk(&self.older, &self.held, doc, start),
                Err(_) => Before::default(),
            })
            .collect()
    }

    /// How held documents are searched.
    fn search(&self) -> Search<'_> {
        Search {
            pipeline: self.db.pipeline(),
            threshold: self.plan.threshold,
            prune: self.plan.prune,
        }
    }

    /// Whether a key of the chunk is stored, held, or repeated in it.
    fn one_by_one(&self, looked: &Looked) -> bool {
        let mut keys = HashSet::new();
        looked.docs.iter().flatten().any(|(doc, found)| {
            found.own
                || !keys.insert(doc.key.as_str())
                || self.held.contains_key(&doc.key)
                || self.older.iter().any(|(_, h)| h.contains_key(&doc.key))
        })
    }

    /// Gives the documents accepted from `start` on their ids, in key
    /// order (as [`Writer::insert_many`] numbers them).
    fn number(&mut self, start: usize) {
        let mut order: Vec<usize> = (start..self.held.len()).collect();
        order.sort_by(|&a, &b| self.held.get(a).0.key.cmp(&self.held.get(b).0.key));
        for (n, &i) in order.iter().enumerate() {
            self.held.set_rank(i, self.next_id + n as u64);
        }
        self.next_id += order.len() as u64;
    }

    /// Stores the held documents not stored yet (numbered: their ids follow
    /// the stored counter's), in key order.
    fn write_held(&mut self) -> Result<()> {
        if self.written == self.held.len() {
            return Ok(());
        }
        let mut docs: Vec<(&Prepared, u64)> = self
            .held
            .docs()
            .skip(self.written)
            .map(|(doc, rank)| (doc, *rank))
            .collect();
        docs.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        let txn = self.txn.as_ref().ok_or_else(ended)?;
        let mut writer = Writer::open(txn, self.db.pipeline())?;
        writer.take_ids(docs.len());
        writer.put_new(&docs, &mut self.run)?;
        writer.finish()?;
        self.written = self.held.len();
        Ok(())
    }

    /// Adds the documents written in this transaction to the load's
    /// filter, when it commits, not as they are written: the look-ups read
    /// the last commit's snapshot, and would probe for documents it cannot
    /// hold. Before the commit (the look-ups of the snapshot after it must
    /// not rule them out) and before their run is written (its clusters'
    /// upkeep probes the bands the filter marks).
    fn filter_written(&self) {
        // Out of the snapshot's lock first: no lock is held across the
        // filter's work on the pool (see `LoadFilter::add_many`).
        let filter = self.snapshot.lock().filter.clone();
        if let Some(filter) = filter {
            let added: Vec<&Prepared> = self
                .held
                .docs()
                .take(self.written)
                .map(|(doc, _)| doc)
                .collect();
            if !added.is_empty() {
                filter.add_many(&added);
            }
        }
    }

    /// A chunk with keys already stored or held, decided by
    /// [`Writer::insert_unique_many`] in the transaction once everything
    /// accepted is in it; then committed, and later chunks looked up again.
    fn decide_one_by_one(&mut self, looked: Looked) -> Result<Vec<Result<Unique>>> {
        let docs = looked
            .docs
            .into_iter()
            .map(|d| d.map(|(doc, _)| doc))
            .collect();
        self.write_held()?;
        // Written past the load's filter: it can no longer rule anything out.
        if let Some(filter) = &self.snapshot.lock().filter {
            filter.turn_off();
        }
        let (out, next_id) = {
            let run = std::mem::take(&mut self.run);
            let mut writer = Writer::open(self.txn()?, self.db.pipeline())?;
            writer.put_run(run)?;
            let out = writer.insert_unique_many(docs, self.plan.threshold)?;
            let next_id = writer.take_ids(0);
            writer.finish()?;
            (out, next_id)
        };
        self.next_id = next_id;
        self.commit()?;
        self.older.clear();
        self.relooked_from = self.commits;
        Ok(out)
    }

    /// Writes the held documents' run and commits, and opens the next
    /// transaction and snapshot.
    fn commit(&mut self) -> Result<()> {
        self.write_held()?;
        self.finish()?;
        self.written = 0;
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            self.older.push((self.commits, held));
        }
        // The look-ups probe every run: fewer runs, cheaper look-ups.
        let budget = self.since_turn.elapsed().mul_f64(MERGE_SHARE);
        self.db.give_merger_turns(budget);
        self.since_turn = std::time::Instant::now();
        let txn = self.db.begin_write_holding()?;
        let stored_next = Writer::open(&txn, self.db.pipeline())?.take_ids(0);
        self.txn = Some(txn);
        let (rows, filter) = {
            let last = self.snapshot.lock();
            (Arc::clone(&last.rows), last.filter.clone())
        };
        if stored_next != self.next_id {
            // Another writer stored documents between two of the load's
            // transactions: new documents are numbered after its ids, the
            // load's filter no longer holds everything stored, and chunks
            // looked up before this snapshot are looked up again.
            self.next_id = stored_next;
            if let Some(filter) = &filter {
                filter.turn_off();
            }
            self.relooked_from = self.commits;
        }
        *self.snapshot.lock() = Arc::new(Snapshot {
            commits: self.commits,
            txn: self.db.store().begin_read()?,
            rows,
            filter,
        });
        Ok(())
    }

    /// Writes the held documents' run and commits.
    fn finish(&mut self) -> Result<()> {
        self.filter_written();
        {
            let run = std::mem::take(&mut self.run);
            let mut writer = Writer::open(self.txn()?, self.db.pipeline())?;
            // Everything stored was added to the load's filter (while it
            // is on): the clusters' upkeep of the run probes only the
            // bands where the load may have written a neighbour.
            if let Some(filter) = &self.snapshot.lock().filter {
                writer.know_load(Arc::clone(filter));
            }
            writer.put_run(run)?;
            writer.finish()?;
        }
        if let Some(txn) = self.txn.take() {
            txn.commit()?;
        }
        self.commits += 1;
        Ok(())
    }
}
