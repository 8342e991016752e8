//! The JSON Lines and CSV readers of `dedup`: lines and CSV records read
//! with a bounded length, parsed into [`Parsed`] units, each kept with its
//! original bytes (a [`Tee`] cuts a CSV record's bytes out of what the CSV
//! parser consumed).

use super::survey::{check_survey, Survey};
use super::{Chunk, Extra, Fields, Good, Parsed, Raw, CHUNK, CHUNK_BYTES};
use crate::input::Backlog;
use crate::support::jsonl::{parse_object, scalar_text, too_long, Line, Lines, MAX_LINE};
use crate::{fail, CliError};
use lshdb::MAX_DOCUMENT_BYTES;
use std::io::{BufRead, Read};

/// The JSON Lines reader of `dedup`, over the CLI's one line reader.
pub struct LineSource {
    /// The lines; each line's buffer is grown once, then each line is
    /// copied out at its size.
    pub(super) lines: Lines<Box<dyn BufRead + Send>>,
    pub(super) fields: Fields,
    /// Whether the input has more ready: a chunk ends where it has not.
    pub(super) backlog: Backlog,
    /// The input's name, for messages.
    pub(super) path: String,
    /// Whether a JSON object was read (and its fields checked).
    pub(super) surveyed: bool,
}

impl LineSource {
    pub(super) fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let mut units = Vec::new();
        let mut raw = Vec::new();
        let mut bytes = 0;
        // The first chunk is surveyed: a field no record has is an error.
        let mut survey = (!self.surveyed).then(Survey::default);
        while units.len() < CHUNK
            && bytes < CHUNK_BYTES
            && (units.is_empty() || self.backlog.ready())
        {
            let parsed = match self.lines.read() {
                Ok(Line::End) => break,
                Ok(Line::Read) => parse_json(&self.lines.buf, &self.fields, survey.as_mut()),
                Ok(Line::TooLong) => Parsed::Bad(too_long()),
                Err(err) => return Err(CliError::Message(format!("{err}"))),
            };
            bytes += self.lines.buf.len();
            units.push((self.lines.line, parsed));
            raw.push(self.lines.buf.as_slice().to_vec());
            self.lines.shrink(); // not held after a huge line
        }
        if let Some(survey) = survey.filter(|s| s.objects > 0) {
            check_survey(&survey, &self.fields, &self.path)?;
            self.surveyed = true;
        }
        Ok((!units.is_empty()).then_some(Chunk {
            units,
            raw: Raw::Bytes(raw),
        }))
    }
}

/// The value at a field path: the whole name when the object has it, else
/// its `.`-separated parts through nested objects (`meta.body`).
pub(super) fn json_field<'a>(
    object: &'a serde_json::Value,
    name: &str,
) -> Option<&'a serde_json::Value> {
    if let Some(value) = object.get(name) {
        return Some(value);
    }
    if !name.contains('.') {
        return None;
    }
    name.split('.')
        .try_fold(object, |value, part| value.get(part))
}

/// The mutable value at a field path, found as [`json_field`] finds it.
fn json_field_mut<'a>(
    object: &'a mut serde_json::Value,
    name: &str,
) -> Option<&'a mut serde_json::Value> {
    if object.get(name).is_some() {
        return object.get_mut(name);
    }
    name.split('.')
        .try_fold(object, |value, part| value.get_mut(part))
}

