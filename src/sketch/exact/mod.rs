//! Exact all-pairs similarity join: every pair of sets with Jaccard ≥ t,
//! found without sketches and without missing one.
//!
//! This is the ground truth the LSH index is measured against, and an exact
//! mode for corpora small enough to afford it. The algorithm is AllPairs
//! (Bayardo, Ma and Srikant, WWW 2007) with the positional filter and the
//! indexing-prefix refinement of PPJoin (Xiao, Wang, Lin and Yu, WWW 2008):
//!
//! 1. **Global token order.** Every token (shingle hash) is counted over all
//!    sets, and tokens are ranked by increasing document frequency, rare
//!    first (ties by value). Each set is rewritten as its sorted ranks, so
//!    a set's first tokens are its rarest.
//! 2. **Prefix filter.** Two sets x, y with J(x, y) ≥ t share at least
//!    α = ⌈t/(1+t)·(|x|+|y|)⌉ tokens, and then the first |x| − α + 1 tokens
//!    of x and the first |y| − α + 1 tokens of y share a token. Sets are
//!    processed by increasing size. Each probing set x (the larger one of a
//!    pair) looks at its *probe prefix* of |x| − ⌈t·|x|⌉ + 1 tokens; each
//!    indexed set y (the smaller one) is indexed on its *mid-prefix* of
//!    |y| − ⌈2t/(1+t)·|y|⌉ + 1 tokens only, which is enough because
//!    |y| ≤ |x|. The rare tokens of the prefixes keep posting lists short.
//! 3. **Size filter.** J(x, y) ≤ |y|/|x| for |y| ≤ |x|, so only postings of
//!    sets with |y| ≥ ⌈t·|x|⌉ are read (a binary search: posting lists are
//!    in processing order, which is size order).
//! 4. **Positional filter.** When x's token at position i meets y's token
//!    at position j, the overlap can be at most the matches found so far
//!    plus min(|x| − i, |y| − j); a candidate that cannot reach α is dropped
//!    for good.
//! 5. **Bound before verification.** After the probe, the count is every
//!    match between the two prefixes; whichever prefix ends on the smaller
//!    token cannot match the other set's unread part, which bounds the
//!    matches still to come by the rest of the other set (PPJoin).
//! 6. **Verification.** Tokens are in rank order, so the matches up to the
//!    last one found are all counted; the rest of y is tested against a
//!    bitset of x, stopping as soon as α is out of reach. A pair that
//!    reaches α has its similarity computed by [`jaccard`] on the original
//!    sets, so every reported value is bit-identical to `jaccard(a, b)` and
//!    a pair is reported exactly when `jaccard(a, b) >= t`.
//!
//! Every filter bound is rounded in the conservative direction (t·n is
//! lowered by a relative 10⁻¹² before rounding up), so floating-point error
//! can only add candidates, never lose a pair: pairs exactly at the
//! threshold (|A ∩ B| = 4, |A ∪ B| = 5 at t = 0.8, where 0.8 · 5 computes
//! to 4.000000000000001) are found.
//!
//! **Cost.** The filters do not change the worst case: the output alone can
//! be quadratic (n identical sets give n(n−1)/2 pairs), and at low
//! thresholds prefixes grow towards whole sets (about half of each set at
//! t = 0.5), so the work grows quickly as t falls. In practice it is the
//! sum, over prefix tokens, of their (rare-first, so short) posting lists,
//! plus one bitset pass per surviving candidate. Ranking sorts all N
//! tokens once (O(N log N)); probing runs in parallel on rayon, every set
//! probing an index of the sets before it in processing order, and the
//! output is sorted, so it does not depend on the thread count. On the
//! 63,498 Debian long descriptions (character 5-shingles, 20.6 M tokens)
//! t = 0.8 takes about 3 CPU-seconds and t = 0.5 about 20.
//!
//! **Memory.** Everything is in memory: the input sets, a rank-rewritten
//! copy of them (4 bytes a token), a value → rank hash table (8 to 16
//! bytes a distinct token), an inverted index of the indexing prefixes
//! (12 bytes a posting, 8 bytes a distinct token), and per rayon job an
//! 8-byte counter per set and a bit per distinct token, plus the output.
//! That suits a benchmark's ground truth or a corpus of some hundred
//! thousand documents; it is not an index for a large one — that is what
//! LSH is for.
//!
//! Step 1 (the global token order) lives in `rank`; the filters, the
//! index and the probe here.

