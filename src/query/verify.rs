//! Verification: a candidate's exact Jaccard similarity to the query set,
//! after the exact size bound and, where it is reliable, the signature
//! estimate have had their say (the planner's module comment says when
//! each prunes). Shared by the planner, top-k, pairs and the maintained
//! clusters; [`verify_in_memory`] decides a held document exactly as
//! [`verify`] decides a stored one.

use super::plan::Explain;
use crate::pipeline::Pipeline;
use crate::sketch::measures::jaccard_at_least;
use crate::sketch::minhash::agreements;
use crate::store::tables::Reader;
use crate::Result;
use std::time::Instant;

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
