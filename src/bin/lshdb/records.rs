//! Records for `dedup`: JSON Lines (plain, gzip, zstd), CSV with a header
//! and Parquet, read in chunks that keep each record's original form (the
//! line's bytes, the CSV record's bytes, the Parquet rows), and written
//! back unchanged.

use crate::input::{compression_of, Compression};
use crate::{fail, CliError};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use lshdb::MAX_DOCUMENT_BYTES;
use std::io::{BufRead, Read, Write};
use std::path::Path;

/// Longest accepted line or CSV record (as for `add`).
const MAX_LINE: u64 = (MAX_DOCUMENT_BYTES as u64) * 2 + (1 << 20);

/// Records per chunk.
const CHUNK: usize = 4096;

/// The formats `dedup` reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Jsonl,
    Csv,
    Parquet,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "JSON Lines",
            Format::Csv => "CSV",
            Format::Parquet => "Parquet",
        }
    }
}

/// The fields a record is read with.
#[derive(Clone, Debug)]
pub struct Fields {
    pub text: String,
    pub id: Option<String>,
    /// The numeric field of `--keep max:F` / `min:F`.
    pub score: Option<String>,
}

/// One record (or line that is not one) of a chunk.
pub enum Parsed {
    /// A blank JSON line: not a record, never written.
    Blank,
    /// A bad record, with the reason.
    Bad(String),
    /// A good record.
    Good(Good),
}

pub struct Good {
    /// The id field's value, when the record has one.
    pub id: Option<String>,
    pub text: String,
    /// The `--keep max:F|min:F` field's value, when present and numeric.
    pub score: Option<f64>,
}

/// A chunk of consecutive records of one input, in their original form.
pub struct Chunk {
    /// (line or row number, what it holds), in input order.
    pub units: Vec<(u64, Parsed)>,
    pub raw: Raw,
}

/// The records' original form.
pub enum Raw {
    /// JSON Lines or CSV: each unit's bytes, with its line ending.
    Bytes(Vec<Vec<u8>>),
    /// Parquet: the rows as read.
    Batch(RecordBatch),
}

/// Decides an input's format: `--format`, else the name (`.csv`,
/// `.parquet`, with `.gz`/`.zst` after them), else the content (Parquet's
/// `PAR1`), else JSON Lines.
pub fn detect(path: &str, given: Option<Format>) -> Result<Format, CliError> {
    if let Some(format) = given {
        return Ok(format);
    }
    let lower = path.to_ascii_lowercase();
    let stem = [".gz", ".zst", ".zstd"]
        .iter()
        .find_map(|ext| lower.strip_suffix(ext))
        .unwrap_or(&lower);
    if stem.ends_with(".csv") {
        return Ok(Format::Csv);
    }
    if stem.ends_with(".parquet") || stem.ends_with(".pq") {
        return Ok(Format::Parquet);
    }
    if path != "-" {
        let mut head = [0u8; 4];
        if let Ok(mut file) = std::fs::File::open(path) {
            if file.read_exact(&mut head).is_ok() && &head == b"PAR1" {
                return Ok(Format::Parquet);
            }
        }
    }
    Ok(Format::Jsonl)
}

/// A reader of one input's records, chunk by chunk.
pub enum Source {
    Lines(LineSource),
    Csv(Box<CsvSource>),
    Parquet(ParquetSource),
}

impl Source {
    /// Opens `path` (`-`: standard input) as `format`.
    pub fn open(path: &str, format: Format, fields: &Fields) -> Result<Self, CliError> {
        let name = Path::new(path);
        let open = || {
            let input = match path {
                // Read on a thread of its own, so that Ctrl-C is
                // noticed while a pipe delivers nothing.
                "-" => crate::input::decoded(std::io::BufReader::new(
                    crate::input::InterruptibleStdin::new(),
                )),
                _ => crate::input::open_input(path),
            };
            input.map_err(crate::io_context("cannot open input", name))
        };
        Ok(match format {
            Format::Jsonl => Source::Lines(LineSource {
                input: open()?,
                fields: fields.clone(),
                line: 0,
                chunk: chunk_for(path),
                buf: Vec::new(),
            }),
            Format::Csv => Source::Csv(Box::new(CsvSource::new(
                open()?,
                fields,
                path,
                chunk_for(path),
            )?)),
            Format::Parquet => Source::Parquet(ParquetSource::new(path, fields)?),
        })
    }

