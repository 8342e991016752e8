//! MinHash signatures: n simulated permutations, and the scheme switch.
//!
//! A signature holds, for each of n hash functions h_i, the minimum of h_i
//! over the set; the fraction of positions where two signatures agree
//! estimates the sets' Jaccard similarity ([`estimate`]).
//!
//! [`signature`] is the textbook algorithm over any [`PermutationFamily`]:
//! [`ModPrime`] is the textbook's (a·x + b) mod p, [`MultiplyShift`] the
//! production family (a·x + b) mod 2⁶⁴ ≫ 32 with a fast fold. [`MinHasher`]
//! picks between those n-permutation signatures and one-permutation hashing
//! ([`crate::sketch::oph`]) according to a stored [`MinHashConfig`].

use crate::hash::SplitMix64;
use crate::sketch::oph::OnePermutation;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The value of a signature position whose set was empty ("∞").
pub const EMPTY: u32 = u32::MAX;

/// Default seed of the MinHash parameters (ASCII "lshdb1").
pub const DEFAULT_SEED: u64 = 0x6c73_6864_6231;

/// Largest accepted number of permutations.
pub const MAX_PERM: usize = 4096;

/// n hash functions over 32-bit values, each simulating a permutation.
pub trait PermutationFamily {
    /// The number of functions n.
    fn len(&self) -> usize;
    /// Whether the family has no functions.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// h_i(x).
    fn hash(&self, i: usize, x: u32) -> u32;
}

/// The MinHash signature of `set` under `family`: position i is the minimum
/// of h_i over the set, or [`EMPTY`] for an empty set. This is the textbook
/// algorithm, one row at a time; [`MultiplyShift::signature_into`] is the same
/// computation arranged for speed.
///
/// The textbook example (rows 0..4, h1(x) = x+1 mod 5, h2(x) = 3x+1 mod 5):
/// ```
/// use lshdb::sketch::minhash::{signature, ModPrime};
/// let h = ModPrime::new(5, vec![(1, 1), (3, 1)]);
/// let sets: [&[u32]; 4] = [&[0, 3], &[2], &[1, 3, 4], &[0, 2, 3]];
/// let sig: Vec<Vec<u32>> = sets.iter().map(|s| signature(&h, s)).collect();
/// // Columns S1..S4 of the matrix [[1,3,0,1],[0,2,0,0]].
/// assert_eq!(sig, [[1, 0], [3, 2], [0, 0], [1, 0]]);
/// ```
pub fn signature<F: PermutationFamily + ?Sized>(family: &F, set: &[u32]) -> Vec<u32> {
    let mut sig = vec![EMPTY; family.len()];
    for &row in set {
        for (i, slot) in sig.iter_mut().enumerate() {
            *slot = (*slot).min(family.hash(i, row));
        }
    }
    sig
}

/// The estimate of Jaccard similarity from two signatures: the fraction of
/// positions where they agree. Signatures of different lengths compare over
/// the shorter length; two empty signatures estimate 0.
///
/// ```
/// assert_eq!(lshdb::sketch::minhash::estimate(&[1, 2, 3, 4], &[1, 2, 0, 0]), 0.5);
/// ```
pub fn estimate(a: &[u32], b: &[u32]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    agreements(a, b) as f64 / n as f64
}