fn parse_json(line: &[u8], fields: &Fields, survey: Option<&mut Survey>) -> Parsed {
    let mut value = match parse_object(line) {
        Ok(Some(value)) => value,
        Ok(None) => return Parsed::Blank,
        Err(reason) => return Parsed::Bad(reason),
    };
    if let Some(survey) = survey {
        survey.object(&value, fields);
    }
    let shingles = match json_field(&value, &fields.text) {
        // Empty and null texts are records without near-duplicates.
        Some(serde_json::Value::String(_) | serde_json::Value::Null) => None,
        Some(_) => return Parsed::Bad(format!("field `{}` is not a string", fields.text)),
        None => match value.get("shingles").filter(|_| fields.shingles) {
            Some(serde_json::Value::Array(items)) => match shingles_of(items) {
                Some(hashes) => Some(hashes),
                None => return Parsed::Bad("`shingles` holds a value that is not a u32".into()),
            },
            _ => return Parsed::Bad(format!("missing field `{}`", fields.text)),
        },
    };
    let id = match fields.id.as_deref().and_then(|f| json_field(&value, f)) {
        Some(serde_json::Value::Null) | None => None,
        Some(v @ (serde_json::Value::String(_) | serde_json::Value::Number(_))) => scalar_text(v),
        Some(_) => {
            return Parsed::Bad(format!(
                "field `{}` is not a string or a number",
                fields.id.as_deref().unwrap_or_default()
            ))
        }
    };
    let score = fields
        .score
        .as_deref()
        .and_then(|f| json_field(&value, f))
        .and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        });
    let extra = fields
        .extra
        .iter()
        .map(|e| {
            json_field(&value, &e.name)
                .filter(|v| !v.is_null())
                .cloned()
        })
        .collect();
    let body = match json_field_mut(&mut value, &fields.text).map(serde_json::Value::take) {
        Some(serde_json::Value::String(s)) => s,
        _ => String::new(),
    };
    if body.len() > MAX_DOCUMENT_BYTES {
        return Parsed::Bad(too_large(body.len()));
    }
    Parsed::Good(Good {
        id,
        text: body,
        shingles,
        score,
        extra,
    })
}

/// A `shingles` array as u32 hashes; `None` when a value is not one.
fn shingles_of(items: &[serde_json::Value]) -> Option<Vec<u32>> {
    items
        .iter()
        .map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
        .collect()
}

/// The reason of a text above the document limit.
pub(super) fn too_large(len: usize) -> String {
    format!("text of {len} bytes, above the limit of {MAX_DOCUMENT_BYTES}")
}

/// Records every byte read through it, so that a CSV record's original
/// bytes can be cut out of what the CSV parser consumed.
struct Tee {
    inner: Box<dyn BufRead + Send>,
    /// Bytes from offset `base` on.
    buf: Vec<u8>,
    base: u64,
}

impl Read for Tee {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        // The bytes since the last record: one record, however it is
        // quoted, never holds more than a line may (memory stays bounded).
        if self.buf.len() as u64 > MAX_LINE {
            return Err(std::io::Error::other(format!(
                "a CSV record longer than {MAX_LINE} bytes (an unclosed quote?)"
            )));
        }
        let n = self.inner.read(out)?;
        self.buf.extend_from_slice(&out[..n]);
        Ok(n)
    }
}

impl Tee {
    /// The bytes from `start` to `end` (absolute offsets); forgets
    /// everything before `end`.
    fn cut(&mut self, start: u64, end: u64) -> Vec<u8> {
        let from = (start.saturating_sub(self.base) as usize).min(self.buf.len());
        let to = (end.saturating_sub(self.base) as usize).min(self.buf.len());
        let bytes = self.buf[from..to.max(from)].to_vec();
        self.buf.drain(..to);
        self.base += to as u64;
        bytes
    }
}

/// The first columns of a CSV header, for messages.
fn column_list(header: &csv::ByteRecord) -> String {
    let names: Vec<String> = header
        .iter()
        .take(50)
        .map(|h| format!("`{}`", String::from_utf8_lossy(h)))
        .collect();
    names.join(", ")
}

/// The columns of [`Fields::extra`] in a CSV header; a missing one is an
/// error naming its flag.
fn extra_columns(
    header: &csv::ByteRecord,
    fields: &Fields,
    path: &str,
) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::with_capacity(fields.extra.len());
    for Extra { name, flag, .. } in &fields.extra {
        let Some(at) = header.iter().position(|h| h == name.as_bytes()) else {
            return fail(format!(
                "the CSV header of {path} has no column `{name}` ({flag}); its columns: {}",
                column_list(header)
            ));
        };
        out.push(at);
    }
    Ok(out)
}

