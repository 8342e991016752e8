//! [`Held`]: documents that dedup-on-write accepted and that the index
//! look-ups do not see yet, kept in memory with their band keys and checked
//! as the query planner checks stored documents.

use crate::pipeline::{Pipeline, Prepared};
use crate::query::plan;
use crate::query::verify::verify_in_memory;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

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
        let mut candidates = self.candidates(doc, 0..self.docs.len());
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
        self.most_similar(counted.into_iter().map(|(i, _)| i), verify)
    }

    /// [`Held::best`] over the documents at `positions` alone, as if they
    /// were all there is, unless more than [`plan::FIRST_OVER`] of them
    /// are candidates (`None`: the hot-bucket policy orders them all, so
    /// only [`Held::best`] over every position can tell). Two parts of
    /// the positions, searched apart, give [`Held::best`]'s answer when
    /// their candidates are [`plan::FIRST_OVER`] or fewer together: the
    /// better of their two (see [`Held::better`]). So a load decides a
    /// chunk against the documents held before it on every core, and
    /// against those the chunk added one by one.
    pub fn best_in(
        &self,
        pipeline: &Pipeline,
        doc: &Prepared,
        threshold: f64,
        prune: bool,
        positions: Range<usize>,
    ) -> Option<Part> {
        let mut candidates = self.candidates(doc, positions);
        candidates.sort_unstable();
        candidates.dedup();
        if candidates.len() > plan::FIRST_OVER {
            return None;
        }
        let verify = |i: usize| self.verify(pipeline, doc, i, threshold, prune);
        Some(Part {
            candidates: candidates.len(),
            best: self.most_similar(candidates.into_iter(), verify),
        })
    }

    /// Of two (position, similarity) answers, the better: higher
    /// similarity, then lower rank.
    pub fn better(&self, a: Option<(usize, f64)>, b: Option<(usize, f64)>) -> Option<(usize, f64)> {
        better_by(a, b, |&(i, s)| (s, self.docs[i].1))
    }

    /// The verified candidate of highest similarity, then lowest rank.
    fn most_similar(
        &self,
        candidates: impl Iterator<Item = usize>,
        verify: impl Fn(usize) -> Option<f64>,
    ) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for i in candidates {
            if let Some(s) = verify(i) {
                best = self.better(best, Some((i, s)));
            }
        }
        best
    }

    /// The positions in `range` that share a bucket with `doc`, once per
    /// shared band. A bucket's list runs from its newest document back.
    fn candidates(&self, doc: &Prepared, range: Range<usize>) -> Vec<usize> {
        let bands = doc.band_keys.len();
        let mut candidates = Vec::new();
        for (band, &key) in doc.band_keys.iter().enumerate() {
            let mut at = self.heads.get(&(band as u32, key)).copied().unwrap_or(0);
            while at != 0 {
                let position = at as usize - 1;
                if position < range.start {
                    break;
                }
                if position < range.end {
                    candidates.push(position);
                }
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

/// How a load searches its held documents for a near-duplicate.
pub(crate) struct Search<'a> {
    pub pipeline: &'a Pipeline,
    pub threshold: f64,
    pub prune: bool,
}

/// A document's best near-duplicates among those a load held before its
/// chunk ([`Search::before_chunk`]).
#[derive(Default)]
pub(crate) struct Before {
    /// Of earlier commits: (similarity, rank, which of them, position).
    older: Option<(f64, u64, usize, usize)>,
    /// Of the open transaction, before the chunk; `None` past the hot
    /// buckets' policy (or for a document not searched).
    open: Option<Part>,
}

impl Search<'_> {
    /// `doc`'s best near-duplicates among the documents held in `older`
    /// (of earlier commits: read-only while a chunk is decided) and the
    /// first `start` of `open` (the open transaction's, before the
    /// chunk): a search that can run on every core for a whole chunk.
    pub fn before_chunk(
        &self,
        older: &[(u64, Held)],
        open: &Held,
        doc: &Prepared,
        start: usize,
    ) -> Before {
        let (pipeline, threshold, prune) = (self.pipeline, self.threshold, self.prune);
        let mut best: Option<(f64, u64, usize, usize)> = None;
        for (o, (_, h)) in older.iter().enumerate() {
            let found = h.best(pipeline, doc, threshold, prune);
            let found = found.map(|(i, s)| (s, h.get(i).1, o, i));
            best = better_by(best, found, |&(s, rank, _, _)| (s, rank));
        }
        let open = open.best_in(pipeline, doc, threshold, prune, 0..start);
        Before { older: best, open }
    }

    /// The best held near-duplicate of `doc` (similarity, rank, key):
    /// highest similarity, then lowest rank, as one search over `older`
    /// and `open` would find it. `before` is [`Search::before_chunk`]'s
    /// answer from before the chunk added documents to `open` from
    /// position `start` on; those are searched here.
    pub fn best_held<'h>(
        &self,
        older: &'h [(u64, Held)],
        open: &'h Held,
        doc: &Prepared,
        before: Before,
        start: usize,
    ) -> Option<(f64, u64, &'h str)> {
        let (pipeline, threshold, prune) = (self.pipeline, self.threshold, self.prune);
        let positions = start..open.len();
        let since =
            (before.open).and_then(|_| open.best_in(pipeline, doc, threshold, prune, positions));
        // Apart, the two parts answer as one search only below the hot
        // buckets' policy (`Held::best_in`).
        let best_open = match (before.open, since) {
            (Some(a), Some(b)) if a.candidates + b.candidates <= plan::FIRST_OVER => {
                open.better(a.best, b.best)
            }
            _ => open.best(pipeline, doc, threshold, prune),
        };
        let best_open = best_open.map(|(i, s)| (s, open.get(i).1, open.get(i).0.key.as_str()));
        let best_older =
            (before.older).map(|(s, rank, o, i)| (s, rank, older[o].1.get(i).0.key.as_str()));
        better_by(best_older, best_open, |&(s, rank, _)| (s, rank))
    }
}

