//! LSH banding: the S-curve maths, band keys, and the (bands, rows) tuner.
//!
//! A MinHash signature of `num_perm` values is cut into `b` bands of `r`
//! rows; two sets become candidates when at least one band agrees in all its
//! rows. This module owns the probability of that event, the validated
//! [`Banding`] that turns a signature into band keys, and [`tune`], which
//! picks `b` and `r` for a similarity threshold.

use crate::hash::band_key;
use crate::{Error, Result};

/// The seed of [`crate::hash::band_key`] for every band. Part of the file
/// format: changing it would move every stored signature to other buckets.
pub const BAND_KEY_SEED: u64 = 0;

/// Probability that two sets of Jaccard similarity `s` share at least one
/// band: `1 − (1 − s^r)^b`.
///
/// `s` is a similarity in `[0, 1]`; `bands` and `rows` should be at least 1.
///
/// ```
/// use lshdb::sketch::lsh::candidate_probability;
/// let p = candidate_probability(0.8, 20, 5);
/// assert!((p - 0.999644).abs() < 1e-6);
/// assert_eq!(candidate_probability(0.0, 20, 5), 0.0);
/// ```
pub fn candidate_probability(s: f64, bands: usize, rows: usize) -> f64 {
    1.0 - (1.0 - s.powf(rows as f64)).powf(bands as f64)
}

/// The similarity at which the S-curve is steepest, approximately
/// `(1/b)^(1/r)`: pairs above it are likely candidates, pairs below unlikely.
///
/// ```
/// use lshdb::sketch::lsh::threshold;
/// assert!((threshold(16, 4) - 0.5).abs() < 1e-12);
/// ```
pub fn threshold(bands: usize, rows: usize) -> f64 {
    (1.0 / bands as f64).powf(1.0 / rows as f64)
}

/// A validated banding: `bands` bands of `rows` signature values each.
///
/// Built by [`Banding::new`] (or [`tune`]), so `bands ≥ 1`, `rows ≥ 1` and
/// `bands × rows ≤ num_perm` for the signature length it was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Banding {
    bands: usize,
    rows: usize,
}

impl Banding {
    /// Checks `bands ≥ 1`, `rows ≥ 1` and `bands × rows ≤ num_perm`.
    ///
    /// ```
    /// use lshdb::sketch::lsh::Banding;
    /// let banding = Banding::new(16, 8, 128)?;
    /// assert_eq!((banding.bands(), banding.rows()), (16, 8));
    /// assert!(Banding::new(16, 9, 128).is_err());
    /// # Ok::<(), lshdb::Error>(())
    /// ```
    pub fn new(bands: usize, rows: usize, num_perm: usize) -> Result<Self> {
        if bands == 0 {
            return Err(Error::invalid("bands", "must be at least 1, got 0"));
        }
        if rows == 0 {
            return Err(Error::invalid("rows", "must be at least 1, got 0"));
        }
        match bands.checked_mul(rows) {
            Some(product) if product <= num_perm => Ok(Self { bands, rows }),
            _ => Err(Error::invalid(
                "bands",
                format!(
                    "bands × rows = {bands} × {rows} exceeds num_perm = {num_perm}; \
                     lower bands or rows, or raise num_perm"
                ),
            )),
        }
    }

    /// The number of bands `b`.
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// The number of signature values per band `r`.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// How many of `num_perm` signature values no band covers:
    /// `num_perm − b·r` (0 if `num_perm` is smaller than `b·r`).
    ///
    /// Unused values still take part in signature-agreement (Jaccard)
    /// estimates; only the banding ignores them.
    pub fn unused(&self, num_perm: usize) -> usize {
        num_perm.saturating_sub(self.bands * self.rows)
    }

    /// [`threshold`] of this banding.
    pub fn threshold(&self) -> f64 {
        threshold(self.bands, self.rows)
    }

    /// [`candidate_probability`] of similarity `s` under this banding.
    pub fn probability(&self, s: f64) -> f64 {
        candidate_probability(s, self.bands, self.rows)
    }

    /// Clears `out` and pushes one key per band: band `i` is
    /// `band_key(&signature[i·r..(i+1)·r], BAND_KEY_SEED)`.
    ///
    /// The signature should hold at least `b·r` values. A shorter one never
    /// panics: bands that do not fit entirely are left out, so `out` then
    /// holds fewer than `b` keys. The band index is not mixed into the key;
    /// it is a separate part of the bucket table's key.
    ///
    /// ```
    /// use lshdb::sketch::lsh::Banding;
    /// let banding = Banding::new(2, 2, 4)?;
    /// let mut keys = Vec::new();
    /// banding.band_keys(&[7, 8, 7, 8], &mut keys);
    /// assert_eq!(keys.len(), 2);
    /// assert_eq!(keys[0], keys[1]);
    /// # Ok::<(), lshdb::Error>(())
    /// ```
    pub fn band_keys(&self, signature: &[u32], out: &mut Vec<u64>) {
        out.clear();
        out.extend(
            signature
                .chunks_exact(self.rows)
                .take(self.bands)
                .map(|band| band_key(band, BAND_KEY_SEED)),
        );
    }
}

