//! The single-hash (bottom-k) MinHash variant.
//!
//! One hash function g; the sketch of a set is its k smallest g-values,
//! ascending. The Jaccard estimate (Broder 1997) looks at the k smallest
//! values of the union of two sketches and counts those present in both.
//! Sets with at most k elements keep all their values, so their estimate is
//! exact. Bottom-k sketches are not positional, so they serve estimation and
//! pruning but not LSH banding.

use crate::hash::{fmix32, SplitMix64};
use std::cmp::Ordering;

/// A bottom-k sketcher: g(x) = fmix32(x ⊕ key), a bijection on u32, so
/// distinct shingles keep distinct values.
///
/// ```
/// use lshdb::sketch::bottomk::BottomK;
/// let bk = BottomK::new(128, 7);
/// let a: Vec<u32> = (0..1000).collect();
/// let b: Vec<u32> = (500..1500).collect(); // Jaccard 500/1500
/// let e = BottomK::estimate(&bk.sketch(&a), &bk.sketch(&b), 128);
/// assert!((e - 0.333).abs() < 0.15);
/// ```
#[derive(Debug, Clone)]
pub struct BottomK {
    k: usize,
    key: u32,
}

impl BottomK {
    /// A sketcher keeping `k` values (at least 1); the key is the low 32 bits
    /// of the first `SplitMix64` output for `seed`.
    pub fn new(k: usize, seed: u64) -> Self {
        Self {
            k: k.max(1),
            key: SplitMix64::new(seed).next_u64() as u32,
        }
    }

    /// The sketch size k.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The k smallest g-values of `set` (distinct elements), ascending.
    pub fn sketch(&self, set: &[u32]) -> Vec<u32> {
        let mut values: Vec<u32> = set.iter().map(|&x| fmix32(x ^ self.key)).collect();
        if values.len() > self.k {
            values.select_nth_unstable(self.k - 1);
            values.truncate(self.k);
        }
        values.sort_unstable();
        values.dedup();
        values
    }

    /// Broder's estimate of Jaccard similarity from two sketches of size
    /// `k`: among the k smallest values of their union, the fraction found
    /// in both. Two empty sketches estimate 0.
    pub fn estimate(a: &[u32], b: &[u32], k: usize) -> f64 {
        let (mut i, mut j, mut union, mut both) = (0, 0, 0usize, 0usize);
        while union < k && (i < a.len() || j < b.len()) {
            let order = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.cmp(y),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
            }
            union += 1;
        }
        if union == 0 {
            0.0
        } else {
            both as f64 / union as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::measures::jaccard;

    #[test]
    fn small_sets_are_estimated_exactly() {
        let bk = BottomK::new(64, 1);
        let a: Vec<u32> = (0..30).collect();
        let b: Vec<u32> = (10..50).collect();
        let e = BottomK::estimate(&bk.sketch(&a), &bk.sketch(&b), 64);
        assert_eq!(e, jaccard(&a, &b));
    }

    #[test]
    fn sketch_keeps_k_smallest_ascending() {
        let bk = BottomK::new(8, 1);
        let set: Vec<u32> = (0..100).collect();
        let s = bk.sketch(&set);
        assert_eq!(s.len(), 8);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<u32> = set.iter().map(|&x| fmix32(x ^ bk.key)).collect();
        all.sort_unstable();
        assert_eq!(s, all[..8]);
    }

    #[test]
    fn empty_and_identical() {
        let bk = BottomK::new(16, 2);
        assert_eq!(BottomK::estimate(&[], &[], 16), 0.0);
        let s = bk.sketch(&[5, 6, 7]);
        assert_eq!(BottomK::estimate(&s, &s, 16), 1.0);
    }
}
