//! [`Hashes`]: a set of 64-bit hashes in about 8.5 bytes each, within a
//! memory budget, for the repeated-id check of a long `dedup` run (one
//! hash per record).
//!
//! A `HashSet<u64>` takes 9 bytes per slot at up to 87% load, so 12 to 18
//! bytes per hash, and twice that for a moment while it grows: 225 MB at
//! 10 M records. Here the hashes sit sorted in 65,536 buckets by their top
//! 16 bits, each bucket grown by an eighth at a time: no spike, and an
//! insertion moves about a hundred hashes at 10 M records.
//!
//! **Past the budget** the buckets, read in order, are one sorted
//! sequence: it is merged with the hashes spilled before into a new
//! temporary file (deleted by the system when closed), and memory starts
//! again empty. A look-up then asks a Bloom filter of the file's hashes
//! (one to two bytes per hash, under 2 % false positives), and only when
//! it may hold the hash reads one page of the file, found through the
//! first hash of every page, kept in memory (one 512th of the file). The
//! filter's bytes come out of the budget, up to three quarters of it
//! (past about 16 M ids with `dedup`'s default budget it has fewer than 8
//! bits per hash, and lets more look-ups through to the file, and the
//! buckets spill more often), so memory stays
//! within the budget plus that index at any number of records; each spill
//! rewrites the file once, sequentially. Without the filter every new id
//! cost a page read (two system calls and 4 KiB decoded): 3.7 % of the
//! CPU samples of a 10 M dedup after the first spill.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

/// Buckets, by a hash's top bits.
const BUCKET_BITS: u32 = 16;

/// Hashes per page of the spill file (4 KiB).
const PAGE: usize = 512;

/// The bytes a hash takes in memory, about (see the module docs).
pub const BYTES_PER_HASH: f64 = 8.5;

/// A set of 64-bit hashes (see the module docs).
pub struct Hashes {
    buckets: Vec<Vec<u64>>,
    /// Hashes in `buckets`.
    held: usize,
    /// Hashes `buckets` may hold before they are spilled.
    max_held: usize,
    /// The bytes of the budget: the buckets and the spill file's filter.
    budget: usize,
    /// The hashes spilled so far.
    spilled: Option<Spilled>,
}

/// Sorted hashes in a temporary file, little-endian.
struct Spilled {
    file: File,
    /// Hashes in the file.
    len: usize,
    /// The first hash of every page.
    firsts: Vec<u64>,
    /// Which hashes the file may hold (false: certainly not).
    bloom: Bloom,
}

/// A Bloom filter of 64-bit hashes: a byte per hash it is sized for (or
/// up to twice that, a power of two), [`Bloom::PROBES`] bits each: under
/// 2 % false positives.
struct Bloom {
    words: Vec<u64>,
    /// The number of bits minus one (a power of two minus one).
    mask: u64,
}

impl Bloom {
    /// Bits set per hash (near the best for 8 bits per hash).
    const PROBES: u64 = 5;

    /// An empty filter for about `hashes` hashes, of at most `max_bytes`
    /// (at least 8).
    fn for_hashes(hashes: usize, max_bytes: usize) -> Self {
        let cap = max_bytes.max(8).saturating_mul(8);
        let most = 1 << (usize::BITS - 1 - cap.leading_zeros());
        let bits = (hashes.max(64) * 8).next_power_of_two().min(most);
        Self {
            words: vec![0; bits / 64],
            mask: bits as u64 - 1,
        }
    }

    /// The `i`th bit of `hash`: double hashing over the halves of a mix
    /// of it (ids' hashes are uniform, but the filter need not rely on it).
    fn bit(&self, hash: u64, i: u64) -> (usize, u64) {
        let mixed = hash.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) ^ hash;
        let (a, b) = (mixed & 0xFFFF_FFFF, (mixed >> 32) | 1);
        let bit = a.wrapping_add(i.wrapping_mul(b)) & self.mask;
        ((bit / 64) as usize, 1 << (bit % 64))
    }

    fn add(&mut self, hash: u64) {
        for i in 0..Self::PROBES {
            let (word, bit) = self.bit(hash, i);
            self.words[word] |= bit;
        }
    }

    fn may_hold(&self, hash: u64) -> bool {
        (0..Self::PROBES).all(|i| {
            let (word, bit) = self.bit(hash, i);
            self.words[word] & bit != 0
        })
    }
}

