//! Top-k over the prefix forest (the containment index, LSH Forest):
//! multi-resolution probing, from the longest shared prefix down.
//!
//! The bands of a database are tuned for its threshold (16 × 8 at 0.8): a
//! document at similarity 0.3 shares a band with the query with
//! probability 1 − (1 − 0.3⁸)¹⁶ ≈ 0.001, and the 10 nearest neighbours of
//! most documents lie between 0.2 and 0.5. The forest keys each document
//! by `trees` prefixes of `depth` MinHash values (32 × 4 with 128 values),
//! one per size class, and a probe of r ≤ depth values is a range scan, so
//! one index answers every band width: at r values a document at
//! similarity s shares some probed prefix with probability
//! P_r(s) = 1 − (1 − s^r)^trees (0.95 at s = 0.3 with r = 2, 0.999 at
//! s = 0.2 with r = 1).
//!
//! The search probes depth `depth` first, verifies the new candidates
//! against their stored sets, and stops once it holds k hits whose k-th
//! similarity s_k gives P_r(s_k) ≥ [`TARGET_RECALL`]; otherwise it probes
//! one value shallower (more candidates), down to one value.
//!
//! **One value deep** a probe shares a single MinHash value, so many
//! documents (a third of a corpus whose neighbours lie near 0.1) become
//! candidates. A document at similarity s is found in X ~ Binomial(trees,
//! s) of the trees, so the candidates found in the most trees are verified
//! first, a group of equal counts at a time, and the search stops once the
//! documents still unverified, found in at most m trees, hide one at s_k
//! with probability P(X ≤ m) ≤ 1 − [`TARGET_RECALL`]; the recall estimate
//! is then P(X > m). Once k hits
//! are held, only the size classes that can hold a set at similarity s_k
//! (sizes in [s_k·q, q/s_k]) are probed, and candidates too small or too
//! large for s_k are dropped by size before their sets are read. Every
//! document at least as similar as the k-th hit is found with probability
//! P_r(s_k) at the depth where the search stopped, which the explain
//! record reports as `recall_estimate`.

use crate::pipeline::{Pipeline, Sketch};
use crate::query::plan::{verify, Explain};
use crate::query::Warning;
use crate::sketch::ensemble::Ensemble;
use crate::sketch::lsh::candidate_probability;
use crate::store::containment::{self as index, Posting};
use crate::store::tables::Reader;
use crate::Result;
use redb::ReadableTable;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The search stops at the deepest prefix where a document as similar as
/// the k-th hit is found with at least this probability.
pub const TARGET_RECALL: f64 = 0.99;