    /// The next chunk, `None` at the end.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        match self {
            Source::Lines(s) => s.next_chunk(),
            Source::Csv(s) => s.next_chunk(),
            Source::Parquet(s) => s.next_chunk(),
        }
    }

    /// The header (CSV: its bytes) or schema (Parquet) records are written
    /// with.
    pub fn layout(&self) -> Layout {
        match self {
            Source::Lines(_) => Layout::Lines,
            Source::Csv(s) => Layout::Csv(s.header_raw.clone(), s.header.clone()),
            Source::Parquet(s) => Layout::Parquet(s.schema.clone()),
        }
    }
}

/// What the output needs to know of the input's shape.
#[derive(Clone)]
pub enum Layout {
    Lines,
    /// The header's bytes and its fields.
    Csv(Vec<u8>, csv::ByteRecord),
    Parquet(arrow_schema::SchemaRef),
}

impl Layout {
    /// Whether records of `other` can go into the same output.
    pub fn same_shape(&self, other: &Layout) -> bool {
        match (self, other) {
            (Layout::Lines, Layout::Lines) => true,
            (Layout::Csv(_, a), Layout::Csv(_, b)) => a == b,
            (Layout::Parquet(a), Layout::Parquet(b)) => a.fields() == b.fields(),
            _ => false,
        }
    }
}

/// Records per chunk from `path`: one at a time from standard input, so
/// that each record is handled as soon as it arrives (a pipe may deliver
/// slowly), else [`CHUNK`].
fn chunk_for(path: &str) -> usize {
    if path == "-" {
        1
    } else {
        CHUNK
    }
}

/// Reads a line of at most [`MAX_LINE`] bytes, with its ending, into `buf`;
/// `Ok(false)` at the end. A longer line is consumed and reported as
/// `Err(None)`.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> Result<bool, Option<std::io::Error>> {
    buf.clear();
    let read = input.take(MAX_LINE).read_until(b'\n', buf).map_err(Some)?;
    if read == 0 {
        return Ok(false);
    }
    if buf.last() != Some(&b'\n') && read as u64 == MAX_LINE {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let n = input
                .take(1 << 20)
                .read_until(b'\n', &mut rest)
                .map_err(Some)?;
            if n == 0 || rest.last() == Some(&b'\n') {
                break;
            }
        }
        buf.clear();
        return Err(None);
    }
    Ok(true)
}

pub struct LineSource {
    input: Box<dyn BufRead + Send>,
    fields: Fields,
    line: u64,
    chunk: usize,
    /// The line being read: grown once, then each line is copied out at
    /// its size.
    buf: Vec<u8>,
}

impl LineSource {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let mut units = Vec::new();
        let mut raw = Vec::new();
        while units.len() < self.chunk {
            let parsed = match read_line(&mut self.input, &mut self.buf) {
                Ok(false) => break,
                Ok(true) => {
                    self.line += 1;
                    parse_json(&self.buf, &self.fields)
                }
                Err(None) => {
                    self.line += 1;
                    Parsed::Bad(format!("line longer than {MAX_LINE} bytes"))
                }
                Err(Some(err)) => return Err(CliError::Message(format!("{err}"))),
            };
            units.push((self.line, parsed));
            raw.push(self.buf.as_slice().to_vec());
            if self.buf.capacity() > 1 << 20 {
                self.buf = Vec::new(); // not held after a huge line
            }
        }
        Ok((!units.is_empty()).then_some(Chunk {
            units,
            raw: Raw::Bytes(raw),
        }))
    }
}

/// The value at a field path: the whole name when the object has it, else
/// its `.`-separated parts through nested objects (`meta.body`).
fn json_field<'a>(object: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    if let Some(value) = object.get(name) {
        return Some(value);
    }
    if !name.contains('.') {
        return None;
    }
    name.split('.')
        .try_fold(object, |value, part| value.get(part))
}

