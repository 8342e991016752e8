//! The settings record's bytes, pinned for settings that exercise every
//! field: stop words, word shingles, the permutation scheme, multi-byte
//! varints, SimHash, stored text and the containment index. The bytes were
//! produced by the postcard encoding of `Settings` that wrote every file up
//! to format 4; the record's own encoder and decoder must keep them.

use lshdb::shingle::{ShingleConfig, ShingleKind, Whitespace};
use lshdb::sketch::minhash::{MinHashConfig, Scheme};
use lshdb::store::codec::{frame, unframe, Tag};
use lshdb::store::meta::{decode_settings, encode_settings};
use lshdb::{Config, Error, Settings};

fn cases() -> Vec<Settings> {
    let mut words = Config::jaccard(0.55).simhash(7).store_text(true);
    words.shingle = ShingleConfig {
        kind: ShingleKind::StopWords(3),
        whitespace: Whitespace::Collapse,
        seed: 300_000,
        stop_words: Some(vec!["the".into(), "ünd".into(), "a".into()]),
    };
    words.minhash = MinHashConfig {
        scheme: Scheme::Permutations,
        num_perm: 200,
        seed: u64::MAX,
    };
    let mut chars = Config::jaccard(0.9).containment(true).bands(16, 8);
    chars.shingle.kind = ShingleKind::Words(2);
    let mut removed = Config::jaccard(0.7).simhash(0);
    removed.shingle.whitespace = Whitespace::Remove;
    removed.shingle.kind = ShingleKind::Chars(64);
    vec![
        Config::jaccard(0.5).resolve().unwrap(),
        words.resolve().unwrap(),
        chars.resolve().unwrap(),
        removed.resolve().unwrap(),
    ]
}

/// What the postcard encoding of `Settings` wrote for [`cases`].
const GOLDEN: [&[u8]; 4] = [
    &[
        1, 183, 1, 208, 169, 0, 5, 0, 0, 0, 1, 128, 1, 177, 196, 145, 195, 182, 142, 27, 0, 0, 0,
        0, 0, 0, 224, 63, 26, 3, 0, 0,
    ],
    &[
        1, 162, 62, 140, 13, 2, 3, 0, 224, 167, 18, 1, 3, 3, 116, 104, 101, 4, 195, 188, 110, 100,
        1, 97, 0, 200, 1, 255, 255, 255, 255, 255, 255, 255, 255, 255, 1, 154, 153, 153, 153, 153,
        153, 225, 63, 35, 4, 1, 8, 1,
    ],
    &[
        1, 229, 62, 188, 127, 1, 2, 0, 0, 0, 1, 128, 1, 177, 196, 145, 195, 182, 142, 27, 205, 204,
        204, 204, 204, 204, 236, 63, 16, 8, 0, 0, 32, 4, 2,
    ],
    &[
        1, 191, 216, 70, 55, 0, 64, 1, 0, 0, 1, 128, 1, 177, 196, 145, 195, 182, 142, 27, 102, 102,
        102, 102, 102, 102, 230, 63, 21, 6, 1, 1, 0,
    ],
];

#[test]
fn settings_encode_to_the_pinned_bytes_and_back() {
    for (settings, golden) in cases().iter().zip(GOLDEN) {
        assert_eq!(encode_settings(settings).unwrap(), golden, "{settings:?}");
        assert_eq!(&decode_settings(golden).unwrap(), settings);
    }
}

/// The payload of golden record `i` with `edit` applied, framed again (so
/// the CRC passes and the decoder itself must notice).
fn edited(i: usize, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut payload = unframe(Tag::Config, GOLDEN[i]).unwrap().to_vec();
    edit(&mut payload);
    frame(Tag::Config, &payload)
}

