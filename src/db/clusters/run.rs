//! Cluster upkeep of many new documents written as one posting run (bulk
//! loads, dedup-on-write of many): what [`Upkeep::join`] does one by one,
//! in two halves around the writing of the run.
//!
//! Before the run is written, each document's neighbours among the stored
//! documents are found by probing the index, which does not hold the new
//! documents yet (so no probe reads the new run's blocks), and only the
//! clusters with a verified neighbour are kept. After, the documents join
//! in id order: those stored clusters (resolved, as earlier joins may have
//! merged them) and the clusters of earlier new documents sharing a bucket,
//! found in memory. The edges are the same as one insert at a time finds.

use super::upkeep::{probe, stored_twin, verified, Upkeep, ALL_BANDS};
use crate::db::held::BandKeyMap;
use crate::pipeline::Pipeline;
use crate::query::verify::verify_in_memory;
use crate::store::cache::RecordCache;
use crate::store::clusters::ClusterRead;
use crate::store::runs::RowCache;
use crate::store::schema::KEY_BAND;
use crate::store::tables::{ReadTables, WriteTables};
use crate::{Error, Result};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// Candidates whose cluster [`before_run_in`] keeps for a run (about 40
/// bytes each: 10 MB).
const CLUSTER_OF_ITEMS: usize = 1 << 18;

/// A new document of one run, as its upkeep needs it.
pub(crate) struct NewDoc<'a> {
    /// Its document id.
    pub id: u64,
    /// Its band keys, in band order.
    pub band_keys: Cow<'a, [u64]>,
    /// The bands (bit `min(band, 63)`) where a stored document may share
    /// its bucket, from the load's filter; [`ALL_BANDS`] when unknown.
    pub bands: u64,
    /// Its shingle set when the caller holds it (else it is read back).
    pub set: Option<&'a [u32]>,
}

/// New documents of one run, by ascending id.
pub(crate) type NewDocs<'a> = Vec<NewDoc<'a>>;

/// The documents of a posting run (band and key postings, in any order)
/// with their band keys, by ascending id.
pub(crate) fn band_keys_by_document(postings: &[(u32, u64, u64)]) -> NewDocs<'static> {
    let mut by_id: Vec<(u64, u32, u64)> = postings
        .iter()
        .filter(|p| p.0 != KEY_BAND)
        .map(|&(band, key, id)| (id, band, key))
        .collect();
    by_id.sort_unstable();
    by_id
        .chunk_by(|a, b| a.0 == b.0)
        .map(|doc| NewDoc {
            id: doc[0].0,
            band_keys: Cow::Owned(doc.iter().map(|p| p.2).collect()),
            bands: ALL_BANDS,
            set: None,
        })
        .collect()
}

/// The last committed state, read beside a bulk load's write transaction:
/// before the load's run is written, the transaction differs from it only
/// by the records of the run's own documents, unless one of them replaced
/// a stored document (whose removal the transaction has made).
pub(crate) struct StoredView<'c> {
    /// A read transaction begun while the write lock is held.
    pub txn: redb::ReadTransaction,
    /// The run filters the handle keeps (`db/kept_filters.rs`).
    pub rows: Arc<RowCache>,
    /// The handle's record cache, which the verifications read through:
    /// every id they read is committed (`store/cache.rs`), and a family's
    /// members are candidates of each new member.
    pub cache: &'c RecordCache,
}