/// What [`tune`] optimises for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TuneGoal {
    /// The Jaccard similarity that separates wanted from unwanted pairs,
    /// strictly inside (0, 1).
    pub threshold: f64,
    /// The signature length, 1 to 65536.
    pub num_perm: usize,
    /// Weight of the false-positive area (candidates below the threshold).
    pub false_positive_weight: f64,
    /// Weight of the false-negative area (missed pairs above the threshold).
    pub false_negative_weight: f64,
}

impl TuneGoal {
    /// Default weight of the false-positive area.
    pub const DEFAULT_FALSE_POSITIVE_WEIGHT: f64 = 0.05;
    /// Default weight of the false-negative area.
    pub const DEFAULT_FALSE_NEGATIVE_WEIGHT: f64 = 0.95;

    /// A goal with the default weights, 0.05 for false positives and 0.95
    /// for false negatives.
    ///
    /// Why lopsided: lshdb verifies every candidate against the stored exact
    /// shingle set (after a cheap signature-agreement prune), so a false
    /// positive costs only verification time and never reaches the caller,
    /// while a false negative is recall lost for good. At 1:19 the tuner
    /// picks 26 × 3 for t = 0.5 and 16 × 8 for t = 0.8 with 128 values:
    /// P(candidate) at the threshold 0.97 and 0.95. On debian-desc (63,666
    /// package descriptions) that finds 99.4% and 99.3% of the true pairs as
    /// candidates, where the earlier 1:9 choice (32 × 4, 14 × 9) found 89.8%
    /// and 98.4% (`CHANGELOG.md`, the tuner's entry).
    pub fn new(threshold: f64, num_perm: usize) -> Self {
        Self {
            threshold,
            num_perm,
            false_positive_weight: Self::DEFAULT_FALSE_POSITIVE_WEIGHT,
            false_negative_weight: Self::DEFAULT_FALSE_NEGATIVE_WEIGHT,
        }
    }

    fn validate(&self) -> Result<()> {
        let (t, n) = (self.threshold, self.num_perm);
        let (fp, fneg) = (self.false_positive_weight, self.false_negative_weight);
        // Comparisons are false for NaN, so NaN is rejected too.
        if !(t > 0.0 && t < 1.0) {
            let reason = format!("must be strictly between 0 and 1, got {t}");
            return Err(Error::invalid("threshold", reason));
        }
        if !(1..=65_536).contains(&n) {
            let reason = format!("must be between 1 and 65536, got {n}");
            return Err(Error::invalid("num_perm", reason));
        }
        for (name, w) in [
            ("false_positive_weight", fp),
            ("false_negative_weight", fneg),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                let reason = format!("must be a finite number ≥ 0, got {w}");
                return Err(Error::invalid(name, reason));
            }
        }
        if fp == 0.0 && fneg == 0.0 {
            let reason = "false_positive_weight and false_negative_weight are both 0; \
                          at least one must be positive";
            return Err(Error::invalid("false_negative_weight", reason));
        }
        Ok(())
    }
}

/// The banding [`tune`] chose and what it costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuned {
    /// The chosen bands and rows.
    pub banding: Banding,
    /// `∫₀ᵗ P(s) ds`: the candidate probability mass below the threshold.
    pub false_positive_area: f64,
    /// `∫ₜ¹ (1 − P(s)) ds`: the miss probability mass above the threshold.
    pub false_negative_area: f64,
    /// `num_perm − b·r`: signature values no band covers. They still take
    /// part in signature-agreement estimates; only the banding ignores them.
    pub unused: usize,
}

/// Intervals of each composite-Simpson integral (even).
const SIMPSON_INTERVALS: usize = 256;

/// Objectives closer than this are ties.
const TIE: f64 = 1e-12;

