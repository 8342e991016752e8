//! `lshdb add`: load files or JSON Lines into a database, in bulk, with
//! bad records reported by line and Ctrl-C stopping after a clean commit.

use crate::args::{open_waiting, parse_threshold, JsonFields, Wait};
use crate::input::{read_text_file, Counting, FileText, InputError, Record};
use crate::output::{line, progress, progress_bytes, short, similarity};
use crate::{fail, CliError, CmdResult, Outcome};
use indicatif::ProgressBar;
use lshdb::{AsDocument, BulkOptions, Database, DocumentBuf, Unique};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Add documents: files (key = path) or JSON Lines (default fields id, text).
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["paths", "jsonl", "text_stdin"]))]
#[command(after_help = "Examples:\n  lshdb add pages.lshdb notes/*.txt\n  \
                        lshdb add pages.lshdb notes/ --type md --exclude 'drafts/**'\n  \
                        lshdb add pages.lshdb --jsonl corpus.jsonl.gz --batch 8192\n  \
                        pdftotext report.pdf - | lshdb add pages.lshdb - --key report.pdf\n  \
                        cat new.jsonl | lshdb add pages.lshdb --jsonl - --unique 0.9")]
pub struct Args {
    /// The database file.
    file: PathBuf,
    /// Text files (.gz and .zst are decompressed) and folders to add; the
    /// key is the path as given, or under a folder the folder as given,
    /// `/` and the path inside it. `-`: one document from standard input
    /// (with --key).
    paths: Vec<PathBuf>,
    /// The key of the document read from standard input (`-`).
    #[arg(long, value_name = "KEY", conflicts_with_all = ["jsonl", "text_stdin"])]
    key: Option<String>,
    /// Read standard input as the plain text of one document with this key.
    #[arg(long, value_name = "KEY", conflicts_with = "jsonl")]
    text_stdin: Option<String>,
    /// JSON Lines input (.gz and .zst are decompressed), `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    jsonl: Option<String>,
    #[command(flatten)]
    fields: JsonFields,
    /// Documents per commit.
    #[arg(long, default_value_t = lshdb::DEFAULT_BATCH)]
    batch: usize,
    /// Dedup-on-write: skip (and report) documents with a stored
    /// near-duplicate at this similarity or above.
    #[arg(long, value_parser = parse_threshold, value_name = "T")]
    unique: Option<f64>,
    /// Abort at the first bad record instead of skipping it.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    walk: crate::walk::WalkArgs,
    /// One JSON object as the summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

// Kept here as paths too (`crate::add::{catch_interrupt, interrupted}`),
// which other commands use.
pub use crate::interrupt::{catch_interrupt, interrupted};

/// How many records with the same error are described before the rest are
/// only counted.
const SHOWN_PER_ERROR: u64 = 5;

/// Messages grouped by kind: the first [`SHOWN_PER_ERROR`] of each kind
/// kept, the rest only counted, so a thousand lines with the same error
/// print six lines.
#[derive(Default)]
pub struct Limited {
    /// Kept messages, in order.
    shown: Vec<String>,
    /// (kind, count), in order of first appearance.
    kinds: Vec<(String, u64)>,
    /// Messages in all.
    pub total: u64,
}

impl Limited {
    /// Counts a message of `kind`; returns whether it is to be shown.
    fn count(&mut self, kind: &str) -> bool {
        self.total += 1;
        let count = match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.kinds.push((kind.to_owned(), 1));
                1
            }
        };
        count <= SHOWN_PER_ERROR
    }

    /// Keeps `message` unless `kind` has been seen often enough.
    pub fn push(&mut self, kind: &str, message: impl FnOnce() -> String) {
        if self.count(kind) {
            self.shown.push(message());
        }
    }

    /// The lines to print: the kept messages, then one count per kind with
    /// more than were shown (`what`: "line(s)", "document(s)").
    pub fn lines(&self, what: &str) -> Vec<String> {
        let mut out = self.shown.clone();
        for (kind, n) in &self.kinds {
            if *n > SHOWN_PER_ERROR {
                out.push(format!(
                    "… and {} more {what} with the same error ({kind}); {n} in all",
                    n - SHOWN_PER_ERROR
                ));
            }
        }
        out
    }
}