pub struct CsvSource {
    reader: csv::Reader<Tee>,
    pub(super) header: csv::ByteRecord,
    pub(super) header_raw: Vec<u8>,
    text: usize,
    id: Option<usize>,
    score: Option<usize>,
    /// The columns of [`Fields::extra`].
    extra: Vec<usize>,
    record: csv::ByteRecord,
    /// Whether the input has more ready: a chunk ends where it has not.
    backlog: Backlog,
    /// Whether the last cut ended with `\r`.
    after_cr: bool,
}

impl CsvSource {
    pub(super) fn new(
        input: Box<dyn BufRead + Send>,
        fields: &Fields,
        path: &str,
        backlog: Backlog,
    ) -> Result<Self, CliError> {
        let tee = Tee {
            inner: input,
            buf: Vec::new(),
            base: 0,
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(tee);
        let mut header = csv::ByteRecord::new();
        let got = reader
            .read_byte_record(&mut header)
            .map_err(|e| CliError::Message(format!("cannot read the CSV header of {path}: {e}")))?;
        if !got {
            return fail(format!("{path} is empty: a CSV input needs a header line"));
        }
        let end = reader.position().byte();
        let header_raw = reader.get_mut().cut(0, end);
        let after_cr = header_raw.last() == Some(&b'\r');
        let column = |name: &str| header.iter().position(|h| h == name.as_bytes());
        let columns = || column_list(&header);
        let Some(text) = column(&fields.text) else {
            return fail(format!(
                "the CSV header of {path} has no column `{}`{}; its columns: {}",
                fields.text,
                fields.text_flag(),
                columns()
            ));
        };
        let id = match &fields.id {
            Some(name) => Some(column(name).ok_or_else(|| {
                CliError::Message(format!(
                    "the CSV header of {path} has no column `{name}`{}; its columns: {}",
                    fields.id_flag(),
                    columns()
                ))
            })?),
            None => None,
        };
        let score = match &fields.score {
            Some(name) => Some(column(name).ok_or_else(|| {
                CliError::Message(format!(
                    "the CSV header of {path} has no column `{name}` (--keep)"
                ))
            })?),
            None => None,
        };
        let extra = extra_columns(&header, fields, path)?;
        Ok(Self {
            reader,
            header,
            header_raw,
            text,
            id,
            score,
            extra,
            record: csv::ByteRecord::new(),
            backlog,
            after_cr,
        })
    }

    pub(super) fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let mut units = Vec::new();
        let mut raw: Vec<Vec<u8>> = Vec::new();
        let mut bytes = 0;
        while units.len() < CHUNK
            && bytes < CHUNK_BYTES
            && (units.is_empty() || self.backlog.ready())
        {
            bytes += raw.last().map_or(0, Vec::len);
            let start = self.reader.position().byte();
            match self.reader.read_byte_record(&mut self.record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(err) => match err.kind() {
                    csv::ErrorKind::Io(_) => return Err(CliError::Message(format!("{err}"))),
                    _ => {
                        let line = self.reader.position().line();
                        let end = self.reader.position().byte();
                        raw.push(self.reader.get_mut().cut(start, end));
                        units.push((line, Parsed::Bad(format!("bad CSV: {err}"))));
                        continue;
                    }
                },
            }
            let end = self.reader.position().byte();
            let line = self.record.position().map_or(0, |p| p.line());
            let mut bytes = self.reader.get_mut().cut(start, end);
            // After a `\r\n` ending the reader stops at the `\r`: the
            // `\n` opens the next cut and belongs to the record before. A
            // record cut this way ends with `\r` or `\n` (or nothing, at
            // the end of the input), and the writer completes the line with
            // `\n`.
            if self.after_cr && bytes.first() == Some(&b'\n') {
                bytes.remove(0);
            }
            self.after_cr = bytes.last() == Some(&b'\r');
            if bytes.len() as u64 > MAX_LINE {
                units.push((
                    line,
                    Parsed::Bad(format!("record longer than {MAX_LINE} bytes")),
                ));
                raw.push(Vec::new());
                continue;
            }
            units.push((line, self.parse()));
            raw.push(bytes);
        }
        Ok((!units.is_empty()).then_some(Chunk {
            units,
            raw: Raw::Bytes(raw),
        }))
    }

