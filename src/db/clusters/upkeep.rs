//! Cluster upkeep inside a write transaction: a new document joins (and
//! merges) the clusters of its verified neighbours; a removed one leaves
//! its cluster, whose remaining members are re-checked for connectivity.
//!
//! An edge is what [`crate::Database::groups`] finds: two documents that
//! share a bucket in some band (every posting, no cap) and whose exact
//! Jaccard similarity is at the index threshold or above, verified the
//! same way. So the clusters are always the connected components that
//! `groups` computes, plus each unpaired document as a cluster of one.

use crate::config::Representative;
use crate::pipeline::Pipeline;
use crate::query::plan::Explain;
use crate::query::verify::{verify, verify_in_memory};
use crate::store::clusters::{ClusterWrite, Row};
use crate::store::codec::SignatureRecord;
use crate::store::priorities::{self, PriorityWriter};
use crate::store::probe::Probe;
use crate::store::tables::{Index, Postings, Reader, WriteTables};
use crate::{Error, Result};
use redb::WriteTransaction;
use std::collections::HashMap;

/// The cluster tables of a write transaction and the rule they follow.
pub(crate) struct Upkeep<'t> {
    tables: ClusterWrite<'t>,
    next: u64,
    policy: Representative,
    threshold: f64,
    /// The documents' priorities, when the policy ranks by them.
    priorities: Option<PriorityWriter<'t>>,
}

/// How a representative policy ranks a document: the smallest rank wins.
type Rank = (u64, String, u64);

impl<'t> Upkeep<'t> {
    /// The upkeep of a write transaction, `None` when `pipeline`'s settings
    /// keep no clusters; `next` is the cluster id counter
    /// (`store::clusters::NEXT_CLUSTER`, read by the caller).
    pub fn open(txn: &'t WriteTransaction, pipeline: &Pipeline, next: u64) -> Result<Option<Self>> {
        let Some((policy, threshold)) = pipeline.clusters() else {
            return Ok(None);
        };
        Ok(Some(Self {
            tables: ClusterWrite::open(txn)?,
            next: next.max(1),
            policy,
            threshold,
            priorities: match policy {
                Representative::Priority => Some(PriorityWriter::open(txn)?),
                _ => None,
            },
        }))
    }

    /// Gives new document `id` its priority (`None`: 0) before it joins,
    /// when the policy ranks by priority; else does nothing.
    pub fn set_priority(&mut self, id: u64, priority: Option<i64>) -> Result<()> {
        match &mut self.priorities {
            Some(table) => table.put(id, priority),
            None => Ok(()),
        }
    }

    /// The priority of document `id` (0 when the policy keeps none).
    fn priority(&self, id: u64) -> Result<i64> {
        self.priorities
            .as_ref()
            .map_or(Ok(0), |table| table.get(id))
    }

    /// Files stored document `id` (its band keys `band_keys`; its shingle
    /// set `held` when the caller holds it, else read back) in a cluster:
    /// the clusters of its verified neighbours that are in one merge into
    /// the oldest (the others become its aliases); with none, it founds a
    /// cluster, numbered `reuse` when given (the id its replaced version
    /// left) or else a fresh one. Neighbours not in a cluster yet (stored
    /// in the same transaction, their turn still to come) are left to join
    /// it then. Returns the cluster.
    pub fn join(
        &mut self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        id: u64,
        (band_keys, held): (&[u64], Option<&[u32]>),
        reuse: Option<u64>,
    ) -> Result<Row> {
        let mut read = Vec::new();
        let set = match held {
            Some(set) => Some(set),
            None => docs.set_into(id, &mut read)?.then_some(read.as_slice()),
        };
        // A copy of a stored document joins its cluster.
        if let Some(set) = set {
            let tables = &self.tables;
            let cluster_of = |doc| tables.cluster_of(doc);
            let copy = (band_keys, ALL_BANDS, set, id);
            if let Some(cluster) = stored_twin(docs, docs, cluster_of, copy)? {
                return self.merge(docs, id, vec![cluster], reuse);
            }
        }
        let mut by_cluster = Vec::new();
        for candidate in probe(docs, band_keys, ALL_BANDS)? {
            if candidate == id {
                continue;
            }
            if let Some(cluster) = self.tables.cluster_of(candidate)? {
                by_cluster.push((cluster, candidate));
            }
        }
        let joined = self.verified_clusters(docs, pipeline, id, set, by_cluster)?;
        self.merge(docs, id, joined, reuse)
    }

