//! The one JSON Lines reader of the CLI: bounded lines, numbered, with a
//! byte-order mark at the start of the input dropped, each parsed into a
//! JSON object or the reason it is not one. Every command that reads JSON
//! records (`add --jsonl`, `query --jsonl`, `import`, `dedup`) reads its
//! lines here, through `records`.

use lshdb::MAX_DOCUMENT_BYTES;
use std::io::{BufRead, Read};

/// Longest accepted input line: a maximal document plus room for the key
/// and JSON escaping.
pub const MAX_LINE: u64 = (MAX_DOCUMENT_BYTES as u64) * 2 + (1 << 20);

/// What reading a line gave.
pub enum Line {
    /// The end of the input.
    End,
    /// A line, in the reader's buffer with its ending.
    Read,
    /// A line longer than [`MAX_LINE`]: consumed, the buffer left empty.
    TooLong,
}

/// Lines of an input, numbered from 1 (or after a header), each at most
/// [`MAX_LINE`] bytes.
pub struct Lines<R> {
    input: R,
    /// The number of the line last read.
    pub line: u64,
    /// The line last read, with its ending.
    pub buf: Vec<u8>,
    /// Whether a line was read (a byte-order mark only opens the first).
    started: bool,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `input`, numbered as if `after` lines came before it.
    pub fn new(input: R, after: u64) -> Self {
        Self {
            input,
            line: after,
            buf: Vec::new(),
            started: false,
        }
    }

    /// Reads the next line into [`Lines::buf`]; a byte-order mark opening
    /// the input is not part of it. Only reading can fail.
    pub fn read(&mut self) -> std::io::Result<Line> {
        self.buf.clear();
        let read = (&mut self.input)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.buf)?;
        if read == 0 {
            return Ok(Line::End);
        }
        self.line += 1;
        if self.buf.last() != Some(&b'\n') && read as u64 == MAX_LINE {
            self.skip_rest()?;
            self.buf.clear();
            self.started = true;
            return Ok(Line::TooLong);
        }
        if !self.started && self.buf.starts_with(b"\xef\xbb\xbf") {
            self.buf.drain(..3);
        }
        self.started = true;
        Ok(Line::Read)
    }

    /// Consumes the rest of an over-long line, a bounded block at a time.
    fn skip_rest(&mut self) -> std::io::Result<()> {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let n = (&mut self.input)
                .take(1 << 20)
                .read_until(b'\n', &mut rest)?;
            if n == 0 || rest.last() == Some(&b'\n') {
                return Ok(());
            }
        }
    }

    /// Lets go of a buffer grown by a huge line.
    pub fn shrink(&mut self) {
        if self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
    }
}

/// The reason of a line over [`MAX_LINE`].
pub fn too_long() -> String {
    format!("line longer than {MAX_LINE} bytes")
}

/// A line (with or without its ending) as a JSON object: `Ok(None)` for a
/// blank line, `Err` with the reason for a line that is not an object.
pub fn parse_object(line: &[u8]) -> Result<Option<serde_json::Value>, String> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|_| "not valid UTF-8".to_owned())?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("malformed JSON: {e}"))?;
    if !value.is_object() {
        return Err("not a JSON object".to_owned());
    }
    Ok(Some(value))
}

/// A key or id field's value as text: a string as it is, a number as
/// written; `None` for any other value.
pub fn scalar_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_opens_only_the_first_line() {
        let input: &[u8] = b"\xef\xbb\xbf{\"a\":1}\r\n\xef\xbb\xbf{\"a\":2}\n\n";
        let mut lines = Lines::new(input, 0);
        assert!(matches!(lines.read().unwrap(), Line::Read));
        assert_eq!(lines.buf, b"{\"a\":1}\r\n");
        assert!(parse_object(&lines.buf).unwrap().is_some());
        assert!(matches!(lines.read().unwrap(), Line::Read));
        assert_eq!(lines.line, 2);
        let err = parse_object(&lines.buf).unwrap_err();
        assert!(err.starts_with("malformed JSON"), "{err}");
        assert!(matches!(lines.read().unwrap(), Line::Read));
        assert!(parse_object(&lines.buf).unwrap().is_none());
        assert!(matches!(lines.read().unwrap(), Line::End));
        assert_eq!(lines.line, 3);
    }

    #[test]
    fn objects_only() {
        assert_eq!(parse_object(b"[1]").unwrap_err(), "not a JSON object");
        assert_eq!(parse_object(b"\xff").unwrap_err(), "not valid UTF-8");
        assert!(parse_object(b"   \r\n").unwrap().is_none());
        assert_eq!(scalar_text(&serde_json::json!(7)).as_deref(), Some("7"));
        assert_eq!(scalar_text(&serde_json::json!(null)), None);
    }
}
