//! [`Held`]: documents that dedup-on-write accepted and that the index
//! look-ups do not see yet, kept in memory with their band keys and checked
//! as the query planner checks stored documents.

use crate::pipeline::{Pipeline, Prepared};
use crate::query::plan;
use crate::query::verify::verify_in_memory;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Accepted documents not yet visible to the look-ups, in the order they
/// were accepted, each with its rank: its document id once it has one,
/// else a number above every id. Of equally similar documents the one of
/// lowest rank wins, as the planner ranks stored documents by id.
#[derive(Default)]
pub(crate) struct Held {
    docs: Vec<(Prepared, u64)>,
    /// (band, band key) → the last document posted there, as position + 1.
    heads: BandKeyMap<u32>,
    /// Per (document, band): the previous document in that bucket, as
    /// position + 1 (0 ends the list).
    next: Vec<u32>,
    keys: HashSet<String>,
    /// Shingles held, summed over the documents.
    shingles: usize,
    /// Bytes held, about: the documents and their entries here.
    bytes: usize,
}

impl Held {
    /// Adds an accepted document with its rank.
    pub fn push(&mut self, doc: Prepared, rank: u64) {
        let at = self.docs.len() as u32 + 1;
        for (band, &key) in doc.band_keys.iter().enumerate() {
            let previous = self.heads.insert((band as u32, key), at).unwrap_or(0);
            self.next.push(previous);
        }
        self.keys.insert(doc.key.clone());
        self.shingles += doc.set.len();
        // The document, its rank, its key again, and per band a bucket
        // head (a hash map slot) and a link.
        self.bytes += doc.memory() + 8 + doc.key.len() + 32 + doc.band_keys.len() * 28;
        self.docs.push((doc, rank));
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Shingles held, summed over the documents (a measure of memory).
    pub fn shingles(&self) -> usize {
        self.shingles
    }

    /// Bytes held, about (a measure of memory).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether a held document has `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// The document at `position` and its rank.
    pub fn get(&self, position: usize) -> &(Prepared, u64) {
        &self.docs[position]
    }

    /// Gives the document at `position` its rank.
    pub fn set_rank(&mut self, position: usize, rank: u64) {
        self.docs[position].1 = rank;
    }

    /// The documents in the order they were accepted, with their ranks.
    pub fn docs(&self) -> impl Iterator<Item = &(Prepared, u64)> {
        self.docs.iter()
    }

    /// The best held near-duplicate of `doc` (position, similarity):
    /// highest similarity, then lowest rank; verified as the plan verifies.
    /// With more than [`plan::FIRST_OVER`] candidates, the first verified
    /// one, as the planner's hot-bucket policy.
    pub fn best(
        &self,
        pipeline: &Pipeline,
        doc: &Prepared,
        threshold: f64,
        prune: bool,
    ) -> Option<(usize, f64)> {
        let mut candidates = self.candidates(doc);
        candidates.sort_unstable();
        let verify = |i: usize| self.verify(pipeline, doc, i, threshold, prune);
        let mut counted = plan::count_sorted(candidates);
        if counted.len() > plan::FIRST_OVER {
            // Hot buckets: the first verified, most shared bands first
            // (the planner's policy, `PlanOptions::first_over`).
            counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            return counted
                .into_iter()
                .find_map(|(i, _)| verify(i).map(|s| (i, s)));
        }
        let mut best: Option<(usize, f64)> = None;
        for (i, _) in counted {
            if let Some(s) = verify(i) {
                let rank = self.docs[i].1;
                let better =
                    best.is_none_or(|(b, bs)| s > bs || (s == bs && rank < self.docs[b].1));
                if better {
                    best = Some((i, s));
                }
            }
        }
        best
    }

    /// The positions that share a bucket with `doc`, once per shared band.
    fn candidates(&self, doc: &Prepared) -> Vec<usize> {
        let bands = doc.band_keys.len();
        let mut candidates = Vec::new();
        for (band, &key) in doc.band_keys.iter().enumerate() {
            let mut at = self.heads.get(&(band as u32, key)).copied().unwrap_or(0);
            while at != 0 {
                let position = at as usize - 1;
                candidates.push(position);
                at = self.next[position * bands + band];
            }
        }
        candidates
    }

    /// `doc`'s similarity to the document at `position`, if at `threshold`.
    fn verify(
        &self,
        pipeline: &Pipeline,
        doc: &Prepared,
        position: usize,
        threshold: f64,
        prune: bool,
    ) -> Option<f64> {
        let other = &self.docs[position].0;
        let ours = (doc.set.as_slice(), doc.signature.as_slice());
        let theirs = (other.set.as_slice(), other.signature.as_slice());
        verify_in_memory(pipeline, ours, theirs, threshold, prune)
    }
}

/// A map keyed by (band, band key), hashed by [`BandKeyHasher`].
pub(crate) type BandKeyMap<V> = HashMap<(u32, u64), V, BuildHasherDefault<BandKeyHasher>>;

/// Hashes (band, band key) pairs: band keys are hashes already, so one
/// multiply mixes the band in.
#[derive(Default)]
pub(crate) struct BandKeyHasher(u64);

impl Hasher for BandKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(23) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
