use super::*;

fn shingler(kind: ShingleKind) -> Shingler {
    Shingler::new(ShingleConfig {
        kind,
        ..Default::default()
    })
    .unwrap()
}

fn strings(s: &Shingler, text: &str) -> Vec<String> {
    let mut normalized = String::new();
    normalize(text, s.config().whitespace, &mut normalized);
    s.shingles(&normalized)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

#[test]
fn textbook_char_shingles() {
    // "abcdabd", k = 2 → {ab, bc, cd, da, bd}; "ab" occurs twice.
    let s = shingler(ShingleKind::Chars(2));
    assert_eq!(strings(&s, "abcdabd"), ["ab", "bc", "cd", "da", "ab", "bd"]);
    let set = s.set("abcdabd");
    let mut expected: Vec<u32> = ["ab", "bc", "cd", "da", "bd"]
        .iter()
        .map(|x| murmur3_32(x.as_bytes(), DEFAULT_SEED))
        .collect();
    expected.sort_unstable();
    assert_eq!(set.as_slice(), expected.as_slice());
    assert_eq!(s.bag("abcdabd").len(), 6);
    assert_eq!(s.bag("abcdabd").to_set(), set);
}

#[test]
fn whitespace_removal_joins_touch_down() {
    let collapse = shingler(ShingleKind::Chars(9));
    let remove = Shingler::new(ShingleConfig {
        kind: ShingleKind::Chars(9),
        whitespace: Whitespace::Remove,
        ..Default::default()
    })
    .unwrap();
    assert_ne!(collapse.set("touch down"), collapse.set("touchdown"));
    assert_eq!(remove.set("touch down"), remove.set("touchdown"));
}

#[test]
fn normalisation_makes_case_and_spacing_irrelevant() {
    let s = ShingleKind::default();
    let s = shingler(s);
    assert_eq!(
        s.set("The  Quick\nBrown fox"),
        s.set("the quick brown FOX ")
    );
}

#[test]
fn char_shingles_count_characters_not_bytes() {
    let s = shingler(ShingleKind::Chars(3));
    assert_eq!(strings(&s, "çöğüş"), ["çöğ", "öğü", "ğüş"]);
}

#[test]
fn word_shingles() {
    let s = shingler(ShingleKind::Words(2));
    assert_eq!(
        strings(&s, "A rose is  a rose"),
        ["a rose", "rose is", "is a", "a rose"]
    );
    assert_eq!(s.set("A rose is a rose").len(), 3);
}

#[test]
fn stop_word_shingles_anchor_on_stop_words() {
    // MMDS: "A spokesperson for the Sudzo Corporation revealed today that
    // studies have shown it is good for people to buy Sudzo products."
    let s = shingler(ShingleKind::StopWords(3));
    let text = "A spokesperson for the Sudzo Corporation revealed today that \
                studies have shown it is good for people to buy Sudzo products.";
    let got = strings(&s, text);
    assert_eq!(got[0], "a spokesperson for");
    assert!(got.contains(&"for the sudzo".to_owned()));
    assert!(got.contains(&"the sudzo corporation".to_owned()));
    assert!(got.contains(&"that studies have".to_owned()));
    assert!(got.iter().all(|g| g.split(' ').count() == 3));
    // Boilerplate without stop words adds nothing.
    assert_eq!(
        s.set(text),
        s.set(&format!("BUY CHEAP PILLS {text} CLICK HERE"))
    );
}

#[test]
fn custom_stop_words() {
    let s = Shingler::new(ShingleConfig {
        kind: ShingleKind::StopWords(2),
        stop_words: Some(vec!["Le".into(), "la".into()]),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        strings(&s, "le chat et la souris"),
        ["le chat", "la souris"]
    );
}

#[test]
fn short_text_is_one_shingle_and_empty_text_none() {
    for kind in [
        ShingleKind::Chars(5),
        ShingleKind::Words(3),
        ShingleKind::StopWords(3),
    ] {
        let s = shingler(kind);
        assert_eq!(strings(&s, "  Vim "), ["vim"], "{kind:?}");
        assert_eq!(s.set("Vim").as_slice(), &[murmur3_32(b"vim", DEFAULT_SEED)]);
        assert!(s.set("").is_empty());
        assert!(s.set(" \n\t").is_empty());
    }
    // No stop word at all: the whole text is the one shingle.
    let s = shingler(ShingleKind::StopWords(3));
    assert_eq!(
        strings(&s, "Rust compiler toolchain"),
        ["rust compiler toolchain"]
    );
}

#[test]
fn seed_changes_hashes() {
    let a = shingler(ShingleKind::Chars(5));
    let b = Shingler::new(ShingleConfig {
        seed: 7,
        ..Default::default()
    })
    .unwrap();
    assert_ne!(a.set("hello world"), b.set("hello world"));
}

/// The parameter `Shingler::new` names in its refusal of `config`.
fn rejected(config: ShingleConfig) -> &'static str {
    match Shingler::new(config).unwrap_err() {
        Error::InvalidParameter { name, .. } => name,
        other => panic!("expected InvalidParameter, got {other:?}"),
    }
}

#[test]
fn invalid_configs_are_rejected() {
    for kind in [ShingleKind::Chars(0), ShingleKind::Words(MAX_K + 1)] {
        let config = ShingleConfig {
            kind,
            ..Default::default()
        };
        assert_eq!(rejected(config), "k");
    }
    let config = ShingleConfig {
        kind: ShingleKind::Words(2),
        whitespace: Whitespace::Remove,
        ..Default::default()
    };
    assert_eq!(rejected(config), "whitespace");
    let config = ShingleConfig {
        stop_words: Some(vec!["the".into()]),
        ..Default::default()
    };
    assert_eq!(rejected(config), "stop_words");
    let config = ShingleConfig {
        kind: ShingleKind::StopWords(3),
        stop_words: Some(vec![" ".into()]),
        ..Default::default()
    };
    assert_eq!(rejected(config), "stop_words");
}

#[test]
fn items_and_text_meet_in_one_pipeline() {
    let s = shingler(ShingleKind::Words(1));
    assert_eq!(
        s.set("milk bread eggs"),
        item_set(["eggs", "milk", "bread"], DEFAULT_SEED)
    );
}

#[test]
fn ascii_windows_hash_like_their_shingles() {
    // The byte-window path (compiled per k for the usual lengths) against
    // hashing each shingle string, for k on both sides of those lengths.
    let text = "the quick brown fox jumps over the lazy dog, 0123456789 ~!";
    for k in 1..=16 {
        for seed in [DEFAULT_SEED, 0x9747_b28c] {
            let s = Shingler::new(ShingleConfig {
                kind: ShingleKind::Chars(k),
                seed,
                ..Default::default()
            })
            .unwrap();
            for len in [k - 1, k, k + 1, text.len()] {
                let part = &text[..len];
                let mut got = Vec::new();
                s.hash_shingles(part, &mut got);
                let expected: Vec<u32> = s.shingles(part).iter().map(|w| s.hash(w)).collect();
                assert_eq!(got, expected, "k = {k}, seed = {seed}, {part:?}");
            }
        }
    }
}
