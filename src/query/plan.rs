//! The query planner: signature → one bucket look-up per band → candidate
//! union → pruning → exact Jaccard on the stored sets → ranked hits, with an
//! [`Explain`] record of what each step cost.
//!
//! **Large buckets.** A bucket shared by thousands of documents (boilerplate
//! such as "Transitional dummy package") would make a query read thousands
//! of postings and verify thousands of candidates. The planner reads at most
//! `max_bucket` postings per bucket (the lowest document ids); a bucket cut
//! there is listed in [`Explain::truncated_buckets`] and a warning is added.
//! The other bands still find the document's real near-duplicates; raise
//! `max_bucket` (or set it to `usize::MAX`) for exhaustive answers.
//!
//! **Pruning.** Before reading a candidate's set, its signature record gives
//! its set size: sizes that make the threshold unreachable (J ≤ min/max)
//! are pruned exactly. Files written before format 3 also store each
//! document's MinHash signature there, and documents held in memory (a
//! batch's `insert_unique_many`) have theirs; where the signature estimate
//! is reliable (the permutation scheme, or sets at least as large as the
//! signature under one-permutation hashing), candidates whose estimate is
//! more than four standard deviations below the threshold are pruned too —
//! a true hit is lost that way with probability below 10⁻⁴.

use crate::pipeline::{Pipeline, Sketch};
use crate::query::{Hit, Warning};
use crate::sketch::measures::jaccard_at_least;
use crate::sketch::minhash::agreements;
use crate::store::probe::Probe;
use crate::store::tables::{Postings, Reader};
use crate::Result;
use std::time::{Duration, Instant};

/// Default cap on postings read from one bucket.
pub const DEFAULT_MAX_BUCKET: usize = 1000;

/// Knobs of one planned query.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// Verified similarity a hit needs.
    pub threshold: f64,
    /// Keep only the best `limit` hits.
    pub limit: Option<usize>,
    /// A document id never returned (the query document itself).
    pub exclude: Option<u64>,
    /// Prune by signature agreement before verifying.
    pub prune: bool,
    /// Postings read per bucket at most.
    pub max_bucket: usize,
    /// Top-k: the `k` best candidates, verified without a threshold.
    pub top: Option<usize>,
    /// Dedup-on-write's policy for hot buckets: with more candidates than
    /// this, they are verified most shared bands first (then by id) and
    /// the first one at the threshold is the answer, not the most similar
    /// one. The decision (a near-duplicate exists or not) stays exact; the
    /// cost of a document with a near-duplicate in a bucket of thousands
    /// stays that of a few verifications. `None`: every candidate is
    /// verified.
    pub first_over: Option<usize>,
    /// The bands whose buckets are read (bit `b` for band `b`; bands past
    /// 63 always): a caller that knows a bucket is empty skips it.
    /// Default: all.
    pub bands: u64,
}

/// Dedup-on-write's [`PlanOptions::first_over`]: verifying more
/// candidates than this to pick the most similar near-duplicate is not
/// worth it.
pub const FIRST_OVER: usize = 256;

impl PlanOptions {
    /// The plan of dedup-on-write at `threshold`: the best near-duplicate,
    /// or in hot buckets the first verified one ([`FIRST_OVER`]).
    pub fn dedup(threshold: f64) -> Self {
        Self {
            threshold,
            limit: Some(1),
            first_over: Some(FIRST_OVER),
            ..Self::default()
        }
    }
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            threshold: 0.5,
            limit: None,
            exclude: None,
            prune: true,
            max_bucket: DEFAULT_MAX_BUCKET,
            top: None,
            first_over: None,
            bands: u64::MAX,
        }
    }
}

/// A bucket whose posting list was cut at the cap.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct TruncatedBucket {
    /// The band.
    pub band: usize,
    /// Postings read before the cut.
    pub read: usize,
}

