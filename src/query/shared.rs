//! The buckets two or more documents share, and the classes of documents
//! whose shingle sets are identical, for all pairs ([`super::pairs`]).
//!
//! Copies make hot buckets: n copies of one text share every bucket, and
//! pairing them one by one costs n² candidates before the first pair is
//! out. Identical sets have identical signatures, so identical buckets in
//! every band. [`Classes::find`] groups the documents by the list of
//! shared buckets they are in (a hash of it), hashes the sets of those in
//! groups of two or more, and checks every member of a (bucket list, set
//! hash) group against its first document: the same buckets and the same
//! non-empty set. A verified class is paired as one document, its
//! representative (its smallest id); [`Shared::without`] takes the other
//! members out of the buckets, and the pairs expand the class again.

use crate::store::cache::RecordCache;
use crate::store::tables::{ReadTables, Reader};
use crate::store::walk::Walker;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// The buckets shared by at least two documents, flat: bucket `b`'s
/// members, ascending, are `ids[starts[b]..starts[b + 1]]`. Memory is
/// about 12 bytes per posting in a shared bucket (its id, and its place
/// in [`Shared::by_document`]'s order).
pub(crate) struct Shared {
    pub(crate) ids: Vec<u64>,
    starts: Vec<u32>,
}

impl Shared {
    /// Reads every posting once, in order (the fresh ones and the runs,
    /// merged), keeping only the buckets with at least two members (only
    /// those can make pairs): one sequential scan instead of a look-up per
    /// document and band.
    pub(crate) fn read(tables: &ReadTables) -> Result<Self> {
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
    pub(crate) fn later_members(&self, position: u32) -> &[u64] {
        let bucket = self.starts.partition_point(|&start| start <= position) - 1;
        &self.ids[position as usize + 1..self.starts[bucket + 1] as usize]
    }

    /// How many candidates (with repeats) a document at `positions` has.
    pub(crate) fn candidates(&self, positions: &[u32]) -> usize {
        positions.iter().map(|&p| self.later_members(p).len()).sum()
    }

    /// Every place in `ids`, ordered by the id there (then by place): the
    /// places of one document are consecutive, documents ascend.
    pub(crate) fn by_document(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.ids.len() as u32).collect();
        order.par_sort_unstable_by_key(|&p| (self.ids[p as usize], p));
        order
    }

    /// The bucket of every place in `ids`.
    fn buckets(&self) -> Vec<u32> {
        let mut buckets = vec![0u32; self.ids.len()];
        for (bucket, range) in self.starts.windows(2).enumerate() {
            buckets[range[0] as usize..range[1] as usize].fill(bucket as u32);
        }
        buckets
    }

    /// The buckets without the members of `classes` other than their
    /// representatives. A bucket keeps a single member when it lost others
    /// (a representative, whose class pairs within itself).
    pub(crate) fn without(&self, classes: &Classes) -> Shared {
        let hidden = classes.hidden();
        let mut kept = Shared {
            ids: Vec::with_capacity(self.ids.len()),
            starts: vec![0],
        };
        for range in self.starts.windows(2) {
            let open = kept.ids.len();
            let bucket = &self.ids[range[0] as usize..range[1] as usize];
            kept.ids
                .extend(bucket.iter().filter(|id| !hidden.contains(id)));
            let left = kept.ids.len() - open;
            if left >= 2 || (left == 1 && left < bucket.len()) {
                kept.starts.push(kept.ids.len() as u32);
            } else {
                kept.ids.truncate(open);
            }
        }
        kept
    }
}

/// Documents with identical, non-empty shingle sets and identical buckets,
/// in classes of two or more: each class by its representative (its
/// smallest id), with all its members ascending, the representative first.
#[derive(Default)]
pub(crate) struct Classes {
    members: HashMap<u64, Vec<u64>>,
}

