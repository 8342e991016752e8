//! Statistical accuracy of every MinHash variant: over 1,000 random set
//! pairs with known Jaccard similarity, the mean absolute error of the
//! estimate stays within 1.2/√n. Seeds are fixed, so the test is
//! deterministic (not flaky): the same pairs and hashes every run.

use lshdb::hash::{fmix32, SplitMix64};
use lshdb::sketch::bottomk::BottomK;
use lshdb::sketch::minhash::{estimate, MinHashConfig, MinHasher, Scheme};

const PAIRS: usize = 1_000;

/// A pair of sorted sets with exactly known Jaccard similarity. Sizes of the
/// union vary from 10 to 2,000 so that small (sparse OPH bins, bottom-k
/// exact) and large sets are both covered.
fn random_pair(rng: &mut SplitMix64, next_id: &mut u32) -> (Vec<u32>, Vec<u32>, f64) {
    let union = 10 + (rng.next_u64() % 1_991) as usize;
    let common = (rng.next_u64() % (union as u64 + 1)) as usize;
    let only_a = (rng.next_u64() % ((union - common) as u64 + 1)) as usize;
    let mut fresh = || {
        *next_id += 1;
        fmix32(*next_id) // a bijection: every element is distinct
    };
    let both: Vec<u32> = (0..common).map(|_| fresh()).collect();
    let a_only: Vec<u32> = (0..only_a).map(|_| fresh()).collect();
    let b_only: Vec<u32> = (0..union - common - only_a).map(|_| fresh()).collect();
    let mut a: Vec<u32> = both.iter().chain(&a_only).copied().collect();
    let mut b: Vec<u32> = both.iter().chain(&b_only).copied().collect();
    a.sort_unstable();
    b.sort_unstable();
    (a, b, common as f64 / union as f64)
}

fn mean_abs_error(mut estimator: impl FnMut(&[u32], &[u32]) -> f64, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let mut next_id = 0;
    let mut total = 0.0;
    for _ in 0..PAIRS {
        let (a, b, truth) = random_pair(&mut rng, &mut next_id);
        total += (estimator(&a, &b) - truth).abs();
    }
    total / PAIRS as f64
}

fn check(name: &str, n: usize, mae: f64) {
    let bound = 1.2 / (n as f64).sqrt();
    println!("{name:>13} n={n:<4} MAE {mae:.4} (bound {bound:.4})");
    assert!(mae <= bound, "{name} n={n}: MAE {mae} above {bound}");
    // Also far from trivially passing: a constant 0.5 guess has MAE ≈ 0.25+.
    assert!(mae > 0.0);
}

/// A MinHasher of the scheme with `num_perm` values and seed 11.
fn minhasher(scheme: Scheme, num_perm: usize) -> MinHasher {
    MinHasher::new(MinHashConfig {
        scheme,
        num_perm,
        seed: 11,
    })
    .unwrap()
}

/// Checks the estimates of `scheme`'s signatures of 128 and 256 values
/// on the pairs drawn with `seed`.
fn check_scheme(name: &str, scheme: Scheme, seed: u64) {
    for n in [128, 256] {
        let h = minhasher(scheme, n);
        let mae = mean_abs_error(|a, b| estimate(&h.signature(a), &h.signature(b)), seed);
        check(name, n, mae);
    }
}

#[test]
fn permutations_estimate_within_bound() {
    check_scheme("permutations", Scheme::Permutations, 1);
}

#[test]
fn one_permutation_estimate_within_bound() {
    check_scheme("one-perm", Scheme::OnePermutation, 2);
}

#[test]
fn bottom_k_estimate_within_bound() {
    for n in [128, 256] {
        let bk = BottomK::new(n, 11);
        let mae = mean_abs_error(|a, b| BottomK::estimate(&bk.sketch(a), &bk.sketch(b), n), 3);
        check("bottom-k", n, mae);
    }
}

#[test]
fn a_useless_estimator_fails_the_same_bound() {
    // The harness can fail: guessing 0.5 for every pair is far off the bound.
    let mae = mean_abs_error(|_, _| 0.5, 1);
    assert!(mae > 1.2 / 128f64.sqrt(), "MAE of a constant guess: {mae}");
}
