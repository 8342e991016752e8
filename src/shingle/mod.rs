//! Normalisation and shingling: the first step of the pipeline.
//!
//! A document becomes a sorted set (or bag) of 32-bit shingle hashes. Text
//! is normalised ([`normalize`]), cut into character, word or
//! stop-word-anchored shingles ([`ShingleKind`]), and each shingle's UTF-8
//! bytes are hashed with [`crate::hash::murmur3_32`] and the
//! configured seed. Non-text documents (a customer's purchases, a film's
//! raters) enter through [`item_set`] and meet text sets downstream.
//!
//! A text too short to hold one shingle (fewer than k characters or words,
//! or no stop word) is one shingle: its whole normalised text. An empty text
//! has no shingles.

mod normalize;
mod set;
mod stopwords;

pub use normalize::{normalize, Whitespace};
pub use set::{item_set, ShingleBag, ShingleSet};
pub use stopwords::{StopWords, DEFAULT_ENGLISH};

use crate::hash::murmur3_32;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The default shingle hash seed (0, so `mmh3.hash(shingle, 0, signed=False)`
/// in Python reproduces lshdb's shingles).
pub const DEFAULT_SEED: u32 = 0;

/// Largest accepted k, for every kind.
pub const MAX_K: usize = 64;

/// How text is cut into shingles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ShingleKind {
    /// Every run of k consecutive characters (Unicode scalar values) of the
    /// normalised text. k = 5 suits e-mail-sized text, k = 9 long documents.
    Chars(usize),
    /// Every run of k consecutive words (white-space separated).
    Words(usize),
    /// A stop word followed by the next k − 1 words.
    StopWords(usize),
}

impl ShingleKind {
    /// The shingle length k.
    pub fn k(self) -> usize {
        match self {
            ShingleKind::Chars(k) | ShingleKind::Words(k) | ShingleKind::StopWords(k) => k,
        }
    }
}

/// As the CLI's `--shingle` takes it: `char:5`, `word:2`, `stopword:3`.
impl std::fmt::Display for ShingleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShingleKind::Chars(k) => write!(f, "char:{k}"),
            ShingleKind::Words(k) => write!(f, "word:{k}"),
            ShingleKind::StopWords(k) => write!(f, "stopword:{k}"),
        }
    }
}

impl Default for ShingleKind {
    fn default() -> Self {
        ShingleKind::Chars(5)
    }
}

/// Everything that decides which hashes a text turns into. Stored in the
/// database file, so a reopened database shingles exactly as it did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShingleConfig {
    /// Character, word or stop-word shingles, and their length k.
    pub kind: ShingleKind,
    /// What normalisation does with white space.
    pub whitespace: Whitespace,
    /// Seed of the shingle hash.
    pub seed: u32,
    /// Custom stop words for [`ShingleKind::StopWords`]; `None` means the
    /// default English list.
    pub stop_words: Option<Vec<String>>,
}

/// Turns text into shingle hashes according to a [`ShingleConfig`].
///
/// ```
/// use lshdb::shingle::{ShingleConfig, ShingleKind, Shingler};
/// let shingler = Shingler::new(ShingleConfig {
///     kind: ShingleKind::Chars(2),
///     ..Default::default()
/// })?;
/// // "abcdabd" has the 2-shingles {ab, bc, cd, da, bd}: five distinct, six in all.
/// assert_eq!(shingler.set("abcdabd").len(), 5);
/// assert_eq!(shingler.bag("abcdabd").len(), 6);
/// # Ok::<(), lshdb::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Shingler {
    config: ShingleConfig,
    stop_words: Option<StopWords>,
}

impl Shingler {
    /// A shingler for `config`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when k is 0 or above [`MAX_K`], when white
    /// space removal is asked for with word or stop-word shingles, or when a
    /// custom stop-word list is given for another kind or is empty.
    pub fn new(config: ShingleConfig) -> Result<Self> {
        let k = config.kind.k();
        if k == 0 || k > MAX_K {
            return Err(Error::invalid(
                "k",
                format!("shingle length must be between 1 and {MAX_K}, got {k}"),
            ));
        }
        let char_kind = matches!(config.kind, ShingleKind::Chars(_));
        if config.whitespace == Whitespace::Remove && !char_kind {
            return Err(Error::invalid(
                "whitespace",
                "white space removal applies to character shingles only; word and stop-word \
                 shingles need the blanks between words",
            ));
        }
        let stop_words = match (&config.kind, &config.stop_words) {
            (ShingleKind::StopWords(_), None) => Some(StopWords::english()),
            (ShingleKind::StopWords(_), Some(words)) => {
                let list = StopWords::custom(words);
                if list.is_empty() {
                    return Err(Error::invalid(
                        "stop_words",
                        "the custom stop-word list is empty; give at least one word or use \
                         the default English list",
                    ));
                }
                Some(list)
            }
            (_, Some(_)) => {
                return Err(Error::invalid(
                    "stop_words",
                    "a stop-word list is only used with stop-word shingles",
                ))
            }
            (_, None) => None,
        };
        Ok(Self { config, stop_words })
    }

