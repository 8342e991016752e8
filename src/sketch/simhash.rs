//! SimHash fingerprints, Hamming distance, and pigeonhole block splitting.
//!
//! A SimHash fingerprint is a 64-bit summary of a weighted feature set whose
//! Hamming distance approximates the angle between the feature vectors. This
//! module owns the weighted column-sum mechanism ([`column_sums`],
//! [`fingerprint`]), its application to bags of shingle hashes
//! ([`from_bag`], [`from_weighted`]), and the block split ([`block`]) that the
//! Hamming-distance index uses to find near fingerprints by exact lookups.

use crate::hash::SplitMix64;
use crate::{Error, Result};

/// The weighted column sums of textbook SimHash, column 0 first, where
/// column 0 is the most significant of the low `bits` bits.
///
/// For each feature `(fingerprint, weight)` and each bit position, `+weight`
/// is added to the column when that bit of the fingerprint is 1, `−weight`
/// when it is 0. Bits above `bits` in the feature fingerprints are ignored.
/// `bits` must be 1 to 64.
///
/// ```
/// use lshdb::sketch::simhash::column_sums;
/// let sums = column_sums([(0b10, 1.0), (0b11, 2.0)], 2)?;
/// assert_eq!(sums, [3.0, 1.0]);
/// # Ok::<(), lshdb::Error>(())
/// ```
pub fn column_sums<I>(features: I, bits: u32) -> Result<Vec<f64>>
where
    I: IntoIterator<Item = (u64, f64)>,
{
    check_bits(bits)?;
    let sums = accumulate(features, bits);
    Ok((0..bits as usize).rev().map(|pos| sums[pos]).collect())
}

/// The weighted SimHash of `features` over the low `bits` bits: bit `j` of
/// the result is 1 iff column `j`'s sum (see [`column_sums`]) is strictly
/// positive; a sum of exactly 0 (or NaN) gives 0. Bits above `bits` are
/// ignored in the inputs and 0 in the output. `bits` must be 1 to 64.
///
/// ```
/// use lshdb::sketch::simhash::fingerprint;
/// let fp = fingerprint([(0b1100, 1.0), (0b1010, 1.0), (0b1001, 1.0)], 4)?;
/// assert_eq!(fp, 0b1000);
/// assert!(fingerprint([(1, 1.0)], 0).is_err());
/// # Ok::<(), lshdb::Error>(())
/// ```
pub fn fingerprint<I>(features: I, bits: u32) -> Result<u64>
where
    I: IntoIterator<Item = (u64, f64)>,
{
    check_bits(bits)?;
    Ok(to_bits(&accumulate(features, bits), bits))
}

/// The number of bit positions where `a` and `b` differ.
///
/// ```
/// assert_eq!(lshdb::sketch::simhash::hamming(0b1010, 0b0110), 2);
/// ```
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Expands a 32-bit shingle hash to the 64-bit feature fingerprint SimHash
/// votes with: the first output of `SplitMix64::new(shingle_hash)`. Part of
/// the file format.
///
/// ```
/// use lshdb::sketch::simhash::feature_fingerprint;
/// assert_eq!(feature_fingerprint(0), lshdb::hash::SplitMix64::new(0).next_u64());
/// ```
pub fn feature_fingerprint(shingle_hash: u32) -> u64 {
    SplitMix64::new(u64::from(shingle_hash)).next_u64()
}

/// How a repeated shingle hash in a bag is weighted by [`from_bag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weighting {
    /// Weight = the number of times the hash occurs.
    #[default]
    TermFrequency,
    /// Weight = 1 for every distinct hash.
    Unit,
}

/// The 64-bit SimHash of a sorted bag (multiset) of shingle hashes.
///
/// Each distinct hash is one feature with fingerprint
/// [`feature_fingerprint`] and weight its count ([`Weighting::TermFrequency`])
/// or 1 ([`Weighting::Unit`]). The bag should be sorted; an unsorted one does
/// not panic, each run of equal adjacent values simply counts as one feature.
///
/// ```
/// use lshdb::sketch::simhash::{from_bag, feature_fingerprint, Weighting};
/// let bag = [3, 3, 3, 5];
/// assert_eq!(from_bag(&bag, Weighting::TermFrequency), feature_fingerprint(3));
/// assert_eq!(from_bag(&[], Weighting::Unit), 0);
/// ```
pub fn from_bag(bag: &[u32], weighting: Weighting) -> u64 {
    // Integer weights: the same result as the f64 column sums of
    // [`from_weighted`] (counts are exact in both), in a branch-free loop
    // over 64 integer columns that the compiler vectorises.
    let mut sums = [0i64; 64];
    for run in bag.chunk_by(|a, b| a == b) {
        let weight = match weighting {
            Weighting::TermFrequency => run.len() as i64,
            Weighting::Unit => 1,
        };
        let fp = feature_fingerprint(run[0]);
        for (j, sum) in sums.iter_mut().enumerate() {
            let bit = ((fp >> j) & 1) as i64;
            *sum += weight * (2 * bit - 1);
        }
    }
    sums.iter()
        .enumerate()
        .fold(0u64, |acc, (j, &sum)| acc | (u64::from(sum > 0) << j))
}

