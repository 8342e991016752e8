//! `lshdb dedup`: records in, kept records out — the dataset builder's
//! near-duplicate removal in one command. This file holds the arguments
//! and the run around the keep policies; `chunks.rs` reads the inputs,
//! `outputs.rs` writes the side outputs.
//!
//! Keep policy `first` (`first.rs`) streams: each record is checked against
//! everything kept so far (the database, with this run's uncommitted
//! records) and inserted when nothing is similar enough, chunk by chunk
//! through `Database::insert_unique_bulk`, committing every `--batch` kept
//! records. The other policies (`grouped.rs`) read the input twice: pass 1
//! loads every record in bulk and groups them (`Database::groups`),
//! choosing one member per group; pass 2 re-reads the input and writes the
//! kept records.

use crate::add::Limited;
use crate::args::{open_waiting, parse_threshold, Wait};
use crate::docs::{same_file, Output};
use crate::interrupt::{catch_interrupt, interrupted};
use crate::output::{json, line, progress, short};
use crate::records::{Fields, Format, Layout, Parsed, Sink};
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{BulkOptions, Config, Database, Unique};
use serde_json::json;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod chunks;
mod first;
mod grouped;
mod outputs;

use chunks::{for_each_chunk, read_ahead};
use outputs::{Drop, Side, Target};

/// The label naming the inputs of a run that has not finished, so that a
/// rerun of the same command resumes it (see `docs/cli.md`).
const RUN_LABEL: &str = "dedup.unfinished";

/// Remove near-duplicate records: read JSON Lines (also .gz, .zst), CSV or
/// Parquet, write the kept records unchanged in the same format.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb dedup corpus.jsonl.zst --out kept.jsonl --dropped dropped.jsonl\n  \
                        lshdb dedup day2.jsonl --db seen.lshdb --id-field url --out day2.kept.jsonl\n  \
                        lshdb dedup pages.parquet --keep longest --out kept.parquet --threshold 0.7"
)]
pub struct Args {
    /// Input files (`-`: standard input), all of one format.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
    /// A database that keeps the kept records' sketches across runs
    /// (created when missing); default: a temporary one, deleted at the end.
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Similarity at which a record is a near-duplicate (default 0.8, or an
    /// existing --db's index threshold).
    #[arg(long, value_parser = parse_threshold, value_name = "T")]
    threshold: Option<f64>,
    /// Where the kept records go (default: standard output).
    #[arg(long, value_name = "KEPT")]
    out: Option<PathBuf>,
    /// Write each dropped record as JSON Lines {"id", "duplicate_of", "similarity"}.
    #[arg(long, value_name = "FILE")]
    dropped: Option<PathBuf>,
    /// Write each cluster (a kept record and its dropped duplicates) as JSON Lines.
    #[arg(long, value_name = "FILE")]
    clusters: Option<PathBuf>,
    /// Which record of a cluster is kept: first, longest, max:FIELD or min:FIELD.
    #[arg(long, default_value = "first", value_parser = parse_keep, value_name = "POLICY")]
    keep: Keep,
    /// Field (JSON: a path such as meta.body; CSV, Parquet: a column) holding the text.
    #[arg(long, default_value = "text", value_name = "F")]
    text_field: String,
    /// Field holding the record's id (default: none; records are named line:N).
    #[arg(long, value_name = "F")]
    id_field: Option<String>,
    /// Input format (default: from the name, else the content).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Records per commit to the database.
    #[arg(long, default_value_t = lshdb::DEFAULT_BATCH, value_name = "N")]
    batch: usize,
    /// Keep the kept records' texts in a database created by this run (--db).
    #[arg(long)]
    store_text: bool,
    /// LSH bands of the database this run creates (with --rows; otherwise
    /// tuned from the threshold). More bands of fewer rows find more
    /// near-duplicates and take longer; precision stays 1 (every drop is
    /// verified).
    #[arg(long, requires = "rows")]
    bands: Option<usize>,
    /// Rows per band (with --bands).
    #[arg(long, requires = "bands")]
    rows: Option<usize>,
    /// The summary as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

/// Which member of a cluster is kept.
#[derive(Clone, Debug, PartialEq)]
pub enum Keep {
    First,
    Longest,
    Max(String),
    Min(String),
}

fn parse_keep(s: &str) -> Result<Keep, String> {
    match s.split_once(':') {
        None if s == "first" => Ok(Keep::First),
        None if s == "longest" => Ok(Keep::Longest),
        Some(("max", f)) if !f.is_empty() => Ok(Keep::Max(f.to_owned())),
        Some(("min", f)) if !f.is_empty() => Ok(Keep::Min(f.to_owned())),
        _ => Err(format!(
            "`{s}` is not a keep policy; use first, longest, max:FIELD or min:FIELD"
        )),
    }
}

/// Counts for the summary.
#[derive(Default)]
struct Counts {
    read: u64,
    kept: u64,
    dropped: u64,
    bad: Limited,
}

/// Where a record comes from, for messages and keys.
struct Place<'a> {
    inputs: &'a [String],
    input: usize,
}

impl Place<'_> {
    /// `line N` (one input) or `line N of INPUT`.
    fn at(&self, line: u64) -> String {
        if self.inputs.len() == 1 {
            format!("line {line}")
        } else {
            format!("line {line} of {}", self.inputs[self.input])
        }
    }

