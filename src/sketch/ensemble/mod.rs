//! LSH Ensemble for containment search (Zhu, Nargesian, Pu & Miller,
//! "LSH Ensemble: Internet-Scale Domain Search", VLDB 2016): size classes,
//! the containment → Jaccard bound of a class, the prefix-tree keys of a
//! signature, and the per-class choice of how many trees to probe at what
//! depth.
//!
//! **Containment** of a query Q in a stored set X is |Q ∩ X| / |Q|. For
//! |Q| = q, |X| = x and containment c, the Jaccard similarity is
//! J = c·q / (q + x − c·q), which falls as x grows. So every X of a size
//! class with upper bound u and containment at least t has Jaccard at least
//! [`jaccard_bound`]`(t, q, u)`, and MinHash LSH at that Jaccard threshold,
//! probed class by class, finds them.
//!
//! **Size classes** are geometric: class ⌊p·log₂ x⌋ for `p` classes per
//! octave (default 2, so a class spans a factor √2). A document's class
//! depends on its size alone, so a dynamic database never re-partitions; the
//! paper's equi-depth partitions need the whole size distribution up front.
//!
//! **Prefix trees** (LSH Forest, Bawa, Condie & Ganesan 2005): the
//! signature's first `trees × depth` values are cut into `trees` groups of
//! `depth`; each group becomes one 64-bit key of `depth` 16-bit fragments.
//! One posting per tree serves every band width r ≤ depth: a probe with r
//! rows is a range scan over the keys sharing the first r fragments. This is
//! what datasketch's `MinHashLSHEnsemble` does with one whole index per r.

use crate::hash::mix64;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Values per prefix tree unless told otherwise (and at most): four 16-bit
/// fragments fill a 64-bit key.
pub const MAX_DEPTH: u32 = 4;

/// Prefix trees unless the signature is shorter (`num_perm / 4`).
pub const DEFAULT_TREES: u32 = 32;

/// The most prefix trees an index may have (the tree is one byte of the key).
pub const MAX_TREES: u32 = 255;

/// Size classes per doubling of the set size unless told otherwise.
pub const DEFAULT_CLASSES_PER_OCTAVE: u32 = 2;

/// The most size classes per octave (class numbers must fit a byte).
pub const MAX_CLASSES_PER_OCTAVE: u32 = 4;

/// Weight of the false-positive area in the per-class choice; candidates
/// are verified against the stored sets, so a false positive costs time
/// only (as in [`crate::sketch::lsh::TuneGoal`]).
pub const FALSE_POSITIVE_WEIGHT: f64 = 0.05;

/// Weight of the false-negative area (lost recall).
pub const FALSE_NEGATIVE_WEIGHT: f64 = 0.95;

/// The seed mixed into every fragment hash. Part of the file format.
pub const FRAGMENT_SEED: u64 = 0x636f_6e74_6169_6e00; // "contain\0"

/// The false-negative area of a plan starts at the threshold or here,
/// whichever is lower.
const FN_FLOOR: f64 = 0.9;

/// Simpson intervals for the per-class areas (even).
const SIMPSON_INTERVALS: usize = 64;

/// The shape of a containment index: prefix trees, their depth, and size
/// classes per octave. Stored with the settings (see `docs/format.md`).
///
/// ```
/// use lshdb::sketch::ensemble::Ensemble;
/// let e = Ensemble::for_num_perm(128)?;
/// assert_eq!((e.trees(), e.depth()), (32, 4));
/// assert_eq!(e.class_of(1100), e.class_of(1150)); // within a factor of √2
/// assert_ne!(e.class_of(1000), e.class_of(1500));
/// # Ok::<(), lshdb::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ensemble {
    trees: u32,
    depth: u32,
    classes_per_octave: u32,
}

