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

use super::verify::verify;
use crate::pipeline::{Pipeline, Sketch};
use crate::query::{Hit, Warning};
use crate::store::probe::Probe;
use crate::store::tables::{Postings, Reader};
use crate::Result;
use std::collections::HashSet;
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
    /// Stop at the first candidate at the threshold (dedup-on-write's
    /// [`crate::DuplicateOf::First`]): bands in order, each band's new
    /// candidates in id order, verified as they come, so that a document
    /// with a near-duplicate reads the buckets up to the one that holds it
    /// and verifies little more. The answer exists exactly when the
    /// exhaustive plan's does. Ignored by top-k.
    pub first_found: bool,
}

/// Dedup-on-write's [`PlanOptions::first_over`]: verifying more
/// candidates than this to pick the most similar near-duplicate is not
/// worth it.
pub const FIRST_OVER: usize = 256;

impl PlanOptions {
    /// The plan of dedup-on-write at `threshold`: the best near-duplicate,
    /// or in hot buckets the first verified one ([`FIRST_OVER`]); with
    /// `first_found`, the first one found ([`PlanOptions::first_found`]).
    pub fn dedup(threshold: f64, first_found: bool) -> Self {
        Self {
            threshold,
            limit: Some(1),
            first_over: Some(FIRST_OVER),
            first_found,
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
            first_found: false,
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

    if options.first_found && options.top.is_none() {
        let hits = first_found(reader, pipeline, sketch, options, &mut explain)?;
        explain.returned = hits.len();
        return Ok(Planned { hits, explain });
    }
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

/// [`PlanOptions::first_found`]'s plan: the buckets of the query's bands
/// in band order, each one's candidates not seen in an earlier band
/// verified in id order, up to the first at the threshold. Reads the same
/// buckets (and cuts them at the same `max_bucket`) as
/// [`collect_candidates`], so it finds a candidate exactly when the
/// exhaustive plan does.
fn first_found(
    reader: &impl Reader,
    pipeline: &Pipeline,
    sketch: &Sketch,
    options: &PlanOptions,
    explain: &mut Explain,
) -> Result<Vec<(u64, f64)>> {
    let start = Instant::now();
    let bands = match options.threshold >= 1.0 {
        true => 1, // identical sets share band 0's bucket (`collect_candidates`)
        false => sketch.band_keys.len(),
    };
    let mut seen = HashSet::new();
    let mut bucket = Vec::new();
    for (band, &key) in sketch.band_keys.iter().enumerate().take(bands) {
        if band < 64 && options.bands & (1 << band) == 0 {
            continue;
        }
        explain.buckets_probed += 1;
        bucket.clear();
        let probe = Probe::all(band as u32, key, options.max_bucket);
        if reader
            .index()
            .postings(Postings::Buckets, probe, &mut bucket)?
        {
            let read = bucket.len();
            explain
                .truncated_buckets
                .push(TruncatedBucket { band, read });
        }
        bucket.sort_unstable();
        bucket.dedup();
        for &id in &bucket {
            if Some(id) == options.exclude || !seen.insert(id) {
                continue;
            }
            explain.candidates += 1;
            if let Some(hit) = verify_one(reader, pipeline, sketch, id, options, explain)? {
                explain.lookup_time += start.elapsed().saturating_sub(explain.verify_time);
                return Ok(vec![hit]);
            }
        }
    }
    explain.lookup_time += start.elapsed().saturating_sub(explain.verify_time);
    Ok(Vec::new())
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
    for (id, _) in candidates {
        if let Some(hit) = verify_one(reader, pipeline, sketch, id, options, explain)? {
            return Ok(vec![hit]);
        }
    }
    Ok(Vec::new())
}

/// Verifies candidate `id` against the query: `Some` when it is at the
/// threshold or above.
fn verify_one(
    reader: &impl Reader,
    pipeline: &Pipeline,
    sketch: &Sketch,
    id: u64,
    options: &PlanOptions,
    explain: &mut Explain,
) -> Result<Option<(u64, f64)>> {
    let (set, signature) = (&sketch.set, &sketch.signature);
    let (t, prune) = (options.threshold, options.prune);
    let hits = verify(
        reader,
        pipeline,
        set,
        signature,
        vec![id],
        t,
        prune,
        explain,
    )?;
    Ok(hits.into_iter().next())
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