    /// The key of a record without an id: `line:N`, or `INPUT:line:N` with
    /// several inputs.
    fn key(&self, line: u64) -> String {
        if self.inputs.len() == 1 {
            format!("line:{line}")
        } else {
            format!("{}:line:{line}", self.inputs[self.input])
        }
    }
}

pub fn run(args: &Args) -> CmdResult {
    let start = Instant::now();
    let formats = args
        .inputs
        .iter()
        .map(|p| crate::records::detect(p, args.format))
        .collect::<Result<Vec<_>, _>>()?;
    let format = formats[0];
    if let Some((i, other)) = formats.iter().enumerate().find(|(_, f)| **f != format) {
        return fail(format!(
            "{} is {} but {} is {}: give inputs of one format (or --format)",
            args.inputs[i],
            other.name(),
            args.inputs[0],
            format.name()
        ));
    }
    if args.inputs.iter().filter(|p| *p == "-").count() > 1 {
        return fail("standard input (-) can be given once");
    }
    if args.keep != Keep::First && args.inputs.iter().any(|p| p == "-") {
        return fail(format!(
            "--keep {} reads the input twice, and standard input can be read once; save it to a file first",
            keep_name(&args.keep)
        ));
    }
    // Never write onto an input or the database.
    let outputs = [
        ("--out", &args.out),
        ("--dropped", &args.dropped),
        ("--clusters", &args.clusters),
    ];
    for (flag, out) in outputs {
        let Some(out) = out else { continue };
        for input in args.inputs.iter().filter(|p| *p != "-") {
            if same_file(Path::new(input), out) {
                return fail(format!(
                    "{flag} {} is the input {input}; write the output to another file",
                    out.display()
                ));
            }
        }
        if let Some(db) = &args.db {
            if same_file(db, out) {
                return fail(format!(
                    "{flag} {} is the database file itself ({}); write the output to another file",
                    out.display(),
                    db.display()
                ));
            }
        }
    }

    // The database: given (created when missing) or temporary.
    let mut _temp = None;
    let config = || {
        let config = Config::jaccard(args.threshold.unwrap_or(0.8));
        match (args.bands, args.rows) {
            (Some(b), Some(r)) => config.bands(b, r),
            _ => config,
        }
    };
    let db = match &args.db {
        Some(path) if path.exists() => {
            let db = open_waiting(path, &args.wait)?;
            let s = db.settings();
            if let (Some(b), Some(r)) = (args.bands, args.rows) {
                if (b, r) != (s.bands, s.rows) {
                    return fail(format!(
                        "{} has {} bands × {} rows; --bands and --rows only apply to a database this run creates (to change them: lshdb rebuild {} --threshold {} --bands {b} --rows {r})",
                        path.display(),
                        s.bands,
                        s.rows,
                        path.display(),
                        s.threshold
                    ));
                }
            }
            db
        }
        Some(path) => {
            let db = Database::create(path, config().store_text(args.store_text))?;
            let _ = crate::args::OPENED.set(path.clone());
            crate::interrupt::writing();
            db
        }
        None => {
            let dir = tempfile::tempdir().map_err(|e| {
                CliError::Message(format!("cannot create a temporary database: {e}"))
            })?;
            let db = Database::create(dir.path().join("dedup.lshdb"), config())?;
            crate::interrupt::writing();
            _temp = Some(dir);
            db
        }
    };
    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    // Nothing stored before this run: no record can be found by name.
    let fresh = db.is_empty()?;
    if args.db.is_some() {
        crate::pairs::note_threshold(&db, threshold);
    }
    catch_interrupt();

    // A rerun of an unfinished run resumes it.
    let run_id = json!({"inputs": args.inputs, "keep": keep_name(&args.keep)}).to_string();
    let resuming = args.db.is_some() && db.label(RUN_LABEL)?.as_deref() == Some(run_id.as_str());
    if args.db.is_some() {
        db.set_label(RUN_LABEL, &run_id)?;
    }

    let fields = Fields {
        text: args.text_field.clone(),
        id: args.id_field.clone(),
        score: match &args.keep {
            Keep::Max(f) | Keep::Min(f) => Some(f.clone()),
            _ => None,
        },
    };
    let mut side = Side {
        dropped: args.dropped.as_deref().map(Output::create).transpose()?,
        clusters: args.clusters.as_ref().map(|_| (HashMap::new(), Vec::new())),
    };
    let clusters_out = args.clusters.as_deref().map(Output::create).transpose()?;
    let target = match &args.out {
        Some(path) => Target::File(Output::create(path)?),
        None => Target::Stdout(std::io::BufWriter::new(std::io::stdout())),
    };
    let mut counts = Counts::default();
    let bar = progress(None, "dedup");
    let run = Run {
        args,
        db: &db,
        threshold,
        resuming,
        fresh,
        fields: &fields,
        format,
    };
    let out = Outputs {
        side: &mut side,
        counts: &mut counts,
        bar: &bar,
    };
    let result = match args.keep {
        Keep::First => first::first(&run, target, out),
        _ => grouped::grouped(&run, target, out),
    };
    bar.finish_and_clear();
    for message in counts.bad.lines("bad record(s)") {
        eprintln!("lshdb: {message}");
    }
    let target = match result {
        Ok(target) => target,
        Err(err) => {
            if interrupted() {
                return Err(CliError::Interrupted(match &args.db {
                    Some(path) => format!(
                        "interrupted: no output was written; the records kept so far are committed to {}; run the same command again to finish (it resumes)",
                        path.display()
                    ),
                    None => "interrupted: no output was written".to_owned(),
                }));
            }
            return Err(err);
        }
    };
    // Everything read: the outputs go into place.
    target.finish()?;
    if let Some(out) = side.dropped.take() {
        out.finish()?;
    }
    if let (Some(mut out), Some((_, list))) = (clusters_out, side.clusters.take()) {
        for (kept, members) in list {
            let members: Vec<_> = members
                .iter()
                .map(|(k, s)| json!({"id": k, "similarity": s}))
                .collect();
            writeln!(out, "{}", json!({"kept": kept, "dropped": members}))?;
        }
        out.finish()?;
    }
    if args.db.is_some() {
        db.set_label(RUN_LABEL, "")?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let summary = if args.json {
        json!({
            "read": counts.read, "kept": counts.kept, "dropped": counts.dropped,
            "bad": counts.bad.total, "seconds": seconds, "threshold": threshold,
            "keep": keep_name(&args.keep), "resumed": resuming,
        })
        .to_string()
    } else {
        format!(
            "read {} record(s): {} kept, {} dropped as near-duplicates, {} bad record(s) skipped; {:.1} s{}",
            counts.read,
            counts.kept,
            counts.dropped,
            counts.bad.total,
            seconds,
            if resuming { " (resumed)" } else { "" }
        )
    };
    // Standard output holds the kept records unless --out is given.
    if args.out.is_some() {
        if args.json {
            json(&serde_json::from_str(&summary).unwrap_or_default());
        } else {
            line(summary);
        }
    } else {
        eprintln!(
            "{}",
            if args.json {
                summary
            } else {
                format!("lshdb: {summary}")
            }
        );
    }
    Ok(Outcome::Ok)
}

/// What both keep policies read: the run's arguments, database and
/// settings.
#[derive(Clone, Copy)]
struct Run<'a> {
    args: &'a Args,
    db: &'a Database,
    threshold: f64,
    /// Whether this run resumes an unfinished one (same label).
    resuming: bool,
    /// Whether the database held nothing before this run.
    fresh: bool,
    fields: &'a Fields,
    format: Format,
}