impl Hashes {
    /// An empty set that keeps about `bytes` of hashes in memory and
    /// spills the rest to a temporary file.
    pub fn with_budget(bytes: usize) -> Self {
        Self {
            buckets: empty_buckets(),
            held: 0,
            max_held: held_within(bytes),
            budget: bytes,
            spilled: None,
        }
    }

    /// Adds `hash`; false when it was there already.
    ///
    /// # Errors
    /// The temporary file cannot be created, written or read.
    pub fn insert(&mut self, hash: u64) -> io::Result<bool> {
        let bucket = &mut self.buckets[(hash >> (64 - BUCKET_BITS)) as usize];
        let Err(at) = bucket.binary_search(&hash) else {
            return Ok(false);
        };
        if let Some(spilled) = &self.spilled {
            if spilled.contains(hash)? {
                return Ok(false);
            }
        }
        if bucket.len() == bucket.capacity() {
            bucket.reserve_exact(bucket.len() / 8 + 4);
        }
        bucket.insert(at, hash);
        self.held += 1;
        if self.held >= self.max_held {
            self.spill()?;
        }
        Ok(true)
    }

    /// Merges the held hashes into the spill file, and empties memory.
    fn spill(&mut self) -> io::Result<()> {
        let buckets = std::mem::replace(&mut self.buckets, empty_buckets());
        let held = buckets.into_iter().flatten();
        let count = self.held + self.spilled.as_ref().map_or(0, |s| s.len);
        let most = self.budget / 4 * 3;
        let merged = match self.spilled.take() {
            Some(old) => Spilled::write(merge(old.read_all()?, held), count, most)?,
            None => Spilled::write(held.map(Ok), count, most)?,
        };
        // The filter's bytes come out of the budget (a 10 M run's 32 MB:
        // 8 MB of filter).
        let filter = merged.bloom.words.len() * 8;
        self.max_held = held_within(self.budget.saturating_sub(filter));
        self.spilled = Some(merged);
        self.held = 0;
        Ok(())
    }

    /// How many hashes the set holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.held + self.spilled.as_ref().map_or(0, |s| s.len)
    }
}

/// The hashes the buckets may hold within `bytes`.
fn held_within(bytes: usize) -> usize {
    ((bytes as f64 / BYTES_PER_HASH) as usize).max(1)
}

fn empty_buckets() -> Vec<Vec<u64>> {
    (0..1usize << BUCKET_BITS).map(|_| Vec::new()).collect()
}

/// Two ascending sequences of distinct hashes (none in both) as one.
fn merge(
    a: impl Iterator<Item = io::Result<u64>>,
    b: impl Iterator<Item = u64>,
) -> impl Iterator<Item = io::Result<u64>> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(Ok(x)), Some(y)) if y < x => b.next().map(Ok),
        (Some(_), _) => a.next(),
        (None, _) => b.next().map(Ok),
    })
}

impl Spilled {
    /// A new temporary file of `hashes` (ascending, about `count`), its
    /// filter of at most `max_filter` bytes.
    fn write(
        hashes: impl Iterator<Item = io::Result<u64>>,
        count: usize,
        max_filter: usize,
    ) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        let (mut len, mut firsts) = (0, Vec::new());
        let mut bloom = Bloom::for_hashes(count, max_filter);
        for hash in hashes {
            let hash = hash?;
            if len % PAGE == 0 {
                firsts.push(hash);
            }
            bloom.add(hash);
            out.write_all(&hash.to_le_bytes())?;
            len += 1;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        Ok(Self {
            file,
            len,
            firsts,
            bloom,
        })
    }