    /// The configuration this shingler applies.
    pub fn config(&self) -> &ShingleConfig {
        &self.config
    }

    /// The bag (multiset) of shingle hashes of `text`, sorted, repeats kept.
    pub fn bag(&self, text: &str) -> ShingleBag {
        ShingleBag::from_hashes(self.hashes(text))
    }

    /// The set of shingle hashes of `text`, sorted and distinct.
    pub fn set(&self, text: &str) -> ShingleSet {
        ShingleSet::from_hashes(self.hashes(text))
    }

    /// The shingle hashes of `text` normalised, in text order.
    fn hashes(&self, text: &str) -> Vec<u32> {
        let mut normalized = String::new();
        normalize(text, self.config.whitespace, &mut normalized);
        let mut hashes = Vec::new();
        self.hash_shingles(&normalized, &mut hashes);
        hashes
    }

    /// The shingles of an already normalised text as strings, in text order
    /// (for inspection and debugging; the pipeline uses only the hashes).
    pub fn shingles<'t>(&self, normalized: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        self.for_each_shingle(normalized, |s| out.push(s));
        out
    }

    /// The hash of one shingle: `murmur3_32(shingle as UTF-8, seed)`.
    pub fn hash(&self, shingle: &str) -> u32 {
        murmur3_32(shingle.as_bytes(), self.config.seed)
    }

    /// Appends the hash of every shingle of `normalized` to `out`, unsorted.
    pub fn hash_shingles(&self, normalized: &str, out: &mut Vec<u32>) {
        match self.config.kind {
            ShingleKind::Chars(k) if normalized.is_ascii() && normalized.len() >= k => {
                hash_byte_windows(normalized.as_bytes(), k, self.config.seed, out);
            }
            _ => self.for_each_shingle(normalized, |s| out.push(self.hash(s))),
        }
    }

    /// Calls `f` with every shingle of `normalized`, a sub-slice of it.
    fn for_each_shingle<'t>(&self, normalized: &'t str, mut f: impl FnMut(&'t str)) {
        if normalized.is_empty() {
            return;
        }
        let found = match self.config.kind {
            ShingleKind::Chars(k) => char_shingles(normalized, k, &mut f),
            ShingleKind::Words(k) => word_shingles(normalized, k, |_| true, &mut f),
            ShingleKind::StopWords(k) => {
                let stop = self.stop_words.as_ref();
                word_shingles(
                    normalized,
                    k,
                    |w| stop.is_some_and(|s| s.contains(w)),
                    &mut f,
                )
            }
        };
        if !found {
            f(normalized);
        }
    }
}

/// Every window of `k` characters; false when the text is shorter than `k`.
fn char_shingles<'t>(text: &'t str, k: usize, f: &mut impl FnMut(&'t str)) -> bool {
    if text.is_ascii() {
        if text.len() < k {
            return false;
        }
        for start in 0..=text.len() - k {
            f(&text[start..start + k]);
        }
        return true;
    }
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let chars = bounds.len() - 1;
    if chars < k {
        return false;
    }
    for start in 0..=chars - k {
        f(&text[bounds[start]..bounds[start + k]]);
    }
    true
}

/// Appends the hash of every window of `k` bytes: the character shingles
/// of ASCII text. The usual lengths are compiled for their k, so that
/// hashing a window unrolls to straight-line code.
fn hash_byte_windows(bytes: &[u8], k: usize, seed: u32, out: &mut Vec<u32>) {
    match k {
        3 => hash_windows_of::<3>(bytes, seed, out),
        4 => hash_windows_of::<4>(bytes, seed, out),
        5 => hash_windows_of::<5>(bytes, seed, out),
        6 => hash_windows_of::<6>(bytes, seed, out),
        7 => hash_windows_of::<7>(bytes, seed, out),
        8 => hash_windows_of::<8>(bytes, seed, out),
        9 => hash_windows_of::<9>(bytes, seed, out),
        _ => out.extend(bytes.windows(k).map(|w| murmur3_32(w, seed))),
    }
}

/// [`hash_byte_windows`] for one fixed `K`.
fn hash_windows_of<const K: usize>(bytes: &[u8], seed: u32, out: &mut Vec<u32>) {
    out.extend(bytes.windows(K).map(|w| murmur3_32(w, seed)));
}

/// Every run of `k` words whose first word passes `anchor`; false when there
/// is none. Words are separated by single blanks in normalised text, so a
/// shingle is the sub-slice from its first word to its last.
fn word_shingles<'t>(
    text: &'t str,
    k: usize,
    anchor: impl Fn(&str) -> bool,
    f: &mut impl FnMut(&'t str),
) -> bool {
    let words: Vec<(usize, usize)> = text
        .split(' ')
        .scan(0usize, |offset, word| {
            let start = *offset;
            *offset += word.len() + 1;
            Some((start, start + word.len()))
        })
        .filter(|(start, end)| end > start)
        .collect();
    let mut found = false;
    for window in words.windows(k) {
        let (start, first_end) = window[0];
        if anchor(&text[start..first_end]) {
            f(&text[start..window[k - 1].1]);
            found = true;
        }
    }
    found
}

#[cfg(test)]
mod tests;
