//! The stop-word list that anchors stop-word shingles.
//!
//! News text is full of stop words while the ads and navigation around it
//! are not, so shingles that start at a stop word describe the article and
//! ignore the boilerplate. The default list is a short, fixed English list;
//! callers may supply their own.

use std::collections::HashSet;

/// The default English stop words (a fixed list: part of the file format).
pub const DEFAULT_ENGLISH: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
    "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
    "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our",
    "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that",
    "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through",
    "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
];

/// A set of stop words, matched against lower-cased words with leading and
/// trailing punctuation removed (so `"The,"` matches `the`).
#[derive(Debug, Clone)]
pub struct StopWords {
    words: HashSet<String>,
}

impl StopWords {
    /// The default English list, [`DEFAULT_ENGLISH`].
    pub fn english() -> Self {
        Self::custom(DEFAULT_ENGLISH.iter().copied())
    }

    /// A custom list. Words are lower-cased; empty entries are ignored.
    ///
    /// ```
    /// let stop = lshdb::shingle::StopWords::custom(["Le", "la", "les"]);
    /// assert!(stop.contains("le"));
    /// assert!(stop.contains("«la»"));
    /// assert!(!stop.contains("chat"));
    /// ```
    pub fn custom<I, S>(words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let words = words
            .into_iter()
            .map(|w| w.as_ref().trim().to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        Self { words }
    }

    /// Whether `word` (already lower-cased) is a stop word once punctuation
    /// at its ends is stripped.
    pub fn contains(&self, word: &str) -> bool {
        let core = word.trim_matches(|c: char| !c.is_alphanumeric());
        self.words.contains(core)
    }

    /// The number of distinct stop words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

impl Default for StopWords {
    fn default() -> Self {
        Self::english()
    }
}
