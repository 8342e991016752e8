//! Tests of the exact all-pairs join: against brute force, on edge cases
//! and at the rounding boundaries of its filters.

use super::*;
use crate::hash::SplitMix64;

/// All pairs by brute force, the definition `all_pairs` must match.
fn brute_force(sets: &[Vec<u32>], t: f64) -> Vec<(usize, usize, f64)> {
    let mut out = Vec::new();
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let s = jaccard(&sets[i], &sets[j]);
            if s >= t {
                out.push((i, j, s));
            }
        }
    }
    out
}

fn normalized(mut set: Vec<u32>) -> Vec<u32> {
    set.sort_unstable();
    set.dedup();
    set
}

/// Random sets over a `universe` of values spread over all of u32,
/// with planted near-duplicates: copies of earlier sets with a few
/// values removed and added, some exact copies, some empty and
/// singleton sets.
fn corpus(seed: u64, n: usize, universe: u64) -> Vec<Vec<u32>> {
    let mut rng = SplitMix64::new(seed);
    // Spread the universe over u32 so values are not small ranks.
    let value = |k: u64| (k.wrapping_mul(0x9E37_79B9) % (1 << 32)) as u32;
    let mut sets: Vec<Vec<u32>> = Vec::with_capacity(n);
    while sets.len() < n {
        let roll = rng.next_u64() % 100;
        let set = if roll < 3 {
            Vec::new()
        } else if roll < 6 {
            vec![value(rng.next_u64() % universe)]
        } else if roll < 50 || sets.is_empty() {
            let len = 1 + rng.next_u64() % 40;
            (0..len).map(|_| value(rng.next_u64() % universe)).collect()
        } else {
            let base = &sets[(rng.next_u64() % sets.len() as u64) as usize];
            let mut copy = base.clone();
            if roll >= 60 {
                for _ in 0..rng.next_u64() % 4 {
                    if !copy.is_empty() {
                        let at = (rng.next_u64() % copy.len() as u64) as usize;
                        copy.swap_remove(at);
                    }
                }
                for _ in 0..rng.next_u64() % 4 {
                    copy.push(value(rng.next_u64() % universe));
                }
            }
            copy
        };
        sets.push(normalized(set));
    }
    sets
}

#[test]
fn matches_brute_force_on_random_corpora() {
    for (seed, n, universe) in [(1, 300, 200), (2, 400, 60), (3, 250, 5000), (4, 60, 12)] {
        let sets = corpus(seed, n, universe);
        for t in [0.3, 0.5, 0.8, 0.9, 1.0] {
            let expected = brute_force(&sets, t);
            let got = all_pairs(&sets, t).unwrap();
            assert_eq!(got, expected, "seed {seed}, t = {t}");
            // Bit-identical similarities, not just close.
            for (&(_, _, a), &(_, _, b)) in got.iter().zip(&expected) {
                assert_eq!(a.to_bits(), b.to_bits());
            }
            if t <= 0.5 {
                assert!(!expected.is_empty(), "seed {seed}, t = {t}: a vacuous test");
            }
        }
    }
}

#[test]
fn matches_brute_force_at_many_thresholds() {
    // Thresholds that are awkward in binary and land exactly on ratios.
    let sets = corpus(7, 200, 80);
    for t in [0.1, 0.2, 1.0 / 3.0, 0.6, 0.7, 0.75, 2.0 / 3.0, 0.95, 1e-9] {
        assert_eq!(
            all_pairs(&sets, t).unwrap(),
            brute_force(&sets, t),
            "t = {t}"
        );
    }
}