use crate::sketch::measures::jaccard;
use crate::{Error, Result};
use rayon::prelude::*;
use std::cmp::Ordering;

mod rank;
#[cfg(test)]
mod tests;

use rank::rank_sets;

/// Relative slack subtracted from t·n before rounding up. It is far above
/// the rounding error of the products and quotients involved (about 2⁻⁵²)
/// and far below the gap to the next integer for any n below 10¹².
const SLACK: f64 = 1e-12;

/// Marks a candidate the positional filter has dropped for this probe.
const PRUNED: u32 = u32::MAX;

/// Every pair of `sets` with exact Jaccard similarity ≥ `threshold`, as
/// `(i, j, jaccard(&sets[i], &sets[j]))` with `i < j`, sorted by `(i, j)`.
///
/// `sets` are sorted, distinct `u32` values (shingle hashes; any values).
/// Empty sets pair with nothing. The similarity is computed by
/// [`jaccard`], so it is bit-identical to what a brute-force loop over all
/// pairs would report, and the pairs are exactly those where
/// `jaccard(a, b) >= threshold`. The result is deterministic: it does not
/// depend on the number of threads. See the [module documentation](self)
/// for the algorithm, its cost, and its memory (everything in memory).
///
/// ```
/// use lshdb::sketch::exact::all_pairs;
/// let sets = vec![
///     vec![1, 2, 3, 4],     // 0
///     vec![1, 2, 3, 4, 5],  // 1: J(0, 1) = 4/5
///     vec![7, 8, 9],        // 2
///     vec![],               // 3: empty, pairs with nothing
///     vec![1, 2, 3, 4],     // 4: a copy of 0
/// ];
/// assert_eq!(
///     all_pairs(&sets, 0.8)?,
///     vec![(0, 1, 0.8), (0, 4, 1.0), (1, 4, 0.8)]
/// );
/// # Ok::<(), lshdb::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidParameter`] when `threshold` is not in (0, 1], when a
/// set is not sorted and distinct, or when there are 2³² − 1 sets or
/// values in all, or more.
pub fn all_pairs(sets: &[Vec<u32>], threshold: f64) -> Result<Vec<(usize, usize, f64)>> {
    check_join_threshold(threshold)?;
    check_sets(sets)?;
    let ranked = rank_sets(sets);
    let t = threshold;

    // Processing order: by size, then input index; empty sets never pair.
    let mut order: Vec<u32> = (0..sets.len() as u32)
        .filter(|&i| !sets[i as usize].is_empty())
        .collect();
    order.sort_unstable_by_key(|&i| (sets[i as usize].len(), i));

    let index = Index::build(&order, &ranked, t);

    let found: Vec<Vec<(usize, usize, f64)>> = (0..order.len())
        .into_par_iter()
        .map_init(
            || Probe::new(order.len(), index.tokens()),
            |probe, pos| probe.run(pos, &order, sets, &ranked, &index, t),
        )
        .collect();
    let mut pairs: Vec<(usize, usize, f64)> = found.into_iter().flatten().collect();
    pairs.par_sort_unstable_by_key(|&(i, j, _)| (i, j));
    Ok(pairs)
}

/// Validates a threshold for [`all_pairs`]: in (0, 1].
pub(crate) fn check_join_threshold(threshold: f64) -> Result<()> {
    if threshold > 0.0 && threshold <= 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "threshold",
            format!("an exact similarity threshold must be in (0, 1], got {threshold}"),
        ))
    }
}

/// Every set ascending and distinct, and every count fits the u32 fields.
fn check_sets(sets: &[Vec<u32>]) -> Result<()> {
    if sets.len() >= u32::MAX as usize {
        return Err(Error::invalid(
            "sets",
            format!(
                "at most {} sets are supported, got {}",
                u32::MAX - 1,
                sets.len()
            ),
        ));
    }
    let total: usize = sets.iter().map(Vec::len).sum();
    if total >= u32::MAX as usize {
        return Err(Error::invalid(
            "sets",
            format!(
                "at most {} values in all are supported, got {total}",
                u32::MAX - 1
            ),
        ));
    }
    for (i, set) in sets.iter().enumerate() {
        if set.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::invalid(
                "sets",
                format!("set {i} is not sorted and distinct; pass shingle sets, not bags"),
            ));
        }
    }
    Ok(())
}