/// The number of positions where two signatures agree.
pub fn agreements(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

/// The textbook family h_i(x) = (a_i·x + b_i) mod p.
#[derive(Debug, Clone)]
pub struct ModPrime {
    p: u64,
    coefficients: Vec<(u64, u64)>,
}

impl ModPrime {
    /// Functions (a_i, b_i) modulo `p`. Values are taken as u64 and reduced
    /// modulo `p`, so the result fits a u32 when p ≤ 2³².
    pub fn new(p: u64, coefficients: Vec<(u64, u64)>) -> Self {
        Self { p, coefficients }
    }
}

impl PermutationFamily for ModPrime {
    fn len(&self) -> usize {
        self.coefficients.len()
    }

    fn hash(&self, i: usize, x: u32) -> u32 {
        let (a, b) = self.coefficients[i];
        let h = (u128::from(a) * u128::from(x) + u128::from(b)) % u128::from(self.p.max(1));
        h as u32
    }
}

/// The production family: h_i(x) = ((a_i·x + b_i) mod 2⁶⁴) ≫ 32, the
/// multiply-add-shift scheme of Dietzfelbinger (strongly universal from
/// 32-bit keys to 32-bit values). a_i and b_i are drawn, in that order,
/// from `SplitMix64` seeded with the configured seed.
#[derive(Debug, Clone)]
pub struct MultiplyShift {
    a: Vec<u64>,
    b: Vec<u64>,
}

/// Positions folded together in the fast path; a multiple of every SIMD
/// width in use, so the inner loop vectorises.
const LANES: usize = 16;

impl MultiplyShift {
    /// `n` functions whose coefficients come from `seed`.
    pub fn new(n: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            a.push(rng.next_u64());
            b.push(rng.next_u64());
        }
        Self { a, b }
    }

    /// The coefficients (a_i, b_i) of function i.
    pub fn coefficients(&self, i: usize) -> (u64, u64) {
        (self.a[i], self.b[i])
    }

    /// The signature of `set` into `out` (resized to n): the same values as
    /// [`signature`], computed `LANES` positions at a time with the
    /// running minima kept in registers.
    pub fn signature_into(&self, set: &[u32], out: &mut Vec<u32>) {
        out.clear();
        out.resize(self.a.len(), EMPTY);
        let a_chunks = self.a.chunks(LANES);
        let b_chunks = self.b.chunks(LANES);
        for ((slot, a), b) in out.chunks_mut(LANES).zip(a_chunks).zip(b_chunks) {
            if let (Ok(a), Ok(b)) = (<&[u64; LANES]>::try_from(a), <&[u64; LANES]>::try_from(b)) {
                let mut acc = [EMPTY; LANES];
                for &x in set {
                    let x = u64::from(x);
                    for l in 0..LANES {
                        let h = (a[l].wrapping_mul(x).wrapping_add(b[l]) >> 32) as u32;
                        acc[l] = acc[l].min(h);
                    }
                }
                slot.copy_from_slice(&acc);
            } else {
                for &x in set {
                    let x = u64::from(x);
                    for ((s, &a), &b) in slot.iter_mut().zip(a).zip(b) {
                        *s = (*s).min((a.wrapping_mul(x).wrapping_add(b) >> 32) as u32);
                    }
                }
            }
        }
    }
}

impl PermutationFamily for MultiplyShift {
    fn len(&self) -> usize {
        self.a.len()
    }

    fn hash(&self, i: usize, x: u32) -> u32 {
        (self.a[i].wrapping_mul(u64::from(x)).wrapping_add(self.b[i]) >> 32) as u32
    }
}

/// How signatures are computed. Part of the file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Scheme {
    /// n independent [`MultiplyShift`] functions: O(n·|set|) per signature.
    Permutations,
    /// One-permutation hashing with optimal densification
    /// ([`crate::sketch::oph`]): O(n + |set|) per signature.
    #[default]
    OnePermutation,
}

/// `one-permutation` or `permutations`.
impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Scheme::Permutations => "permutations",
            Scheme::OnePermutation => "one-permutation",
        })
    }
}

/// Everything that decides a signature. Stored in the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinHashConfig {
    /// The signature scheme.
    pub scheme: Scheme,
    /// Signature length n (number of permutations or bins).
    pub num_perm: usize,
    /// Seed of the hash parameters.
    pub seed: u64,
}

impl Default for MinHashConfig {
    fn default() -> Self {
        Self {
            scheme: Scheme::default(),
            num_perm: 128,
            seed: DEFAULT_SEED,
        }
    }
}

/// Computes signatures according to a [`MinHashConfig`].
///
/// ```
/// use lshdb::sketch::minhash::{estimate, MinHashConfig, MinHasher};
/// let hasher = MinHasher::new(MinHashConfig::default())?;
/// let a: Vec<u32> = (0..1000).collect();
/// let b: Vec<u32> = (200..1200).collect(); // Jaccard 800/1200 = 0.667
/// let e = estimate(&hasher.signature(&a), &hasher.signature(&b));
/// assert!((e - 0.667).abs() < 0.15);
/// # Ok::<(), lshdb::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct MinHasher {
    config: MinHashConfig,
    engine: Engine,
}