    /// Files `id` in the merge of clusters `joined` (ascending, distinct),
    /// or in a new cluster (numbered `reuse` when given) when there are
    /// none.
    pub(super) fn merge(
        &mut self,
        docs: &WriteTables<'_>,
        id: u64,
        joined: Vec<u64>,
        reuse: Option<u64>,
    ) -> Result<Row> {
        let Some((&survivor, others)) = joined.split_first() else {
            let cluster = match reuse {
                Some(cluster) => cluster,
                None => self.fresh_id(),
            };
            let row = Row {
                id: cluster,
                representative: id,
                size: 1,
            };
            self.tables.put(row)?;
            self.tables.add_member(cluster, id)?;
            return Ok(row);
        };
        let mut row = self.row(survivor)?;
        for &other in others {
            let merged = self.row(other)?;
            for member in self.tables.members_of(other)? {
                self.tables.members.remove((other, member))?;
                self.tables.add_member(survivor, member)?;
            }
            self.tables.delete(other)?;
            self.tables.alias(other, survivor)?;
            row.size += merged.size;
            row.representative = self.better(docs, row.representative, merged.representative)?;
        }
        self.tables.add_member(survivor, id)?;
        row.size += 1;
        row.representative = self.better(docs, row.representative, id)?;
        self.tables.put(row)?;
        Ok(row)
    }

    /// Of the candidates `by_cluster` of document `id` (its shingle set
    /// `held` when the caller holds it, else read back), (cluster,
    /// candidate) pairs in any order, the clusters (ascending, distinct)
    /// that hold a verified neighbour. One verified neighbour per cluster
    /// is enough, so a cluster's other candidates are not verified once
    /// one of them is.
    pub(super) fn verified_clusters(
        &self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        id: u64,
        held: Option<&[u32]>,
        mut by_cluster: Vec<(u64, u64)>,
    ) -> Result<Vec<u64>> {
        if by_cluster.is_empty() {
            return Ok(Vec::new());
        }
        by_cluster.sort_unstable();
        by_cluster.dedup();
        let mut read = Vec::new();
        let set = match held {
            Some(set) => set,
            None if docs.set_into(id, &mut read)? => read.as_slice(),
            None => {
                return Err(Error::corrupted(format!(
                    "document {id} has no shingle set"
                )))
            }
        };
        verified(docs, pipeline, self.threshold, set, &by_cluster)
    }

    /// The index threshold: documents at it or above are neighbours.
    pub(super) fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Cluster `id` now: itself, or the cluster it merged into.
    pub(super) fn current(&self, id: u64) -> Result<u64> {
        match self.tables.resolve(id)? {
            Some(row) => Ok(row.id),
            None => Err(Error::corrupted(format!("cluster {id} vanished"))),
        }
    }

    /// The cluster document `doc` is in, if any.
    pub(super) fn cluster_of(&self, doc: u64) -> Result<Option<u64>> {
        self.tables.cluster_of(doc)
    }

    /// Takes document `id` (its records already deleted) out of its
    /// cluster and re-checks the connectivity of the members left: the
    /// part holding the representative keeps the id, every other part gets
    /// a new one. A removed representative is first replaced by the best
    /// member left. Returns the cluster's id when `id` was its last member
    /// (the cluster is gone).
    pub fn leave(
        &mut self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        id: u64,
    ) -> Result<Option<u64>> {
        if let Some(table) = &mut self.priorities {
            table.remove(id)?;
        }
        let Some(cluster) = self.tables.remove_member(id)? else {
            return Ok(None);
        };
        let row = self.row(cluster)?;
        let members = self.tables.members_of(cluster)?;
        if members.is_empty() {
            self.tables.delete(cluster)?;
            return Ok(Some(cluster));
        }
        let representative = if row.representative == id {
            self.best(docs, &members)?
        } else {
            row.representative
        };
        let parts = if members.len() == 1 {
            vec![members]
        } else {
            components(docs, pipeline, &members, self.threshold)?
        };
        for part in parts {
            if part.binary_search(&representative).is_ok() {
                self.tables.put(Row {
                    id: cluster,
                    representative,
                    size: part.len() as u64,
                })?;
                continue;
            }
            let split = self.fresh_id();
            for &member in &part {
                self.tables.members.remove((cluster, member))?;
                self.tables.add_member(split, member)?;
            }
            self.tables.put(Row {
                id: split,
                representative: self.best(docs, &part)?,
                size: part.len() as u64,
            })?;
        }
        Ok(None)
    }