/// The 64-bit SimHash of shingle hashes with caller-chosen weights (for
/// example TF-IDF). Each hash votes with its [`feature_fingerprint`].
///
/// ```
/// use lshdb::sketch::simhash::{from_weighted, feature_fingerprint};
/// let fp = from_weighted([(1, 10.0), (2, 0.5)]);
/// assert_eq!(fp, feature_fingerprint(1));
/// ```
pub fn from_weighted<I>(features: I) -> u64
where
    I: IntoIterator<Item = (u32, f64)>,
{
    let features = features
        .into_iter()
        .map(|(hash, weight)| (feature_fingerprint(hash), weight));
    to_bits(&accumulate(features, 64), 64)
}

/// Block `index` of the fingerprint cut into `count` contiguous blocks,
/// right-aligned.
///
/// Block 0 holds the most significant bits; the first `64 % count` blocks
/// are one bit longer than the rest. `count` must be 1 to 64 and `index`
/// below `count`.
///
/// Pigeonhole principle: each differing bit lies in exactly one block, so if
/// `hamming(a, b) ≤ d` and `count ≥ d + 1`, at least one block of `a` equals
/// the same block of `b`. An index keyed by (block index, block value) thus
/// finds every fingerprint within distance `d` by `count` exact lookups.
///
/// ```
/// use lshdb::sketch::simhash::block;
/// let fp = 0x1234_5678_9abc_def0;
/// assert_eq!(block(fp, 0, 4)?, 0x1234);
/// assert_eq!(block(fp, 3, 4)?, 0xdef0);
/// # Ok::<(), lshdb::Error>(())
/// ```
pub fn block(fingerprint: u64, index: u32, count: u32) -> Result<u64> {
    let (start, width) = layout(index, count)?;
    // start + width ≤ 64 and width ≥ 1, so both shifts are below 64.
    Ok((fingerprint << start) >> (64 - width))
}

/// The number of bits of block `index` out of `count` (see [`block`]).
///
/// ```
/// use lshdb::sketch::simhash::block_width;
/// assert_eq!(block_width(0, 5)?, 13);
/// assert_eq!(block_width(4, 5)?, 12);
/// # Ok::<(), lshdb::Error>(())
/// ```
pub fn block_width(index: u32, count: u32) -> Result<u32> {
    layout(index, count).map(|(_, width)| width)
}

/// `(offset from the most significant bit, width)` of block `index`.
fn layout(index: u32, count: u32) -> Result<(u32, u32)> {
    if !(1..=64).contains(&count) {
        return Err(Error::invalid(
            "count",
            format!("the number of blocks must be 1 to 64, got {count}"),
        ));
    }
    if index >= count {
        return Err(Error::invalid(
            "index",
            format!("block index must be below count = {count}, got {index}"),
        ));
    }
    let (base, longer) = (64 / count, 64 % count);
    let width = base + u32::from(index < longer);
    let start = index * base + index.min(longer);
    Ok((start, width))
}

fn check_bits(bits: u32) -> Result<()> {
    if (1..=64).contains(&bits) {
        Ok(())
    } else {
        Err(Error::invalid(
            "bits",
            format!("the fingerprint width must be 1 to 64 bits, got {bits}"),
        ))
    }
}

/// Column sums indexed by bit position (index 0 = least significant); only
/// the first `bits` entries are used. `bits` must be at most 64.
fn accumulate<I>(features: I, bits: u32) -> [f64; 64]
where
    I: IntoIterator<Item = (u64, f64)>,
{
    let mut sums = [0.0f64; 64];
    for (fp, weight) in features {
        for (pos, sum) in sums.iter_mut().take(bits as usize).enumerate() {
            if (fp >> pos) & 1 == 1 {
                *sum += weight;
            } else {
                *sum -= weight;
            }
        }
    }
    sums
}

