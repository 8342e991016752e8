//! All verified near-duplicate pairs of a database, and the groups
//! (connected components) they form.
//!
//! Pairs stream from one read snapshot. The bucket table is read once, in
//! order, keeping the buckets two or more documents share; documents with
//! identical shingle sets are collapsed into classes (see
//! [`super::shared`]); the documents left in those buckets are then
//! visited in id order, and only bucket members with a *larger* id become
//! a document's candidates, so every pair is found once (documents sharing
//! no bucket are never read). Candidates are pruned and verified exactly
//! as a query's are. A class's own pairs, and its pairs with the classes
//! it matched, are expanded lazily. Groups keep a union-find over the
//! documents that appear in some pair, not the index.

use crate::pipeline::Pipeline;
use crate::query::plan::Explain;
use crate::query::shared::{Classes, Shared};
use crate::query::verify::verify;
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
    ///
    /// A class of identical documents expands here, one pair at a time:
    /// its own pairs (similarity 1), then each pair with a class it
    /// matched, so memory does not grow with the pairs of a hot bucket.
    pub(crate) fn pairs(&self, threshold: f64, mut emit: impl FnMut(Pair) -> bool) -> Result<u64> {
        // One cache per side: `a` repeats over a run of pairs.
        let (mut keys_a, mut keys_b) = (KeyCache::default(), KeyCache::default());
        let mut count = 0;
        self.pair_classes(threshold, |tables, found| {
            let mut send = |a: u64, b: u64, similarity: f64| -> Result<bool> {
                count += 1;
                let pair = Pair {
                    a: keys_a.key(tables, a)?,
                    b: keys_b.key(tables, b)?,
                    similarity,
                };
                Ok(emit(pair))
            };
            match found {
                Found::Within(members) => {
                    for (i, &a) in members.iter().enumerate() {
                        for &b in &members[i + 1..] {
                            if !send(a, b, 1.0)? {
                                return Ok(false);
                            }
                        }
                    }
                }
                Found::Cross(xs, ys, similarity) => {
                    for &x in xs {
                        for &y in ys {
                            if !send(x.min(y), x.max(y), similarity)? {
                                return Ok(false);
                            }
                        }
                    }
                }
            }
            Ok(true)
        })?;
        Ok(count)
    }

    /// The connected components of the pairs at `threshold`. A class of
    /// identical documents is joined once, and its pairs are counted, not
    /// listed.
    pub(crate) fn groups(&self, threshold: f64) -> Result<Groups> {
        let mut parent: HashMap<u64, u64> = HashMap::new();
        let mut best: HashMap<u64, f64> = HashMap::new();
        let mut names: HashMap<u64, String> = HashMap::new();
        let mut keys = KeyCache::default();
        let mut pairs = 0u64;
        self.pair_classes(threshold, |tables, found| {
            let mut note = |id: u64, similarity: f64| -> Result<()> {
                if let std::collections::hash_map::Entry::Vacant(slot) = names.entry(id) {
                    slot.insert(keys.key(tables, id)?);
                }
                let entry = best.entry(id).or_insert(similarity);
                *entry = entry.max(similarity);
                Ok(())
            };
            let (a, b) = match found {
                Found::Within(members) => {
                    let n = members.len() as u64;
                    pairs += n * (n - 1) / 2;
                    for &id in members {
                        note(id, 1.0)?;
                        union(&mut parent, members[0], id);
                    }
                    return Ok(true);
                }
                Found::Cross(xs, ys, similarity) => {
                    pairs += xs.len() as u64 * ys.len() as u64;
                    // A class's members are noted by its own `Within`.
                    for side in [xs, ys] {
                        if let [id] = side {
                            note(*id, similarity)?;
                        }
                    }
                    (xs[0], ys[0])
                }
            };
            union(&mut parent, a, b);
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

    /// The engine of [`Snapshot::pairs`]: calls `emit(tables, found)` for
    /// every class of identical documents (their own pairs) and every
    /// verified pair of classes, by representative in ascending id order;
    /// a document without an identical copy is a class of one.
    ///
    /// Representatives that share a bucket with another are visited in id
    /// order in blocks of at most [`PAIR_BLOCK`] documents and
    /// [`BLOCK_CANDIDATES`] candidates; the documents of a block verify
    /// their candidates in parallel (rayon, one read snapshot shared by all
    /// threads), and the block's matches are then emitted in order, so
    /// memory holds one block's matches.
    ///
    /// `threshold` is strictly between 0 and 1: the `Database` methods
    /// check it (with `config`, which this layer does not import).
    fn pair_classes(
        &self,
        threshold: f64,
        mut emit: impl FnMut(&Cached<'_>, Found<'_>) -> Result<bool>,
    ) -> Result<()> {
        let tables = self.tables;
        let reader = self.cache.reader(tables);
        let mut shared = Shared::read(tables)?;
        let order = shared.by_document();
        let classes = Classes::find(tables, self.cache, &shared, &order)?;
        let order = if classes.is_empty() {
            order
        } else {
            drop(order); // freed before the copy is made
            shared = shared.without(&classes);
            shared.by_document()
        };
        let mut documents =
            order.chunk_by(|&a, &b| shared.ids[a as usize] == shared.ids[b as usize]);
        loop {
            let block = next_block(&mut documents, &shared);
            if block.is_empty() {
                return Ok(());
            }
            let found: Vec<Result<Matches>> = block
                .par_iter()
                .map_init(
                    || (Scratch::default(), Walker::new(tables)),
                    |(scratch, walker), positions| {
                        let reader = self.cache.reader(walker);
                        self.pairs_of(&reader, &shared, positions, threshold, scratch)
                    },
                )
                .collect();
            for matches in found {
                let (id, matches) = matches?;
                let own = classes.members(&id);
                if own.len() > 1 && !emit(&reader, Found::Within(own))? {
                    return Ok(());
                }
                for (other, similarity) in matches {
                    let found = Found::Cross(own, classes.members(&other), similarity);
                    if !emit(&reader, found)? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The document at `positions` (its places in `shared.ids`), and its
    /// verified matches (other, similarity) among the documents of larger
    /// id sharing one of its buckets.
    fn pairs_of(
        &self,
        tables: &impl Reader,
        shared: &Shared,
        positions: &[u32],
        threshold: f64,
        scratch: &mut Scratch,
    ) -> Result<Matches> {
        let id = shared.ids[positions[0] as usize];
        scratch.candidates.clear();
        for &position in positions {
            scratch
                .candidates
                .extend_from_slice(shared.later_members(position));
        }
        if scratch.candidates.is_empty() || !tables.set_into(id, &mut scratch.own_set)? {
            return Ok((id, Vec::new()));
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
        Ok((id, hits))
    }
}

/// What [`Snapshot::pair_classes`] finds: the members (ascending) of a
/// class of identical documents, whose pairs all have similarity 1; or two
/// classes' members and the similarity of every pair across them.
enum Found<'a> {
    Within(&'a [u64]),
    Cross(&'a [u64], &'a [u64], f64),
}

/// The next documents (by their places) to verify in parallel: at most
/// [`PAIR_BLOCK`] of them, and no more once they have
/// [`BLOCK_CANDIDATES`] candidates.
fn next_block<'a>(
    documents: &mut impl Iterator<Item = &'a [u32]>,
    shared: &Shared,
) -> Vec<&'a [u32]> {
    let mut block = Vec::new();
    let mut candidates = 0;
    while block.len() < PAIR_BLOCK && candidates < BLOCK_CANDIDATES {
        let Some(positions) = documents.next() else {
            break;
        };
        candidates += shared.candidates(positions);
        block.push(positions);
    }
    block
}

/// A document and its verified matches (other, similarity).
type Matches = (u64, Vec<(u64, f64)>);

/// Candidates (with repeats) a block of documents may hold at most, past
/// its first document: bounds a block's matches when buckets are hot.
const BLOCK_CANDIDATES: usize = 1 << 22;

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

/// Joins the components of `a` and `b` (the smaller root stays).
fn union(parent: &mut HashMap<u64, u64>, a: u64, b: u64) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent.insert(ra.max(rb), ra.min(rb));
    }
}