#[test]
fn pairs_exactly_at_the_threshold_are_included() {
    // 0.8 * 5 = 4.000000000000001 in f64: a naive ⌈t·n⌉ says 5.
    for (t, n, ceil) in [(0.8, 5, 4), (0.5, 8, 4), (0.5, 9, 5), (1.0, 7, 7)] {
        assert_eq!(ceil_times(t, n), ceil, "⌈{t}·{n}⌉");
    }
    // a, b: |A ∩ B| = 4, |A ∪ B| = 5. b, c: same sizes on both sides,
    // |A ∩ B| = 4, |A ∪ B| = 6 → 2/3. d, e: 7 of 10 at t = 0.7.
    let a = vec![10, 20, 30, 40];
    let b = vec![10, 20, 30, 40, 50];
    let c = vec![10, 20, 30, 40, 60];
    let d: Vec<u32> = (0..8).collect();
    let e: Vec<u32> = (1..10).collect();
    assert_eq!(jaccard(&d, &e), 0.7);
    for (x, y, t) in [(&a, &b, 0.8), (&b, &c, 4.0 / 6.0), (&d, &e, 0.7)] {
        let pairs = all_pairs(&[x.clone(), y.clone()], t).unwrap();
        assert_eq!(pairs, vec![(0, 1, t)], "at t = {t}");
    }
    assert!(all_pairs(&[d, e], 0.7000001).unwrap().is_empty());
    // Every (overlap, union) ratio at its own threshold.
    for union in 1..=30u32 {
        for common in 1..=union {
            let x: Vec<u32> = (0..common).collect();
            let y: Vec<u32> = (0..union).collect();
            let t = common as f64 / union as f64;
            assert_eq!(
                all_pairs(&[y.clone(), x.clone()], t).unwrap(),
                vec![(0, 1, t)]
            );
            assert_eq!(all_pairs(&[x, y], t).unwrap(), vec![(0, 1, t)]);
        }
    }
}

#[test]
fn empty_singleton_and_duplicate_sets() {
    assert!(all_pairs(&[], 0.5).unwrap().is_empty());
    assert!(all_pairs(&[vec![], vec![], vec![]], 0.5)
        .unwrap()
        .is_empty());
    assert!(all_pairs(&[vec![], vec![]], 1.0).unwrap().is_empty());
    let sets = vec![vec![7], vec![], vec![7], vec![8], vec![7, 8], vec![7]];
    assert_eq!(
        all_pairs(&sets, 0.5).unwrap(),
        vec![
            (0, 2, 1.0),
            (0, 4, 0.5),
            (0, 5, 1.0),
            (2, 4, 0.5),
            (2, 5, 1.0),
            (3, 4, 0.5),
            (4, 5, 0.5)
        ]
    );
    assert_eq!(
        all_pairs(&sets, 1.0).unwrap(),
        vec![(0, 2, 1.0), (0, 5, 1.0), (2, 5, 1.0)]
    );
    // Duplicate larger sets, with extreme values.
    let big = vec![0, 1, u32::MAX - 1, u32::MAX];
    let sets = vec![big.clone(), vec![5, 6], big.clone(), big];
    assert_eq!(
        all_pairs(&sets, 1.0).unwrap(),
        vec![(0, 2, 1.0), (0, 3, 1.0), (2, 3, 1.0)]
    );
}

#[test]
fn deterministic_across_thread_counts() {
    let sets = corpus(11, 500, 300);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| all_pairs(&sets, 0.5).unwrap());
    let four = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(|| all_pairs(&sets, 0.5).unwrap());
    assert_eq!(one, four);
    assert_eq!(one, brute_force(&sets, 0.5));
}

#[test]
fn rejects_bad_thresholds_and_unsorted_sets() {
    for t in [0.0, -0.1, 1.0000001, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                all_pairs(&[vec![1]], t),
                Err(Error::InvalidParameter {
                    name: "threshold",
                    ..
                })
            ),
            "t = {t}"
        );
    }
    for bad in [vec![2, 1], vec![1, 1]] {
        assert!(matches!(
            all_pairs(&[vec![1], bad], 0.5),
            Err(Error::InvalidParameter { name: "sets", .. })
        ));
    }
}

#[test]
fn prefix_lengths() {
    // t = 1: one token decides (identical sets share their rarest).
    assert_eq!(probe_prefix(1.0, 10), 1);
    assert_eq!(index_prefix(1.0, 10), 1);
    // t = 0.8, n = 5: ⌈4⌉ = 4 → 2; mid-prefix ⌈1.6/1.8·5⌉ = 5 → 1.
    assert_eq!(probe_prefix(0.8, 5), 2);
    assert_eq!(index_prefix(0.8, 5), 1);
    for n in 1..200 {
        for t in [0.01, 0.3, 0.5, 0.8, 0.99, 1.0] {
            assert!((1..=n).contains(&probe_prefix(t, n)));
            assert!((1..=probe_prefix(t, n)).contains(&index_prefix(t, n)));
        }
    }
}
