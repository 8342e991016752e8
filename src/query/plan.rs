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
//! its set size and MinHash signature (read only where the estimate may
//! prune; otherwise the size filter runs on the set itself). Sizes that make the threshold
//! unreachable (J ≤ min/max) are pruned exactly. When the signature estimate
//! is reliable (the permutation scheme, or sets at least as large as the
//! signature under one-permutation hashing), candidates whose estimate is
//! more than four standard deviations below the threshold are pruned too —
//! a true hit is lost that way with probability below 10⁻⁴.

use crate::db::prepare::{Pipeline, Sketch};
use crate::query::Hit;
use crate::sketch::measures::jaccard;
use crate::sketch::minhash::agreements;
use crate::store::codec::SignatureRecord;
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
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            threshold: 0.5,
            limit: None,
            exclude: None,
            prune: true,
            max_bucket: DEFAULT_MAX_BUCKET,
        }
    }
}

/// A bucket whose posting list was cut at the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncatedBucket {
    /// The band.
    pub band: usize,
    /// Postings read before the cut.
    pub read: usize,
}

/// What each step of a query did and cost.
#[derive(Debug, Clone, Default)]
pub struct Explain {
    /// Buckets looked up (one per band).
    pub buckets_probed: usize,
    /// Postings read from each band's bucket, in band order.
    pub posting_sizes: Vec<usize>,
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
    /// Time pruning.
    pub prune_time: Duration,
    /// Time verifying.
    pub verify_time: Duration,
    /// Things the caller should know (truncated buckets, reduced recall).
    pub warnings: Vec<String>,
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

    let start = Instant::now();
    let mut candidates = Vec::new();
    for (band, &key) in sketch.band_keys.iter().enumerate() {
        let before = candidates.len();
        let cut = reader.postings(
            Postings::Buckets,
            band as u32,
            key,
            None,
            options.max_bucket,
            &mut candidates,
        )?;
        let read = candidates.len() - before;
        explain.posting_sizes.push(read);
        if cut {
            explain
                .truncated_buckets
                .push(TruncatedBucket { band, read });
        }
    }
    explain.buckets_probed = sketch.band_keys.len();
    candidates.sort_unstable();
    candidates.dedup();
    if let Some(own) = options.exclude {
        candidates.retain(|&id| id != own);
    }
    explain.candidates = candidates.len();
    explain.lookup_time = start.elapsed();

    let start = Instant::now();
    let n = pipeline.num_perm();
    let exact_estimates = pipeline.is_permutation_scheme();
    let query_len = sketch.set.len();
    // A candidate's signature record is worth a read only where its
    // estimate may prune: with one-permutation hashing and a query set
    // smaller than the signature it never may, so the size filter then runs
    // on the set read for verification instead (one read per candidate, not
    // two).
    let read_signatures = options.prune && (exact_estimates || query_len >= n);
    if read_signatures {
        let mut record = SignatureRecord::default();
        let mut kept = Vec::with_capacity(candidates.len());
        for id in candidates {
            if !reader.signature_into(id, &mut record)? {
                continue; // removed concurrently within this transaction: nothing to verify
            }
            let len = record.set_len as usize;
            let (small, large) = (query_len.min(len), query_len.max(len));
            if (small as f64) < t * large as f64 {
                explain.pruned_by_length += 1;
                continue;
            }
            if exact_estimates || small >= n {
                let estimate = agreements(&sketch.signature, &record.values) as f64 / n as f64;
                if estimate < t - prune_margin(t, n) {
                    explain.pruned_by_signature += 1;
                    continue;
                }
            }
            kept.push(id);
        }
        candidates = kept;
    }
    explain.prune_time = start.elapsed();

    let start = Instant::now();
    let mut hits = Vec::new();
    let mut set = Vec::new();
    for id in candidates {
        if !reader.set_into(id, &mut set)? {
            continue;
        }
        if options.prune && !read_signatures {
            let (small, large) = (query_len.min(set.len()), query_len.max(set.len()));
            if (small as f64) < t * large as f64 {
                explain.pruned_by_length += 1;
                continue;
            }
        }
        explain.verified += 1;
        let similarity = jaccard(&sketch.set, &set);
        if similarity >= t {
            hits.push((id, similarity));
        }
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if let Some(limit) = options.limit {
        hits.truncate(limit);
    }
    explain.returned = hits.len();
    explain.verify_time = start.elapsed();

    if !explain.truncated_buckets.is_empty() {
        explain.warnings.push(format!(
            "{} bucket(s) held more than {} documents and were cut there; \
             raise max_bucket for an exhaustive answer",
            explain.truncated_buckets.len(),
            options.max_bucket
        ));
    }
    Ok(Planned { hits, explain })
}

/// Four standard deviations of a MinHash estimate near threshold `t` with
/// `n` values (the deviation √(J(1−J)/n) is largest at J = max(t, ½)).
pub fn prune_margin(t: f64, n: usize) -> f64 {
    let j = t.max(0.5);
    4.0 * (j * (1.0 - j) / n as f64).sqrt()
}

/// Turns planner hits into keyed [`Hit`]s.
pub fn resolve(reader: &impl Reader, hits: Vec<(u64, f64)>) -> Result<Vec<Hit>> {
    hits.into_iter()
        .map(|(id, similarity)| {
            let doc = reader.doc(id)?.ok_or_else(|| {
                crate::Error::corrupted(format!("posting points at missing document {id}"))
            })?;
            Ok(Hit {
                key: doc.key,
                similarity,
            })
        })
        .collect()
}
