//! One-permutation hashing (OPH) with optimal densification.
//!
//! Instead of n hash functions per element, one 64-bit hash per element
//! picks a bin (high 32 bits, mapped to 0..n by multiply-shift) and a value
//! (low 32 bits); each bin keeps its minimum value. Bins that no element
//! reached are filled by optimal densification (Shrivastava, ICML 2017):
//! empty bin j probes bins g(j, 1), g(j, 2), … with a fixed hash g until it
//! finds a bin that was filled by an element, and copies its value. Every
//! position then agrees between two sets with probability equal to their
//! Jaccard similarity, so [`crate::sketch::minhash::estimate`] and LSH
//! banding apply unchanged, at O(n + |set|) cost instead of O(n·|set|).
//!
//! The probe sequence g(j, 1), g(j, 2), … depends on the bin and the seed
//! only, not on the set: its first 32 steps are computed once
//! per hasher, and a short text (most bins empty) looks them up instead of
//! hashing them. The signature is the same either way (a test compares).

use crate::hash::{mix64, SplitMix64};
use crate::sketch::minhash::EMPTY;

/// Probes per empty bin before densification falls back to a linear scan
/// (never reached in practice: expected probes are n / filled bins).
const MAX_PROBES_PER_BIN: u32 = 1 << 16;

/// Probes per bin kept in [`OnePermutation`]'s table. With k of n bins
/// filled, an empty bin needs more with probability (1 − k/n)^32: 1 % for
/// a 20-shingle text at n = 128.
const TABLE_PROBES: usize = 32;

/// Bins up to which the probe table is kept (as u16: 8 KiB at n = 128).
const TABLE_MAX_BINS: usize = 4096;

/// One-permutation hashing with `n` bins.
///
/// ```
/// use lshdb::sketch::{minhash::estimate, oph::OnePermutation};
/// let oph = OnePermutation::new(128, 1);
/// let a: Vec<u32> = (0..500).collect();
/// let b: Vec<u32> = (100..600).collect(); // Jaccard 400/600
/// let mut sa = Vec::new();
/// let mut sb = Vec::new();
/// oph.signature_into(&a, &mut sa);
/// oph.signature_into(&b, &mut sb);
/// assert!((estimate(&sa, &sb) - 0.667).abs() < 0.15);
/// ```
#[derive(Debug, Clone)]
pub struct OnePermutation {
    bins: usize,
    element_key: u64,
    probe_key: u64,
    /// `probe(j, a)` for a in 1..=[`TABLE_PROBES`], at `j * TABLE_PROBES +
    /// a - 1`; empty above [`TABLE_MAX_BINS`] bins.
    table: std::sync::Arc<[u16]>,
}

impl OnePermutation {
    /// `bins` bins (at least 1), keys drawn from `SplitMix64` seeded with
    /// `seed`: the first output keys the element hash, the second the
    /// densification probes.
    pub fn new(bins: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let element_key = rng.next_u64();
        let probe_key = rng.next_u64();
        let mut oph = Self {
            bins: bins.max(1),
            element_key,
            probe_key,
            table: std::sync::Arc::from([]),
        };
        if oph.bins <= TABLE_MAX_BINS {
            oph.table = (0..oph.bins)
                .flat_map(|j| (1..=TABLE_PROBES as u32).map(move |a| (j, a)))
                .map(|(j, a)| oph.probe(j, a) as u16)
                .collect();
        }
        oph
    }

    /// The bin and value of one element: `h = mix64(x ^ element_key)`,
    /// bin = (h ≫ 32)·n ≫ 32, value = h mod 2³².
    #[inline]
    pub fn bin_and_value(&self, x: u32) -> (usize, u32) {
        let h = mix64(u64::from(x) ^ self.element_key);
        (self.bin_of(h >> 32), h as u32)
    }

    /// Maps a 32-bit value uniformly onto 0..n by multiply-shift.
    #[inline]
    fn bin_of(&self, high: u64) -> usize {
        (((high & 0xffff_ffff) * self.bins as u64) >> 32) as usize
    }

    /// The bin probed at `attempt` (from 1) when bin `j` is empty.
    #[inline]
    fn probe(&self, j: usize, attempt: u32) -> usize {
        let h = mix64(self.probe_key ^ ((j as u64) << 32 | u64::from(attempt)));
        self.bin_of(h >> 32)
    }