fn parse_json(line: &[u8], fields: &Fields) -> Parsed {
    let Ok(text) = std::str::from_utf8(line) else {
        return Parsed::Bad("not valid UTF-8".to_owned());
    };
    if text.trim().is_empty() {
        return Parsed::Blank;
    }
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return Parsed::Bad(format!("malformed JSON: {e}")),
    };
    if !value.is_object() {
        return Parsed::Bad("not a JSON object".to_owned());
    }
    let body = match json_field(&value, &fields.text) {
        Some(serde_json::Value::String(s)) if s.trim().is_empty() => {
            return Parsed::Bad(format!("field `{}` is empty", fields.text))
        }
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return Parsed::Bad(format!("field `{}` is not a string", fields.text)),
        None => return Parsed::Bad(format!("missing field `{}`", fields.text)),
    };
    let id = match fields.id.as_deref().and_then(|f| json_field(&value, f)) {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        Some(serde_json::Value::Null) | None => None,
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
    Parsed::Good(Good {
        id,
        text: body,
        score,
    })
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

pub struct CsvSource {
    reader: csv::Reader<Tee>,
    header: csv::ByteRecord,
    header_raw: Vec<u8>,
    text: usize,
    id: Option<usize>,
    score: Option<usize>,
    record: csv::ByteRecord,
    chunk: usize,
    /// Whether the last cut ended with `\r`.
    after_cr: bool,
}

impl CsvSource {
    fn new(
        input: Box<dyn BufRead + Send>,
        fields: &Fields,
        path: &str,
        chunk: usize,
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
        let Some(text) = column(&fields.text) else {
            return fail(format!(
                "the CSV header of {path} has no column `{}` (--text-field)",
                fields.text
            ));
        };
        let id = match &fields.id {
            Some(name) => Some(column(name).ok_or_else(|| {
                CliError::Message(format!(
                    "the CSV header of {path} has no column `{name}` (--id-field)"
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
        Ok(Self {
            reader,
            header,
            header_raw,
            text,
            id,
            score,
            record: csv::ByteRecord::new(),
            chunk,
            after_cr,
        })
    }

    fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let mut units = Vec::new();
        let mut raw = Vec::new();
        while units.len() < self.chunk {
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
        if text.trim().is_empty() {
            return Parsed::Bad(format!("field `{text_name}` is empty"));
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
        Parsed::Good(Good {
            id,
            text: text.to_owned(),
            score,
        })
    }
}

pub struct ParquetSource {
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    schema: arrow_schema::SchemaRef,
    fields: Fields,
    row: u64,
    path: String,
}

impl ParquetSource {
    fn new(path: &str, fields: &Fields) -> Result<Self, CliError> {
        if path == "-" {
            return fail("Parquet input must be a file: it cannot be read from standard input");
        }
        let name = Path::new(path);
        let file =
            std::fs::File::open(name).map_err(crate::io_context("cannot open input", name))?;
        let mut head = [0u8; 4];
        if let Ok(mut probe) = file.try_clone() {
            let _ = probe.read_exact(&mut head);
            use std::io::Seek;
            let _ = probe.seek(std::io::SeekFrom::Start(0));
        }
        if compression_of(&head) != Compression::None {
            return fail(format!(
                "{path} is compressed as a whole; Parquet compresses inside the file, decompress it first"
            ));
        }
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| CliError::Message(format!("cannot read {path} as Parquet: {e}")))?;
        let schema = builder.schema().clone();
        let reader = builder
            .with_batch_size(CHUNK)
            .build()
            .map_err(|e| CliError::Message(format!("cannot read {path} as Parquet: {e}")))?;
        let source = Self {
            reader,
            schema,
            fields: fields.clone(),
            row: 0,
            path: path.to_owned(),
        };
        // Fail early on a missing text column.
        let empty = RecordBatch::new_empty(source.schema.clone());
        if column(&empty, &source.fields.text).is_none() {
            return fail(format!(
                "{path} has no column `{}` (--text-field)",
                source.fields.text
            ));
        }
        if let Some(id) = &source.fields.id {
            if column(&empty, id).is_none() {
                return fail(format!("{path} has no column `{id}` (--id-field)"));
            }
        }
        if let Some(score) = &source.fields.score {
            if column(&empty, score).is_none() {
                return fail(format!("{path} has no column `{score}` (--keep)"));
            }
        }
        Ok(source)
    }

    fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let batch = match self.reader.next() {
            None => return Ok(None),
            Some(Ok(batch)) => batch,
            Some(Err(e)) => {
                return fail(format!("reading {} failed: {e}", self.path));
            }
        };
        let text = column(&batch, &self.fields.text);
        let id = self.fields.id.as_deref().and_then(|f| column(&batch, f));
        let score = self.fields.score.as_deref().and_then(|f| column(&batch, f));
        let mut units = Vec::with_capacity(batch.num_rows());
        for row in 0..batch.num_rows() {
            self.row += 1;
            let parsed = match text.as_ref().map(|a| string_at(a, row)) {
                Some(Ok(Some(t))) if t.trim().is_empty() => {
                    Parsed::Bad(format!("field `{}` is empty", self.fields.text))
                }
                Some(Ok(Some(t))) => Parsed::Good(Good {
                    id: id.as_ref().and_then(|a| id_at(a, row)),
                    text: t,
                    score: score.as_ref().and_then(|a| number_at(a, row)),
                }),
                Some(Ok(None)) => Parsed::Bad(format!("field `{}` is null", self.fields.text)),
                Some(Err(())) | None => {
                    Parsed::Bad(format!("field `{}` is not a string", self.fields.text))
                }
            };
            units.push((self.row, parsed));
        }
        Ok(Some(Chunk {
            units,
            raw: Raw::Batch(batch),
        }))
    }
}

/// A column by name, or by a `.`-separated path through struct columns.
fn column(batch: &RecordBatch, name: &str) -> Option<ArrayRef> {
    if let Some(array) = batch.column_by_name(name) {
        return Some(array.clone());
    }
    let mut parts = name.split('.');
    let mut array = batch.column_by_name(parts.next()?)?.clone();
    for part in parts {
        let s = array.as_any().downcast_ref::<StructArray>()?;
        array = s.column_by_name(part)?.clone();
    }
    Some(array)
}

/// A string cell: `Err` when the column is not a string column.
fn string_at(array: &ArrayRef, row: usize) -> Result<Option<String>, ()> {
    use arrow_array::cast::AsArray;
    if array.is_null(row) {
        return Ok(None);
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return Ok(Some(a.value(row).to_owned()));
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return Ok(Some(a.value(row).to_owned()));
    }
    if let Some(a) = array.as_string_view_opt() {
        return Ok(Some(a.value(row).to_owned()));
    }
    Err(())
}

fn number_at(array: &ArrayRef, row: usize) -> Option<f64> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return None;
    }
    macro_rules! try_type {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(a.value(row) as f64);
            })*
        };
    }
    try_type!(
        Int8Type,
        Int16Type,
        Int32Type,
        Int64Type,
        UInt8Type,
        UInt16Type,
        UInt32Type,
        UInt64Type,
        Float32Type,
        Float64Type
    );
    string_at(array, row).ok().flatten()?.trim().parse().ok()
}

fn id_at(array: &ArrayRef, row: usize) -> Option<String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return None;
    }
    macro_rules! try_int {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(a.value(row).to_string());
            })*
        };
    }
    try_int!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    string_at(array, row).ok().flatten()
}

