//! Exact similarity measures on sorted hashed sets and bags.
//!
//! Every function takes ascending slices and walks them once (a linear-time
//! merge). Sets must be distinct values ([`ShingleSet`](crate::shingle::ShingleSet)
//! guarantees it); bags keep repeats adjacent
//! ([`ShingleBag`](crate::shingle::ShingleBag)). These are the numbers the
//! query planner verifies candidates with: what lshdb reports as a similarity
//! is computed here, never estimated.

/// |A ∩ B| for ascending slices. On bags, each common value counts
/// min(multiplicity in A, multiplicity in B) times.
///
/// ```
/// assert_eq!(lshdb::sketch::measures::intersection_size(&[1, 2, 3, 5], &[2, 3, 4, 5]), 3);
/// ```
pub fn intersection_size(a: &[u32], b: &[u32]) -> usize {
    // Branch-free merge: which side advances depends on data the CPU
    // cannot predict, so arithmetic on comparison results beats a `match`
    // (about 2× on sets of a few hundred hashes).
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    common
}

/// Jaccard similarity |A ∩ B| / |A ∪ B| of two sorted sets of distinct
/// values. Two empty sets have similarity 0 (they share nothing to compare).
///
/// ```
/// use lshdb::sketch::measures::jaccard;
/// assert_eq!(jaccard(&[1, 2, 3, 4], &[3, 4, 5, 6]), 2.0 / 6.0);
/// assert_eq!(jaccard(&[1, 2], &[1, 2]), 1.0);
/// ```
pub fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    let common = intersection_size(a, b);
    let union = a.len() + b.len() - common;
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// [`jaccard`]`(a, b)` when it is at least `t`, `None` otherwise — found
/// sooner: J ≥ t needs |A ∩ B| ≥ t·(|A| + |B|)/(1 + t), so the merge stops
/// as soon as the common values found plus those still possible fall
/// short. Verifying a candidate that misses the threshold then costs a
/// fraction of a full merge.
///
/// ```
/// use lshdb::sketch::measures::{jaccard, jaccard_at_least};
/// let (a, b) = ([1, 2, 3, 4], [3, 4, 5, 6]);
/// assert_eq!(jaccard_at_least(&a, &b, 0.3), Some(jaccard(&a, &b)));
/// assert_eq!(jaccard_at_least(&a, &b, 0.5), None);
/// ```
pub fn jaccard_at_least(a: &[u32], b: &[u32], t: f64) -> Option<f64> {
    /// Merge steps between two checks of the bound.
    const STRIDE: usize = 32;
    let total = a.len() + b.len();
    // Slightly below the exact bound, so rounding never stops a merge
    // that would reach t; the final comparison is jaccard()'s own.
    let need = (t * total as f64 / (1.0 + t) * (1.0 - 1e-9)).floor() as usize;
    // Two merges at once, of the values below 2³¹ and of those above: each
    // merge step waits on the one before (load, compare, advance), so two
    // independent chains keep the CPU busier (about 1.3× on sets of a few
    // hundred hashes, which are uniform, so the halves are even).
    let (a0, a1) = a.split_at(a.partition_point(|&x| x < 1 << 31));
    let (b0, b1) = b.split_at(b.partition_point(|&x| x < 1 << 31));
    let (mut i0, mut j0, mut i1, mut j1) = (0, 0, 0, 0);
    let mut common = 0;
    while i0 < a0.len() && j0 < b0.len() && i1 < a1.len() && j1 < b1.len() {
        let reachable = (a0.len() - i0).min(b0.len() - j0) + (a1.len() - i1).min(b1.len() - j1);
        if common + reachable < need {
            return None;
        }
        for _ in 0..STRIDE {
            if i0 == a0.len() || j0 == b0.len() || i1 == a1.len() || j1 == b1.len() {
                break;
            }
            let (x0, y0, x1, y1) = (a0[i0], b0[j0], a1[i1], b1[j1]);
            common += usize::from(x0 == y0) + usize::from(x1 == y1);
            i0 += usize::from(x0 <= y0);
            j0 += usize::from(y0 <= x0);
            i1 += usize::from(x1 <= y1);
            j1 += usize::from(y1 <= x1);
        }
    }
    common += intersection_size(&a0[i0..], &b0[j0..]) + intersection_size(&a1[i1..], &b1[j1..]);
    let union = total - common;
    let similarity = if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    };
    (similarity >= t).then_some(similarity)
}

/// Jaccard distance, 1 − [`jaccard`].
pub fn jaccard_distance(a: &[u32], b: &[u32]) -> f64 {
    1.0 - jaccard(a, b)
}