    /// Every hash of the file, in order.
    fn read_all(mut self) -> io::Result<impl Iterator<Item = io::Result<u64>>> {
        self.file.seek(SeekFrom::Start(0))?;
        let mut input = BufReader::with_capacity(1 << 20, self.file);
        let mut left = self.len;
        Ok(std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let mut bytes = [0u8; 8];
            Some(
                input
                    .read_exact(&mut bytes)
                    .map(|()| u64::from_le_bytes(bytes)),
            )
        }))
    }

    /// Whether the file holds `hash`: the filter, and when it may, one
    /// page read.
    fn contains(&self, hash: u64) -> io::Result<bool> {
        if !self.bloom.may_hold(hash) {
            return Ok(false);
        }
        let Some(page) = self
            .firsts
            .partition_point(|&first| first <= hash)
            .checked_sub(1)
        else {
            return Ok(false);
        };
        let start = page * PAGE;
        let count = PAGE.min(self.len - start);
        let mut bytes = [0u8; PAGE * 8];
        self.file
            .read_exact_at(&mut bytes[..count * 8], start as u64 * 8)?;
        let mut hashes = [0u64; PAGE];
        for (slot, word) in hashes.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(word);
            *slot = u64::from_le_bytes(le);
        }
        Ok(hashes[..count].binary_search(&hash).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect()
    }

    #[test]
    fn holds_each_hash_once() {
        let mut set = Hashes::with_budget(1 << 30);
        let hashes = spread(50_000);
        assert!(hashes.iter().all(|&h| set.insert(h).unwrap()));
        assert!(hashes.iter().all(|&h| !set.insert(h).unwrap()));
        // Same top bits, different rest; the extremes (0 is there already).
        let extremes = [0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) | 1];
        for h in extremes {
            assert_eq!(set.insert(h).unwrap(), !hashes.contains(&h), "{h}");
            assert!(!set.insert(h).unwrap());
        }
        assert_eq!(set.len(), 50_000 + extremes.len() - 1);
        assert!(set.spilled.is_none());
    }

    /// With room for 1,000 hashes in memory, 50,000 spill 50 times into
    /// one sorted file, and every one of them is still found, whether it
    /// is in memory or in the file, as are the extremes.
    #[test]
    fn a_set_past_its_budget_spills_and_still_finds_every_hash() {
        let mut set = Hashes::with_budget(8_500);
        let hashes = spread(50_000);
        for (i, &h) in hashes.iter().enumerate() {
            assert!(set.insert(h).unwrap(), "new hash {i} taken for a repeat");
            assert!(set.held < 1_000);
            // One seen long ago (in the file) and one just now.
            assert!(!set.insert(hashes[i / 2]).unwrap());
            assert!(!set.insert(h).unwrap());
        }
        assert!(hashes.iter().all(|&h| !set.insert(h).unwrap()));
        let spilled = set.spilled.as_ref().expect("spilled");
        // The filter and the buckets share the budget.
        let filter = spilled.bloom.words.len() * 8;
        assert!(filter <= 8_500 / 4 * 3, "a filter of {filter} bytes");
        assert!(set.max_held as f64 * BYTES_PER_HASH + filter as f64 <= 8_500.0);
        assert_eq!(spilled.len, 50_000 - set.held);
        assert_eq!(spilled.firsts.len(), spilled.len.div_ceil(PAGE));
        let file: Vec<u64> = set
            .spilled
            .take()
            .unwrap()
            .read_all()
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(file.windows(2).all(|w| w[0] < w[1]), "the file is sorted");
        let mut set = Hashes::with_budget(8_500);
        for h in [u64::MAX, 0, 1, u64::MAX - 1] {
            assert!(set.insert(h).unwrap());
        }
        set.spill().unwrap();
        for h in [u64::MAX, 0, 1, u64::MAX - 1] {
            assert!(!set.insert(h).unwrap(), "{h}");
        }
        assert!(set.insert(2).unwrap() && set.insert(u64::MAX - 2).unwrap());
    }

    /// The spill file's filter holds every hash put in it, and answers
    /// "maybe" for few others (the file is read for those only): at most
    /// 3 % of 100,000 hashes it never saw, sequential ones included.
    #[test]
    fn the_spill_filter_holds_its_hashes_and_few_others() {
        let held = spread(100_000);
        let mut bloom = Bloom::for_hashes(held.len(), usize::MAX);
        held.iter().for_each(|&h| bloom.add(h));
        assert!(held.iter().all(|&h| bloom.may_hold(h)));
        let held: std::collections::HashSet<u64> = held.into_iter().collect();
        let others = (0..100_000u64).map(|i| i.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 1);
        for (name, others) in [
            ("spread", others.collect::<Vec<_>>()),
            ("sequential", (1..100_001).collect()),
        ] {
            let false_positives = others
                .iter()
                .filter(|&&h| !held.contains(&h) && bloom.may_hold(h))
                .count();
            assert!(
                false_positives < 3_000,
                "{name}: {false_positives} false positives"
            );
        }
    }
}