    fn parse(&self) -> Parsed {
        let record = &self.record;
        if record.len() == 1 && record[0].is_empty() {
            return Parsed::Blank;
        }
        if record.len() != self.header.len() {
            return Parsed::Bad(format!(
                "{} field(s), the header has {}",
                record.len(),
                self.header.len()
            ));
        }
        let text_name = String::from_utf8_lossy(&self.header[self.text]).into_owned();
        let Ok(text) = std::str::from_utf8(&record[self.text]) else {
            return Parsed::Bad(format!("field `{text_name}` is not valid UTF-8"));
        };
        if text.len() > MAX_DOCUMENT_BYTES {
            return Parsed::Bad(too_large(text.len()));
        }
        let id = match self.id.map(|i| std::str::from_utf8(&record[i])) {
            Some(Ok("")) | None => None,
            Some(Ok(id)) => Some(id.to_owned()),
            Some(Err(_)) => return Parsed::Bad("the id field is not valid UTF-8".to_owned()),
        };
        let score = self
            .score
            .and_then(|i| std::str::from_utf8(&record[i]).ok())
            .and_then(|s| s.trim().parse().ok());
        let extra = self
            .extra
            .iter()
            .map(|&i| match &record[i] {
                b"" => None,
                cell => Some(serde_json::Value::String(
                    String::from_utf8_lossy(cell).into_owned(),
                )),
            })
            .collect();
        Parsed::Good(Good {
            id,
            text: text.to_owned(),
            shingles: None,
            score,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str, id: Option<&str>, score: Option<&str>) -> Fields {
        Fields {
            text: text.to_owned(),
            id: id.map(str::to_owned),
            score: score.map(str::to_owned),
            flags: None,
            shingles: false,
            extra: Vec::new(),
        }
    }

    #[test]
    fn json_fields_reach_into_nested_objects_and_prefer_a_whole_name() {
        let f = fields("meta.body", Some("meta.id"), Some("meta.n"));
        let line = br#"{"meta": {"body": "nested text", "id": 7, "n": "2.5"}}"#;
        let Parsed::Good(good) = parse_json(line, &f, None) else {
            panic!("a good record")
        };
        assert_eq!(good.text, "nested text");
        assert_eq!(good.id.as_deref(), Some("7"));
        assert_eq!(good.score, Some(2.5));
        // A key that holds the dot itself wins.
        let line = br#"{"meta.body": "flat text", "meta": {"body": "nested"}}"#;
        let Parsed::Good(good) = parse_json(line, &f, None) else {
            panic!("a good record")
        };
        assert_eq!(good.text, "flat text");
        assert_eq!(good.id, None);
        assert!(matches!(parse_json(b"   \r\n", &f, None), Parsed::Blank));
        assert!(matches!(parse_json(b"[1]", &f, None), Parsed::Bad(r) if r == "not a JSON object"));
    }

    #[test]
    fn tee_cuts_return_exact_bytes_and_forget_what_is_behind() {
        let mut tee = Tee {
            inner: Box::new(std::io::Cursor::new(b"abcdefghij".to_vec())),
            buf: Vec::new(),
            base: 0,
        };
        let mut out = [0u8; 6];
        tee.read_exact(&mut out).unwrap();
        assert_eq!(tee.cut(0, 3), b"abc");
        assert_eq!(tee.cut(3, 6), b"def");
        assert!(tee.buf.is_empty());
        let mut rest = Vec::new();
        tee.read_to_end(&mut rest).unwrap();
        assert_eq!(tee.cut(6, 10), b"ghij");
    }
}