impl Classes {
    /// Finds the classes among the documents of `shared`; `order` is
    /// [`Shared::by_document`]. Reads the sets of only those documents
    /// whose list of shared buckets another document has too.
    pub(crate) fn find(
        tables: &ReadTables,
        cache: &RecordCache,
        shared: &Shared,
        order: &[u32],
    ) -> Result<Self> {
        let buckets = shared.buckets();
        let suspects = same_buckets(shared, order, &buckets);
        // The set hash of every suspect, in parallel.
        let mut hashed: Vec<(u64, u64, u64, u32)> = suspects
            .par_iter()
            .map_init(
                || (Vec::new(), Walker::new(tables)),
                |(set, walker), &(by_buckets, offset)| {
                    let id = shared.ids[order[offset as usize] as usize];
                    if !cache.reader(walker).set_into(id, set)? || set.is_empty() {
                        return Ok(None);
                    }
                    Ok(Some((by_buckets, set_hash(set), id, offset)))
                },
            )
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        drop(suspects);
        hashed.par_sort_unstable();
        // Every later member of a (bucket list, set hash) group against its
        // first: the same buckets, the same set.
        let mut checks: Vec<(u64, u32, u64, u32)> = Vec::new();
        for group in hashed.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
            let (_, _, rep, rep_offset) = group[0];
            checks.extend(
                group[1..]
                    .iter()
                    .map(|&(_, _, id, o)| (rep, rep_offset, id, o)),
            );
        }
        drop(hashed);
        let same = confirm(tables, cache, shared, order, &buckets, &checks)?;
        let mut classes = Classes::default();
        for (rep, id) in same {
            classes
                .members
                .entry(rep)
                .or_insert_with(|| vec![rep])
                .push(id);
        }
        for members in classes.members.values_mut() {
            members.sort_unstable();
        }
        Ok(classes)
    }

    /// True when no document has an identical copy.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members of the class `id` represents: just `id` when it has no
    /// identical copy.
    pub(crate) fn members<'a>(&'a self, id: &'a u64) -> &'a [u64] {
        self.members
            .get(id)
            .map_or(std::slice::from_ref(id), Vec::as_slice)
    }

    /// The members that are not their class's representative.
    fn hidden(&self) -> HashSet<u64> {
        self.members
            .values()
            .flat_map(|members| members[1..].iter().copied())
            .collect()
    }
}

/// The (representative, member) checks that hold: the member has the
/// representative's buckets and set. Each check is (representative, its
/// offset in `order`, member, its offset).
fn confirm(
    tables: &ReadTables,
    cache: &RecordCache,
    shared: &Shared,
    order: &[u32],
    buckets: &[u32],
    checks: &[(u64, u32, u64, u32)],
) -> Result<Vec<(u64, u64)>> {
    let same = checks
        .par_iter()
        .map_init(
            || (Vec::new(), Vec::new(), None, Walker::new(tables)),
            |(rep_set, set, last, walker), &(rep, rep_offset, id, offset)| {
                let reader = cache.reader(walker);
                if *last != Some(rep) {
                    *last = None;
                    if !reader.set_into(rep, rep_set)? {
                        return Ok(None);
                    }
                    *last = Some(rep);
                }
                let same_buckets = places(shared, order, rep_offset)
                    .map(|p| buckets[p as usize])
                    .eq(places(shared, order, offset).map(|p| buckets[p as usize]));
                let same = same_buckets && reader.set_into(id, set)? && set == rep_set;
                Ok(same.then_some((rep, id)))
            },
        )
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok(same)
}

/// The documents whose list of shared buckets another document has too,
/// probably (by a hash of the list), as (that hash, the offset of the
/// document's first place in `order`).
fn same_buckets(shared: &Shared, order: &[u32], buckets: &[u32]) -> Vec<(u64, u32)> {
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    let mut offset = 0usize;
    for document in order.chunk_by(|&a, &b| shared.ids[a as usize] == shared.ids[b as usize]) {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for &p in document {
            buckets[p as usize].hash(&mut hasher);
        }
        keyed.push((hasher.finish(), offset as u32));
        offset += document.len();
    }
    keyed.par_sort_unstable();
    keyed
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|run| run.len() >= 2)
        .flatten()
        .copied()
        .collect()
}

/// The places of the document whose first place is `order[offset]`.
fn places<'a>(shared: &'a Shared, order: &'a [u32], offset: u32) -> impl Iterator<Item = u32> + 'a {
    let id = shared.ids[order[offset as usize] as usize];
    order[offset as usize..]
        .iter()
        .copied()
        .take_while(move |&p| shared.ids[p as usize] == id)
}

/// A hash of a shingle set (equal sets, equal hashes).
fn set_hash(set: &[u32]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    set.hash(&mut hasher);
    hasher.finish()
}