    /// Empties the cluster tables (the id counter goes on).
    pub fn clear(&mut self) -> Result<()> {
        self.tables.clear()
    }

    /// Ends the upkeep; returns the id counter for the caller to write
    /// before committing.
    pub fn finish(self) -> u64 {
        self.next
    }

    fn fresh_id(&mut self) -> u64 {
        self.next += 1;
        self.next - 1
    }

    fn row(&self, cluster: u64) -> Result<Row> {
        self.tables
            .row(cluster)?
            .ok_or_else(|| Error::corrupted(format!("cluster {cluster} has members but no row")))
    }

    /// Of documents `a` and `b`, the one the policy prefers.
    fn better(&self, docs: &WriteTables<'_>, a: u64, b: u64) -> Result<u64> {
        if a == b || self.policy == Representative::FirstInserted {
            return Ok(a.min(b));
        }
        let priority = |id| self.priority(id);
        Ok(
            if rank(docs, self.policy, a, &priority)? <= rank(docs, self.policy, b, &priority)? {
                a
            } else {
                b
            },
        )
    }

    /// The member of `members` (not empty) the policy prefers.
    fn best(&self, docs: &WriteTables<'_>, members: &[u64]) -> Result<u64> {
        let mut best = members[0];
        for &member in &members[1..] {
            best = self.better(docs, best, member)?;
        }
        Ok(best)
    }
}

/// Every band: the mask of [`probe`] that reads them all.
pub(crate) const ALL_BANDS: u64 = u64::MAX;

/// Of `by_cluster`, (cluster, candidate) pairs sorted and distinct, the
/// clusters (ascending) that hold a candidate whose similarity to shingle
/// set `set` is `threshold` or above, verified as `pairs` verifies (the
/// set-size filter, then exactly), read through `reader`: one verified
/// candidate per cluster, the others not read.
pub(super) fn verified(
    reader: &impl Reader,
    pipeline: &Pipeline,
    threshold: f64,
    set: &[u32],
    by_cluster: &[(u64, u64)],
) -> Result<Vec<u64>> {
    let mut joined = Vec::new();
    for group in by_cluster.chunk_by(|a, b| a.0 == b.0) {
        for &(cluster, candidate) in group {
            let hits = verify(
                reader,
                pipeline,
                set,
                &[],
                vec![candidate],
                threshold,
                true,
                &mut Explain::default(),
            )?;
            if !hits.is_empty() {
                joined.push(cluster);
                break;
            }
        }
    }
    Ok(joined)
}

/// The postings of band 0 [`stored_twin`] reads, at most.
const TWIN_PROBE: usize = 16;

/// The cluster of a stored document other than `exclude` with the same
/// shingle set `set` as the document of `band_keys`, among the first
/// [`TWIN_PROBE`] of its band-0 bucket when it holds that many (a copy has
/// every band key of its original; `bands`: the bands a stored document
/// may share, bit 0 for band 0). A copy's neighbours are its original and
/// the original's neighbours, all in the original's cluster (a connected
/// component): that cluster is exactly the clusters holding a verified
/// neighbour of the copy, found without reading its buckets whole. A hot bucket of
/// copies (one boilerplate text stored a million times) would otherwise be
/// read whole, and each member's cluster looked up, for every copy:
/// time quadratic in the copies, and memory linear.
pub(super) fn stored_twin(
    index: &impl Index,
    reader: &impl Reader,
    cluster_of: impl Fn(u64) -> Result<Option<u64>>,
    (band_keys, bands, set, exclude): (&[u64], u64, &[u32], u64),
) -> Result<Option<u64>> {
    let Some(&key) = band_keys.first() else {
        return Ok(None);
    };
    if bands & 1 == 0 {
        return Ok(None); // no stored document has this band-0 key
    }
    let mut ids = Vec::new();
    let probe = Probe::all(0, key, TWIN_PROBE);
    index.postings(Postings::Buckets, probe, &mut ids)?;
    if ids.len() < TWIN_PROBE {
        // Not a hot bucket: reading it whole costs little (and a single
        // insert's twin look-ups would cost more than they save).
        return Ok(None);
    }
    for id in ids.into_iter().filter(|&id| id != exclude) {
        let same_size = &mut |len: u32, _: &[u32]| len as usize == set.len();
        let Some(entry) = reader.entry(id, same_size)? else {
            continue;
        };
        if entry.set() == Some(set) {
            if let Some(cluster) = cluster_of(id)? {
                return Ok(Some(cluster));
            }
        }
    }
    Ok(None)
}