/// Bad records seen so far, and the one that stopped a strict load.
#[derive(Default)]
pub struct Skips {
    pub bad: Limited,
    pub fatal: Option<String>,
    /// The input's name, for read errors (empty: "the input").
    pub input: String,
}

/// The kind of a bad record's reason, for counting repeats: a line's reason
/// up to its details (`malformed JSON: ...`), a file's after its path.
fn reason_kind(line: u64, reason: &str) -> &str {
    if line == 0 {
        reason.rsplit_once(": ").map_or(reason, |(_, kind)| kind)
    } else {
        reason.split_once(": ").map_or(reason, |(kind, _)| kind)
    }
}

/// Turns an input stream into (key, document) pairs for a bulk load,
/// recording bad records in `skips` (stopping at the first with `strict`).
pub fn good_records<'a>(
    input: impl Iterator<Item = Result<Record, InputError>> + 'a,
    skips: &'a RefCell<Skips>,
    strict: bool,
) -> impl Iterator<Item = (String, DocumentBuf)> + 'a {
    input
        .map_while(move |item| match item {
            Ok(record) => Some(Some((record.key, record.doc))),
            Err(InputError::Io(err)) => {
                let mut skips = skips.borrow_mut();
                let input = if skips.input.is_empty() {
                    "the input".to_owned()
                } else {
                    format!("input {}", skips.input)
                };
                skips.fatal = Some(format!("reading {input} failed: {err}"));
                None
            }
            Err(InputError::Bad { line, reason }) => {
                // File records have no line number; their reason names the file.
                let at = if line == 0 {
                    "file".to_owned()
                } else {
                    format!("line {line}")
                };
                if strict {
                    skips.borrow_mut().fatal = Some(format!("{at}: {reason} (--strict)"));
                    None
                } else {
                    let kind = reason_kind(line, &reason).to_owned();
                    let message = || format!("skipped {at}: {reason}");
                    skips.borrow_mut().bad.push(&kind, message);
                    Some(None)
                }
            }
        })
        .flatten()
}

/// Where a document of `add PATHS` comes from.
enum Source {
    /// A path given on the command line (read as given).
    Given(PathBuf),
    /// A regular file found by walking a folder (never a link).
    Walked(PathBuf),
    /// A path given on the command line that is not a regular file (a
    /// FIFO, a device), opened before the database: opening a FIFO waits
    /// for its writer.
    Opened(std::io::Result<std::fs::File>),
    /// Standard input.
    Stdin,
}

/// A given path as a [`Source`]: opened now when it is a FIFO or a device.
fn given(path: &Path) -> Source {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Source::Opened(std::fs::File::open(path)),
        _ => Source::Given(path.to_owned()),
    }
}

/// The documents `add PATHS` reads, with their keys: folders walked (see
/// `crate::walk`), `-` (or `--text-stdin`) as standard input.
fn expand(args: &Args) -> Result<Vec<(String, Source)>, CliError> {
    let mut out = Vec::new();
    if let Some(key) = &args.text_stdin {
        out.push((key.clone(), Source::Stdin));
    }
    let skip = std::fs::canonicalize(&args.file).ok();
    for path in &args.paths {
        if path.as_os_str() == "-" {
            let Some(key) = &args.key else {
                return fail(
                    "`-` reads one document from standard input and needs its key: --key KEY",
                );
            };
            out.push((key.clone(), Source::Stdin));
        } else if path.is_dir() {
            let prefix = crate::walk::escape(path.as_os_str());
            let found = crate::walk::walk(path, &args.walk, skip.as_deref(), &prefix)?;
            out.extend(found.files.into_iter().map(|(k, p)| (k, Source::Walked(p))));
        } else {
            out.push((path.to_string_lossy().into_owned(), given(path)));
        }
    }
    if args.key.is_some() && !args.paths.iter().any(|p| p.as_os_str() == "-") {
        return fail("--key names the document read from standard input; give `-` among the paths");
    }
    Ok(out)
}