/// How one size class is probed, as [`Ensemble::plan`] chooses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassPlan {
    /// Trees probed (the first `trees` of the index).
    pub trees: usize,
    /// Fragments a probe must share (the band width r).
    pub depth: usize,
    /// The lowest Jaccard similarity a set of this class with containment
    /// at the threshold can have.
    pub jaccard_bound: f64,
    /// Probability that such a set shares a probed prefix with the query:
    /// 1 − (1 − s^r)^b at `jaccard_bound`. Sets of the class with higher
    /// containment, or smaller than the bound, are found at least as often.
    pub candidate_probability: f64,
}

impl Ensemble {
    /// The default shape for signatures of `num_perm` values: depth 4 (or
    /// `num_perm` when shorter) and as many trees as fit, at most 32.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `num_perm` = 0.
    pub fn for_num_perm(num_perm: usize) -> Result<Self> {
        let depth = (MAX_DEPTH as usize).min(num_perm);
        if depth == 0 {
            return Err(Error::invalid("num_perm", "must be at least 1"));
        }
        let trees = (num_perm / depth).min(DEFAULT_TREES as usize) as u32;
        Self::new(trees, depth as u32, DEFAULT_CLASSES_PER_OCTAVE, num_perm)
    }

    /// A validated shape: 1 ≤ depth ≤ 4, 1 ≤ trees ≤ 255,
    /// trees × depth ≤ `num_perm`, 1 ≤ classes per octave ≤ 4.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the offending value.
    pub fn new(trees: u32, depth: u32, classes_per_octave: u32, num_perm: usize) -> Result<Self> {
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(Error::invalid(
                "containment depth",
                format!("must be 1 to {MAX_DEPTH}, got {depth}"),
            ));
        }
        if !(1..=MAX_TREES).contains(&trees) || (trees * depth) as usize > num_perm {
            return Err(Error::invalid(
                "containment trees",
                format!(
                    "{trees} trees of {depth} values need 1 to {MAX_TREES} trees and at most \
                     num_perm = {num_perm} values"
                ),
            ));
        }
        if !(1..=MAX_CLASSES_PER_OCTAVE).contains(&classes_per_octave) {
            return Err(Error::invalid(
                "containment classes per octave",
                format!("must be 1 to {MAX_CLASSES_PER_OCTAVE}, got {classes_per_octave}"),
            ));
        }
        Ok(Self {
            trees,
            depth,
            classes_per_octave,
        })
    }

    /// Re-validates a shape read from a file against its signature length.
    ///
    /// # Errors
    /// As [`Ensemble::new`].
    pub fn validate(&self, num_perm: usize) -> Result<Self> {
        Self::new(self.trees, self.depth, self.classes_per_octave, num_perm)
    }

    /// Number of prefix trees (postings per document).
    pub fn trees(&self) -> usize {
        self.trees as usize
    }

    /// Signature values per tree.
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// Size classes per doubling of the set size.
    pub fn classes_per_octave(&self) -> u32 {
        self.classes_per_octave
    }

    /// The size class of a set of `len` elements: ⌊p·log₂ len⌋, computed
    /// exactly as the bit length of len^p minus one (0 for `len` ≤ 1).
    pub fn class_of(&self, len: u32) -> u8 {
        let power = u128::from(len.max(1)).pow(self.classes_per_octave);
        (127 - power.leading_zeros()) as u8
    }

    /// The smallest and largest set size of class `class` (the largest is
    /// `u32::MAX` for the last class that sizes reach).
    pub fn class_bounds(&self, class: u8) -> (u64, u64) {
        let low = self.class_start(u32::from(class));
        let high = self
            .class_start(u32::from(class) + 1)
            .saturating_sub(1)
            .min(u64::from(u32::MAX));
        (low, high)
    }

    /// The smallest size whose class is at least `class`: the least x with
    /// x^p ≥ 2^class.
    fn class_start(&self, class: u32) -> u64 {
        if class == 0 {
            return 1;
        }
        let p = self.classes_per_octave;
        // Sizes are u32, so x^p < 2^(32p): classes from 32p on are empty.
        if class >= 32 * p {
            return 1 << 32;
        }
        let reaches = |x: u64| u128::from(x).pow(p) >> class != 0;
        // A float estimate, then exact integer steps to the boundary.
        let mut x = (2f64.powf(f64::from(class) / f64::from(p)).floor() as u64).max(1);
        while x > 1 && reaches(x - 1) {
            x -= 1;
        }
        while !reaches(x) && x <= u64::from(u32::MAX) {
            x += 1;
        }
        x
    }

    /// One key per tree: tree i's `depth` values, each hashed to a 16-bit
    /// fragment, packed high to low (unused low fragments are 0). Clears
    /// `out` first; a signature too short for every tree gives fewer keys.
    pub fn prefixes(&self, signature: &[u32], out: &mut Vec<u64>) {
        out.clear();
        let depth = self.depth();
        out.extend(
            signature
                .chunks_exact(depth)
                .take(self.trees())
                .map(|values| {
                    values
                        .iter()
                        .enumerate()
                        .fold(0u64, |key, (i, &v)| key | fragment(v) << (48 - 16 * i))
                }),
        );
    }

    /// The inclusive range of keys that share the first `rows` fragments of
    /// `prefix` (1 ≤ rows ≤ depth).
    pub fn prefix_range(prefix: u64, rows: usize) -> (u64, u64) {
        let free_bits = 64 - 16 * rows.clamp(1, MAX_DEPTH as usize);
        let low_mask = if free_bits == 0 {
            0
        } else {
            (1u64 << free_bits) - 1
        };
        (prefix & !low_mask, prefix | low_mask)
    }

    /// How to probe class `class` for a query of `q` elements at
    /// containment threshold `t`: the (trees b, depth r) minimising
    /// `FALSE_POSITIVE_WEIGHT · FP + FALSE_NEGATIVE_WEIGHT · FN`, where
    /// FP = ∫₀^min(t, x/q) P(c) dc and FN = ∫ₐ^min(1, x/q) (1 − P(c)) dc
    /// (a = min(t, 0.9), so that FN does not vanish at t = 1) over
    /// containment c, P(c) = 1 − (1 − J(c)^r)^b, J(c) = c / (1 + x/q − c) and
    /// x the class's largest size (the paper's objective; datasketch's
    /// `_optimal_param`). `None` when no set of the class can reach `t`
    /// (its largest size is below t·q).
    pub fn plan(&self, class: u8, q: usize, t: f64) -> Option<ClassPlan> {
        let (_, upper) = self.class_bounds(class);
        let q = q.max(1) as f64;
        if (upper as f64) < t * q {
            return None;
        }
        let xq = upper as f64 / q;
        let below = simpson_nodes(0.0, t.min(xq), xq);
        // The false-negative area would vanish at t = 1 (and all but vanish
        // near it), leaving nothing to weigh against false positives: it is
        // taken from at most FN_FLOOR up.
        let from = t.min(FN_FLOOR);
        let above = simpson_nodes(from, xq.min(1.0).max(from), xq);
        let (max_b, max_r) = (self.trees(), self.depth());
        let mut best: Option<(f64, usize, usize)> = None;
        let (mut fp, mut fneg) = (vec![0.0; max_b], vec![0.0; max_b]);
        for r in 1..=max_r {
            areas(&below, r, &mut fp, |miss| 1.0 - miss);
            areas(&above, r, &mut fneg, |miss| miss);
            for b in 1..=max_b {
                let cost = FALSE_POSITIVE_WEIGHT * fp[b - 1] + FALSE_NEGATIVE_WEIGHT * fneg[b - 1];
                // Ties (within 1e-12) go to the longer prefix (fewer false
                // positives), then to fewer trees (fewer look-ups).
                let better = match best {
                    None => true,
                    Some((best_cost, _, best_r)) => {
                        cost < best_cost - 1e-12 || (cost <= best_cost + 1e-12 && r > best_r)
                    }
                };
                if better {
                    best = Some((cost, b, r));
                }
            }
        }
        let (_, trees, depth) = best?;
        let jaccard_bound = jaccard_bound(t, q as usize, upper);
        Some(ClassPlan {
            trees,
            depth,
            jaccard_bound,
            candidate_probability: crate::sketch::lsh::candidate_probability(
                jaccard_bound,
                trees,
                depth,
            ),
        })
    }
}

