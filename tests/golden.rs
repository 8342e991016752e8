//! Golden values: the file-format contract of the similarity core.
//!
//! Shingle hashes, permutation parameters, signatures, band keys and SimHash
//! fingerprints reach disk; a database written today must give the same
//! answers when opened by every later version. If one of these assertions
//! fails, the change breaks stored files: revert it, or bump the format
//! version and write a migration.

use lshdb::hash::{band_key, murmur3_32};
use lshdb::shingle::{ShingleConfig, ShingleKind, Shingler};
use lshdb::sketch::bottomk::BottomK;
use lshdb::sketch::lsh::{tune, Banding, TuneGoal};
use lshdb::sketch::minhash::{self, MinHashConfig, MinHasher, MultiplyShift, Scheme};
use lshdb::sketch::simhash::{self, Weighting};

const TEXT: &str = "The quick brown fox jumps over the lazy dog";

/// An order-sensitive checksum of a whole vector, so one number pins it.
fn checksum(values: &[u32]) -> u64 {
    values.iter().enumerate().fold(0u64, |acc, (i, &h)| {
        acc.wrapping_add((i as u64 + 1).wrapping_mul(u64::from(h)))
    })
}

fn shingler(kind: ShingleKind) -> Shingler {
    Shingler::new(ShingleConfig {
        kind,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn shingle_hash_is_murmur3_x86_32_seed_0() {
    assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
    assert_eq!(
        murmur3_32(b"The quick brown fox jumps over the lazy dog", 0),
        0x2e4f_f723
    );
}

#[test]
fn shingle_sets_are_pinned() {
    // Cross-checked with Python: sorted(set(mmh3.hash(t[i:i+5].encode(), 0,
    // signed=False) for i in range(len(t)-4))) of the normalised text.
    let cases = [
        (
            ShingleKind::Chars(5),
            39,
            [16_851_044, 70_487_208, 125_788_067],
            2_063_065_396_656,
        ),
        (
            ShingleKind::Words(2),
            8,
            [170_037_781, 1_524_795_570, 1_574_220_190],
            123_982_790_451,
        ),
        (
            ShingleKind::StopWords(3),
            3,
            [316_708_193, 3_087_764_690, 4_039_892_514],
            18_611_915_115,
        ),
    ];
    for (kind, len, first, sum) in cases {
        let set = shingler(kind).set(TEXT);
        assert_eq!(set.len(), len, "{kind:?}");
        assert_eq!(set.as_slice()[..3], first, "{kind:?}");
        assert_eq!(checksum(set.as_slice()), sum, "{kind:?}");
    }
}

#[test]
fn permutation_family_is_pinned() {
    let family = MultiplyShift::new(128, minhash::DEFAULT_SEED);
    assert_eq!(
        family.coefficients(0),
        (12_810_975_077_062_032_220, 14_929_592_811_598_750_183)
    );
    assert_eq!(
        family.coefficients(127),
        (11_409_166_785_701_444_082, 3_380_432_436_695_650_857)
    );
}

#[test]
fn signatures_and_band_keys_are_pinned() {
    let set = shingler(ShingleKind::Chars(5)).set(TEXT);
    let banding = Banding::new(16, 8, 128).unwrap();
    let cases = [
        (
            Scheme::Permutations,
            [128_992_653, 24_801_727, 153_313_030, 79_735_960],
            918_313_581_417,
            [892_527_294_366_814_577, 382_772_626_898_727_229],
        ),
        (
            Scheme::OnePermutation,
            [3_891_990_616, 2_040_597_577, 3_087_817_833, 3_891_990_616],
            19_480_129_835_163,
            [9_085_031_064_201_398_972, 4_109_177_842_018_024_215],
        ),
    ];
    for (scheme, first, sum, keys) in cases {
        let hasher = MinHasher::new(MinHashConfig {
            scheme,
            ..Default::default()
        })
        .unwrap();
        let sig = hasher.signature(set.as_slice());
        assert_eq!(sig[..4], first, "{scheme:?}");
        assert_eq!(checksum(&sig), sum, "{scheme:?}");
        let mut band_keys = Vec::new();
        banding.band_keys(&sig, &mut band_keys);
        assert_eq!(band_keys.len(), 16);
        assert_eq!(band_keys[..2], keys, "{scheme:?}");
    }
    assert_eq!(band_key(&[1, 2, 3, 4], 0), 0x356c_c1b4_55a1_830d);
}

#[test]
fn bottom_k_is_pinned() {
    let set = shingler(ShingleKind::Chars(5)).set(TEXT);
    let sketch = BottomK::new(16, minhash::DEFAULT_SEED).sketch(set.as_slice());
    assert_eq!(
        sketch[..4],
        [165_792_221, 224_951_880, 403_233_376, 434_639_074]
    );
    assert_eq!(checksum(&sketch), 117_252_380_322);
}

#[test]
fn simhash_is_pinned() {
    let bag = shingler(ShingleKind::Chars(5)).bag(TEXT);
    assert_eq!(
        simhash::from_bag(bag.as_slice(), Weighting::TermFrequency),
        0xb677_513e_3a32_630b
    );
    assert_eq!(simhash::feature_fingerprint(0), 0xe220_a839_7b1d_cdaf);
}

#[test]
fn tuner_choices_are_pinned() {
    // Stored databases keep their b and r, but a changed tuner would change
    // what new databases get: make that a deliberate decision.
    let pick = |t, n| {
        let tuned = tune(&TuneGoal::new(t, n)).unwrap();
        (tuned.banding.bands(), tuned.banding.rows(), tuned.unused)
    };
    assert_eq!(pick(0.5, 128), (26, 3, 50));
    assert_eq!(pick(0.8, 128), (16, 8, 0));
}

#[test]
fn containment_prefix_keys_are_pinned() {
    // The prefix forest's keys (containment search and top-k probe them)
    // reach disk: tree i's key packs the 16-bit fragments of signature
    // values 4i..4i+3, high to low; the first key part is class · 256 + tree.
    use lshdb::sketch::ensemble::Ensemble;
    let set = shingler(ShingleKind::Chars(5)).set(TEXT);
    let sig = MinHasher::new(MinHashConfig::default())
        .unwrap()
        .signature(set.as_slice());
    let ensemble = Ensemble::for_num_perm(128).unwrap();
    let mut keys = Vec::new();
    ensemble.prefixes(&sig, &mut keys);
    assert_eq!(keys.len(), 32);
    let sum = keys.iter().fold(0u64, |acc, &k| acc.rotate_left(7) ^ k);
    assert_eq!(
        (keys[0], keys[31], sum),
        (
            0xcdb5_16c4_8b80_cdb5,
            0x2aa0_9df8_1389_f2ba,
            0x0c13_b748_e98f_2b73
        )
    );
    assert_eq!(ensemble.class_of(set.len() as u32), 10);
    assert_eq!(lshdb::store::containment::slot(10, 3), 10 * 256 + 3);
    assert_eq!(
        Ensemble::prefix_range(keys[0], 1),
        (0xcdb5 << 48, (0xcdb5 << 48) | 0xffff_ffff_ffff)
    );
}
