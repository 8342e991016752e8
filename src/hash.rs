//! The fixed hash functions that are part of the file format.
//!
//! Every value that reaches disk — shingle hashes, MinHash permutations, band
//! keys, SimHash feature fingerprints — is derived from the functions in this
//! file. They never change for a given format version; `tests/golden.rs` pins
//! their outputs. See `docs/algorithms.md` for why each was chosen.

/// MurmurHash3, x86 32-bit variant (Austin Appleby's reference
/// `MurmurHash3_x86_32`), over `data` with `seed`.
///
/// This is the shingle hash: it is fast on short keys, well studied, and
/// available everywhere (Python's `mmh3.hash(data, seed, signed=False)` gives
/// the same value), so other tools can be fed exactly lshdb's shingles.
///
/// ```
/// assert_eq!(lshdb::hash::murmur3_32(b"", 0), 0);
/// assert_eq!(
///     lshdb::hash::murmur3_32(b"The quick brown fox jumps over the lazy dog", 0),
///     0x2e4f_f723
/// );
/// ```
#[inline]
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &byte) in tail.iter().enumerate() {
            k |= u32::from(byte) << (8 * i);
        }
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
    }
    h ^= data.len() as u32;
    fmix32(h)
}

/// The SplitMix64 finaliser (Stafford's "Mix13"): a bijection on `u64` with
/// full avalanche. Used to expand seeds into parameters and to mix band keys.
///
/// ```
/// assert_eq!(lshdb::hash::mix64(0), 0);
/// assert_eq!(lshdb::hash::mix64(1), 0x5692_161d_100b_05e5);
/// ```
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The band-key hash: folds a band's `r` signature values into one 64-bit
/// bucket key.
///
/// `h = seed; for v in values { h = mix64(h ^ v) + GOLDEN_GAMMA }`, then
/// `mix64(h ^ len)`. The band index is not mixed in: it is a separate part of
/// the bucket table's key, so equal bands in different positions never meet.
///
/// ```
/// let a = lshdb::hash::band_key(&[1, 2, 3, 4], 0);
/// assert_ne!(a, lshdb::hash::band_key(&[1, 2, 4, 3], 0));
/// ```
pub fn band_key(values: &[u32], seed: u64) -> u64 {
    let mut h = seed;
    for &v in values {
        h = mix64(h ^ u64::from(v)).wrapping_add(GOLDEN_GAMMA);
    }
    mix64(h ^ values.len() as u64)
}

/// The parameter generator, its seeds and the storage-only hashes: used by
/// the sketches and the store, public only under the hidden `internals`
/// feature (tests, benches, fuzz), since applications need none of them.
mod generator {
    use super::mix64;

    /// MurmurHash3's 32-bit finaliser: a bijection on `u32` with full avalanche.
    #[inline]
    pub fn fmix32(mut h: u32) -> u32 {
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^= h >> 16;
        h
    }

    /// The golden-ratio increment of SplitMix64.
    pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    /// A SplitMix64 generator: the one source of every derived parameter
    /// (MinHash coefficients, densification probes). Deterministic on every
    /// platform; the sequence for a seed is part of the file format.
    #[derive(Debug, Clone)]
    pub struct SplitMix64 {
        state: u64,
    }

    impl SplitMix64 {
        /// A generator whose first output is `mix64(seed + GOLDEN_GAMMA)`.
        pub fn new(seed: u64) -> Self {
            Self { state: seed }
        }

        /// The next 64-bit output.
        pub fn next_u64(&mut self) -> u64 {
            self.state = self.state.wrapping_add(GOLDEN_GAMMA);
            mix64(self.state)
        }
    }

    /// The external-key hash (format 4): the key of a document's key posting,
    /// through which a key is looked up. Folds the key's bytes, eight at a
    /// time (little-endian, the last chunk zero-padded), as [`super::band_key`] folds
    /// values: `h = KEY_SEED; for c in chunks { h = mix64(h ^ c) + GOLDEN_GAMMA }`,
    /// then `mix64(h ^ len)`. A look-up compares the stored key, so two keys
    /// of one hash cost a read, never a wrong answer.
    pub fn key_hash(key: &str) -> u64 {
        let bytes = key.as_bytes();
        let mut h = KEY_SEED;
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            h = mix64(h ^ u64::from_le_bytes(word)).wrapping_add(GOLDEN_GAMMA);
        }
        mix64(h ^ bytes.len() as u64)
    }

    /// The seed of [`key_hash`] (ASCII "lshdbkey").
    pub const KEY_SEED: u64 = 0x6c73_6864_626b_6579;
}

#[cfg(not(feature = "internals"))]
pub(crate) use generator::{fmix32, key_hash, SplitMix64, GOLDEN_GAMMA};
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use generator::{fmix32, key_hash, SplitMix64, GOLDEN_GAMMA, KEY_SEED};

#[cfg(test)]
mod tests {
    use super::*;

    /// The key hash is part of format 4: pinned.
    #[test]
    fn key_hash_golden_values() {
        let got: Vec<u64> = ["", "a", "doc-1", "exactly8", "nine char", "ключ"]
            .iter()
            .map(|k| key_hash(k))
            .collect();
        assert_eq!(
            got,
            [
                0xf570_f78f_5c26_03e1,
                0xa954_2078_c771_ece6,
                0xb84a_7de9_e0c8_c945,
                0x4603_9e0d_e90e_123c,
                0xb48a_1f4b_401f_764c,
                0xe3f1_a999_bffb_95a4
            ],
            "{got:#018x?}"
        );
    }

    /// Reference vectors of MurmurHash3_x86_32 (SMHasher / widely published).
    #[test]
    fn murmur3_reference_vectors() {
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_32(&[0, 0, 0, 0], 0), 0x2362_f9de);
        assert_eq!(murmur3_32(b"aaaa", 0x9747_b28c), 0x5a97_808a);
        assert_eq!(murmur3_32(b"abc", 0), 0xb3dd_93fa);
        assert_eq!(murmur3_32(b"Hello, world!", 0x9747_b28c), 0x2488_4cba);
        assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
    }

    #[test]
    fn splitmix_reference_sequence() {
        // First outputs of the reference SplitMix64 with seed 1234567.
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }
}
