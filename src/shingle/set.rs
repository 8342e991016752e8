//! The two shapes a shingled document takes: a set and a bag.
//!
//! Both hold sorted `u32` shingle hashes, the form every measure and sketch
//! downstream expects; the types only guarantee the ordering invariant.

use crate::hash::murmur3_32;

/// The accessors both shapes share over their sorted hashes: `as_slice`,
/// `len` and `is_empty`, each documented by its argument.
macro_rules! sorted_hashes {
    ($shape:ident, $as_slice:literal, $len:literal, $is_empty:literal) => {
        impl $shape {
            #[doc = $as_slice]
            pub fn as_slice(&self) -> &[u32] {
                &self.0
            }

            #[doc = $len]
            pub fn len(&self) -> usize {
                self.0.len()
            }

            #[doc = $is_empty]
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
        }
    };
}

sorted_hashes!(
    ShingleSet,
    "The hashes, ascending and distinct.",
    "The number of distinct shingles.",
    "Whether the set is empty (the text was empty after normalisation)."
);
sorted_hashes!(
    ShingleBag,
    "The hashes, ascending, repeats adjacent.",
    "The number of shingles, repeats counted.",
    "Whether the bag is empty."
);

/// A sorted set of distinct shingle hashes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ShingleSet(Vec<u32>);

impl ShingleSet {
    /// Sorts and de-duplicates `hashes`.
    ///
    /// ```
    /// let set = lshdb::shingle::ShingleSet::from_hashes(vec![3, 1, 3, 2]);
    /// assert_eq!(set.as_slice(), &[1, 2, 3]);
    /// ```
    pub fn from_hashes(mut hashes: Vec<u32>) -> Self {
        hashes.sort_unstable();
        hashes.dedup();
        Self(hashes)
    }

    /// The hashes as a vector.
    pub fn into_vec(self) -> Vec<u32> {
        self.0
    }
}

/// A sorted multiset of shingle hashes: repeats kept, for bag Jaccard and
/// term-frequency SimHash.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ShingleBag(Vec<u32>);

impl ShingleBag {
    /// Sorts `hashes`, keeping repeats.
    pub fn from_hashes(mut hashes: Vec<u32>) -> Self {
        hashes.sort_unstable();
        Self(hashes)
    }

    /// The distinct shingles.
    pub fn to_set(&self) -> ShingleSet {
        let mut hashes = self.0.clone();
        hashes.dedup();
        ShingleSet(hashes)
    }
}

/// The set of an arbitrary collection of items — a customer's products, a
/// film's raters — hashed like shingles so that it enters the same pipeline
/// as text. Each item's bytes are hashed whole with `seed`; no normalisation.
///
/// ```
/// use lshdb::shingle::item_set;
/// let alice = item_set(["milk", "bread", "eggs"], 0);
/// let bob = item_set(["bread", "eggs", "milk", "milk"], 0);
/// assert_eq!(alice, bob);
/// ```
pub fn item_set<I, T>(items: I, seed: u32) -> ShingleSet
where
    I: IntoIterator<Item = T>,
    T: AsRef<[u8]>,
{
    ShingleSet::from_hashes(
        items
            .into_iter()
            .map(|item| murmur3_32(item.as_ref(), seed))
            .collect(),
    )
}