/// Top-`k` of the query `sketch` (its own document `exclude` left out)
/// over the forest `table`: verified (id, similarity) pairs, best first
/// (ties by id), and the explain record.
#[allow(clippy::too_many_arguments)]
pub fn search(
    reader: &impl Reader,
    table: Option<&impl ReadableTable<Posting, ()>>,
    ensemble: &Ensemble,
    pipeline: &Pipeline,
    sketch: &Sketch,
    k: usize,
    exclude: Option<u64>,
    max_bucket: usize,
) -> Result<(Vec<(u64, f64)>, Explain)> {
    let mut explain = Explain::default();
    let mut hits: Vec<(u64, f64)> = Vec::new();
    let Some(table) = table else {
        return Ok((hits, explain)); // an index with nothing written yet
    };
    let classes = classes(table)?;
    let mut prefixes = Vec::new();
    ensemble.prefixes(&sketch.signature, &mut prefixes);
    let q = sketch.set.len();
    let mut seen: HashSet<u64> = exclude.into_iter().collect();
    let (mut lookup, mut verify_time, mut cut) = (Duration::ZERO, Duration::ZERO, 0);
    for depth in (1..=ensemble.depth()).rev() {
        let floor = kth(&hits, k);
        let start = Instant::now();
        let mut candidates = Vec::new();
        for &class in classes
            .iter()
            .filter(|&&c| can_reach(ensemble, c, q, floor))
        {
            for (tree, &prefix) in prefixes.iter().enumerate() {
                let range = Ensemble::prefix_range(prefix, depth);
                let slot = index::slot(class, tree);
                let cap = max_bucket;
                cut += usize::from(index::probe(table, slot, range, cap, &mut candidates)?);
                explain.buckets_probed += 1;
            }
        }
        explain.posting_sizes.push(candidates.len());
        // Each candidate with the number of trees it was found in.
        candidates.sort_unstable();
        let mut counted: Vec<(usize, u64)> = candidates
            .chunk_by(|a, b| a == b)
            .filter(|run| !seen.contains(&run[0]))
            .map(|run| (run.len(), run[0]))
            .collect();
        seen.extend(counted.iter().map(|&(_, id)| id));
        explain.candidates += counted.len();
        lookup += start.elapsed();
        // Deeper levels verify every candidate; one value deep, the
        // candidates found in the most trees go first (see `by_count`).
        let groups: Vec<Vec<(usize, u64)>> = if depth > 1 {
            vec![counted]
        } else {
            counted.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            counted
                .chunk_by(|a, b| a.0 == b.0)
                .map(<[_]>::to_vec)
                .collect()
        };
        let trees = prefixes.len();
        let mut estimate = None;
        for (i, group) in groups.iter().enumerate() {
            // Verified at the k-th similarity held so far: what falls
            // below it cannot enter the top k (and sizes that cannot reach
            // it are dropped unread).
            let floor = kth(&hits, k);
            let ids = group.iter().map(|&(_, id)| id).collect();
            let found = verify(
                reader,
                pipeline,
                &sketch.set,
                &sketch.signature,
                ids,
                floor,
                true,
                &mut explain,
            )?;
            verify_time += explain.verify_time;
            hits.extend(found.into_iter().filter(|&(_, s)| s > 0.0));
            hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            hits.truncate(k);
            // The most trees an unverified candidate was found in.
            let left = groups.get(i + 1).map_or(0, |g| g[0].0);
            estimate = hits.last().map(|&(_, s)| {
                if depth > 1 || left == 0 {
                    candidate_probability(s, trees, depth)
                } else {
                    1.0 - binomial_cdf(trees, s, left)
                }
            });
            if depth == 1 && hits.len() >= k && estimate.is_some_and(|p| p >= TARGET_RECALL) {
                break;
            }
        }
        explain.recall_estimate = estimate;
        if hits.len() >= k && estimate.is_some_and(|p| p >= TARGET_RECALL) {
            break;
        }
    }
    explain.lookup_time = lookup;
    explain.verify_time = verify_time;
    explain.returned = hits.len();
    if cut > 0 {
        explain.warnings.push(Warning::ProbesTruncated {
            probes: cut,
            max_bucket,
        });
    }
    Ok((hits, explain))
}

/// P(X ≤ m) for X ~ Binomial(n, p): the probability that a document at
/// similarity p shares the first value of at most m of n trees.
fn binomial_cdf(n: usize, p: f64, m: usize) -> f64 {
    if p >= 1.0 {
        return if m >= n { 1.0 } else { 0.0 };
    }
    let mut term = (1.0 - p).powi(n as i32); // P(X = 0)
    let mut sum = term;
    for i in 1..=m.min(n) {
        term *= (n - i + 1) as f64 / i as f64 * p / (1.0 - p);
        sum += term;
    }
    sum.min(1.0)
}

/// The k-th similarity of `hits` (sorted, best first), or 0 with fewer.
fn kth(hits: &[(u64, f64)], k: usize) -> f64 {
    if k > 0 && hits.len() >= k {
        hits[k - 1].1
    } else {
        0.0
    }
}

/// Whether size class `class` can hold a set at Jaccard similarity
/// `floor` or more with a query of `q` elements: J ≤ min/max of the sizes,
/// so its sizes must meet [floor·q, q/floor].
fn can_reach(ensemble: &Ensemble, class: u8, q: usize, floor: f64) -> bool {
    if floor <= 0.0 {
        return true;
    }
    let (low, high) = ensemble.class_bounds(class);
    let q = q as f64;
    high as f64 >= floor * q && low as f64 <= q / floor
}

/// The non-empty size classes of the forest, ascending.
fn classes(table: &impl ReadableTable<Posting, ()>) -> Result<Vec<u8>> {
    let mut found = Vec::new();
    let mut class = 0u8;
    while let Some(next) = index::next_class(table, class)? {
        found.push(next);
        match next.checked_add(1) {
            Some(after) => class = after,
            None => break,
        }
    }
    Ok(found)
}
