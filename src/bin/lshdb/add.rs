//! `lshdb add`: load files or JSON Lines into a database, in bulk, with
//! bad records reported by line and Ctrl-C stopping after a clean commit.

use crate::args::{open, parse_threshold, JsonFields};
use crate::input::{read_text_file, FileText, InputError, Record};
use crate::output::{line, progress, similarity};
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{AsDocument, BulkOptions, Database, DocumentBuf, Unique};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Add documents: files (key = path) or JSON Lines (default fields id, text).
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["paths", "jsonl"]))]
#[command(after_help = "Examples:\n  lshdb add pages.lshdb notes/*.txt\n  \
                        lshdb add pages.lshdb --jsonl corpus.jsonl --batch 8192\n  \
                        cat new.jsonl | lshdb add pages.lshdb --jsonl - --unique 0.9")]
pub struct Args {
    /// The database file.
    file: PathBuf,
    /// Text files to add; the key is the path as given.
    paths: Vec<PathBuf>,
    /// JSON Lines input, `-` for standard input.
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
}

/// Set by Ctrl-C; bulk loads stop after their current commit.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once).
pub fn catch_interrupt() {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Bad records seen so far, and the one that stopped a strict load.
#[derive(Default)]
pub struct Skips {
    pub bad: Vec<(String, String)>,
    pub fatal: Option<String>,
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
                skips.borrow_mut().fatal = Some(format!("reading the input failed: {err}"));
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
                    skips.borrow_mut().bad.push((at, reason));
                    Some(None)
                }
            }
        })
        .flatten()
}

fn file_records(paths: &[PathBuf]) -> impl Iterator<Item = Result<Record, InputError>> + '_ {
    paths.iter().map(|path| {
        let bad = |reason: String| InputError::Bad { line: 0, reason };
        let key = path.to_string_lossy().into_owned();
        match read_text_file(path) {
            Ok(FileText::Text(text)) if text.trim().is_empty() => {
                Err(bad(format!("{key}: empty file")))
            }
            Ok(FileText::Text(text)) => Ok(Record {
                line: 0,
                key,
                doc: DocumentBuf::Text(text),
            }),
            Ok(FileText::Binary) => Err(bad(format!("{key}: binary file"))),
            Ok(FileText::TooLarge(n)) => Err(bad(format!("{key}: {n} bytes is too large"))),
            Err(e) => Err(bad(format!("{key}: {e}"))),
        }
    })
}

pub fn run(args: &Args) -> CmdResult {
    let db = open(&args.file)?;
    catch_interrupt();
    let skips = RefCell::new(Skips::default());
    let input: Box<dyn Iterator<Item = Result<Record, InputError>>> = match &args.jsonl {
        Some(path) => Box::new(args.fields.open(path)?),
        None => Box::new(file_records(&args.paths)),
    };
    let records = good_records(input, &skips, args.strict);
    let summary = match args.unique {
        None => load(&db, records, args.batch)?,
        Some(threshold) => load_unique(&db, records, args.batch, threshold)?,
    };
    report(&summary, skips.into_inner())
}

/// Ends a load: the skipped records on standard error, the summary on
/// standard output, and an error when the load stopped early (a fatal
/// record or Ctrl-C), saying that what is reported is committed.
pub fn report(summary: &str, skips: Skips) -> CmdResult {
    for (at, reason) in &skips.bad {
        eprintln!("lshdb: skipped {at}: {reason}");
    }
    line(format_args!(
        "{summary}; {} bad record(s) skipped",
        skips.bad.len()
    ));
    if let Some(fatal) = skips.fatal {
        return fail(format!(
            "stopped at {fatal}; everything reported above is committed"
        ));
    }
    if interrupted() {
        return fail("interrupted: everything reported above is committed; run the command again to continue");
    }
    Ok(Outcome::Ok)
}

/// Bulk load; returns the summary line.
pub fn load<D: AsDocument + Send>(
    db: &Database,
    records: impl Iterator<Item = (String, D)>,
    batch: usize,
) -> Result<String, CliError> {
    let bar = progress(None, "adding");
    let report = db.insert_bulk(records, &BulkOptions::default().batch(batch), |r| {
        bar.set_position(r.inserted + r.rejected.len() as u64);
        !interrupted()
    })?;
    bar.finish_and_clear();
    for (key, err) in &report.rejected {
        eprintln!("lshdb: rejected `{key}`: {err}");
    }
    Ok(format!(
        "added {} document(s) ({} replaced) in {} commit(s); {} rejected",
        report.inserted,
        report.replaced,
        report.commits,
        report.rejected.len()
    ))
}

/// Dedup-on-write load, one `insert_unique` per document, committing every
/// `batch` documents.
fn load_unique(
    db: &Database,
    records: impl Iterator<Item = (String, DocumentBuf)>,
    batch: usize,
    threshold: f64,
) -> Result<String, CliError> {
    let bar = progress(None, "adding");
    let (mut inserted, mut duplicates, mut rejected) = (0u64, 0u64, 0u64);
    let mut records = records.peekable();
    while records.peek().is_some() && !interrupted() {
        let mut txn = db.batch()?;
        for (key, doc) in records.by_ref().take(batch.max(1)) {
            match txn.insert_unique(&key, doc.as_document(), threshold) {
                Ok(Unique::Inserted) => inserted += 1,
                Ok(Unique::Duplicate(hit)) => {
                    duplicates += 1;
                    line(format_args!(
                        "duplicate: `{key}` is a near-duplicate of `{}` ({}); not added",
                        hit.key,
                        similarity(hit.similarity)
                    ));
                }
                Err(
                    err @ (lshdb::Error::EmptyDocument { .. }
                    | lshdb::Error::InvalidKey { .. }
                    | lshdb::Error::DocumentTooLarge { .. }),
                ) => {
                    rejected += 1;
                    eprintln!("lshdb: rejected `{key}`: {err}");
                }
                Err(err) => return Err(err.into()),
            }
            bar.inc(1);
        }
        txn.commit()?;
    }
    bar.finish_and_clear();
    Ok(format!(
        "added {inserted} document(s); {duplicates} near-duplicate(s) not added; {rejected} rejected"
    ))
}