/// ⌈x⌉ of a computed bound x = t·n, rounded down by a relative [`SLACK`]
/// first, so that the rounding error of the product never raises the
/// bound: t = 0.8, n = 5 computes 4.000000000000001 and gives 4, not 5.
/// A bound that comes out one too low only costs a candidate.
fn ceil_times(t: f64, n: usize) -> usize {
    let x = t * n as f64;
    (x - x * SLACK).ceil().max(0.0) as usize
}

/// Tokens an overlap of x and y needs for J ≥ t: ⌈t/(1+t)·(|x|+|y|)⌉,
/// conservatively rounded.
fn min_overlap(t: f64, x: usize, y: usize) -> usize {
    ceil_times(t / (1.0 + t), x + y)
}

/// Probe-prefix length of a set of `n` tokens: n − ⌈t·n⌉ + 1 (at most n).
fn probe_prefix(t: f64, n: usize) -> usize {
    (n + 1).saturating_sub(ceil_times(t, n)).min(n)
}

/// Indexing-prefix (PPJoin mid-prefix) length: n − ⌈2t/(1+t)·n⌉ + 1.
fn index_prefix(t: f64, n: usize) -> usize {
    (n + 1).saturating_sub(min_overlap(t, n, n)).min(n)
}

/// Inverted index of every set's indexing prefix, in compressed rows:
/// the postings of rank r are `postings[start[r]..start[r + 1]]`,
/// ascending in processing position and therefore in set size.
struct Index {
    start: Vec<usize>,
    postings: Vec<Posting>,
    /// Per processing position: the set's size, the length of its indexing
    /// prefix, and the prefix's last token, for the bound before
    /// verification without reading the set.
    sets: Vec<Indexed>,
}

/// What the index keeps of one set.
#[derive(Clone, Copy)]
struct Indexed {
    size: u32,
    prefix: u32,
    last: u32,
}

/// One indexed token: the set's processing position, the token's position
/// in the set, and the set's size (kept here so that a probe reads one
/// array, not two).
#[derive(Clone, Copy, Default)]
struct Posting {
    pos: u32,
    at: u32,
    size: u32,
}

impl Index {
    fn build(order: &[u32], ranked: &[Vec<u32>], t: f64) -> Self {
        let tokens = ranked
            .iter()
            .flatten()
            .map(|&r| r as usize + 1)
            .max()
            .unwrap_or(0);
        let mut start = vec![0usize; tokens + 1];
        for &i in order {
            let set = &ranked[i as usize];
            for &r in &set[..index_prefix(t, set.len())] {
                start[r as usize + 1] += 1;
            }
        }
        for r in 0..tokens {
            start[r + 1] += start[r];
        }
        let mut fill = start.clone();
        let mut postings = vec![Posting::default(); start[tokens]];
        let mut sets = Vec::with_capacity(order.len());
        for (pos, &i) in order.iter().enumerate() {
            let set = &ranked[i as usize];
            let prefix = index_prefix(t, set.len());
            sets.push(Indexed {
                size: set.len() as u32,
                prefix: prefix as u32,
                last: set[prefix - 1],
            });
            for (at, &r) in set[..prefix].iter().enumerate() {
                let slot = &mut fill[r as usize];
                postings[*slot] = Posting {
                    pos: pos as u32,
                    at: at as u32,
                    size: set.len() as u32,
                };
                *slot += 1;
            }
        }
        Self {
            start,
            postings,
            sets,
        }
    }

    /// The number of distinct tokens (ranks).
    fn tokens(&self) -> usize {
        self.start.len() - 1
    }

    fn list(&self, rank: u32) -> &[Posting] {
        let r = rank as usize;
        match (self.start.get(r), self.start.get(r + 1)) {
            (Some(&a), Some(&b)) => &self.postings[a..b],
            _ => &[],
        }
    }
}

/// One rayon job's scratch space: per processing position, the overlap
/// found in the prefixes and the position in that set of its last match;
/// the positions touched by the current probe; and the probing set as a
/// bitset over ranks, for verification.
struct Probe {
    found: Vec<(u32, u32)>,
    touched: Vec<u32>,
    bits: Vec<u64>,
}

impl Probe {
    fn new(sets: usize, tokens: usize) -> Self {
        Self {
            found: vec![(0, 0); sets],
            touched: Vec::new(),
            bits: vec![0; tokens.div_ceil(64)],
        }
    }

