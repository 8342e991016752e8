//! All verified near-duplicate pairs of a database, and the groups
//! (connected components) they form.
//!
//! Pairs stream from one read snapshot. The bucket table is read once, in
//! order, keeping the buckets two or more documents share; the documents
//! in those buckets are then visited in id order, and only bucket members
//! with a *larger* id become a document's candidates, so every pair is
//! found once (documents sharing no bucket are never read). Candidates are pruned and
//! verified exactly as a query's are. Groups keep a
//! union-find over the documents that appear in some pair, not the index.

use crate::pipeline::Pipeline;
use crate::query::plan::{verify, Explain};
use crate::store::cache::{CachedReader, RecordCache};
use crate::store::tables::{ReadTables, Reader};
use crate::store::walk::Walker;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::HashMap;

/// A verified near-duplicate pair. From [`crate::Database::pairs`], `a` was
/// stored before `b`; from [`crate::Database::exact_pairs`], `a < b` in key
/// order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Pair {
    /// One document's key.
    pub a: String,
    /// The other document's key.
    pub b: String,
    /// Exact Jaccard similarity.
    pub similarity: f64,
}

/// Near-duplicate groups.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Groups {
    /// Each group's members as (key, best similarity to another member),
    /// best first; groups largest first.
    pub groups: Vec<Vec<(String, f64)>>,
    /// Verified pairs the groups were built from.
    pub pairs: u64,
}

/// A read snapshot and what finding pairs in it needs.
pub(crate) struct Snapshot<'a> {
    /// The snapshot's tables.
    pub tables: &'a ReadTables,
    /// The database's record cache.
    pub cache: &'a RecordCache,
    /// The database's pipeline (banding, signature length).
    pub pipeline: &'a Pipeline,
}

impl Snapshot<'_> {
    /// Calls `emit` for every pair with verified Jaccard similarity ≥
    /// `threshold`; stops early when `emit` returns false. Returns the
    /// number of pairs emitted.
    pub(crate) fn pairs(&self, threshold: f64, mut emit: impl FnMut(Pair) -> bool) -> Result<u64> {
        let mut keys = KeyCache::default();
        self.pair_ids(threshold, |tables, a, b, similarity| {
            let pair = Pair {
                a: keys.key(tables, a)?,
                b: keys.key(tables, b)?,
                similarity,
            };
            Ok(emit(pair))
        })
    }

    /// The connected components of the pairs at `threshold`.
    pub(crate) fn groups(&self, threshold: f64) -> Result<Groups> {
        let mut parent: HashMap<u64, u64> = HashMap::new();
        let mut best: HashMap<u64, f64> = HashMap::new();
        let mut names: HashMap<u64, String> = HashMap::new();
        let mut keys = KeyCache::default();
        let pairs = self.pair_ids(threshold, |tables, a, b, similarity| {
            for id in [a, b] {
                if let std::collections::hash_map::Entry::Vacant(slot) = names.entry(id) {
                    slot.insert(keys.key(tables, id)?);
                }
                let entry = best.entry(id).or_insert(similarity);
                *entry = entry.max(similarity);
            }
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            if ra != rb {
                parent.insert(ra.max(rb), ra.min(rb));
            }
            Ok(true)
        })?;
        let mut members: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut ids: Vec<u64> = names.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let root = find(&mut parent, id);
            members.entry(root).or_default().push(id);
        }
        let mut groups: Vec<Vec<(String, f64)>> = members
            .into_values()
            .map(|ids| {
                let mut group: Vec<(String, f64)> = ids
                    .into_iter()
                    .map(|id| {
                        let name = names.get(&id).cloned().unwrap_or_default();
                        (name, best.get(&id).copied().unwrap_or(0.0))
                    })
                    .collect();
                group.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
                group
            })
            .collect();
        groups.sort_by(|x, y| y.len().cmp(&x.len()).then_with(|| x[0].0.cmp(&y[0].0)));
        Ok(Groups { groups, pairs })
    }

    /// The engine of [`Snapshot::pairs`]: calls `emit(tables, a, b, sim)`
    /// with document ids, a < b, in ascending order of a.
    ///
    /// Documents that share a bucket with another are visited in id order
    /// in blocks of [`PAIR_BLOCK`]; the documents of a block verify their
    /// candidates in parallel (rayon, one read snapshot shared by all
    /// threads), and the block's pairs are then emitted in order, so memory
    /// holds one block's pairs.
    fn pair_ids(
        &self,
        threshold: f64,
        mut emit: impl FnMut(&Cached<'_>, u64, u64, f64) -> Result<bool>,
    ) -> Result<u64> {
        crate::config::check_threshold("threshold", threshold)?;
        let tables = self.tables;
        let reader = self.cache.reader(tables);
        let shared = Shared::read(tables)?;
        let order = shared.by_document();
        let mut documents =
            order.chunk_by(|&a, &b| shared.ids[a as usize] == shared.ids[b as usize]);
        let mut count = 0;
        loop {
            let block: Vec<&[u32]> = documents.by_ref().take(PAIR_BLOCK).collect();
            if block.is_empty() {
                return Ok(count);
            }
            let found: Vec<Result<Vec<(u64, u64, f64)>>> = block
                .par_iter()
                .map_init(
                    || (Scratch::default(), Walker::new(tables)),
                    |(scratch, walker), positions| {
                        let reader = self.cache.reader(walker);
                        self.pairs_of(&reader, &shared, positions, threshold, scratch)
                    },
                )
                .collect();
            for pairs in found {
                for (a, b, similarity) in pairs? {
                    count += 1;
                    if !emit(&reader, a, b, similarity)? {
                        return Ok(count);
                    }
                }
            }
        }
    }

    /// The verified pairs (id, other, similarity) of one document with
    /// every document of larger id sharing one of its buckets; `positions`
    /// are the document's places in `shared.ids`.
    fn pairs_of(
        &self,
        tables: &impl Reader,
        shared: &Shared,
        positions: &[u32],
        threshold: f64,
        scratch: &mut Scratch,
    ) -> Result<Vec<(u64, u64, f64)>> {
        let Some(&first) = positions.first() else {
            return Ok(Vec::new());
        };
        let id = shared.ids[first as usize];
        scratch.candidates.clear();
        for &position in positions {
            scratch
                .candidates
                .extend_from_slice(shared.later_members(position));
        }
        if scratch.candidates.is_empty() || !tables.set_into(id, &mut scratch.own_set)? {
            return Ok(Vec::new());
        }
        let mut candidates = std::mem::take(&mut scratch.candidates);
        candidates.sort_unstable();
        candidates.dedup();
        // No signature prune: the set-size filter and exact verification
        // need only the sets (format 3 stores no signatures).
        let hits = verify(
            tables,
            self.pipeline,
            &scratch.own_set,
            &[],
            candidates,
            threshold,
            true,
            &mut Explain::default(),
        )?;
        Ok(hits
            .into_iter()
            .map(|(other, similarity)| (id, other, similarity))
            .collect())
    }
}