/// Every id posted in the buckets of `band_keys` (fresh and in runs, no
/// cap), ascending and distinct; only the bands whose bit is set in `bands`
/// (bit `min(band, 63)`) are read, the others being known empty of stored
/// documents ([`crate::db::load_filter::LoadFilter::bands_met`]).
pub(super) fn probe(docs: &impl Index, band_keys: &[u64], bands: u64) -> Result<Vec<u64>> {
    let mut candidates = Vec::new();
    for (band, &key) in band_keys.iter().enumerate() {
        if bands >> band.min(63) & 1 == 0 {
            continue;
        }
        let probe = Probe::all(band as u32, key, usize::MAX);
        docs.postings(Postings::Buckets, probe, &mut candidates)?;
    }
    candidates.sort_unstable();
    candidates.dedup();
    Ok(candidates)
}

/// How `policy` ranks document `id` (`priority` reads a document's
/// priority): the smallest rank is the representative (ties go to the
/// smaller id).
pub(crate) fn rank(
    reader: &impl Reader,
    policy: Representative,
    id: u64,
    priority: &dyn Fn(u64) -> Result<i64>,
) -> Result<Rank> {
    Ok(match policy {
        Representative::FirstInserted => (0, String::new(), id),
        Representative::Longest => {
            let mut record = SignatureRecord::default();
            if !reader.signature_into(id, &mut record)? {
                return Err(Error::corrupted(format!("document {id} has no signature")));
            }
            (u64::from(u32::MAX - record.set_len), String::new(), id)
        }
        Representative::SmallestKey => {
            let key = reader
                .key(id)?
                .ok_or_else(|| Error::corrupted(format!("clustered document {id} is missing")))?;
            (0, key.to_string(), id)
        }
        Representative::Priority => (priorities::rank(priority(id)?), String::new(), id),
    })
}

/// The connected components of the verified near-duplicate graph among
/// `members` (ascending): each part ascending, parts by their first member.
/// Reads each member's set and recomputes its band keys; pairs sharing a
/// bucket are verified only while they are still apart.
pub(crate) fn components(
    reader: &impl Reader,
    pipeline: &Pipeline,
    members: &[u64],
    threshold: f64,
) -> Result<Vec<Vec<u64>>> {
    let mut sets = Vec::with_capacity(members.len());
    let mut buckets: HashMap<(u32, u64), Vec<u32>> = HashMap::new();
    let (mut band_keys, mut blocks) = (Vec::new(), Vec::new());
    for (i, &member) in members.iter().enumerate() {
        let (mut record, mut set) = (SignatureRecord::default(), Vec::new());
        if !pipeline.stored_signature(reader, member, &mut record, &mut set)? {
            return Err(Error::corrupted(format!(
                "clustered document {member} is missing"
            )));
        }
        if set.is_empty() && !reader.set_into(member, &mut set)? {
            return Err(Error::corrupted(format!(
                "document {member} has no shingle set"
            )));
        }
        pipeline.index_keys(&record, &mut band_keys, &mut blocks);
        for (band, &key) in band_keys.iter().enumerate() {
            buckets
                .entry((band as u32, key))
                .or_default()
                .push(i as u32);
        }
        sets.push(set);
    }
    let mut parent: Vec<u32> = (0..members.len() as u32).collect();
    for bucket in buckets.values().filter(|b| b.len() > 1) {
        for (k, &i) in bucket.iter().enumerate() {
            for &j in &bucket[k + 1..] {
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                if ri == rj {
                    continue;
                }
                let (a, b) = (sets[i as usize].as_slice(), sets[j as usize].as_slice());
                if verify_in_memory(pipeline, (a, &[]), (b, &[]), threshold, true).is_some() {
                    parent[ri.max(rj) as usize] = ri.min(rj);
                }
            }
        }
    }
    let mut parts: Vec<Vec<u64>> = Vec::new();
    let mut part_of: HashMap<u32, usize> = HashMap::new();
    for (i, &member) in members.iter().enumerate() {
        let root = find(&mut parent, i as u32);
        let next = parts.len();
        let part = *part_of.entry(root).or_insert(next);
        if part == next {
            parts.push(Vec::new());
        }
        parts[part].push(member);
    }
    Ok(parts)
}

/// Union-find root with path halving.
fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grand = parent[parent[i as usize] as usize];
        parent[i as usize] = grand;
        i = grand;
    }
    i
}