/// What [`Upkeep::before_run`] finds, found in `view` on every core: for
/// new documents (none replacing a stored one, each with its set held)
/// about to be written as one run, each one's stored clusters holding a
/// verified neighbour at `threshold`.
pub(crate) fn before_run_in(
    view: &StoredView<'_>,
    pipeline: &Pipeline,
    threshold: f64,
    new: &NewDocs<'_>,
) -> Result<Vec<Vec<u64>>> {
    let mut tables = ReadTables::open(&view.txn)?;
    tables.share_rows(Arc::clone(&view.rows))?;
    // No cluster tables yet: nothing stored is in a cluster.
    let Some(clusters) = ClusterRead::open(&view.txn)? else {
        return Ok(vec![Vec::new(); new.len()]);
    };
    let reader = view.cache.reader(&tables);
    // The candidates' clusters in this snapshot, each read once for the
    // run: a hot bucket's members are candidates of many of its documents.
    // Sized by the run, so that a small commit does not allocate for a
    // large one.
    let items = new.len().saturating_mul(16).clamp(16, CLUSTER_OF_ITEMS);
    let cluster_of = quick_cache::sync::Cache::<u64, Option<u64>>::new(items);
    // A twin joins its twin's cluster, which the twin's stored clusters
    // join: it need not probe.
    let twins = twins(new);
    new.par_iter()
        .zip(&twins)
        .map(|(doc, twin)| {
            if doc.bands == 0 || twin.is_some() {
                return Ok(Vec::new());
            }
            let Some(set) = doc.set else {
                let id = doc.id;
                return Err(Error::corrupted(format!(
                    "new document {id} has no set held"
                )));
            };
            let stored_cluster = |id| clusters.cluster_of(id);
            let copy = (&doc.band_keys[..], doc.bands, set, u64::MAX);
            if let Some(cluster) = stored_twin(&tables, &reader, stored_cluster, copy)? {
                return Ok(vec![cluster]);
            }
            let mut by_cluster = Vec::new();
            for candidate in probe(&tables, &doc.band_keys, doc.bands)? {
                let cluster = match cluster_of.get(&candidate) {
                    Some(cluster) => cluster,
                    None => {
                        let cluster = clusters.cluster_of(candidate)?;
                        cluster_of.insert(candidate, cluster);
                        cluster
                    }
                };
                if let Some(cluster) = cluster {
                    by_cluster.push((cluster, candidate));
                }
            }
            by_cluster.sort_unstable();
            by_cluster.dedup();
            verified(&reader, pipeline, threshold, set, &by_cluster)
        })
        .collect()
}

impl Upkeep<'_> {
    /// Before the run of `new` is written: each document's stored clusters
    /// holding a verified neighbour. Only the bands a document's `bands`
    /// names are read.
    pub fn before_run(
        &self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        new: &NewDocs<'_>,
    ) -> Result<Vec<Vec<u64>>> {
        let mut out = Vec::with_capacity(new.len());
        for (doc, twin) in new.iter().zip(twins(new)) {
            if doc.bands == 0 || twin.is_some() {
                out.push(Vec::new());
                continue;
            }
            let mut by_cluster = Vec::new();
            for candidate in probe(docs, &doc.band_keys, doc.bands)? {
                if let Some(cluster) = self.cluster_of(candidate)? {
                    by_cluster.push((cluster, candidate));
                }
            }
            out.push(self.verified_clusters(docs, pipeline, doc.id, doc.set, by_cluster)?);
        }
        Ok(out)
    }

    /// After the run of `new` is written: each document joins, in id
    /// order, its `stored` clusters (from [`Upkeep::before_run`]) and those
    /// of earlier documents of `new` it is a verified neighbour of; `reuse`
    /// gives, by document, the cluster its replaced version left empty.
    pub fn after_run(
        &mut self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        new: &NewDocs<'_>,
        stored: Vec<Vec<u64>>,
        reuse: &[Option<u64>],
    ) -> Result<()> {
        // The postings of the documents joined so far, as chains: (band,
        // key) → its last posting; each posting's document (its place in
        // `new`) and the posting before it in the same bucket. No
        // allocation per bucket.
        let postings = new.iter().map(|doc| doc.band_keys.len()).sum();
        let mut last: BandKeyMap<u32> =
            BandKeyMap::with_capacity_and_hasher(postings, Default::default());
        let (mut owner, mut before): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut joined_to: Vec<u64> = Vec::with_capacity(new.len());
        let mut earlier: Vec<u32> = Vec::new();
        let twins = twins(new);
        for (i, (doc, stored)) in new.iter().zip(stored).enumerate() {
            if let Some(twin) = twins[i] {
                // A copy of an earlier document's set has that document's
                // edges and the one between them: it joins its cluster,
                // which holds every document either is a near-duplicate
                // of. Its postings are left out of the chains: a later
                // document sharing a bucket with it meets the twin there,
                // and is verified against the same set. So many copies of
                // one text cost one walk of their buckets, not one each.
                let mut joined = vec![self.current(joined_to[twin as usize])?];
                for cluster in stored {
                    joined.push(self.current(cluster)?);
                }
                joined.sort_unstable();
                joined.dedup();
                let row = self.merge(docs, doc.id, joined, reuse.get(i).copied().flatten())?;
                joined_to.push(row.id);
                continue;
            }
            earlier.clear();
            for (band, &key) in doc.band_keys.iter().enumerate() {
                let mut at = last.get(&(band as u32, key)).copied().unwrap_or(NONE);
                while at != NONE {
                    earlier.push(owner[at as usize]);
                    at = before[at as usize];
                }
            }
            earlier.sort_unstable();
            earlier.dedup();
            let mut joined = Vec::with_capacity(stored.len());
            for cluster in stored {
                joined.push(self.current(cluster)?);
            }
            // Clusters at join time, resolved once each.
            let mut resolved: HashMap<u64, u64> = HashMap::new();
            let mut by_cluster = Vec::new();
            for &place in &earlier {
                let at = joined_to[place as usize];
                let now = match resolved.get(&at) {
                    Some(&now) => now,
                    None => {
                        let now = self.current(at)?;
                        resolved.insert(at, now);
                        now
                    }
                };
                if !joined.contains(&now) {
                    by_cluster.push((now, place as usize));
                }
            }
            joined.extend(self.verified_in_run(docs, pipeline, new, i, by_cluster)?);
            joined.sort_unstable();
            joined.dedup();
            let row = self.merge(docs, doc.id, joined, reuse.get(i).copied().flatten())?;
            joined_to.push(row.id);
            for (band, &key) in doc.band_keys.iter().enumerate() {
                let posting = owner.len() as u32;
                owner.push(i as u32);
                before.push(last.insert((band as u32, key), posting).unwrap_or(NONE));
            }
        }
        Ok(())
    }
}