/// The documents of `add PATHS`, read one at a time. A FIFO, a device or
/// standard input may keep the reader waiting: it is read on a thread of
/// its own, and Ctrl-C ends the documents there.
fn file_records(docs: Vec<(String, Source)>) -> impl Iterator<Item = Result<Record, InputError>> {
    use crate::interrupt::unless_interrupted;
    docs.into_iter().map_while(|(key, source)| {
        let bad = |reason: String| InputError::Bad { line: 0, reason };
        let key_text = match source {
            Source::Stdin => "standard input".to_owned(),
            _ => key.clone(),
        };
        let read = match source {
            Source::Given(ref path) => read_text_file(path),
            Source::Walked(ref path) => match crate::input::read_regular_file(path) {
                Ok(Some(text)) => Ok(text),
                Ok(None) => Err(std::io::Error::other("no longer a regular file")),
                Err(e) => Err(e),
            },
            Source::Opened(Err(e)) => Err(e),
            Source::Opened(Ok(file)) => {
                unless_interrupted(move || crate::input::read_text_stream(file))?
            }
            Source::Stdin => {
                unless_interrupted(|| crate::input::read_text_stream(std::io::stdin()))?
            }
        };
        Some(match read {
            Ok(FileText::Text(text)) if text.trim().is_empty() => {
                Err(bad(format!("{key_text}: empty file")))
            }
            Ok(FileText::Text(text)) => Ok(Record {
                line: 0,
                key,
                doc: DocumentBuf::Text(text),
            }),
            Ok(FileText::Binary) => Err(bad(format!("{key_text}: binary file"))),
            Ok(FileText::TooLarge) => Err(bad(format!(
                "{key_text}: larger than the document limit of {} bytes",
                lshdb::MAX_DOCUMENT_BYTES
            ))),
            Err(e) => Err(bad(format!("{key_text}: {e}"))),
        })
    })
}

/// Records read as documents, and the progress bar they move.
type Input = (
    Box<dyn Iterator<Item = Result<Record, InputError>>>,
    ProgressBar,
);

pub fn run(args: &Args) -> CmdResult {
    JSON_SUMMARY.store(args.json, Ordering::Relaxed);
    // Named inputs are opened before the database: opening a FIFO waits
    // for its writer, and Ctrl-C must end that wait at once, without the
    // database held locked meanwhile. Standard input needs no opening.
    let named = match args.jsonl.as_deref() {
        Some("-") => None,
        Some(path) => Some(open_jsonl(args, path)?),
        None => Some(file_input(expand(args)?)),
    };
    let db = open_waiting(&args.file, &args.wait)?;
    catch_interrupt();
    let (input, bar) = match named {
        Some(input) => input,
        None => stdin_jsonl(args)?,
    };
    let skips = RefCell::new(Skips {
        input: match args.jsonl.as_deref() {
            Some("-") => "standard input".to_owned(),
            Some(path) => path.to_owned(),
            None => String::new(),
        },
        ..Skips::default()
    });
    let records = good_records(input, &skips, args.strict);
    let summary = match args.unique {
        None => load_with(&db, records, args.batch, &bar)?,
        Some(threshold) => load_unique(&db, records, args.batch, threshold, &bar)?,
    };
    report(&summary, skips.into_inner(), args.json)
}

/// JSON Lines on standard input, with a spinner counting records. Its
/// first bytes (is it compressed?) may take long to come: Ctrl-C ends
/// that wait too.
fn stdin_jsonl(args: &Args) -> Result<Input, CliError> {
    let stdin = crate::interrupt::unless_interrupted(|| crate::input::open_input("-"))
        .ok_or_else(|| {
            CliError::Interrupted("interrupted: no input was read; nothing was added".into())
        })?
        .map_err(crate::io_context("cannot open input", Path::new("-")))?;
    let bar = progress(None, "adding");
    let counter = bar.clone();
    let records = args.fields.reader(stdin).inspect(move |_| counter.inc(1));
    Ok((Box::new(crate::interrupt::interruptible(records)), bar))
}

