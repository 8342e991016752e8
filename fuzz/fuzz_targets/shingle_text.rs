//! Normalisation and shingling of arbitrary text (the input bytes through
//! `String::from_utf8_lossy`), for every kind: character shingles with
//! k = 1..=9 (white space collapsed and removed), word and stop-word
//! shingles with k = 1..=4 (default English and a custom stop-word list).
//!
//! Never a panic, and these invariants:
//! - normalised text has no leading, trailing or double blank, no white
//!   space other than single blanks (none at all when removed), and no
//!   upper-case ASCII;
//! - a set is sorted and distinct, a bag sorted, and set == bag.to_set();
//! - the shingles of the normalised text are sub-slices of it whose hashes
//!   are the bag; character shingles have k characters, word shingles k
//!   words, unless the text is too short and is one shingle: itself;
//! - empty normalised text ⇔ no shingles.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lshdb::shingle::{normalize, ShingleConfig, ShingleKind, Shingler, Whitespace};
use std::sync::OnceLock;

fn shinglers() -> &'static [Shingler] {
    static ALL: OnceLock<Vec<Shingler>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut configs = Vec::new();
        for k in 1..=9 {
            for whitespace in [Whitespace::Collapse, Whitespace::Remove] {
                configs.push(ShingleConfig {
                    kind: ShingleKind::Chars(k),
                    whitespace,
                    ..ShingleConfig::default()
                });
            }
        }
        for k in 1..=4 {
            configs.push(ShingleConfig {
                kind: ShingleKind::Words(k),
                ..ShingleConfig::default()
            });
            configs.push(ShingleConfig {
                kind: ShingleKind::StopWords(k),
                ..ShingleConfig::default()
            });
            configs.push(ShingleConfig {
                kind: ShingleKind::StopWords(k),
                seed: 7,
                stop_words: Some(vec!["a".into(), "é".into(), "İ".into(), "x y".into()]),
                ..ShingleConfig::default()
            });
        }
        configs
            .into_iter()
            .map(|c| Shingler::new(c).expect("valid shingle configuration"))
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut normalized = String::new();
    for whitespace in [Whitespace::Collapse, Whitespace::Remove] {
        normalize(&text, whitespace, &mut normalized);
        check_normalized(&normalized, whitespace);
    }
    for shingler in shinglers() {
        check_shingler(shingler, &text);
    }
});

fn check_normalized(out: &str, whitespace: Whitespace) {
    assert!(!out.starts_with(' '), "leading blank: {out:?}");
    assert!(!out.ends_with(' '), "trailing blank: {out:?}");
    assert!(!out.contains("  "), "double blank: {out:?}");
    for c in out.chars() {
        let allowed = c == ' ' && whitespace == Whitespace::Collapse;
        assert!(
            !c.is_whitespace() || allowed,
            "white space {c:?} in {out:?}"
        );
        assert!(!c.is_ascii_uppercase(), "upper case {c:?} in {out:?}");
    }
}

fn check_shingler(shingler: &Shingler, text: &str) {
    let set = shingler.set(text);
    let bag = shingler.bag(text);
    assert!(
        set.as_slice().windows(2).all(|w| w[0] < w[1]),
        "set not sorted distinct"
    );
    assert!(
        bag.as_slice().windows(2).all(|w| w[0] <= w[1]),
        "bag not sorted"
    );
    assert_eq!(set, bag.to_set(), "set != bag.to_set()");

    let config = shingler.config();
    let mut normalized = String::new();
    normalize(text, config.whitespace, &mut normalized);
    assert_eq!(
        normalized.is_empty(),
        set.is_empty(),
        "empty text ⇔ no shingles"
    );

    let shingles = shingler.shingles(&normalized);
    let mut hashes: Vec<u32> = shingles.iter().map(|s| shingler.hash(s)).collect();
    hashes.sort_unstable();
    assert_eq!(hashes, bag.as_slice(), "shingles' hashes != bag");

    let base = normalized.as_ptr() as usize;
    let whole = shingles.len() == 1 && shingles[0] == normalized;
    for s in &shingles {
        let start = s.as_ptr() as usize - base;
        assert!(
            start + s.len() <= normalized.len(),
            "shingle not a sub-slice"
        );
        assert!(!s.is_empty(), "empty shingle");
        if whole {
            continue; // too short for a k-shingle, or exactly one
        }
        match config.kind {
            ShingleKind::Chars(k) => assert_eq!(s.chars().count(), k, "{s:?}"),
            ShingleKind::Words(k) | ShingleKind::StopWords(k) => {
                assert_eq!(s.split(' ').count(), k, "{s:?}");
                assert!(s.split(' ').all(|w| !w.is_empty()), "{s:?}");
            }
        }
    }
    if let ShingleKind::Chars(k) = config.kind {
        let n = normalized.chars().count();
        let expected = if n >= k {
            n - k + 1
        } else {
            usize::from(n > 0)
        };
        assert_eq!(shingles.len(), expected, "character shingle count");
    }
}