/// Bit `pos` is 1 iff `sums[pos] > 0`, for `pos < bits`.
fn to_bits(sums: &[f64; 64], bits: u32) -> u64 {
    sums.iter()
        .take(bits as usize)
        .enumerate()
        .filter(|(_, &sum)| sum > 0.0)
        .fold(0, |fp, (pos, _)| fp | (1u64 << pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The textbook's 8-bit example (column sums, fingerprint and the three-word
    // distance) is pinned once, through the public API, in tests/worked_examples.rs.

    #[test]
    fn bits_validation_and_masking() {
        assert!(matches!(
            fingerprint([(1, 1.0)], 0),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            column_sums([(1, 1.0)], 65),
            Err(Error::InvalidParameter { .. })
        ));
        // High garbage above `bits` is ignored; output bits above are 0.
        let fp = fingerprint([(0xffff_ff00_0000_00a5, 1.0)], 8).unwrap();
        assert_eq!(fp, 0xa5);
        assert_eq!(fingerprint([(u64::MAX, 1.0)], 64).unwrap(), u64::MAX);
        assert_eq!(fingerprint([(u64::MAX, 1.0)], 1).unwrap(), 1);
        assert_eq!(fingerprint(std::iter::empty(), 64).unwrap(), 0);
    }

    #[test]
    fn hamming_basics() {
        assert_eq!(hamming(0, 0), 0);
        assert_eq!(hamming(0, u64::MAX), 64);
        assert_eq!(hamming(0b1011, 0b0010), 2);
        assert_eq!(hamming(7, 9), hamming(9, 7));
    }

    #[test]
    fn weighting_differs_when_counts_differ() {
        let mut bag = vec![1, 2];
        bag.extend(std::iter::repeat_n(3, 50));
        let tf = from_bag(&bag, Weighting::TermFrequency);
        let unit = from_bag(&bag, Weighting::Unit);
        assert_eq!(tf, feature_fingerprint(3));
        assert_ne!(tf, unit);
        assert_eq!(unit, from_weighted([(1, 1.0), (2, 1.0), (3, 1.0)]));
        // With every count 1 the two weightings agree.
        let set = [1, 2, 3, 4, 5];
        assert_eq!(
            from_bag(&set, Weighting::TermFrequency),
            from_bag(&set, Weighting::Unit)
        );
        assert_eq!(Weighting::default(), Weighting::TermFrequency);
    }

    #[test]
    fn unsorted_bag_does_not_panic() {
        let fp = from_bag(&[5, 3, 3, 5], Weighting::TermFrequency);
        let expected = from_weighted([(5, 1.0), (3, 2.0), (5, 1.0)]);
        assert_eq!(fp, expected);
    }

    #[test]
    fn near_duplicates_are_near() {
        let mut rng = SplitMix64::new(42);
        let mut draw = |n: usize| -> Vec<u32> {
            let mut v: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let base = draw(200);
        let mut near = base.clone();
        near[..5].copy_from_slice(&draw(5)[..5]);
        near.sort_unstable();
        let other = draw(200);
        let a = from_bag(&base, Weighting::TermFrequency);
        let d_near = hamming(a, from_bag(&near, Weighting::TermFrequency));
        let d_far = hamming(a, from_bag(&other, Weighting::TermFrequency));
        println!("near-duplicate distance {d_near}, unrelated distance {d_far}");
        assert!(d_near <= 16, "{d_near}");
        assert!(d_far >= 16, "{d_far}");
    }

    #[test]
    fn blocks_reassemble() {
        let fp = 0x0123_4567_89ab_cdef;
        let parts: Vec<u64> = (0..4).map(|i| block(fp, i, 4).unwrap()).collect();
        assert_eq!(parts, [0x0123, 0x4567, 0x89ab, 0xcdef]);
        for count in 1..=64 {
            let mut back = 0u64;
            for i in 0..count {
                let width = block_width(i, count).unwrap();
                let value = block(fp, i, count).unwrap();
                assert!(width == 64 || value >> width == 0);
                back = back.checked_shl(width).unwrap_or(0) | value;
            }
            assert_eq!(back, fp, "count {count}");
        }
    }

    #[test]
    fn block_sizes() {
        let widths: Vec<u32> = (0..5).map(|i| block_width(i, 5).unwrap()).collect();
        assert_eq!(widths, [13, 13, 13, 13, 12]);
        let ones: Vec<u32> = (0..5)
            .map(|i| block(u64::MAX, i, 5).unwrap().count_ones())
            .collect();
        assert_eq!(ones, widths);
        assert_eq!(block(u64::MAX, 0, 1).unwrap(), u64::MAX);
        assert!(block(0, 0, 0).is_err());
        assert!(block(0, 0, 65).is_err());
        assert!(block(0, 4, 4).is_err());
    }

    #[test]
    fn pigeonhole_holds() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..2000 {
            let a = rng.next_u64();
            let flips = rng.next_u64() % 4;
            let mut b = a;
            for _ in 0..flips {
                b ^= 1 << (rng.next_u64() % 64);
            }
            assert!(hamming(a, b) <= 3);
            let shared = (0..4).any(|i| block(a, i, 4).unwrap() == block(b, i, 4).unwrap());
            assert!(shared, "{a:016x} {b:016x}");
        }
    }
}