/// Of two answers, the better by their (similarity, rank): higher
/// similarity, then lower rank (ranks are distinct, so no two tie).
fn better_by<T>(a: Option<T>, b: Option<T>, key: impl Fn(&T) -> (f64, u64)) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let ((s, r), (t, q)) = (key(&a), key(&b));
            Some(if s > t || (s == t && r < q) { a } else { b })
        }
        (a, None) => a,
        (None, b) => b,
    }
}

/// [`Held::best_in`]'s answer over some positions.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    /// Distinct candidates among the positions.
    pub candidates: usize,
    /// The best of them (position, similarity).
    pub best: Option<(usize, f64)>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketcher::Document;

    fn pipeline() -> Pipeline {
        let settings = crate::config::Config::jaccard(0.6).resolve().unwrap();
        Pipeline::new(&settings).unwrap()
    }

    /// Sixty words, the `i`th variant with every word at a multiple of
    /// `every` replaced.
    fn text(i: usize, every: usize) -> String {
        (0..60)
            .map(|w| match w % every == i % every {
                true => format!("v{i}x{w}"),
                false => format!("word{w}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn held_of(pipeline: &Pipeline, texts: &[String]) -> Held {
        let mut held = Held::default();
        for (i, t) in texts.iter().enumerate() {
            let doc = pipeline
                .prepare(&format!("h{i}"), Document::Text(t))
                .unwrap();
            held.push(doc, i as u64);
        }
        held
    }

    /// Searched in two parts, a split anywhere, the held documents give
    /// the answer of one search over them all, ties to the lower rank
    /// included; past the hot buckets' policy a part says it cannot tell.
    #[test]
    fn two_parts_searched_apart_answer_as_one_search() {
        let pipeline = pipeline();
        // Variants of one text at several distances, and exact copies
        // (ties of similarity, decided by rank).
        let texts: Vec<String> = (0..40)
            .map(|i| text(i % 13, [4, 7, 9, 15][i % 4]))
            .collect();
        let held = held_of(&pipeline, &texts);
        let mut found = 0;
        for q in 0..20 {
            let query = text(q, [5, 8, 12][q % 3]);
            let doc = pipeline.prepare("q", Document::Text(&query)).unwrap();
            let whole = held.best(&pipeline, &doc, 0.6, true);
            found += usize::from(whole.is_some());
            let all = held.best_in(&pipeline, &doc, 0.6, true, 0..texts.len());
            let all = all.unwrap().candidates;
            for split in 0..=texts.len() {
                let a = held.best_in(&pipeline, &doc, 0.6, true, 0..split).unwrap();
                let b = (held.best_in(&pipeline, &doc, 0.6, true, split..texts.len())).unwrap();
                assert_eq!(a.candidates + b.candidates, all, "query {q}, split {split}");
                assert_eq!(
                    held.better(a.best, b.best),
                    whole,
                    "query {q}, split {split}"
                );
            }
        }
        assert!(
            found >= 10,
            "only {found} queries had a held near-duplicate"
        );
        // More candidates than the policy's bound: no answer from a part.
        let copies = vec![text(0, 4); plan::FIRST_OVER + 1];
        let held = held_of(&pipeline, &copies);
        let doc = pipeline.prepare("q", Document::Text(&copies[0])).unwrap();
        assert!(held
            .best_in(&pipeline, &doc, 0.6, true, 0..copies.len())
            .is_none());
        let part = held.best_in(&pipeline, &doc, 0.6, true, 0..10).unwrap();
        assert_eq!((part.candidates, part.best), (10, Some((0, 1.0))));
    }
}
