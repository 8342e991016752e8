//! The CLI's one record model and reader: JSON Lines (plain, gzip, zstd),
//! CSV with a header and Parquet, read in chunks that keep each record's
//! original form (the line's bytes, the CSV record's bytes, the Parquet
//! rows). `dedup` writes kept records back unchanged; `add`, `query
//! --jsonl` and `import` take each record's key and document ([`Keyed`]).
//!
//! This module owns the record model (formats, fields, parsed records,
//! chunks, layouts), format detection and the [`Source`] that opens an
//! input; the readers live in `text` (JSON Lines, CSV) and `parquet`, the
//! keyed view in `keyed`, the writer in `sink`.

use crate::input::Backlog;
use crate::interrupt::Interrupt;
use crate::support::jsonl::Lines;
use crate::CliError;
use arrow_array::RecordBatch;
use std::io::{BufRead, Read};
use std::path::Path;

mod carried;
mod keyed;
mod parquet;
mod sink;
mod survey;
mod text;

pub use carried::{read_extras, Carried, Extra, ExtraKind};
pub use keyed::Keyed;
use parquet::ParquetSource;
pub use sink::Sink;
use text::{CsvSource, LineSource};

/// Records per chunk.
const CHUNK: usize = 4096;

/// Bytes of records per chunk: a chunk ends at [`CHUNK`] records or once
/// its records pass this size, so that a few huge records are not read
/// (and held, three chunks at a time) together.
const CHUNK_BYTES: usize = 16 << 20;

/// The formats records are read in (and `dedup` writes).
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
    /// The flags that name the text and the id field, for messages
    /// (`None`: fixed fields, as `import` reads).
    pub flags: Option<(&'static str, &'static str)>,
    /// Whether a JSON record without the text field may hold a `shingles`
    /// array of u32 hashes instead (what `export` writes without text).
    pub shingles: bool,
    /// Fields read besides (`--time-field`, `--priority-field`).
    pub extra: Vec<Extra>,
}

impl Fields {
    /// ` (--text-field)`, to follow a message about the text field.
    pub fn text_flag(&self) -> String {
        self.flags
            .map_or(String::new(), |(text, _)| format!(" ({text})"))
    }

    /// ` (--id-field)` (or the command's name for it), to follow a message
    /// about the id field.
    pub fn id_flag(&self) -> String {
        self.flags
            .map_or(String::new(), |(_, id)| format!(" ({id})"))
    }
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
    /// The text (empty for a null text, and for a record of shingles).
    pub text: String,
    /// A JSON record's `shingles`, in place of its text ([`Fields::shingles`]).
    pub shingles: Option<Vec<u32>>,
    /// The `--keep max:F|min:F` field's value, when present and numeric.
    pub score: Option<f64>,
    /// The values of [`Fields::extra`], in order: `None` when missing or
    /// null.
    pub extra: Vec<Option<serde_json::Value>>,
}

/// A chunk of consecutive records of one input, in their original form.
pub struct Chunk {
    /// (line or row number, what it holds), in input order.
    pub units: Vec<(u64, Parsed)>,
    pub raw: Raw,
}