/// The buckets shared by at least two documents, flat: bucket `b`'s
/// members, ascending, are `ids[starts[b]..starts[b + 1]]`. Memory is
/// about 12 bytes per posting in a shared bucket (its id, and its place
/// in [`Shared::by_document`]'s order).
struct Shared {
    ids: Vec<u64>,
    starts: Vec<u32>,
}

impl Shared {
    /// Reads every posting once, in order (the fresh ones and the runs,
    /// merged), keeping only the buckets with at least two members (only
    /// those can make pairs): one sequential scan instead of a look-up per
    /// document and band.
    fn read(tables: &ReadTables) -> Result<Self> {
        let mut shared = Shared {
            ids: Vec::new(),
            starts: vec![0],
        };
        let mut current: Option<(u32, u64)> = None;
        let mut open = 0usize; // where the current bucket's ids begin
        for entry in tables.all_postings()? {
            let (band, key, id) = entry?;
            if current != Some((band, key)) {
                shared.close(open);
                open = shared.ids.len();
                current = Some((band, key));
            }
            shared.ids.push(id);
            if shared.ids.len() >= u32::MAX as usize {
                return Err(Error::InvalidParameter {
                    name: "pairs",
                    reason: "more than 2^32 postings in shared buckets, more than one pass handles"
                        .into(),
                });
            }
        }
        shared.close(open);
        Ok(shared)
    }

    /// Ends the bucket whose ids begin at `open`: kept when it has two or
    /// more members, dropped otherwise.
    fn close(&mut self, open: usize) {
        match self.ids.len() - open {
            0 => {}
            1 => self.ids.truncate(open),
            _ => self.starts.push(self.ids.len() as u32),
        }
    }

    /// The members after the one at `position`, in its bucket.
    fn later_members(&self, position: u32) -> &[u64] {
        let bucket = self.starts.partition_point(|&start| start <= position) - 1;
        &self.ids[position as usize + 1..self.starts[bucket + 1] as usize]
    }

    /// Every place in `ids`, ordered by the id there (then by place): the
    /// places of one document are consecutive, documents ascend.
    fn by_document(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.ids.len() as u32).collect();
        order.par_sort_unstable_by_key(|&p| (self.ids[p as usize], p));
        order
    }
}

/// Documents whose candidates are verified in parallel at a time.
const PAIR_BLOCK: usize = 2048;

/// One worker's reusable buffers.
#[derive(Default)]
struct Scratch {
    candidates: Vec<u64>,
    own_set: Vec<u32>,
}

/// The read snapshot pairs are found in, behind the record cache.
type Cached<'a> = CachedReader<'a, ReadTables>;

/// The last id → key look-up (pairs repeat the same document); others go
/// through the record cache.
#[derive(Default)]
struct KeyCache {
    last: Option<(u64, String)>,
}

impl KeyCache {
    fn key(&mut self, reader: &impl Reader, id: u64) -> Result<String> {
        if let Some((cached, key)) = &self.last {
            if *cached == id {
                return Ok(key.clone());
            }
        }
        let key = reader
            .key(id)?
            .ok_or_else(|| Error::corrupted(format!("posting points at missing document {id}")))?
            .to_string();
        self.last = Some((id, key.clone()));
        Ok(key)
    }
}

/// Union-find root with path halving.
fn find(parent: &mut HashMap<u64, u64>, mut id: u64) -> u64 {
    while let Some(&p) = parent.get(&id) {
        if p == id {
            break;
        }
        let grand = parent.get(&p).copied().unwrap_or(p);
        parent.insert(id, grand);
        id = p;
    }
    id
}