/// Writes kept records in the input's form.
pub enum Sink<W: Write + Send> {
    Lines(W),
    Csv {
        out: W,
        header: Vec<u8>,
        wrote_header: bool,
    },
    Parquet(Box<parquet::arrow::ArrowWriter<W>>),
}

impl<W: Write + Send> Sink<W> {
    pub fn new(out: W, layout: &Layout) -> Result<Self, CliError> {
        Ok(match layout {
            Layout::Lines => Sink::Lines(out),
            Layout::Csv(header, _) => Sink::Csv {
                out,
                header: header.clone(),
                wrote_header: false,
            },
            Layout::Parquet(schema) => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
                    .build();
                let writer = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(props))
                    .map_err(|e| CliError::Message(format!("cannot write Parquet: {e}")))?;
                Sink::Parquet(Box::new(writer))
            }
        })
    }

    /// Writes the units of `chunk` whose `keep` is true.
    pub fn write(&mut self, chunk: &Chunk, keep: &[bool]) -> Result<(), CliError> {
        match (self, &chunk.raw) {
            (Sink::Lines(out), Raw::Bytes(raw)) => write_bytes(out, raw, keep),
            (
                Sink::Csv {
                    out,
                    header,
                    wrote_header,
                },
                Raw::Bytes(raw),
            ) => {
                if !*wrote_header {
                    out.write_all(header)?;
                    if !header.ends_with(b"\n") {
                        out.write_all(b"\n")?;
                    }
                    *wrote_header = true;
                }
                write_bytes(out, raw, keep)
            }
            (Sink::Parquet(writer), Raw::Batch(batch)) => {
                let mask = arrow_array::BooleanArray::from(keep.to_vec());
                let kept = arrow_select::filter::filter_record_batch(batch, &mask)
                    .map_err(|e| CliError::Message(format!("cannot select rows: {e}")))?;
                if kept.num_rows() > 0 {
                    writer
                        .write(&kept)
                        .map_err(|e| CliError::Message(format!("cannot write Parquet: {e}")))?;
                }
                Ok(())
            }
            _ => fail("internal error: records of one format written as another"),
        }
    }

    /// Ends the output (CSV: the header even with no record; Parquet: the
    /// footer) and gives the writer back.
    pub fn finish(self) -> Result<W, CliError> {
        match self {
            Sink::Lines(out) => Ok(out),
            Sink::Csv {
                mut out,
                header,
                wrote_header,
            } => {
                if !wrote_header {
                    out.write_all(&header)?;
                    if !header.ends_with(b"\n") {
                        out.write_all(b"\n")?;
                    }
                }
                Ok(out)
            }
            Sink::Parquet(writer) => writer
                .into_inner()
                .map_err(|e| CliError::Message(format!("cannot write Parquet: {e}"))),
        }
    }
}

