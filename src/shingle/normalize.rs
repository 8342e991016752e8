//! Text normalisation: the step before any shingle is cut.
//!
//! Lower-cases every character (Unicode, per character), collapses each run of
//! white space to one blank and trims both ends; optionally removes white
//! space altogether. The output is part of the file format: the same text must
//! give the same shingles in every version.

use serde::{Deserialize, Serialize};

/// What normalisation does with white space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Whitespace {
    /// Runs of white space become one blank; leading and trailing white space
    /// is dropped. The default.
    #[default]
    Collapse,
    /// All white space is removed ("touch down" and "touchdown" become the
    /// same text). Only meaningful for character shingles.
    Remove,
}

/// Normalises `text` into `out` (which is cleared first).
///
/// Lower-casing is `char::to_lowercase` applied to each character, so it has
/// no context rules (a final capital sigma becomes `σ`, not `ς`). White space
/// is what `char::is_whitespace` says it is.
///
/// ```
/// use lshdb::shingle::{normalize, Whitespace};
/// let mut out = String::new();
/// normalize("  Hello,\t\tWORLD \n", Whitespace::Collapse, &mut out);
/// assert_eq!(out, "hello, world");
/// normalize("Touch  Down", Whitespace::Remove, &mut out);
/// assert_eq!(out, "touchdown");
/// ```
pub fn normalize(text: &str, whitespace: Whitespace, out: &mut String) {
    out.clear();
    out.reserve(text.len());
    let mut pending_blank = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_blank = whitespace == Whitespace::Collapse;
            continue;
        }
        if pending_blank && !out.is_empty() {
            out.push(' ');
        }
        pending_blank = false;
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str, ws: Whitespace) -> String {
        let mut out = String::new();
        normalize(text, ws, &mut out);
        out
    }

    #[test]
    fn collapses_and_trims() {
        assert_eq!(norm("", Whitespace::Collapse), "");
        assert_eq!(norm(" \t\n ", Whitespace::Collapse), "");
        assert_eq!(norm("a  b\t\tc\n", Whitespace::Collapse), "a b c");
        assert_eq!(norm("\u{a0}x\u{2003}y", Whitespace::Collapse), "x y");
    }

    #[test]
    fn lowercases_unicode() {
        assert_eq!(norm("ÀÉÎ ĞÜŞ İ", Whitespace::Collapse), "àéî ğüş i\u{307}");
        assert_eq!(norm("ΣΑΣ", Whitespace::Collapse), "σασ");
    }

    #[test]
    fn removes_whitespace() {
        assert_eq!(norm(" touch down ", Whitespace::Remove), "touchdown");
    }
}