/// What each step of a query did and cost.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Explain {
    /// Buckets looked up (one per band; for a top-k over the prefix
    /// forest, one per tree, size class and depth probed).
    pub buckets_probed: usize,
    /// Postings read from each band's bucket, in band order (for a top-k
    /// over the prefix forest: postings read at each depth, deepest first).
    pub posting_sizes: Vec<usize>,
    /// True for a top-k over the prefix forest (the containment index),
    /// whose probes [`Explain::buckets_probed`] and
    /// [`Explain::posting_sizes`] then count.
    pub forest: bool,
    /// Buckets cut at the cap.
    pub truncated_buckets: Vec<TruncatedBucket>,
    /// Distinct candidate documents.
    pub candidates: usize,
    /// Candidates pruned by set size.
    pub pruned_by_length: usize,
    /// Candidates pruned by signature agreement.
    pub pruned_by_signature: usize,
    /// Candidates whose exact Jaccard was computed.
    pub verified: usize,
    /// Hits returned.
    pub returned: usize,
    /// Probability that a pair exactly at the query threshold becomes a
    /// candidate under the index's banding (1 − (1 − t^r)^b).
    pub candidate_probability_at_threshold: f64,
    /// Time to shingle and sketch the query.
    pub sketch_time: Duration,
    /// Time in bucket look-ups.
    pub lookup_time: Duration,
    /// Time reading candidates' records, pruning and verifying (one pass:
    /// each candidate is judged by its signature record and, if kept,
    /// verified at once).
    pub verify_time: Duration,
    /// Things the caller should know (truncated buckets, reduced recall).
    pub warnings: Vec<Warning>,
    /// Top-k queries only: the probability that a document as similar as
    /// the k-th hit (the last hit, when fewer were found), s_k, is found
    /// and verified. Over the bands, P(s_k) = 1 − (1 − s_k^r)^b; over the
    /// prefix forest, the same with the trees and the depth the search
    /// stopped at, or, one value deep, P(X > m) for X ~ Binomial(trees,
    /// s_k) when the candidates found in m trees or fewer were left
    /// unverified. Every document at least that similar is found with at
    /// least this probability, so it estimates the recall of the top k.
    /// `None` for other queries, and when nothing was found.
    pub recall_estimate: Option<f64>,
}

/// The planner's answer: hits as (document id, similarity), best first.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Verified hits.
    pub hits: Vec<(u64, f64)>,
    /// Explain record.
    pub explain: Explain,
}