fn write_bytes<W: Write>(out: &mut W, raw: &[Vec<u8>], keep: &[bool]) -> Result<(), CliError> {
    for (bytes, _) in raw.iter().zip(keep).filter(|(_, k)| **k) {
        out.write_all(bytes)?;
        if !bytes.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str, id: Option<&str>, score: Option<&str>) -> Fields {
        Fields {
            text: text.to_owned(),
            id: id.map(str::to_owned),
            score: score.map(str::to_owned),
        }
    }

    #[test]
    fn json_fields_reach_into_nested_objects_and_prefer_a_whole_name() {
        let f = fields("meta.body", Some("meta.id"), Some("meta.n"));
        let line = br#"{"meta": {"body": "nested text", "id": 7, "n": "2.5"}}"#;
        let Parsed::Good(good) = parse_json(line, &f) else {
            panic!("a good record")
        };
        assert_eq!(good.text, "nested text");
        assert_eq!(good.id.as_deref(), Some("7"));
        assert_eq!(good.score, Some(2.5));
        // A key that holds the dot itself wins.
        let line = br#"{"meta.body": "flat text", "meta": {"body": "nested"}}"#;
        let Parsed::Good(good) = parse_json(line, &f) else {
            panic!("a good record")
        };
        assert_eq!(good.text, "flat text");
        assert_eq!(good.id, None);
        assert!(matches!(parse_json(b"   \r\n", &f), Parsed::Blank));
        assert!(matches!(parse_json(b"[1]", &f), Parsed::Bad(r) if r == "not a JSON object"));
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

    #[test]
    fn formats_are_told_by_flag_name_and_content() {
        assert_eq!(detect("a.csv.gz", None).unwrap(), Format::Csv);
        assert_eq!(detect("A.PARQUET", None).unwrap(), Format::Parquet);
        assert_eq!(detect("x.jsonl.zst", None).unwrap(), Format::Jsonl);
        assert_eq!(detect("-", Some(Format::Csv)).unwrap(), Format::Csv);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.bin");
        std::fs::write(&path, b"PAR1....").unwrap();
        assert_eq!(
            detect(path.to_str().unwrap(), None).unwrap(),
            Format::Parquet
        );
    }
}