/// Picks `(b, r)` minimising `w_fp · FP + w_fn · FN` over every `b ≥ 1`,
/// `r ≥ 1` with `b·r ≤ num_perm`, where FP = `∫₀ᵗ P(s) ds` and
/// FN = `∫ₜ¹ (1 − P(s)) ds` for [`candidate_probability`] `P`.
///
/// Integrals use composite Simpson's rule on 256 intervals, and powers are
/// built by repeated multiplication, so results are identical on every
/// platform. Ties (within 1e-12) go to fewer unused values, then fewer
/// bands. Nothing is silently left unused: [`Tuned::unused`] reports it.
/// The search costs about `514 · num_perm · ln(num_perm)` multiply-adds.
///
/// ```
/// use lshdb::sketch::lsh::{tune, TuneGoal};
/// let tuned = tune(&TuneGoal::new(0.8, 128))?;
/// let b = tuned.banding;
/// assert_eq!(b.bands() * b.rows() + tuned.unused, 128);
/// assert!((b.threshold() - 0.8).abs() < 0.12);
/// # Ok::<(), lshdb::Error>(())
/// ```
pub fn tune(goal: &TuneGoal) -> Result<Tuned> {
    goal.validate()?;
    let n = goal.num_perm;
    let mut areas = Areas::new(goal.threshold);
    let (mut fp, mut fneg) = (Vec::new(), Vec::new());
    let mut best: Option<(f64, Tuned)> = None;
    for rows in 1..=n {
        areas.next_rows(n / rows, &mut fp, &mut fneg);
        for (i, (&fp_area, &fn_area)) in fp.iter().zip(&fneg).enumerate() {
            let (bands, unused) = (i + 1, n - (i + 1) * rows);
            let cost = goal.false_positive_weight * fp_area + goal.false_negative_weight * fn_area;
            let better = best.as_ref().is_none_or(|(best_cost, cur)| {
                cost < best_cost - TIE
                    || (cost <= best_cost + TIE
                        && (unused, bands) < (cur.unused, cur.banding.bands))
            });
            if better {
                let banding = Banding { bands, rows };
                let tuned = Tuned {
                    banding,
                    false_positive_area: fp_area,
                    false_negative_area: fn_area,
                    unused,
                };
                best = Some((cost, tuned));
            }
        }
    }
    // Unreachable: validation guarantees num_perm ≥ 1, so (1, 1) was tried.
    best.map(|(_, tuned)| tuned)
        .ok_or_else(|| Error::invalid("num_perm", "must be at least 1"))
}

/// One Simpson node: position `s`, weight (including `h/3`), and `s^r` for
/// the current `r`.
#[derive(Debug, Clone, Copy)]
struct Node {
    s: f64,
    weight: f64,
    pow: f64,
}

/// FP and FN areas for every `b` at successive `r = 1, 2, …`.
#[derive(Debug)]
struct Areas {
    below: Vec<Node>,
    above: Vec<Node>,
}

impl Areas {
    fn new(t: f64) -> Self {
        let (below, above) = (simpson_nodes(0.0, t), simpson_nodes(t, 1.0));
        Self { below, above }
    }

    /// Moves on to the next `r` and sets `fp[b−1]`, `fneg[b−1]` to the areas
    /// of `(b, r)` for `b` in `1..=max_bands`.
    fn next_rows(&mut self, max_bands: usize, fp: &mut Vec<f64>, fneg: &mut Vec<f64>) {
        sweep(&mut self.below, max_bands, fp, |miss| 1.0 - miss);
        sweep(&mut self.above, max_bands, fneg, |miss| miss);
    }
}

/// Raises every node's `s^r` to `s^(r+1)` and sets `out[b−1]` to the Simpson
/// sum of `f((1 − s^r)^b)` for `b` in `1..=max_bands`.
fn sweep(nodes: &mut [Node], max_bands: usize, out: &mut Vec<f64>, f: impl Fn(f64) -> f64) {
    out.clear();
    out.resize(max_bands, 0.0);
    for node in nodes {
        node.pow *= node.s;
        let q = 1.0 - node.pow;
        let mut miss = 1.0;
        for slot in out.iter_mut() {
            miss *= q;
            *slot += node.weight * f(miss);
        }
    }
}

/// Composite Simpson nodes on `[a, b]` with `SIMPSON_INTERVALS` intervals.
fn simpson_nodes(a: f64, b: f64) -> Vec<Node> {
    simpson(a, b, SIMPSON_INTERVALS)
        .map(|(s, weight)| Node {
            s,
            weight,
            pow: 1.0,
        })
        .collect()
}

/// The `n + 1` points of composite Simpson's rule on `[a, b]` with `n`
/// intervals (`n` even), each with its weight.
pub(crate) fn simpson(a: f64, b: f64, n: usize) -> impl Iterator<Item = (f64, f64)> {
    let h = (b - a) / n as f64;
    (0..=n).map(move |i| {
        let c = if i == 0 || i == n {
            1.0
        } else {
            [2.0, 4.0][i % 2]
        };
        (a + (b - a) * (i as f64 / n as f64), c * h / 3.0)
    })
}

#[cfg(test)]
mod tests;
