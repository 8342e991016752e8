//! Tests of the LSH Ensemble bounds, keys and probe plans.

use super::*;

#[test]
fn classes_are_exact_and_contiguous() {
    for p in 1..=MAX_CLASSES_PER_OCTAVE {
        let e = Ensemble::new(8, 4, p, 128).unwrap();
        assert_eq!(e.class_of(0), 0);
        assert_eq!(e.class_of(1), 0);
        let mut previous = e.class_bounds(0);
        assert_eq!(previous.0, 1);
        for class in 1..(32 * p as u8) {
            let (lo, hi) = e.class_bounds(class);
            assert!(lo <= hi || lo > previous.1, "p {p} class {class}");
            if lo <= hi {
                assert_eq!(lo, previous.1 + 1, "p {p} class {class}");
                assert_eq!(e.class_of(lo as u32), class);
                assert_eq!(e.class_of(hi as u32), class);
                assert!(e.class_of(lo as u32 - 1) < class);
                previous = (lo, hi);
            }
        }
        assert_eq!(e.class_bounds(e.class_of(u32::MAX)).1, u64::from(u32::MAX));
    }
    let e = Ensemble::for_num_perm(128).unwrap();
    // √2 classes: 2^5 = 32 starts class 10, ⌈32·√2⌉ = 46 class 11.
    assert_eq!(e.class_bounds(10), (32, 45));
    assert_eq!(e.class_bounds(11), (46, 63));
}

#[test]
fn shapes_are_validated() {
    assert!(Ensemble::new(32, 4, 2, 128).is_ok());
    assert!(Ensemble::new(33, 4, 2, 128).is_err());
    assert!(Ensemble::new(1, 5, 2, 128).is_err());
    assert!(Ensemble::new(1, 4, 0, 128).is_err());
    assert!(Ensemble::new(1, 4, 5, 128).is_err());
    assert!(Ensemble::for_num_perm(0).is_err());
    let tiny = Ensemble::for_num_perm(2).unwrap();
    assert_eq!((tiny.trees(), tiny.depth()), (1, 2));
    assert_eq!(Ensemble::for_num_perm(4096).unwrap().trees(), 32);
}

#[test]
fn prefixes_and_ranges() {
    let e = Ensemble::new(2, 4, 2, 8).unwrap();
    let mut keys = Vec::new();
    e.prefixes(&[1, 2, 3, 4, 1, 2, 3, 5], &mut keys);
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0] >> 16, keys[1] >> 16);
    assert_ne!(keys[0], keys[1]);
    let (lo, hi) = Ensemble::prefix_range(keys[0], 3);
    assert!((lo..=hi).contains(&keys[1]));
    assert_eq!(Ensemble::prefix_range(keys[0], 4), (keys[0], keys[0]));
    let (lo1, hi1) = Ensemble::prefix_range(keys[0], 1);
    assert_eq!((lo1 >> 48, hi1 - lo1), (keys[0] >> 48, (1 << 48) - 1));
    // Pinned: the fragment hash is part of the file format.
    assert_eq!(fragment(0), mix64(FRAGMENT_SEED) >> 48);
    assert_eq!(keys[0] >> 48, fragment(1));
}

#[test]
fn plans_follow_the_jaccard_bound() {
    let e = Ensemble::for_num_perm(128).unwrap();
    // A class far larger than the query needs short prefixes...
    let wide = e.plan(e.class_of(5000), 100, 0.8).unwrap();
    assert_eq!(wide.depth, 1);
    assert!(wide.jaccard_bound < 0.03);
    // ...one of the query's size longer ones, and few false positives.
    let near = e.plan(e.class_of(100), 100, 0.9).unwrap();
    assert!(near.depth >= 3, "{near:?}");
    assert!(near.candidate_probability > 0.95, "{near:?}");
    // Classes too small to hold t·q elements are skipped.
    assert!(e.plan(e.class_of(50), 100, 0.8).is_none());
    assert!(e.plan(e.class_of(80), 100, 0.8).is_some());
}

#[test]
fn needed_common_elements() {
    assert_eq!(common_needed(0.5, 3), 2);
    assert_eq!(common_needed(1.0, 7), 7);
    assert_eq!(common_needed(0.7, 10), 7);
    assert_eq!(common_needed(1e-9, 10), 1);
    for q in 1..50 {
        for t in [0.1, 0.3, 0.7, 0.75, 0.9, 1.0] {
            let k = common_needed(t, q);
            assert!(k as f64 / q as f64 >= t);
            assert!(k == 0 || ((k - 1) as f64 / q as f64) < t);
        }
    }
    assert_eq!(intersection_at_least(&[], &[1], 0), Some(0));
    assert_eq!(intersection_at_least(&[1, 5, 9], &[1, 5, 9], 3), Some(3));
    let long: Vec<u32> = (0..1000).map(|i| i * 3).collect();
    assert_eq!(
        intersection_at_least(&[3, 4, 2997, 5000], &long, 2),
        Some(2)
    );
    assert_eq!(intersection_at_least(&long, &[3, 4, 2997, 5000], 3), None);
    assert_eq!(intersection_at_least(&[0, 6, 9], &long, 3), Some(3));
}