impl Upkeep<'_> {
    /// [`Upkeep::verified_clusters`] of document `i` of `new` among earlier
    /// documents of `new`, `by_cluster` pairs (cluster, place in `new`):
    /// in memory when the caller holds their sets, as it does in a bulk
    /// load (verified as [`components`](super::upkeep::components) verifies
    /// members: the same edges), else reading them back.
    fn verified_in_run(
        &self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        new: &NewDocs<'_>,
        i: usize,
        mut by_cluster: Vec<(u64, usize)>,
    ) -> Result<Vec<u64>> {
        let doc = &new[i];
        let held = |place: usize| new[place].set;
        let Some(set) = doc
            .set
            .filter(|_| by_cluster.iter().all(|&(_, p)| held(p).is_some()))
        else {
            let by_id = by_cluster.iter().map(|&(c, p)| (c, new[p].id)).collect();
            return self.verified_clusters(docs, pipeline, doc.id, doc.set, by_id);
        };
        by_cluster.sort_unstable();
        by_cluster.dedup();
        let mut joined = Vec::new();
        for group in by_cluster.chunk_by(|a, b| a.0 == b.0) {
            let met = group.iter().any(|&(_, place)| {
                let other = held(place).unwrap_or_default();
                verify_in_memory(pipeline, (set, &[]), (other, &[]), self.threshold(), true)
                    .is_some()
            });
            if met {
                joined.push(group[0].0);
            }
        }
        Ok(joined)
    }
}

/// For each document of `new`, the place of the first earlier one with
/// the same shingle set (both held): its twin, whose cluster it joins
/// without looking for neighbours of its own (see [`Upkeep::after_run`]).
fn twins(new: &NewDocs<'_>) -> Vec<Option<u32>> {
    use std::collections::hash_map::Entry;
    use std::hash::{Hash, Hasher};
    // The first document of each set, by the set's hash.
    let mut firsts: HashMap<u64, u32> = HashMap::new();
    let mut twins = Vec::with_capacity(new.len());
    for (i, doc) in new.iter().enumerate() {
        let Some(set) = doc.set else {
            twins.push(None);
            continue;
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        set.hash(&mut hasher);
        twins.push(match firsts.entry(hasher.finish()) {
            // Two sets of one hash are compared: never a false twin.
            Entry::Occupied(first) => {
                let place = *first.get();
                (new[place as usize].set == Some(set)).then_some(place)
            }
            Entry::Vacant(slot) => {
                slot.insert(i as u32);
                None
            }
        });
    }
    twins
}

/// The end of a chain of postings.
const NONE: u32 = u32::MAX;