    /// The densified signature of `set` into `out` (resized to n). An empty
    /// set gives all [`EMPTY`].
    pub fn signature_into(&self, set: &[u32], out: &mut Vec<u32>) {
        out.clear();
        out.resize(self.bins, EMPTY);
        // Which bins an element reached, as a bit set (a bin's minimum may
        // legitimately be u32::MAX, so EMPTY alone cannot tell); on the
        // stack up to 256 bins.
        let words = self.bins.div_ceil(64);
        let (mut small, mut large) = ([0u64; 4], Vec::new());
        let filled: &mut [u64] = if words <= small.len() {
            &mut small[..words]
        } else {
            large.resize(words, 0);
            &mut large
        };
        for &x in set {
            let (bin, value) = self.bin_and_value(x);
            let slot = &mut out[bin];
            *slot = (*slot).min(value);
            filled[bin / 64] |= 1 << (bin % 64);
        }
        let is_filled = |b: usize| filled[b / 64] & (1 << (b % 64)) != 0;
        let filled_count: u32 = filled.iter().map(|w| w.count_ones()).sum();
        if set.is_empty() || filled_count as usize == self.bins {
            return;
        }
        let tabled = !self.table.is_empty();
        for j in 0..self.bins {
            if is_filled(j) {
                continue;
            }
            let first = match tabled {
                true => self.table[j * TABLE_PROBES..(j + 1) * TABLE_PROBES]
                    .iter()
                    .map(|&b| usize::from(b))
                    .find(|&b| is_filled(b)),
                false => None,
            };
            let rest = if tabled { TABLE_PROBES as u32 + 1 } else { 1 };
            let source = first
                .or_else(|| {
                    (rest..=MAX_PROBES_PER_BIN)
                        .map(|attempt| self.probe(j, attempt))
                        .find(|&b| is_filled(b))
                })
                .or_else(|| {
                    (1..self.bins)
                        .map(|d| (j + d) % self.bins)
                        .find(|&b| is_filled(b))
                });
            if let Some(b) = source {
                out[j] = out[b];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::minhash::estimate;

    fn sig(oph: &OnePermutation, set: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        oph.signature_into(set, &mut out);
        out
    }

    #[test]
    fn single_element_fills_every_bin_with_its_value() {
        let oph = OnePermutation::new(64, 3);
        let s = sig(&oph, &[12345]);
        let (_, value) = oph.bin_and_value(12345);
        assert!(s.iter().all(|&v| v == value));
    }

    #[test]
    fn empty_set_stays_empty() {
        assert!(sig(&OnePermutation::new(16, 3), &[])
            .iter()
            .all(|&v| v == EMPTY));
    }

    #[test]
    fn identical_sets_agree_everywhere_and_disjoint_sets_rarely() {
        let oph = OnePermutation::new(128, 3);
        let a: Vec<u32> = (0..40).collect();
        let b: Vec<u32> = (1000..1040).collect();
        assert_eq!(estimate(&sig(&oph, &a), &sig(&oph, &a)), 1.0);
        assert!(estimate(&sig(&oph, &a), &sig(&oph, &b)) < 0.05);
    }

    /// The signature as computed before the probe table: every probe
    /// hashed.
    fn reference(oph: &OnePermutation, set: &[u32]) -> Vec<u32> {
        let mut out = vec![EMPTY; oph.bins];
        let mut filled = vec![false; oph.bins];
        for &x in set {
            let (bin, value) = oph.bin_and_value(x);
            out[bin] = out[bin].min(value);
            filled[bin] = true;
        }
        if set.is_empty() {
            return out;
        }
        for j in (0..oph.bins).filter(|&j| !filled[j]) {
            let source = (1..=MAX_PROBES_PER_BIN)
                .map(|attempt| oph.probe(j, attempt))
                .find(|&b| filled[b])
                .or_else(|| {
                    (1..oph.bins)
                        .map(|d| (j + d) % oph.bins)
                        .find(|&b| filled[b])
                });
            out[j] = out[source.unwrap()];
        }
        out
    }

    #[test]
    fn the_probe_table_changes_no_signature() {
        let mut rng = crate::hash::SplitMix64::new(7);
        // Sizes from 1 (probes far past the table) to beyond the bins,
        // and bin counts with and without a table, on and off the stack.
        for bins in [1, 7, 64, 128, 300, 5000] {
            let oph = OnePermutation::new(bins, 11);
            assert_eq!(oph.table.is_empty(), bins > TABLE_MAX_BINS);
            for len in [1, 2, 3, 5, 20, 46, 128, 400] {
                for _ in 0..20 {
                    let set: Vec<u32> = (0..len).map(|_| rng.next_u64() as u32).collect();
                    assert_eq!(sig(&oph, &set), reference(&oph, &set), "{bins} bins, {len}");
                }
            }
        }
    }

    #[test]
    fn order_of_elements_does_not_matter() {
        let oph = OnePermutation::new(32, 5);
        assert_eq!(sig(&oph, &[1, 2, 3, 4, 5]), sig(&oph, &[5, 3, 1, 4, 2]));
    }
}