/// What both keep policies write to, besides the kept records.
struct Outputs<'a> {
    side: &'a mut Side,
    counts: &'a mut Counts,
    bar: &'a indicatif::ProgressBar,
}

fn keep_name(keep: &Keep) -> String {
    match keep {
        Keep::First => "first".to_owned(),
        Keep::Longest => "longest".to_owned(),
        Keep::Max(f) => format!("max:{f}"),
        Keep::Min(f) => format!("min:{f}"),
    }
}

/// Ends the kept output: `sink` when a chunk was read, else an empty
/// output of the input's layout (a CSV header, a Parquet file without
/// rows).
fn finish_output(
    sink: Option<Sink<Target>>,
    target: Option<Target>,
    layout: Option<Layout>,
) -> Result<Target, CliError> {
    match (sink, target) {
        (Some(sink), _) => sink.finish(),
        (None, Some(target)) => Sink::new(target, &layout.unwrap_or(Layout::Lines))?.finish(),
        (None, None) => fail("internal error: no output"),
    }
}

/// The reason of a refused document, as a bad record's.
fn refusal(err: &lshdb::Error) -> Option<String> {
    match err {
        lshdb::Error::EmptyDocument { .. } => Some("text empty after normalisation".to_owned()),
        lshdb::Error::DocumentTooLarge { len, max, .. } => {
            Some(format!("text of {len} bytes, above the limit of {max}"))
        }
        lshdb::Error::InvalidKey { .. } => Some(format!("{err}")),
        _ => None,
    }
}

fn bad(counts: &mut Counts, place: &Place, line: u64, reason: &str) {
    let kind = reason
        .split_once(": ")
        .map_or(reason, |(k, _)| k)
        .to_owned();
    let at = place.at(line);
    counts.bad.push(&kind, || format!("skipped {at}: {reason}"));
}

/// A record whose key is already stored before this run: in a resumed run,
/// one this run kept before it was interrupted (kept again); otherwise a
/// record seen by an earlier run (a duplicate of itself when its text is
/// still similar, else a bad record).
fn stored_before(
    db: &Database,
    key: &str,
    text: &str,
    threshold: f64,
    resuming: bool,
) -> Result<Result<Option<Drop>, String>, CliError> {
    if resuming {
        return Ok(Ok(None));
    }
    let hits = db
        .query(text)
        .threshold(threshold)
        .max_bucket(usize::MAX)
        .run()?
        .hits;
    match hits.iter().find(|h| h.key == key) {
        Some(hit) => Ok(Ok(Some(Drop {
            id: key.to_owned(),
            of: key.to_owned(),
            similarity: hit.similarity,
        }))),
        None => Ok(Err(format!(
            "id `{}` is already stored in the database with another text",
            short(key)
        ))),
    }
}
