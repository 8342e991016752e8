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

use super::upkeep::{probe, Upkeep};
use crate::pipeline::Pipeline;
use crate::store::schema::KEY_BAND;
use crate::store::tables::WriteTables;
use crate::Result;
use std::collections::HashMap;

/// New documents of one run: (id, band keys in band order), ascending.
pub(crate) type NewDocs = Vec<(u64, Vec<u64>)>;

/// The documents of a posting run (band and key postings, in any order)
/// with their band keys, by ascending id.
pub(crate) fn band_keys_by_document(postings: &[(u32, u64, u64)]) -> NewDocs {
    let mut by_id: Vec<(u64, u32, u64)> = postings
        .iter()
        .filter(|p| p.0 != KEY_BAND)
        .map(|&(band, key, id)| (id, band, key))
        .collect();
    by_id.sort_unstable();
    by_id
        .chunk_by(|a, b| a.0 == b.0)
        .map(|doc| (doc[0].0, doc.iter().map(|p| p.2).collect()))
        .collect()
}

impl Upkeep<'_> {
    /// Before the run of `new` is written: each document's stored clusters
    /// holding a verified neighbour.
    pub fn before_run(
        &self,
        docs: &WriteTables<'_>,
        pipeline: &Pipeline,
        new: &NewDocs,
    ) -> Result<Vec<Vec<u64>>> {
        let mut out = Vec::with_capacity(new.len());
        for (id, band_keys) in new {
            let mut by_cluster = Vec::new();
            for candidate in probe(docs, band_keys)? {
                if let Some(cluster) = self.cluster_of(candidate)? {
                    by_cluster.push((cluster, candidate));
                }
            }
            out.push(self.verified_clusters(docs, pipeline, *id, by_cluster)?);
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
        new: &NewDocs,
        stored: Vec<Vec<u64>>,
        reuse: &[Option<u64>],
    ) -> Result<()> {
        // The postings of the documents joined so far, as chains: (band,
        // key) → its last posting; each posting's document (its place in
        // `new`) and the posting before it in the same bucket. No
        // allocation per bucket.
        let mut last: HashMap<(u32, u64), u32> = HashMap::new();
        let (mut owner, mut before): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut joined_to: Vec<u64> = Vec::with_capacity(new.len());
        let mut earlier: Vec<u32> = Vec::new();
        for (i, ((id, band_keys), stored)) in new.iter().zip(stored).enumerate() {
            earlier.clear();
            for (band, &key) in band_keys.iter().enumerate() {
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
                    by_cluster.push((now, new[place as usize].0));
                }
            }
            joined.extend(self.verified_clusters(docs, pipeline, *id, by_cluster)?);
            joined.sort_unstable();
            joined.dedup();
            let row = self.merge(docs, *id, joined, reuse.get(i).copied().flatten())?;
            joined_to.push(row.id);
            for (band, &key) in band_keys.iter().enumerate() {
                let posting = owner.len() as u32;
                owner.push(i as u32);
                before.push(last.insert((band as u32, key), posting).unwrap_or(NONE));
            }
        }
        Ok(())
    }
}

/// The end of a chain of postings.
const NONE: u32 = u32::MAX;