/// Runs the plan for `sketch` against the tables `reader` sees.
pub fn run(
    reader: &impl Reader,
    pipeline: &Pipeline,
    sketch: &Sketch,
    options: &PlanOptions,
) -> Result<Planned> {
    let mut explain = Explain::default();
    let banding = pipeline.banding();
    let t = options.threshold;
    explain.candidate_probability_at_threshold = banding.probability(t);

    let candidates = collect_candidates(reader, sketch, options, &mut explain)?;
    let hot = options.top.is_none() && options.first_over.is_some_and(|h| candidates.len() > h);
    if hot {
        let hits = first_verified(reader, pipeline, sketch, candidates, options, &mut explain)?;
        explain.returned = hits.len();
        return Ok(Planned { hits, explain });
    }
    let candidates = candidates.into_iter().map(|c| c.0).collect();

    // Top-k verifies every candidate: no threshold, no pruning.
    let (verify_at, prune) = match options.top {
        Some(_) => (0.0, false),
        None => (t, options.prune),
    };
    let mut hits = verify(
        reader,
        pipeline,
        &sketch.set,
        &sketch.signature,
        candidates,
        verify_at,
        prune,
        &mut explain,
    )?;
    if options.top.is_some() {
        hits.retain(|&(_, s)| s > 0.0);
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if let Some(k) = options.top {
        hits.truncate(k);
        explain.recall_estimate = hits.last().map(|&(_, s)| banding.probability(s));
    }
    if let Some(limit) = options.limit {
        hits.truncate(limit);
    }
    explain.returned = hits.len();

    if !explain.truncated_buckets.is_empty() {
        explain.warnings.push(Warning::BucketsTruncated {
            buckets: explain.truncated_buckets.len(),
            max_bucket: options.max_bucket,
        });
    }
    Ok(Planned { hits, explain })
}

/// Reads the buckets of the query's band keys: the candidates' ids,
/// sorted, deduplicated and without the excluded one, each with the number
/// of bands it shares with the query. Bucket sizes, cut buckets and the
/// lookup time go to `explain`.
fn collect_candidates(
    reader: &impl Reader,
    sketch: &Sketch,
    options: &PlanOptions,
    explain: &mut Explain,
) -> Result<Vec<(u64, u32)>> {
    let t = options.threshold;
    let start = Instant::now();
    let mut candidates = Vec::new();
    // Exact duplicates (t = 1, not top-k): identical sets have identical
    // signatures and so the same key in every band; band 0's bucket holds
    // them all.
    let exact = options.top.is_none() && t >= 1.0;
    let bands = if exact { 1 } else { sketch.band_keys.len() };
    for (band, &key) in sketch.band_keys.iter().enumerate().take(bands) {
        if band < 64 && options.bands & (1 << band) == 0 {
            explain.posting_sizes.push(0);
            continue;
        }
        let before = candidates.len();
        let probe = Probe::all(band as u32, key, options.max_bucket);
        let cut = reader
            .index()
            .postings(Postings::Buckets, probe, &mut candidates)?;
        let read = candidates.len() - before;
        explain.posting_sizes.push(read);
        if cut {
            explain
                .truncated_buckets
                .push(TruncatedBucket { band, read });
        }
    }
    explain.buckets_probed = bands;
    // Each band's postings arrive in id order: a run-adaptive sort merges
    // those runs instead of sorting from scratch.
    candidates.sort();
    let mut counted = count_sorted(candidates);
    if let Some(own) = options.exclude {
        counted.retain(|&(id, _)| id != own);
    }
    explain.candidates = counted.len();
    explain.lookup_time = start.elapsed();
    Ok(counted)
}

/// Sorted candidates (one per band that found them), each once with the
/// number of bands that found it.
pub(crate) fn count_sorted<T: PartialEq>(sorted: Vec<T>) -> Vec<(T, u32)> {
    let mut counted: Vec<(T, u32)> = Vec::with_capacity(sorted.len());
    for c in sorted {
        match counted.last_mut() {
            Some(last) if last.0 == c => last.1 += 1,
            _ => counted.push((c, 1)),
        }
    }
    counted
}

/// [`PlanOptions::first_over`]'s policy: the candidates verified most
/// shared bands first, then by id, up to the first at the threshold.
fn first_verified(
    reader: &impl Reader,
    pipeline: &Pipeline,
    sketch: &Sketch,
    mut candidates: Vec<(u64, u32)>,
    options: &PlanOptions,
    explain: &mut Explain,
) -> Result<Vec<(u64, f64)>> {
    candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (set, signature) = (&sketch.set, &sketch.signature);
    let t = options.threshold;
    for (id, _) in candidates {
        let hits = verify(
            reader,
            pipeline,
            set,
            signature,
            vec![id],
            t,
            options.prune,
            explain,
        )?;
        if !hits.is_empty() {
            return Ok(hits);
        }
    }
    Ok(Vec::new())
}

/// Prunes `candidates` (sorted ids) by set size and, where the estimate is
/// reliable, by signature agreement, then computes the exact Jaccard
/// similarity of the rest with the query set `set` (signature `signature`):
/// the (id, similarity) pairs at `t` or above, in id order. Counts and
/// times go to `explain`. Shared by queries and [`crate::Database::pairs`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn verify(
    reader: &impl Reader,
    pipeline: &Pipeline,
    set: &[u32],
    signature: &[u32],
    candidates: Vec<u64>,
    t: f64,
    prune: bool,
    explain: &mut Explain,
) -> Result<Vec<(u64, f64)>> {
    let start = Instant::now();
    let n = pipeline.num_perm();
    let exact_estimates = pipeline.is_permutation_scheme();
    let query_len = set.len();
    let margin = prune_margin(t, n);
    let mut hits = Vec::new();
    for id in candidates {
        let mut verdict = Verdict::Verify;
        let mut decide = |set_len: u32, values: &[u32]| {
            verdict = if prune {
                judge(
                    set_len,
                    values,
                    signature,
                    query_len,
                    t,
                    margin,
                    exact_estimates,
                )
            } else {
                Verdict::Verify
            };
            verdict == Verdict::Verify
        };
        // None: removed concurrently within this transaction.
        let Some(entry) = reader.entry(id, &mut decide)? else {
            continue;
        };
        match (verdict, entry.set()) {
            (Verdict::Verify, Some(other)) => {
                explain.verified += 1;
                if let Some(similarity) = jaccard_at_least(set, other, t) {
                    hits.push((id, similarity));
                }
            }
            (Verdict::Verify, None) => {} // the set vanished with the document
            (Verdict::Length, _) => explain.pruned_by_length += 1,
            (Verdict::Signature, _) => explain.pruned_by_signature += 1,
        }
    }
    explain.verify_time += start.elapsed();
    Ok(hits)
}