    /// The pairs of the set at processing position `pos` with the sets
    /// before it.
    fn run(
        &mut self,
        pos: usize,
        order: &[u32],
        sets: &[Vec<u32>],
        ranked: &[Vec<u32>],
        index: &Index,
        t: f64,
    ) -> Vec<(usize, usize, f64)> {
        let xi = order[pos] as usize;
        let x = &ranked[xi];
        let px = self.match_prefixes(pos, x, index, t);
        if self.touched.is_empty() {
            return Vec::new();
        }
        for &r in x {
            self.bits[r as usize / 64] |= 1 << (r % 64);
        }
        let mut out = Vec::new();
        for &p in &self.touched {
            let (count, last) = std::mem::take(&mut self.found[p as usize]);
            if count == PRUNED {
                continue;
            }
            let yi = order[p as usize] as usize;
            if !self.may_reach(x, px, &ranked[yi], index.sets[p as usize], (count, last), t) {
                continue;
            }
            let similarity = jaccard(&sets[xi], &sets[yi]);
            if similarity >= t {
                out.push((xi.min(yi), xi.max(yi), similarity));
            }
        }
        for &r in x {
            self.bits[r as usize / 64] = 0;
        }
        self.touched.clear();
        out
    }

    /// Counts, for each set before `pos` in processing order, the matches
    /// between the probe prefix of `x` and its indexing prefix, pruning
    /// those the positional filter rules out; returns the probe prefix's
    /// length.
    fn match_prefixes(&mut self, pos: usize, x: &[u32], index: &Index, t: f64) -> usize {
        let nx = x.len();
        let min_size = ceil_times(t, nx) as u32;
        let px = probe_prefix(t, nx);
        for (i, &rank) in x[..px].iter().enumerate() {
            let list = index.list(rank);
            // Sets no smaller than the size filter allows, up to this one
            // in processing order.
            let begin = list.partition_point(|posting| posting.size < min_size);
            for posting in &list[begin..] {
                if posting.pos as usize >= pos {
                    break;
                }
                let (p, j, ny) = (posting.pos, posting.at, posting.size as usize);
                let (count, last) = &mut self.found[p as usize];
                if *count == PRUNED {
                    continue;
                }
                if *count == 0 {
                    self.touched.push(p);
                }
                // Positional filter: the matches so far, this one, and at
                // most every token after it in the shorter remainder.
                let bound = *count as usize + (nx - i).min(ny - j as usize);
                if bound >= min_overlap(t, nx, ny) {
                    *count += 1;
                    *last = j;
                } else {
                    *count = PRUNED;
                }
            }
        }
        px
    }

    /// Whether `x` and `y`, with `count` matches found in their prefixes
    /// and the last at `y[last]`, can still reach the overlap the
    /// threshold needs: PPJoin's bound, then a count of the rest of `y`
    /// against the bitset of `x`.
    fn may_reach(
        &self,
        x: &[u32],
        px: usize,
        y: &[u32],
        indexed: Indexed,
        (count, last): (u32, u32),
        t: f64,
    ) -> bool {
        let nx = x.len();
        let (ny, py, last) = (
            indexed.size as usize,
            indexed.prefix as usize,
            last as usize,
        );
        let need = min_overlap(t, nx, ny);
        // `count` is every match between x's probe prefix and y's
        // indexing prefix. The prefix that ends on the smaller token
        // cannot match the other set's unread part, so the matches
        // still to come lie in the remainder of the other one, and
        // after y[last] (PPJoin's bound before verification).
        let rest = match x[px - 1].cmp(&indexed.last) {
            Ordering::Less => nx - px,
            Ordering::Greater => ny - py,
            Ordering::Equal => (nx - px).min(ny - py),
        };
        if count as usize + rest.min(ny - last - 1) < need {
            return false;
        }
        // Every match of x and y up to y[last] was counted in the
        // prefixes (tokens are in rank order), so the overlap is the
        // count plus the matches of y's tokens after `last`.
        reaches(&self.bits, &y[last + 1..], count as usize, need)
    }
}

/// Whether `count` plus the number of `rest` found in the bitset `bits`
/// reaches `need`; stops as soon as the rest of `rest` cannot make up the
/// difference.
fn reaches(bits: &[u64], rest: &[u32], count: usize, need: usize) -> bool {
    let mut common = count;
    for (k, &r) in rest.iter().enumerate() {
        if common >= need {
            return true;
        }
        if common + (rest.len() - k) < need {
            return false;
        }
        common += (bits[r as usize / 64] >> (r % 64)) as usize & 1;
    }
    common >= need
}