#[derive(Debug, Clone)]
enum Engine {
    Permutations(MultiplyShift),
    OnePermutation(OnePermutation),
}

impl MinHasher {
    /// A hasher for `config`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `num_perm` is 0 or above [`MAX_PERM`].
    pub fn new(config: MinHashConfig) -> Result<Self> {
        if config.num_perm == 0 || config.num_perm > MAX_PERM {
            return Err(Error::invalid(
                "num_perm",
                format!(
                    "the number of permutations must be between 1 and {MAX_PERM}, got {} \
                     (128 is a good default)",
                    config.num_perm
                ),
            ));
        }
        let engine = match config.scheme {
            Scheme::Permutations => {
                Engine::Permutations(MultiplyShift::new(config.num_perm, config.seed))
            }
            Scheme::OnePermutation => {
                Engine::OnePermutation(OnePermutation::new(config.num_perm, config.seed))
            }
        };
        Ok(Self { config, engine })
    }

    /// The configuration in force.
    pub fn config(&self) -> &MinHashConfig {
        &self.config
    }

    /// The signature of a set of shingle hashes. Order and repeats do not
    /// matter (every position is a minimum), so an unsorted bag gives the
    /// same signature as its sorted set.
    pub fn signature(&self, set: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.config.num_perm);
        self.signature_into(set, &mut out);
        out
    }

    /// The signature of `set` into `out`, reusing its allocation.
    pub fn signature_into(&self, set: &[u32], out: &mut Vec<u32>) {
        match &self.engine {
            Engine::Permutations(family) => family.signature_into(set, out),
            Engine::OnePermutation(oph) => oph.signature_into(set, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_signature_matrix() {
        // Rows 0..4; S1={0,3}, S2={2}, S3={1,3,4}, S4={0,2,3};
        // h1(x) = x+1 mod 5, h2(x) = 3x+1 mod 5.
        let family = ModPrime::new(5, vec![(1, 1), (3, 1)]);
        let sets: [&[u32]; 4] = [&[0, 3], &[2], &[1, 3, 4], &[0, 2, 3]];
        let columns: Vec<Vec<u32>> = sets.iter().map(|s| signature(&family, s)).collect();
        let matrix: Vec<Vec<u32>> = (0..2)
            .map(|row| columns.iter().map(|c| c[row]).collect())
            .collect();
        assert_eq!(matrix, [[1, 3, 0, 1], [0, 2, 0, 0]]);
        // The textbook's reading: SIG(S1) = SIG(S4) estimates J(S1,S4) = 2/3 as 1.
        assert_eq!(estimate(&columns[0], &columns[3]), 1.0);
        assert_eq!(estimate(&columns[0], &columns[2]), 0.5);
    }

    #[test]
    fn fast_path_equals_textbook_algorithm() {
        for n in [1, 15, 16, 17, 128, 130] {
            let family = MultiplyShift::new(n, 9);
            let set: Vec<u32> = (0..300u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
            let mut fast = Vec::new();
            family.signature_into(&set, &mut fast);
            assert_eq!(fast, signature(&family, &set), "n = {n}");
        }
    }

    #[test]
    fn empty_set_is_all_empty() {
        let h = MinHasher::new(MinHashConfig {
            scheme: Scheme::Permutations,
            ..Default::default()
        })
        .unwrap();
        assert!(h.signature(&[]).iter().all(|&v| v == EMPTY));
    }

    #[test]
    fn invalid_num_perm() {
        for num_perm in [0, MAX_PERM + 1] {
            let err = MinHasher::new(MinHashConfig {
                num_perm,
                ..Default::default()
            })
            .unwrap_err();
            assert!(matches!(
                err,
                Error::InvalidParameter {
                    name: "num_perm",
                    ..
                }
            ));
        }
    }
}
