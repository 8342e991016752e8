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
use crate::query::plan::Explain;
use crate::query::verify::verify;
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
pub fn search<R: Reader, T: ReadableTable<Posting, ()>>(
    reader: &R,
    table: Option<&T>,
    ensemble: &Ensemble,
    pipeline: &Pipeline,
    sketch: &Sketch,
    k: usize,
    exclude: Option<u64>,
    max_bucket: usize,
) -> Result<(Vec<(u64, f64)>, Explain)> {
    let Some(table) = table else {
        // An index with nothing written yet.
        let explain = Explain {
            forest: true,
            ..Explain::default()
        };
        return Ok((Vec::new(), explain));
    };
    let mut prefixes = Vec::new();
    ensemble.prefixes(&sketch.signature, &mut prefixes);
    let mut search = Search {
        reader,
        table,
        ensemble,
        pipeline,
        sketch,
        k,
        max_bucket,
        classes: classes(table)?,
        prefixes,
        seen: exclude.into_iter().collect(),
        hits: Vec::new(),
        explain: Explain::default(),
        cut: 0,
        lookup: Duration::ZERO,
        verify_time: Duration::ZERO,
    };
    for depth in (1..=ensemble.depth()).rev() {
        let mut counted = search.probe(depth)?;
        // Deeper levels verify every candidate; one value deep, the
        // candidates found in the most trees go first.
        let groups: Vec<Vec<(usize, u64)>> = if depth > 1 {
            vec![counted]
        } else {
            counted.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            counted
                .chunk_by(|a, b| a.0 == b.0)
                .map(<[_]>::to_vec)
                .collect()
        };
        if search.verify_groups(depth, &groups)? {
            break;
        }
    }
    Ok(search.finish())
}

/// One top-k search's state.
struct Search<'a, R, T> {
    reader: &'a R,
    table: &'a T,
    ensemble: &'a Ensemble,
    pipeline: &'a Pipeline,
    sketch: &'a Sketch,
    k: usize,
    max_bucket: usize,
    /// The non-empty size classes.
    classes: Vec<u8>,
    /// The query's key in each tree.
    prefixes: Vec<u64>,
    /// Ids already candidates (and the query's own).
    seen: HashSet<u64>,
    /// The best k verified so far, best first.
    hits: Vec<(u64, f64)>,
    explain: Explain,
    cut: usize,
    lookup: Duration,
    verify_time: Duration,
}

impl<R: Reader, T: ReadableTable<Posting, ()>> Search<'_, R, T> {
    /// Probes every tree at `depth` values in the size classes that can
    /// hold a set as similar as the k-th hit: the new candidates, each
    /// with the number of trees it was found in.
    fn probe(&mut self, depth: usize) -> Result<Vec<(usize, u64)>> {
        let (floor, q) = (kth(&self.hits, self.k), self.sketch.set.len());
        let start = Instant::now();
        let mut candidates = Vec::new();
        let reachable = self
            .classes
            .iter()
            .filter(|&&c| can_reach(self.ensemble, c, q, floor));
        for &class in reachable {
            for (tree, &prefix) in self.prefixes.iter().enumerate() {
                let range = Ensemble::prefix_range(prefix, depth);
                let slot = index::slot(class, tree);
                let cap = self.max_bucket;
                let cut = index::probe(self.table, slot, range, cap, &mut candidates)?;
                self.cut += usize::from(cut);
                self.explain.buckets_probed += 1;
            }
        }
        self.explain.posting_sizes.push(candidates.len());
        candidates.sort_unstable();
        let counted: Vec<(usize, u64)> = candidates
            .chunk_by(|a, b| a == b)
            .filter(|run| !self.seen.contains(&run[0]))
            .map(|run| (run.len(), run[0]))
            .collect();
        self.seen.extend(counted.iter().map(|&(_, id)| id));
        self.explain.candidates += counted.len();
        self.lookup += start.elapsed();
        Ok(counted)
    }

    /// Verifies the candidate `groups` of `depth` in turn; true when the
    /// search may stop (k hits, and the recall estimate at the target).
    fn verify_groups(&mut self, depth: usize, groups: &[Vec<(usize, u64)>]) -> Result<bool> {
        let trees = self.prefixes.len();
        // No new candidates: the estimate still moves to this depth.
        let none = [Vec::new()];
        let groups = if groups.is_empty() { &none[..] } else { groups };
        for (i, group) in groups.iter().enumerate() {
            // Verified at the k-th similarity held so far: what falls
            // below it cannot enter the top k (and sizes that cannot reach
            // it are dropped unread).
            let floor = kth(&self.hits, self.k);
            let ids = group.iter().map(|&(_, id)| id).collect();
            let (set, signature) = (&self.sketch.set, &self.sketch.signature);
            let explain = &mut self.explain;
            let found = verify(
                self.reader,
                self.pipeline,
                set,
                signature,
                ids,
                floor,
                true,
                explain,
            )?;
            self.verify_time += self.explain.verify_time;
            self.hits
                .extend(found.into_iter().filter(|&(_, s)| s > 0.0));
            self.hits
                .sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            self.hits.truncate(self.k);
            // The most trees an unverified candidate was found in.
            let left = groups.get(i + 1).map_or(0, |g| g[0].0);
            let estimate = self.hits.last().map(|&(_, s)| {
                if depth > 1 || left == 0 {
                    candidate_probability(s, trees, depth)
                } else {
                    1.0 - binomial_cdf(trees, s, left)
                }
            });
            self.explain.recall_estimate = estimate;
            if self.hits.len() >= self.k && estimate.is_some_and(|p| p >= TARGET_RECALL) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The hits and the explain record, with its totals.
    fn finish(mut self) -> (Vec<(u64, f64)>, Explain) {
        self.explain.lookup_time = self.lookup;
        self.explain.verify_time = self.verify_time;
        self.explain.returned = self.hits.len();
        self.explain.forest = true;
        if self.cut > 0 {
            self.explain.warnings.push(Warning::ProbesTruncated {
                probes: self.cut,
                max_bucket: self.max_bucket,
            });
        }
        (self.hits, self.explain)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_cdf_sums_the_terms() {
        assert!((binomial_cdf(32, 0.1, 0) - 0.9f64.powi(32)).abs() < 1e-15);
        assert!((binomial_cdf(32, 0.3, 32) - 1.0).abs() < 1e-12);
        // P(X ≤ 1) for n = 4, p = 0.5: (1 + 4) / 16.
        assert!((binomial_cdf(4, 0.5, 1) - 5.0 / 16.0).abs() < 1e-15);
        assert_eq!(binomial_cdf(4, 1.0, 3), 0.0);
        assert_eq!(binomial_cdf(4, 1.0, 4), 1.0);
    }

    #[test]
    fn size_classes_outside_the_jaccard_bound_are_skipped() {
        let e = Ensemble::for_num_perm(128).unwrap();
        // J ≥ 0.5 with 100 elements needs 50 to 200 elements.
        assert!(can_reach(&e, e.class_of(100), 100, 0.5));
        assert!(can_reach(&e, e.class_of(60), 100, 0.5));
        assert!(!can_reach(&e, e.class_of(20), 100, 0.5));
        assert!(!can_reach(&e, e.class_of(1000), 100, 0.5));
        assert!(can_reach(&e, e.class_of(1000), 100, 0.0));
    }
}
