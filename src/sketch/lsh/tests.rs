//! Tests of the S-curve maths, the band keys and the tuner.

use super::*;

/// FP and FN areas of one `(b, r)` through the tuner's own machinery.
fn areas(t: f64, bands: usize, rows: usize) -> (f64, f64) {
    let mut a = Areas::new(t);
    let (mut fp, mut fneg) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        a.next_rows(bands, &mut fp, &mut fneg);
    }
    (fp[bands - 1], fneg[bands - 1])
}

fn is_invalid(r: Result<impl std::fmt::Debug>) -> bool {
    matches!(r, Err(Error::InvalidParameter { .. }))
}

#[test]
fn probability_formula() {
    assert_eq!(candidate_probability(0.0, 4, 4), 0.0);
    assert_eq!(candidate_probability(1.0, 4, 4), 1.0);
    assert!((candidate_probability(0.5, 1, 1) - 0.5).abs() < 1e-15);
    // 1 − (1 − 0.25)^2 = 0.4375
    assert!((candidate_probability(0.5, 2, 2) - 0.4375).abs() < 1e-15);
    let p = candidate_probability(0.8, 20, 5);
    println!("candidate_probability(0.8, 20, 5) = {p:.16}");
    // Often quoted as "≈ 0.99965", but the value is 0.9996439…, which is
    // 6.1e-6 away from 0.99965 and rounds to 0.99964 at five places.
    assert!((p - 0.99965).abs() < 1e-5);
    assert!((p - 0.99964).abs() < 5e-6);
    assert!((p - 0.999_643_942_109_479_3).abs() < 1e-12);
    let b = Banding::new(20, 5, 100).unwrap();
    assert_eq!(b.probability(0.8), p);
}

#[test]
fn threshold_formula() {
    assert!((threshold(16, 4) - 0.5).abs() < 1e-12);
    assert!((threshold(1, 7) - 1.0).abs() < 1e-15);
    let banding = Banding::new(16, 4, 64).unwrap();
    assert_eq!(banding.threshold(), threshold(16, 4));
}

#[test]
fn banding_validation() {
    assert!(is_invalid(Banding::new(0, 4, 128)));
    assert!(is_invalid(Banding::new(4, 0, 128)));
    assert!(is_invalid(Banding::new(17, 8, 128)));
    assert!(is_invalid(Banding::new(usize::MAX, 2, 128)));
    let msg = Banding::new(17, 8, 128).unwrap_err().to_string();
    assert!(msg.contains("17 × 8") && msg.contains("128"), "{msg}");
    let b = Banding::new(16, 8, 128).unwrap();
    assert_eq!((b.bands(), b.rows(), b.unused(128)), (16, 8, 0));
    assert_eq!(Banding::new(10, 12, 128).unwrap().unused(128), 8);
}

#[test]
fn band_keys_per_band() {
    let banding = Banding::new(4, 2, 10).unwrap();
    let sig = [1, 2, 3, 4, 1, 2, 5, 6, 9, 9];
    let mut keys = vec![99];
    banding.band_keys(&sig, &mut keys);
    assert_eq!(keys.len(), 4);
    assert_eq!(keys[0], band_key(&[1, 2], BAND_KEY_SEED));
    // Equal bands at different positions give equal keys.
    assert_eq!(keys[0], keys[2]);
    assert_ne!(keys[0], keys[1]);
    // A changed value changes only its own band's key.
    let mut changed = sig;
    changed[5] = 77;
    let mut other = Vec::new();
    banding.band_keys(&changed, &mut other);
    let differs: Vec<bool> = keys.iter().zip(&other).map(|(a, b)| a != b).collect();
    assert_eq!(differs, [false, false, true, false]);
    // A short signature yields only its complete bands, without panicking.
    banding.band_keys(&sig[..5], &mut keys);
    assert_eq!(keys.len(), 2);
    banding.band_keys(&[], &mut keys);
    assert!(keys.is_empty());
}

#[test]
fn simpson_matches_closed_forms() {
    for t in [0.1, 0.5, 0.8, 0.95] {
        // b = r = 1: P(s) = s, cubic-exact for Simpson.
        let (fp, fneg) = areas(t, 1, 1);
        assert!((fp - t * t / 2.0).abs() < 1e-12, "{fp}");
        assert!((fneg - (1.0 - t) * (1.0 - t) / 2.0).abs() < 1e-12, "{fneg}");
        // b = r = 2: P(s) = 2s² − s⁴.
        let (fp, fneg) = areas(t, 2, 2);
        let prim = |s: f64| 2.0 * s.powi(3) / 3.0 - s.powi(5) / 5.0;
        assert!((fp - prim(t)).abs() < 1e-10, "{fp}");
        assert!((fneg - ((1.0 - t) - (prim(1.0) - prim(t)))).abs() < 1e-10);
    }
}

#[test]
fn tuner_hits_thresholds() {
    for t in [0.5, 0.8, 0.9] {
        let start = std::time::Instant::now();
        let tuned = tune(&TuneGoal::new(t, 128)).unwrap();
        let took = start.elapsed();
        let (b, r, u) = (tuned.banding.bands(), tuned.banding.rows(), tuned.unused);
        let (fp, fneg) = (tuned.false_positive_area, tuned.false_negative_area);
        let th = tuned.banding.threshold();
        println!("t={t}: b={b} r={r} unused={u} FP={fp:.6} FN={fneg:.6} th={th:.4} {took:?}");
        // Recall-weighted: the S-curve sits below t, and a pair at t
        // becomes a candidate with probability ≥ 0.9.
        assert!(th < t && th > t - 0.2, "{tuned:?}");
        assert!(tuned.banding.probability(t) >= 0.9, "{tuned:?}");
        assert_eq!((b * r + u, tuned.banding.unused(128)), (128, u));
        assert_eq!(areas(t, b, r), (fp, fneg));
    }
    let start = std::time::Instant::now();
    let tuned = tune(&TuneGoal::new(0.7, 256)).unwrap();
    println!("num_perm=256: {tuned:?} ({:?})", start.elapsed());
    assert_eq!(tuned, tune(&TuneGoal::new(0.7, 256)).unwrap());
    let one = tune(&TuneGoal::new(0.5, 1)).unwrap();
    assert_eq!(
        (one.banding, one.unused),
        (Banding::new(1, 1, 1).unwrap(), 0)
    );
}

#[test]
fn false_negative_weight_is_monotone() {
    for t in [0.5, 0.8] {
        let mut last = f64::INFINITY;
        for w in [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0] {
            let mut goal = TuneGoal::new(t, 128);
            goal.false_negative_weight = w;
            goal.false_positive_weight = 1.0 - w;
            let fneg = tune(&goal).unwrap().false_negative_area;
            assert!(fneg <= last + 1e-9, "t={t} w={w}: {fneg} > {last}");
            last = fneg;
        }
    }
}

#[test]
fn invalid_goals() {
    for t in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(is_invalid(tune(&TuneGoal::new(t, 128))), "{t}");
    }
    assert!(is_invalid(tune(&TuneGoal::new(0.5, 0))));
    assert!(is_invalid(tune(&TuneGoal::new(0.5, 65_537))));
    let mut goal = TuneGoal::new(0.5, 128);
    goal.false_positive_weight = -1.0;
    assert!(is_invalid(tune(&goal)));
    goal.false_positive_weight = f64::NAN;
    assert!(is_invalid(tune(&goal)));
    goal.false_positive_weight = 0.0;
    goal.false_negative_weight = 0.0;
    assert!(is_invalid(tune(&goal)));
}