/// Bag (multiset) Jaccard with the textbook definition: the intersection
/// counted with multiplicity, divided by |A| + |B| (so its maximum is 1/2).
///
/// ```
/// use lshdb::sketch::measures::bag_jaccard;
/// // {a,a,a,b} vs {a,a,b,b,c} → 3/9
/// let (a, b, c) = (1, 2, 3);
/// assert_eq!(bag_jaccard(&[a, a, a, b], &[a, a, b, b, c]), 1.0 / 3.0);
/// ```
pub fn bag_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        0.0
    } else {
        intersection_size(a, b) as f64 / total as f64
    }
}

/// Containment of A in B, |A ∩ B| / |A|: how much of A is found in B. An
/// empty A has containment 0.
///
/// ```
/// use lshdb::sketch::measures::containment;
/// assert_eq!(containment(&[1, 2], &[1, 2, 3, 4]), 1.0);
/// assert_eq!(containment(&[1, 2, 3, 4], &[1, 2]), 0.5);
/// ```
pub fn containment(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() {
        0.0
    } else {
        intersection_size(a, b) as f64 / a.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_basics() {
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(jaccard(&[1], &[]), 0.0);
        assert_eq!(jaccard(&[1, 2, 3], &[4, 5]), 0.0);
        assert_eq!(jaccard(&[1, 2, 3], &[1, 2, 3]), 1.0);
        assert_eq!(jaccard_distance(&[1, 2, 3], &[1, 2, 3]), 0.0);
        assert!((jaccard_distance(&[1, 2, 3, 4], &[3, 4, 5, 6]) - 4.0 / 6.0).abs() < 1e-15);
        // Symmetric.
        assert_eq!(
            jaccard(&[1, 5, 9], &[5, 9, 10, 11]),
            jaccard(&[5, 9, 10, 11], &[1, 5, 9])
        );
    }

    #[test]
    fn early_exit_agrees_with_the_full_merge() {
        // Overlapping random sets of many sizes, at thresholds that include
        // each pair's exact similarity (the boundary must count as a hit).
        let mut rng = crate::hash::SplitMix64::new(7);
        for round in 0..2000 {
            let universe = 8 + (rng.next_u64() % 400) as u32;
            let pick = |rng: &mut crate::hash::SplitMix64, keep: u64| -> Vec<u32> {
                // Spread over the whole u32 range, so both halves of the
                // two-lane merge see values.
                (0..universe)
                    .filter(|_| rng.next_u64() % 100 < keep)
                    .map(|v| v * 10_000_019)
                    .collect()
            };
            let (ka, kb) = (rng.next_u64() % 100, rng.next_u64() % 100);
            let (a, b) = (pick(&mut rng, ka), pick(&mut rng, kb));
            let exact = jaccard(&a, &b);
            for t in [1e-9, 0.1, 0.3, 0.5, 0.8, 0.95, 1.0, exact] {
                if t <= 0.0 {
                    continue;
                }
                let expected = (exact >= t).then_some(exact);
                assert_eq!(jaccard_at_least(&a, &b, t), expected, "round {round} t {t}");
                assert_eq!(jaccard_at_least(&b, &a, t), expected, "round {round} t {t}");
            }
        }
        assert_eq!(jaccard_at_least(&[], &[], 0.5), None);
        assert_eq!(jaccard_at_least(&[1, 2], &[1, 2], 1.0), Some(1.0));
    }

    #[test]
    fn textbook_bag_jaccard() {
        let (a, b, c) = (10, 20, 30);
        assert_eq!(intersection_size(&[a, a, a, b], &[a, a, b, b, c]), 3);
        assert_eq!(bag_jaccard(&[a, a, a, b], &[a, a, b, b, c]), 1.0 / 3.0);
        // Plain Jaccard of the underlying sets would be 2/3; of the bags 3/6.
        assert_eq!(jaccard(&[a, b], &[a, b, c]), 2.0 / 3.0);
        assert_eq!(bag_jaccard(&[a, b], &[a, b]), 0.5);
        assert_eq!(bag_jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn containment_is_asymmetric() {
        assert_eq!(containment(&[], &[1]), 0.0);
        assert_eq!(containment(&[1, 2, 3], &[2, 3]), 2.0 / 3.0);
        assert_eq!(containment(&[2, 3], &[1, 2, 3]), 1.0);
    }

    #[test]
    fn merge_matches_naive_on_random_sets() {
        let mut rng = crate::hash::SplitMix64::new(42);
        for _ in 0..200 {
            let mut a: Vec<u32> = (0..rng.next_u64() % 60)
                .map(|_| (rng.next_u64() % 100) as u32)
                .collect();
            let mut b: Vec<u32> = (0..rng.next_u64() % 60)
                .map(|_| (rng.next_u64() % 100) as u32)
                .collect();
            a.sort_unstable();
            a.dedup();
            b.sort_unstable();
            b.dedup();
            let naive = a.iter().filter(|x| b.contains(x)).count();
            assert_eq!(intersection_size(&a, &b), naive);
        }
    }
}