/// Opens a JSON Lines file and reads its first bytes (is it compressed?);
/// the bar moves over the file's bytes.
fn open_jsonl(args: &Args, path: &str) -> Result<Input, CliError> {
    let name = Path::new(path);
    let file = std::fs::File::open(name).map_err(crate::io_context("cannot open input", name))?;
    let size = file.metadata().ok().map(|m| m.len());
    // Counted before decompression: the bar moves over the file.
    let (reader, consumed) = Counting::new(std::io::BufReader::new(file));
    let reader =
        crate::input::decoded(reader).map_err(crate::io_context("cannot read input", name))?;
    let bar = progress_bytes(size, "adding");
    let counter = bar.clone();
    let records = args
        .fields
        .reader(reader)
        .inspect(move |_| counter.set_position(consumed.load(Ordering::Relaxed)));
    Ok((Box::new(crate::interrupt::interruptible(records)), bar))
}

/// The documents of `add PATHS`, one per file; the bar counts files.
fn file_input(docs: Vec<(String, Source)>) -> Input {
    let bar = progress(Some(docs.len() as u64), "adding");
    let counter = bar.clone();
    let records = file_records(docs).inspect(move |_| counter.inc(1));
    (Box::new(records), bar)
}

/// What a load did, all of it committed.
pub struct Summary {
    /// Documents stored (new or replaced).
    pub added: u64,
    /// Near-duplicates not added (`--unique`).
    pub duplicates: u64,
    /// Documents the database refused.
    pub rejected: u64,
    /// Of those added, how many replaced a document with the same key
    /// (bulk loads).
    pub replaced: u64,
    /// Commits made.
    pub commits: u64,
    text: String,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Ends a load: the skipped records on standard error, the summary on
/// standard output, and an error when the load stopped early (a fatal
/// record, exit 1, or Ctrl-C, exit 130), saying that what is reported is
/// committed, or when it added nothing at all (exit 1).
pub fn report(summary: &Summary, skips: Skips, as_json: bool) -> CmdResult {
    for message in skips.bad.lines("bad record(s)") {
        eprintln!("lshdb: {message}");
    }
    if as_json {
        crate::output::json(&serde_json::json!({
            "added": summary.added,
            "replaced": summary.replaced,
            "commits": summary.commits,
            "duplicates": summary.duplicates,
            "rejected": summary.rejected,
            "bad": skips.bad.total,
            "complete": skips.fatal.is_none() && !interrupted(),
        }));
    } else {
        line(format_args!(
            "{summary}; {} bad record(s) skipped",
            skips.bad.total
        ));
    }
    if let Some(fatal) = skips.fatal {
        return fail(format!(
            "stopped at {fatal}; everything reported above is committed"
        ));
    }
    if interrupted() {
        return Err(CliError::Interrupted(
            "interrupted: everything reported above is committed; run the command again to continue"
                .to_owned(),
        ));
    }
    if summary.added == 0 && summary.duplicates == 0 {
        return fail(if skips.bad.total + summary.rejected == 0 {
            "nothing was added: the input holds no records"
        } else {
            "nothing was added: every record was skipped or rejected (see above)"
        });
    }
    Ok(Outcome::Ok)
}

/// A refused document's reason without its key (which the message shows
/// shortened), and the kind of reason for counting repeats.
fn rejection(err: &lshdb::Error) -> (&'static str, String) {
    match err {
        lshdb::Error::EmptyDocument { .. } => (
            "empty",
            "empty after normalisation; there is nothing to index".to_owned(),
        ),
        lshdb::Error::DocumentTooLarge { len, max, .. } => (
            "too large",
            format!("{len} bytes, above the limit of {max}; split it or index a part of it"),
        ),
        lshdb::Error::InvalidKey { .. } => ("bad key", err.to_string()),
        other => ("other", other.to_string()),
    }
}

/// Counts a refused document, keeping its message unless many like it came
/// before.
fn reject(rejections: &mut Limited, key: &str, err: &lshdb::Error) {
    let (kind, reason) = rejection(err);
    rejections.push(kind, || format!("rejected `{}`: {reason}", short(key)));
}

/// What a bulk load has committed so far.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Committed {
    inserted: u64,
    replaced: u64,
    commits: u64,
    rejected: u64,
}

