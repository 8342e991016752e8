//! [`Hashes`]: a set of 64-bit hashes in about 8.5 bytes each, for the
//! repeated-id check of a long `dedup` run (one hash per record).
//!
//! A `HashSet<u64>` takes 9 bytes per slot at up to 87% load, so 12 to 18
//! bytes per hash, and twice that for a moment while it grows: 225 MB at
//! 10 M records. Here the hashes sit sorted in 65,536 buckets by their top
//! 16 bits, each bucket grown by an eighth at a time: no spike, and an
//! insertion moves about a hundred hashes at 10 M records.

/// Buckets, by a hash's top bits.
const BUCKET_BITS: u32 = 16;

/// A set of 64-bit hashes (see the module docs).
pub struct Hashes {
    buckets: Vec<Vec<u64>>,
}

impl Default for Hashes {
    fn default() -> Self {
        Self {
            buckets: (0..1usize << BUCKET_BITS).map(|_| Vec::new()).collect(),
        }
    }
}

impl Hashes {
    /// Adds `hash`; false when it was there already.
    pub fn insert(&mut self, hash: u64) -> bool {
        let bucket = &mut self.buckets[(hash >> (64 - BUCKET_BITS)) as usize];
        match bucket.binary_search(&hash) {
            Ok(_) => false,
            Err(at) => {
                if bucket.len() == bucket.capacity() {
                    bucket.reserve_exact(bucket.len() / 8 + 4);
                }
                bucket.insert(at, hash);
                true
            }
        }
    }

    /// How many hashes the set holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.buckets.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_each_hash_once() {
        let mut set = Hashes::default();
        let hashes: Vec<u64> = (0..50_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        assert!(hashes.iter().all(|&h| set.insert(h)));
        assert!(hashes.iter().all(|&h| !set.insert(h)));
        // Same top bits, different rest; the extremes (0 is there already).
        let extremes = [0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) | 1];
        for h in extremes {
            assert_eq!(set.insert(h), !hashes.contains(&h), "{h}");
            assert!(!set.insert(h));
        }
        assert_eq!(set.len(), 50_000 + extremes.len() - 1);
    }
}