/// The lowest Jaccard similarity of a query of `q` elements with a set of
/// at most `upper` elements that contains at least `t` of it:
/// t·q / (q + upper − t·q) (1 when that exceeds 1).
///
/// ```
/// use lshdb::sketch::ensemble::jaccard_bound;
/// assert!((jaccard_bound(0.5, 100, 100) - 1.0 / 3.0).abs() < 1e-12);
/// ```
pub fn jaccard_bound(t: f64, q: usize, upper: u64) -> f64 {
    let (q, u) = (q as f64, upper as f64);
    let common = t * q;
    (common / (q + u - common).max(common)).min(1.0)
}

/// The 16-bit fragment of one signature value in a prefix key.
pub fn fragment(value: u32) -> u64 {
    mix64(u64::from(value) ^ FRAGMENT_SEED) >> 48
}

/// The least number of common elements k with k / q ≥ t (q ≥ 1), computed
/// with the same division the reported containment uses.
pub fn common_needed(t: f64, q: usize) -> usize {
    let qf = q as f64;
    let mut k = (t * qf).ceil().max(0.0) as usize;
    while k > 0 && (k - 1) as f64 / qf >= t {
        k -= 1;
    }
    while k <= q && (k as f64 / qf) < t {
        k += 1;
    }
    k
}

