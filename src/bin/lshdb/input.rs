//! JSON Lines input: one document per line, with every bad line reported
//! by number instead of stopping (or panicking on) the load.

use lshdb::{DocumentBuf, MAX_DOCUMENT_BYTES};
use std::io::{BufRead, Read};

/// Longest accepted input line: a maximal document plus room for the key
/// and JSON escaping.
const MAX_LINE: u64 = (MAX_DOCUMENT_BYTES as u64) * 2 + (1 << 20);

/// One good input record.
pub struct Record {
    pub line: u64,
    pub key: String,
    pub doc: DocumentBuf,
}

/// Why a line was not a record.
pub enum InputError {
    /// A bad record: skipped (or, with --strict, fatal).
    Bad { line: u64, reason: String },
    /// Reading the input failed: always fatal.
    Io(std::io::Error),
}

/// Reads records from JSON Lines: objects with a key field and a text field
/// (or, for imports, a `shingles` array of u32 hashes).
pub struct JsonLines<R> {
    reader: R,
    key_field: String,
    text_field: String,
    line: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> JsonLines<R> {
    pub fn new(reader: R, key_field: &str, text_field: &str) -> Self {
        Self {
            reader,
            key_field: key_field.to_owned(),
            text_field: text_field.to_owned(),
            line: 0,
            buf: Vec::new(),
        }
    }

    /// Numbers lines as if `n` lines (a header) came before the input.
    pub fn after_lines(mut self, n: u64) -> Self {
        self.line = n;
        self
    }

    fn bad(&self, reason: impl Into<String>) -> InputError {
        InputError::Bad {
            line: self.line,
            reason: reason.into(),
        }
    }

    /// Reads the next line (without its newline) into `self.buf`; false at
    /// the end. A line longer than [`MAX_LINE`] is consumed and reported.
    fn next_line(&mut self) -> Result<bool, InputError> {
        self.buf.clear();
        let read = (&mut self.reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.buf)
            .map_err(InputError::Io)?;
        if read == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        } else if read as u64 == MAX_LINE {
            // Skip the rest of the over-long line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let n = (&mut self.reader)
                    .take(1 << 20)
                    .read_until(b'\n', &mut rest)
                    .map_err(InputError::Io)?;
                if n == 0 || rest.last() == Some(&b'\n') {
                    break;
                }
            }
            return Err(self.bad(format!("line longer than {MAX_LINE} bytes")));
        }
        Ok(true)
    }

    fn parse(&self) -> Result<Option<Record>, InputError> {
        let text = std::str::from_utf8(&self.buf).map_err(|_| self.bad("not valid UTF-8"))?;
        if text.trim().is_empty() {
            return Ok(None);
        }
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| self.bad(format!("malformed JSON: {e}")))?;
        let object = value
            .as_object()
            .ok_or_else(|| self.bad("not a JSON object"))?;
        let key = match object.get(&self.key_field) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(_) => return Err(self.bad(format!("field `{}` is not a string", self.key_field))),
            None => return Err(self.bad(format!("missing field `{}`", self.key_field))),
        };
        let doc = match (object.get(&self.text_field), object.get("shingles")) {
            (Some(serde_json::Value::String(s)), _) => {
                if s.trim().is_empty() {
                    return Err(self.bad(format!("field `{}` is empty", self.text_field)));
                }
                DocumentBuf::Text(s.clone())
            }
            (Some(_), _) => {
                return Err(self.bad(format!("field `{}` is not a string", self.text_field)))
            }
            (None, Some(serde_json::Value::Array(items))) => {
                let hashes: Option<Vec<u32>> = items
                    .iter()
                    .map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
                    .collect();
                DocumentBuf::Shingles(
                    hashes.ok_or_else(|| self.bad("`shingles` holds a value that is not a u32"))?,
                )
            }
            (None, _) => return Err(self.bad(format!("missing field `{}`", self.text_field))),
        };
        Ok(Some(Record {
            line: self.line,
            key,
            doc,
        }))
    }
}

impl<R: BufRead> Iterator for JsonLines<R> {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_line() {
                Ok(false) => return None,
                Ok(true) => {}
                Err(e) => return Some(Err(e)),
            }
            match self.parse() {
                Ok(None) => continue, // blank line
                Ok(Some(record)) => return Some(Ok(record)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Opens a path for reading, `-` meaning standard input.
pub fn open_input(path: &str) -> std::io::Result<Box<dyn BufRead>> {
    if path == "-" {
        Ok(Box::new(std::io::BufReader::new(std::io::stdin())))
    } else {
        Ok(Box::new(std::io::BufReader::new(std::fs::File::open(
            path,
        )?)))
    }
}

/// What reading a file as a document gave.
pub enum FileText {
    /// Valid UTF-8 text.
    Text(String),
    /// A NUL byte or invalid UTF-8: not a text file.
    Binary,
    /// Larger than a document may be.
    TooLarge(u64),
}

/// Reads a file as text, telling binary and over-large files apart.
pub fn read_text_file(path: &std::path::Path) -> std::io::Result<FileText> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_DOCUMENT_BYTES as u64 {
        return Ok(FileText::TooLarge(len));
    }
    let bytes = std::fs::read(path)?;
    if bytes.contains(&0) {
        return Ok(FileText::Binary);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(FileText::Text(text)),
        Err(_) => Ok(FileText::Binary),
    }
}