impl Chunk {
    /// Unit `i` in its original form, for the rejected records' file: the
    /// line or CSV record as a string (without its line ending; invalid
    /// UTF-8 replaced), or the Parquet row as a JSON object.
    pub fn original(&self, i: usize) -> serde_json::Value {
        match &self.raw {
            Raw::Bytes(raw) => {
                let bytes = raw.get(i).map_or(&[][..], Vec::as_slice);
                let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
                let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
                serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned())
            }
            Raw::Batch(batch) => parquet::row_json(batch, i),
        }
    }
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
    // Only a regular file is sniffed: a FIFO's first bytes, once read,
    // would be gone.
    if path != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
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
    pub fn open(
        path: &str,
        format: Format,
        fields: &Fields,
        interrupt: &Interrupt,
    ) -> Result<Self, CliError> {
        let name = Path::new(path);
        let mut backlog = Backlog::default();
        let mut open = || {
            let input = match path {
                // Read on a thread of its own, so that Ctrl-C is
                // noticed while a pipe delivers nothing.
                "-" => {
                    let stdin = crate::input::InterruptibleInput::new(interrupt.clone());
                    backlog = stdin.backlog();
                    crate::input::decoded(stdin)
                }
                // A named pipe or device may stall too.
                _ if crate::input::may_wait(name) => std::fs::File::open(path).and_then(|file| {
                    let input = crate::input::InterruptibleInput::file(file, interrupt.clone());
                    backlog = input.backlog();
                    crate::input::decoded(input)
                }),
                _ => crate::input::open_input(path),
            };
            input.map_err(crate::io_context("cannot open input", name))
        };
        Ok(match format {
            Format::Jsonl => {
                let input = open()?;
                Source::lines(input, 0, fields, path, backlog)
            }
            Format::Csv => {
                let input = open()?;
                Source::Csv(Box::new(CsvSource::new(input, fields, path, backlog)?))
            }
            Format::Parquet => Source::Parquet(ParquetSource::new(path, fields)?),
        })
    }

    /// JSON Lines from an input already open (`path` names it), numbered
    /// as if `after` lines came before it (`import`, after its header); a
    /// chunk ends where `backlog` has no more bytes ready.
    pub fn lines(
        input: Box<dyn BufRead + Send>,
        after: u64,
        fields: &Fields,
        path: &str,
        backlog: Backlog,
    ) -> Self {
        Source::Lines(LineSource {
            lines: Lines::new(input, after),
            fields: fields.clone(),
            backlog,
            path: path.to_owned(),
            surveyed: false,
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

#[cfg(test)]
impl Source {
    /// `path` opened as `format`, with only a `text` field: for tests.
    pub(crate) fn open_text(path: &Path, format: Format) -> Self {
        let path = path.to_str().expect("a UTF-8 path");
        let fields = Self::open_text_fields();
        Source::open(path, format, &fields, &Interrupt::default()).expect("open")
    }

    /// Fields of records with only a `text`: for tests.
    pub(crate) fn open_text_fields() -> Fields {
        Fields {
            text: "text".into(),
            id: None,
            score: None,
            flags: None,
            shingles: false,
            extra: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A FIFO is not sniffed: opening it would wait for a writer, and its
    /// first bytes, once read, would be gone.
    #[test]
    fn a_fifo_is_told_by_its_name_without_being_read() {
        let (_dir, fifo) = crate::support::testing::temp_path("in");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(detect(fifo.to_str().unwrap(), None).ok());
        });
        let told = rx.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(told.expect("no wait for a writer"), Some(Format::Jsonl));
    }

    #[test]
    fn huge_lines_come_in_chunks_bounded_by_bytes() {
        let (_dir, path) = crate::support::testing::temp_path("in.jsonl");
        let text = "word ".repeat(1 << 20);
        let line = format!("{}\n", serde_json::json!({ "text": text }));
        std::fs::write(&path, line.repeat(40)).unwrap();
        let mut source = Source::open_text(&path, Format::Jsonl);
        let mut records = 0;
        while let Some(chunk) = source.next_chunk().unwrap() {
            let Raw::Bytes(raw) = &chunk.raw else {
                panic!("lines")
            };
            let bytes: usize = raw.iter().map(Vec::len).sum();
            assert!(
                bytes <= CHUNK_BYTES + line.len(),
                "{bytes} bytes in a chunk"
            );
            records += chunk.units.len();
        }
        assert_eq!(records, 40);
    }

    /// An input that gives its bytes in blocks of 64, counting them down in
    /// `unread` as they are consumed, and then fails as a pipe would wait:
    /// a reader that reads past what is ready fails.
    struct Pipe {
        bytes: Vec<u8>,
        at: usize,
        unread: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl BufRead for Pipe {
        fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
            if self.at == self.bytes.len() {
                return Err(std::io::Error::other("read past what was ready"));
            }
            let end = self.bytes.len().min(self.at + 64);
            Ok(&self.bytes[self.at..end])
        }

        fn consume(&mut self, amt: usize) {
            self.at += amt;
            self.unread
                .fetch_sub(amt, std::sync::atomic::Ordering::AcqRel);
        }
    }

    impl Read for Pipe {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.fill_buf()?.read(out)?;
            self.consume(n);
            Ok(n)
        }
    }

    /// Chunks from a pipe: every record that is ready, without waiting for
    /// more (a chunk of one record each only when nothing more is ready).
    #[test]
    fn a_pipe_gives_chunks_of_what_is_ready() {
        let lines: String = (0..300)
            .map(|i| format!("{}\n", serde_json::json!({ "text": format!("record {i}") })))
            .collect();
        let unread = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(lines.len()));
        let input = Box::new(Pipe {
            bytes: lines.into_bytes(),
            at: 0,
            unread: std::sync::Arc::clone(&unread),
        });
        let fields = Source::open_text_fields();
        let backlog = Backlog::counting(unread);
        let mut source = Source::lines(input, 0, &fields, "-", backlog);
        let chunk = source.next_chunk().expect("no read past the ready bytes");
        assert_eq!(chunk.map(|c| c.units.len()), Some(300));
        // Never ready: one record per chunk, the first read at once.
        let input = Box::new(std::io::Cursor::new(
            b"{\"text\": \"a\"}\n{\"text\": \"b\"}\n".to_vec(),
        ));
        let mut source = Source::lines(input, 0, &fields, "-", Backlog::one_at_a_time());
        let sizes: Vec<usize> = std::iter::from_fn(|| source.next_chunk().unwrap())
            .map(|c| c.units.len())
            .collect();
        assert_eq!(sizes, [1, 1]);
    }
}