/// What the signature record says about a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Read its set and compute the exact similarity.
    Verify,
    /// Its set size makes the threshold unreachable (exact).
    Length,
    /// Its signature agrees too little (probabilistic, see [`prune_margin`]).
    Signature,
}

/// Judges a candidate by its signature record: sizes that make `t`
/// unreachable (J ≤ min/max) prune exactly; an agreement estimate more
/// than `margin` below `t` prunes where the estimate is reliable (the
/// permutation scheme, or both sets at least as large as the signature).
#[allow(clippy::too_many_arguments)]
fn judge(
    set_len: u32,
    values: &[u32],
    signature: &[u32],
    query_len: usize,
    t: f64,
    margin: f64,
    exact_estimates: bool,
) -> Verdict {
    let n = signature.len();
    let len = set_len as usize;
    let (small, large) = (query_len.min(len), query_len.max(len));
    if (small as f64) < t * large as f64 {
        return Verdict::Length;
    }
    // Records of format 3 hold no values (`values` is empty): no estimate.
    if n > 0 && values.len() == n && (exact_estimates || small >= n) {
        let estimate = agreements(signature, values) as f64 / n as f64;
        if estimate < t - margin {
            return Verdict::Signature;
        }
    }
    Verdict::Verify
}

/// The similarity of a candidate held in memory (its set) to the query,
/// decided exactly as [`verify`] decides a stored one of the current
/// format: `Some` when it is at `t` or above; with `prune`, sizes that make
/// `t` unreachable are pruned first. Signatures are not consulted: a stored
/// record holds none, and a candidate must not be lost in memory (an
/// estimate 4σ low) that would be found once written, so that a dedup's
/// decisions do not depend on when its held documents are written.
pub(crate) fn verify_in_memory(
    pipeline: &Pipeline,
    (set, signature): (&[u32], &[u32]),
    (other_set, _): (&[u32], &[u32]),
    t: f64,
    prune: bool,
) -> Option<f64> {
    let verdict = if prune {
        judge(
            other_set.len() as u32,
            &[],
            signature,
            set.len(),
            t,
            prune_margin(t, pipeline.num_perm()),
            pipeline.is_permutation_scheme(),
        )
    } else {
        Verdict::Verify
    };
    match verdict {
        Verdict::Verify => jaccard_at_least(set, other_set, t),
        _ => None,
    }
}

/// Four standard deviations of a MinHash estimate near threshold `t` with
/// `n` values (the deviation √(J(1−J)/n) is largest at J = max(t, ½)).
pub fn prune_margin(t: f64, n: usize) -> f64 {
    let j = t.max(0.5);
    4.0 * (j * (1.0 - j) / n as f64).sqrt()
}

/// Turns planner hits into keyed [`Hit`]s, in the same order. Keys are
/// read in id order, so a [`crate::store::walk::Walker`] steps instead of
/// seeking.
pub fn resolve(reader: &impl Reader, hits: Vec<(u64, f64)>) -> Result<Vec<Hit>> {
    let mut by_id: Vec<usize> = (0..hits.len()).collect();
    by_id.sort_by_key(|&i| hits[i].0);
    let mut keys = vec![None; hits.len()];
    for i in by_id {
        let id = hits[i].0;
        let key = reader.key(id)?.ok_or_else(|| {
            crate::Error::corrupted(format!("posting points at missing document {id}"))
        })?;
        keys[i] = Some(key);
    }
    Ok(hits
        .into_iter()
        .zip(keys)
        .map(|((_, similarity), key)| Hit {
            key: key.map(|k| k.to_string()).unwrap_or_default(),
            similarity,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A held candidate is verified on its set alone: signatures that
    /// disagree everywhere do not prune an identical set, and sizes out of
    /// reach still do.
    #[test]
    fn held_candidates_are_verified_exactly_whatever_their_signatures() {
        let settings = crate::config::Config::jaccard(0.8).resolve().unwrap();
        let pipeline = Pipeline::new(&settings).unwrap();
        let set: Vec<u32> = (0..200).collect();
        let (ours, theirs) = (vec![1u32; 128], vec![2u32; 128]);
        let found = verify_in_memory(&pipeline, (&set, &ours), (&set, &theirs), 0.8, true);
        assert_eq!(found, Some(1.0));
        let small: Vec<u32> = (0..100).collect();
        let pruned = verify_in_memory(&pipeline, (&set, &ours), (&small, &ours), 0.8, true);
        assert_eq!(pruned, None);
    }
}
