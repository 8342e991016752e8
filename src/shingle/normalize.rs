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
    if text.is_ascii() {
        let mut bytes = std::mem::take(out).into_bytes();
        normalize_ascii(text.as_bytes(), whitespace, &mut bytes);
        match String::from_utf8(bytes) {
            Ok(normalized) => *out = normalized,
            // Not reached (ASCII maps to ASCII); the general path would give
            // the same text.
            Err(_) => normalize_chars(text, whitespace, out),
        }
    } else {
        normalize_chars(text, whitespace, out);
    }
}

/// [`normalize`] for any text, one `char` at a time.
fn normalize_chars(text: &str, whitespace: Whitespace, out: &mut String) {
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

/// What normalisation makes of each byte of ASCII text: white space (what
/// `char::is_whitespace` says, so `\t \n \x0B \x0C \r` and the blank; not
/// `u8::is_ascii_whitespace`, which leaves out the vertical tab) becomes a
/// blank, capitals become small letters, every other byte stays. Only white
/// space maps to the blank.
const ASCII_MAP: [u8; 256] = {
    let mut map = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        map[b] = if byte == b' ' || (byte >= b'\t' && byte <= b'\r') {
            b' '
        } else {
            byte.to_ascii_lowercase()
        };
        b += 1;
    }
    map
};

/// [`normalize`] for ASCII text, byte by byte without branches (a branch on
/// white space mispredicts at every word boundary): every byte is written,
/// mapped by [`ASCII_MAP`], and the write position advances only past bytes
/// that are kept, so at most one blank follows a word and none leads. The
/// one blank a trailing run can leave is dropped at the end.
fn normalize_ascii(text: &[u8], whitespace: Whitespace, out: &mut Vec<u8>) {
    out.clear();
    out.resize(text.len(), 0);
    let collapse = whitespace == Whitespace::Collapse;
    let mut len = 0;
    let mut after_word = false;
    for &b in text {
        let c = ASCII_MAP[usize::from(b)];
        let space = c == b' ';
        out[len] = c;
        len += usize::from(!space | (collapse & after_word));
        after_word = !space;
    }
    if len > 0 && out[len - 1] == b' ' {
        len -= 1;
    }
    out.truncate(len);
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
    fn ascii_fast_path_equals_the_general_path() {
        let every_byte: String = (0u8..128).map(char::from).collect();
        let mut texts = vec![
            String::new(),
            " ".into(),
            "\t\n\x0B\x0C\r ".into(),
            "a\x0Bb\x0Cc\rd\te\nf".into(),
            "\x0B\x0Clead and trail\r\n".into(),
            "  MiXeD   CaSe\tWORDS  ".into(),
            "ctrl\x00\x01\x1c\x1d\x1e\x1f\x7f chars".into(),
            "x".into(),
            " x ".into(),
            every_byte.clone(),
        ];
        // Each ASCII byte alone and between letters.
        texts.extend((0u8..128).map(|b| format!("A{}b", char::from(b))));
        texts.extend((0u8..128).map(|b| char::from(b).to_string()));
        for text in &texts {
            assert!(text.is_ascii());
            for ws in [Whitespace::Collapse, Whitespace::Remove] {
                let mut general = String::new();
                normalize_chars(text, ws, &mut general);
                assert_eq!(norm(text, ws), general, "{text:?} {ws:?}");
            }
        }
    }

    #[test]
    fn removes_whitespace() {
        assert_eq!(norm(" touch down ", Whitespace::Remove), "touchdown");
    }
}