#[test]
fn damaged_settings_records_are_refused() {
    let damaged = [
        edited(0, |p| p.truncate(p.len() - 1)),    // cut short
        edited(0, |p| p.push(0)),                  // a containment shape cut short
        edited(2, |p| p.extend([2, 0, 0])),        // trailing bytes after the clusters
        edited(2, |p| p.extend([2, 4])),           // no such representative policy
        edited(0, |p| p.extend([0, 2, 4])),        // the same, after the no-containment 0
        edited(2, |p| p.push(2)),                  // clusters bit, policy cut short
        edited(0, |p| *p.last_mut().unwrap() = 2), // store_text neither 0 nor 1
        edited(0, |p| p[0] = 3),                   // no such shingle kind
        edited(0, |p| p[2] = 2),                   // no such white-space rule
        edited(0, |p| p[4] = 2),                   // stop words: no such option tag
        edited(1, |p| p[11] = 0xff),               // stop word not UTF-8
        edited(0, |p| p[5] = 2),                   // no such scheme
        edited(2, |p| *p.last_mut().unwrap() = 0), // containment: 0 classes per octave
        edited(0, |p| {
            p.splice(
                1..2,
                [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f],
            )
            .for_each(drop)
        }), // k overflows
    ];
    for (i, bytes) in damaged.iter().enumerate() {
        let err = decode_settings(bytes).unwrap_err();
        assert!(matches!(err, Error::Corrupted { .. }), "case {i}: {err:?}");
    }
}

/// Clusters are feature bit 1, their representative policy following the
/// feature bits (after the containment shape, or after a 0 in its place);
/// a file without them keeps the bytes of earlier builds (the golden
/// records above).
#[test]
fn clusters_append_their_policy_and_round_trip() {
    use lshdb::Representative;
    for (containment, timestamps, policy, tail) in [
        (false, false, Representative::FirstInserted, vec![0u8, 2, 0]),
        (false, false, Representative::SmallestKey, vec![0, 2, 2]),
        // The priority policy is code 3: no new feature bit or format.
        (false, false, Representative::Priority, vec![0, 2, 3]),
        (true, false, Representative::Longest, vec![32, 4, 2, 2, 1]),
        // Both features: bits 0 and 1, then the policy.
        (false, true, Representative::Longest, vec![0, 3, 1]),
        (
            true,
            true,
            Representative::SmallestKey,
            vec![32, 4, 2, 3, 2],
        ),
    ] {
        let config = Config::jaccard(0.8)
            .containment(containment)
            .timestamps(timestamps)
            .cluster_representative(policy);
        let settings = config.resolve().unwrap();
        let plain = Config::jaccard(0.8)
            .containment(containment)
            .resolve()
            .unwrap();
        let bytes = encode_settings(&settings).unwrap();
        let payload = unframe(Tag::Config, &bytes).unwrap().to_vec();
        let before = unframe(Tag::Config, &encode_settings(&plain).unwrap())
            .unwrap()
            .to_vec();
        let cut = before.len() - if containment { 3 } else { 0 };
        assert_eq!(&payload[..cut], &before[..cut]);
        assert_eq!(payload[cut..], tail[..]);
        assert_eq!(decode_settings(&bytes).unwrap(), settings);
    }
    // A policy code no build knows (a newer build's) is refused.
    let err = decode_settings(&edited(0, |p| p.extend([0, 2, 4]))).unwrap_err();
    assert!(
        err.to_string().contains("no representative policy 4"),
        "{err}"
    );
}

#[test]
fn the_time_index_is_a_feature_bit_older_builds_refuse() {
    let mut plain = Config::jaccard(0.5).timestamps(true).resolve().unwrap();
    let bytes = encode_settings(&plain).unwrap();
    // Golden record 0 with a 0 in the containment index's place (none) and
    // feature bit 0: a build without the feature reads 0 trees and refuses.
    assert_eq!(bytes, edited(0, |p| p.extend([0, 1])));
    assert_eq!(decode_settings(&bytes).unwrap(), plain);
    let mut both = Config::jaccard(0.9).containment(true).bands(16, 8);
    both.shingle.kind = ShingleKind::Words(2);
    let both = both.timestamps(true).resolve().unwrap();
    let bytes = encode_settings(&both).unwrap();
    assert_eq!(bytes, edited(2, |p| p.push(1)));
    assert_eq!(decode_settings(&bytes).unwrap(), both);
    // Unknown feature bits (a newer build's) are refused; bit 1 is clusters.
    for payload in [edited(0, |p| p.extend([0, 4])), edited(2, |p| p.push(5))] {
        let err = decode_settings(&payload).unwrap_err();
        assert!(err.to_string().contains("unknown features"), "{err}");
    }
    plain.timestamps = false;
    assert_eq!(encode_settings(&plain).unwrap(), GOLDEN[0]);
}