impl Committed {
    fn text(&self) -> String {
        format!(
            "added {} document(s) ({} replaced) in {} commit(s); {} rejected",
            self.inserted, self.replaced, self.commits, self.rejected
        )
    }
}

/// A load that failed part-way (a full disk, ...): the summary of what is
/// committed, for standard output, and the error, saying it is kept.
fn failed_load(committed: &str, added: u64, err: &CliError) -> (String, String) {
    (
        format!("{committed}; stopped by an error"),
        format!("{err}; the {added} document(s) reported above are committed and kept"),
    )
}

/// Prints a load's refused documents, and the summary and error of a load
/// that failed part-way.
fn end_load<T>(
    result: Result<T, CliError>,
    rejections: &Limited,
    committed: &str,
    added: u64,
) -> Result<T, CliError> {
    for message in rejections.lines("document(s)") {
        eprintln!("lshdb: {message}");
    }
    result.map_err(|err| {
        let (summary, error) = failed_load(committed, added, &err);
        if JSON_SUMMARY.load(std::sync::atomic::Ordering::Relaxed) {
            crate::output::json(&serde_json::json!({
                "added": added, "complete": false, "stopped_by_error": true,
            }));
        } else {
            line(summary);
        }
        CliError::Message(error)
    })
}

/// Whether the running load prints its summary as JSON (`--json`), also
/// when a storage error ends it.
pub static JSON_SUMMARY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Bulk load with a spinner counting documents; returns the summary.
pub fn load<D: AsDocument + Send>(
    db: &Database,
    records: impl Iterator<Item = (String, D)>,
    batch: usize,
) -> Result<Summary, CliError> {
    let bar = progress(None, "adding");
    let counter = bar.clone();
    load_with(db, records.inspect(move |_| counter.inc(1)), batch, &bar)
}

/// Bulk load; `bar` is moved by the caller as records are read and shows
/// what is committed.
fn load_with<D: AsDocument + Send>(
    db: &Database,
    records: impl Iterator<Item = (String, D)>,
    batch: usize,
    bar: &ProgressBar,
) -> Result<Summary, CliError> {
    let mut committed = Committed::default();
    let mut rejections = Limited::default();
    let result = db.insert_bulk(records, &BulkOptions::default().batch(batch), |r| {
        for (key, err) in &r.rejected[committed.rejected as usize..] {
            reject(&mut rejections, key, err);
        }
        committed = Committed {
            inserted: r.inserted,
            replaced: r.replaced,
            commits: r.commits,
            rejected: r.rejected.len() as u64,
        };
        crate::interrupt::note_progress(committed.text());
        bar.set_message(format!("{} added", committed.inserted));
        !interrupted()
    });
    bar.finish_and_clear();
    let report = end_load(
        result.map_err(CliError::from),
        &rejections,
        &committed.text(),
        committed.inserted,
    )?;
    Ok(Summary {
        added: report.inserted,
        duplicates: 0,
        rejected: report.rejected.len() as u64,
        replaced: report.replaced,
        commits: report.commits,
        text: committed.text(),
    })
}

/// Documents per `insert_unique_many` call of a dedup-on-write load.
const UNIQUE_CHUNK: usize = 1024;

