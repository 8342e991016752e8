//! `lshdb add`: load files or records into a database, in bulk, with
//! bad records reported by line and Ctrl-C stopping after a clean commit.

use crate::args::{open_waiting, parse_threshold, JsonFields, Wait};
use crate::input::{read_text_file, FileText, InputError, Record};
use crate::interrupt::Interrupt;
use crate::output::progress;
use crate::support::context::Context;
use crate::support::load::{good_records, report, Loader, Skips};
use crate::{fail, CliError, CmdResult};
use indicatif::ProgressBar;
use lshdb::DocumentBuf;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// Add documents: files (key = path) or records: JSON Lines, CSV or
/// Parquet (default fields id, text).
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
    /// Records: JSON Lines (.gz and .zst are decompressed), CSV or Parquet
    /// (see --format), `-` for standard input.
    #[arg(long, visible_alias = "records", value_name = "FILE|-")]
    jsonl: Option<String>,
    #[command(flatten)]
    fields: JsonFields,
    #[command(flatten)]
    carry: crate::args::CarryArgs,
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
fn file_records(
    docs: Vec<(String, Source)>,
    interrupt: Interrupt,
) -> impl Iterator<Item = Result<Record, InputError>> {
    docs.into_iter().map_while(move |(key, source)| {
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
                interrupt.unless_interrupted(move || crate::input::read_text_stream(file))?
            }
            Source::Stdin => {
                interrupt.unless_interrupted(|| crate::input::read_text_stream(std::io::stdin()))?
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
                at: None,
                priority: None,
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

pub fn run(args: &Args, ctx: &Context) -> CmdResult {
    ctx.set_json(args.json);
    if args.carry.any() && args.jsonl.is_none() {
        return fail(
            "--time-field and --priority-field read fields of records; give the records \
             with --jsonl FILE (files added by path carry neither)",
        );
    }
    // Named inputs are opened before the database: opening a FIFO waits
    // for its writer, and Ctrl-C must end that wait at once, without the
    // database held locked meanwhile. Standard input needs no opening.
    let named = match args.jsonl.as_deref() {
        Some("-") => None,
        Some(path) => Some(open_records(args, path, ctx.interrupt())?),
        None => Some(file_input(expand(args)?, ctx.interrupt())),
    };
    let db = open_waiting(&args.file, &args.wait, ctx)?;
    args.carry.check(&db, &args.file)?;
    ctx.interrupt().catch_interrupt();
    let (input, bar) = match named {
        Some(input) => input,
        None => open_records(args, "-", ctx.interrupt())?,
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
    let loader = Loader {
        db: &db,
        batch: args.batch,
        bar: &bar,
        ctx,
    };
    let summary = match args.unique {
        None => loader.bulk(records)?,
        Some(threshold) => loader.unique(records, threshold)?,
    };
    report(&summary, skips.into_inner(), args.json, ctx)
}

/// The records of `path` (`-`: standard input), with a spinner counting
/// them. Standard input's first record may take long to come: Ctrl-C
/// ends that wait too.
fn open_records(args: &Args, path: &str, interrupt: &Interrupt) -> Result<Input, CliError> {
    let extra = args.carry.extras();
    let records = args.fields.open(path, extra, interrupt).map_err(|err| {
        if interrupt.interrupted() {
            CliError::Interrupted("interrupted: no input was read; nothing was added".into())
        } else {
            err
        }
    })?;
    let bar = progress(None, "adding");
    let counter = bar.clone();
    let records = records.inspect(move |_| counter.inc(1));
    Ok((Box::new(interrupt.interruptible(records)), bar))
}

/// The documents of `add PATHS`, one per file; the bar counts files.
fn file_input(docs: Vec<(String, Source)>, interrupt: &Interrupt) -> Input {
    let bar = progress(Some(docs.len() as u64), "adding");
    let counter = bar.clone();
    let records = file_records(docs, interrupt.clone()).inspect(move |_| counter.inc(1));
    (Box::new(records), bar)
}
