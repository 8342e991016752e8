//! The textbook worked examples, reproduced exactly through the public API.

use lshdb::shingle::{ShingleConfig, ShingleKind, Shingler, Whitespace};
use lshdb::sketch::lsh::{candidate_probability, threshold};
use lshdb::sketch::measures::{bag_jaccard, jaccard};
use lshdb::sketch::minhash::{estimate, signature, ModPrime};
use lshdb::sketch::simhash::{column_sums, fingerprint, hamming};

#[test]
fn shingles_of_abcdabd() {
    let s = Shingler::new(ShingleConfig {
        kind: ShingleKind::Chars(2),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(s.shingles("abcdabd"), ["ab", "bc", "cd", "da", "ab", "bd"]);
    assert_eq!(s.set("abcdabd").len(), 5); // {ab, bc, cd, da, bd}
}

#[test]
fn touch_down_with_k_9() {
    let k9 = |whitespace| {
        Shingler::new(ShingleConfig {
            kind: ShingleKind::Chars(9),
            whitespace,
            ..Default::default()
        })
        .unwrap()
    };
    let (collapse, remove) = (k9(Whitespace::Collapse), k9(Whitespace::Remove));
    let a = "The plane was ready for touch down";
    let b = "The quarterback scored a touchdown";
    assert_eq!(
        jaccard(collapse.set(a).as_slice(), collapse.set(b).as_slice()),
        0.0
    );
    assert!(jaccard(remove.set(a).as_slice(), remove.set(b).as_slice()) > 0.0);
}

#[test]
fn bag_jaccard_of_aaab_and_aabbc_is_one_third() {
    let (a, b, c) = (1, 2, 3);
    assert_eq!(bag_jaccard(&[a, a, a, b], &[a, a, b, b, c]), 1.0 / 3.0);
}

#[test]
fn minhash_signature_matrix() {
    let h = ModPrime::new(5, vec![(1, 1), (3, 1)]); // x+1 mod 5, 3x+1 mod 5
    let columns: Vec<Vec<u32>> = [&[0u32, 3][..], &[2], &[1, 3, 4], &[0, 2, 3]]
        .iter()
        .map(|set| signature(&h, set))
        .collect();
    let row = |i: usize| columns.iter().map(|c| c[i]).collect::<Vec<_>>();
    assert_eq!([row(0), row(1)], [[1, 3, 0, 1], [0, 2, 0, 0]]);
    assert_eq!(estimate(&columns[0], &columns[3]), 1.0); // true J(S1,S4) = 2/3
}

/// The 8-bit SimHash example with injected feature fingerprints.
const FEATURES: [(&str, &str); 10] = [
    ("bilgisayar", "10101010"),
    ("com", "11000000"),
    ("kavramları", "01010101"),
    ("kavramlarının", "10100101"),
    ("anlatıldığı", "11101110"),
    ("bir", "01011111"),
    ("www", "11110001"),
    ("sitesidir", "10101110"),
    ("ve", "00001111"),
    ("uzantılıdır", "00100010"),
];

fn bits(s: &str) -> u64 {
    u64::from_str_radix(s, 2).unwrap()
}

fn unit_features<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<(u64, f64)> {
    words
        .into_iter()
        .map(|w| {
            let (_, fp) = FEATURES.iter().find(|(word, _)| *word == w).unwrap();
            (bits(fp), 1.0)
        })
        .collect()
}

#[test]
fn simhash_eight_bit_example() {
    let all = unit_features(FEATURES.iter().map(|(w, _)| *w));
    assert_eq!(
        column_sums(all.clone(), 8).unwrap(),
        [2.0, 0.0, 2.0, -4.0, 0.0, 2.0, 2.0, 0.0]
    );
    let document = fingerprint(all, 8).unwrap();
    assert_eq!(document, bits("10100110"));

    // The book prints 11000111 at distance 3, but its column sums are wrong:
    // (+1 −1 +1 …) over the three words give 11000000, at distance 4.
    let short = fingerprint(unit_features(["bilgisayar", "kavramları", "com"]), 8).unwrap();
    assert_eq!(short, bits("11000000"));
    assert_eq!(hamming(short, document), 4);
}

#[test]
fn lsh_s_curve_numbers() {
    assert!((threshold(16, 4) - 0.5).abs() < 1e-12);
    // The book rounds 0.99964394… to 0.99965.
    let p = candidate_probability(0.8, 20, 5);
    assert!((p - 0.99965).abs() < 1e-5);
    assert!((p - 0.999_643_942_109_479_3).abs() < 1e-12);
}