/// Dedup-on-write load, `insert_unique_many` over chunks of documents,
/// committing every `batch` documents; Ctrl-C is noticed between chunks.
fn load_unique(
    db: &Database,
    records: impl Iterator<Item = (String, DocumentBuf)>,
    batch: usize,
    threshold: f64,
    bar: &ProgressBar,
) -> Result<Summary, CliError> {
    // Committed counts, and those of the open transaction.
    let (mut inserted, mut duplicates, mut rejected) = (0u64, 0u64, 0u64);
    let mut commits = 0u64;
    let mut rejections = Limited::default();
    let text = |inserted: u64, duplicates: u64, rejected: u64| {
        format!(
            "added {inserted} document(s); {duplicates} near-duplicate(s) not added; {rejected} rejected"
        )
    };
    let mut records = records;
    let result = (|| -> Result<(), CliError> {
        let mut done = false;
        while !done && !interrupted() {
            let mut txn = db.batch()?;
            let (mut new, mut dup, mut rej) = (0u64, 0u64, 0u64);
            let mut left = batch.max(1);
            while left > 0 && !done && !interrupted() {
                // Prepared in parallel, checked in order (one call per chunk).
                let want = left.min(UNIQUE_CHUNK);
                let chunk: Vec<(String, DocumentBuf)> = records.by_ref().take(want).collect();
                done = chunk.len() < want;
                left -= chunk.len();
                let results = txn.insert_unique_many(&chunk, threshold)?;
                for ((key, _), result) in chunk.iter().zip(results) {
                    match result {
                        Ok(Unique::Inserted) => new += 1,
                        Ok(Unique::Duplicate(hit)) => {
                            dup += 1;
                            line(format_args!(
                                "duplicate: `{}` is a near-duplicate of `{}` ({}); not added",
                                short(key),
                                short(&hit.key),
                                similarity(hit.similarity)
                            ));
                        }
                        Err(
                            err @ (lshdb::Error::EmptyDocument { .. }
                            | lshdb::Error::InvalidKey { .. }
                            | lshdb::Error::DocumentTooLarge { .. }),
                        ) => {
                            rej += 1;
                            reject(&mut rejections, key, &err);
                        }
                        Err(err) => return Err(err.into()),
                    }
                }
            }
            txn.commit()?;
            commits += 1;
            (inserted, duplicates, rejected) = (inserted + new, duplicates + dup, rejected + rej);
            crate::interrupt::note_progress(text(inserted, duplicates, rejected));
            bar.set_message(format!("{inserted} added"));
        }
        Ok(())
    })();
    bar.finish_and_clear();
    let summary = text(inserted, duplicates, rejected);
    end_load(result, &rejections, &summary, inserted)?;
    Ok(Summary {
        added: inserted,
        duplicates,
        rejected,
        replaced: 0,
        commits,
        text: summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_load_reports_what_is_committed_before_the_error() {
        let committed = Committed {
            inserted: 20,
            replaced: 1,
            commits: 2,
            rejected: 0,
        };
        let err = CliError::from(std::io::Error::from_raw_os_error(28));
        let (summary, error) = failed_load(&committed.text(), committed.inserted, &err);
        assert_eq!(
            summary,
            "added 20 document(s) (1 replaced) in 2 commit(s); 0 rejected; stopped by an error"
        );
        assert!(
            error.starts_with("I/O error: No space left on device"),
            "{error}"
        );
        assert!(
            error.ends_with("; the 20 document(s) reported above are committed and kept"),
            "{error}"
        );
    }

    #[test]
    fn repeated_errors_are_shown_a_few_times_then_counted() {
        let mut limited = Limited::default();
        for i in 0..1000 {
            limited.push("malformed JSON", || {
                format!("skipped line {i}: malformed JSON")
            });
        }
        limited.push("missing field `text`", || "skipped line 1001".to_owned());
        let lines = limited.lines("bad record(s)");
        assert_eq!(lines.len(), 7, "{lines:?}");
        assert_eq!(lines[0], "skipped line 0: malformed JSON");
        assert_eq!(lines[5], "skipped line 1001");
        assert_eq!(
            lines[6],
            "… and 995 more bad record(s) with the same error (malformed JSON); 1000 in all"
        );
        assert_eq!(limited.total, 1001);
        assert_eq!(
            reason_kind(3, "malformed JSON: expected value"),
            "malformed JSON"
        );
        assert_eq!(reason_kind(0, "docs/a: b.txt: binary file"), "binary file");
    }
}