/// |A ∩ B| when it is at least `need`, else `None`: one merge of two
/// ascending distinct slices that stops once the elements left in `a`
/// cannot make up the difference.
///
/// ```
/// use lshdb::sketch::ensemble::intersection_at_least;
/// assert_eq!(intersection_at_least(&[1, 2, 3, 4], &[2, 3, 9], 2), Some(2));
/// assert_eq!(intersection_at_least(&[1, 2, 3, 4], &[2, 3, 9], 3), None);
/// ```
pub fn intersection_at_least(a: &[u32], b: &[u32], need: usize) -> Option<usize> {
    if a.len().min(b.len()) < need {
        return None;
    }
    // A short query against a long document: a binary search per query
    // element (O(q log x)) beats the merge (O(q + x)).
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if large.len() > 16 * small.len() {
        let (mut common, mut rest) = (0, large);
        for (i, value) in small.iter().enumerate() {
            if common + (small.len() - i) < need {
                return None;
            }
            match rest.binary_search(value) {
                Ok(at) => {
                    common += 1;
                    rest = &rest[at + 1..];
                }
                Err(at) => rest = &rest[at..],
            }
        }
        return (common >= need).then_some(common);
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if common + (a.len() - i).min(b.len() - j) < need {
            return None;
        }
        let (x, y) = (a[i], b[j]);
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    (common >= need).then_some(common)
}

/// One Simpson node over containment: weight (with h/3) and J(c).
#[derive(Debug, Clone, Copy)]
struct Node {
    weight: f64,
    jaccard: f64,
}

/// Composite Simpson nodes on the containment interval [a, b] (empty when
/// b ≤ a), each with the Jaccard J(c) = c / (1 + xq − c).
fn simpson_nodes(a: f64, b: f64, xq: f64) -> Vec<Node> {
    if b <= a {
        return Vec::new();
    }
    super::lsh::simpson(a, b, SIMPSON_INTERVALS)
        .map(|(c, weight)| {
            let jaccard = (c / (1.0 + xq - c).max(c)).clamp(0.0, 1.0);
            Node { weight, jaccard }
        })
        .collect()
}

/// Sets `out[b − 1]` to the Simpson sum of `f((1 − J^r)^b)` for every b.
fn areas(nodes: &[Node], r: usize, out: &mut [f64], f: impl Fn(f64) -> f64) {
    out.fill(0.0);
    for node in nodes {
        let q = 1.0 - node.jaccard.powi(r as i32);
        let mut miss = 1.0;
        for slot in out.iter_mut() {
            miss *= q;
            *slot += node.weight * f(miss);
        }
    }
}

#[cfg(test)]
mod tests;
