//! `lshdb dedup`: records in, kept records out — the dataset builder's
//! near-duplicate removal in one command. This file holds the arguments
//! and the run around the keep policies; `chunks.rs` reads the inputs,
//! `outputs.rs` writes the outputs, `report.rs` the summary, `resume.rs`
//! resumes an unfinished run.
//!
//! Keep policy `first` (`first.rs`) streams: each record is checked against
//! everything kept so far (the database, with this run's uncommitted
//! records) and inserted when nothing is similar enough, chunk by chunk
//! through `Database::insert_unique_bulk`, committing every `--batch` kept
//! records. The other policies (`grouped.rs`) read the input twice: pass 1
//! loads every record in bulk and groups them (`Database::groups`),
//! choosing one member per group; pass 2 re-reads the input and writes the
//! kept records.

use crate::args::{open_waiting, parse_size, parse_threshold, Wait};
use crate::interrupt::Interrupt;
use crate::output::{progress, short};
use crate::records::{Fields, Format, Layout, Parsed, Sink};
use crate::support::context::Context;
use crate::support::load::Limited;
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{BulkOptions, Config, Database, Unique};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

mod chunks;
mod cluster_file;
mod clustered;
mod database;
mod first;
mod grouped;
mod outputs;
mod report;
mod resume;

use chunks::{for_each_chunk, read_ahead, read_and_load, Ahead};
use cluster_file::ClusterFile;
use database::open_db;
use outputs::{check_paths, finish_side, Drop, Side, Target, Written};
use report::{interrupted_message, summary, written};

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
    /// Write each rejected record as JSON Lines {"record", "reason",
    /// "source", "line"}; without it, a rejected record fails the run.
    #[arg(long, value_name = "FILE")]
    rejected: Option<PathBuf>,
    /// Which record of a cluster is kept: first, longest, max:FIELD or min:FIELD.
    #[arg(long, default_value = "first", value_parser = parse_keep, value_name = "POLICY")]
    keep: Keep,
    /// (With --keep first.) Which kept record a dropped one names: first
    /// (the first near-duplicate found; the default, fastest) or best (the
    /// most similar; every candidate is verified). The same records are
    /// kept and dropped either way.
    #[arg(long, value_parser = crate::args::parse_duplicate_of, value_name = "WHICH")]
    duplicate_of: Option<lshdb::DuplicateOf>,
    /// Field (JSON: a path such as meta.body; CSV, Parquet: a column) holding the text.
    #[arg(long, default_value = "text", value_name = "F")]
    text_field: String,
    /// Field holding the record's id (default: none; records are named
    /// line:N); an error when no record of the first chunk has it.
    #[arg(long, value_name = "F")]
    id_field: Option<String>,
    /// Input format (default: from the name, else the content).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Records per commit to the database.
    #[arg(long, default_value_t = lshdb::DEFAULT_BATCH, value_name = "N")]
    batch: usize,
    /// About the most memory the run takes (K, M or G): a quarter of it
    /// holds the kept records not yet written to the database, which are
    /// written as they pass it, an eighth caches the database's filters
    /// and lists for the look-ups, and up to a quarter is the filter of
    /// what the run wrote (21 bytes per kept record; a run that outgrows
    /// it goes on without it, slower); without --db, an eighth caches the
    /// temporary database's records and a 128th its pages (a 16th with
    /// longest, max:F, min:F); a 32nd holds
    /// the ids seen, for the repeated-id check (8.5 bytes each; past it,
    /// they go to a temporary file, with a filter of them in that share).
    #[arg(long, default_value = "1G", value_parser = parse_size, value_name = "SIZE")]
    memory: usize,
    /// Sliding-window dedup (with --db): first remove the documents --db
    /// stored more than this long ago (45s, 90m, 12h, 30d), so a record is
    /// a duplicate only of records kept within the window. A --db this run
    /// creates keeps the time index; an existing one needs it (`lshdb
    /// rebuild FILE --timestamps`).
    #[arg(long, requires = "db", value_parser = crate::support::when::parse_duration, value_name = "DURATION")]
    window: Option<u64>,
    /// Keep the kept records' texts in a database created by this run (--db).
    #[arg(long)]
    store_text: bool,
    /// (With --db and --keep first.) What the stored records carry:
    /// --time-field, --priority-field.
    #[command(flatten)]
    carry: crate::args::CarryArgs,
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
    /// Documents `--window` removed from `--db` before the run.
    expired: u64,
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

pub fn run(args: &Args, ctx: &Context) -> CmdResult {
    let start = Instant::now();
    let format = check_inputs(args)?;
    first::check_flags(args)?;
    check_paths(args);

    // The database: given (created when missing) or temporary.
    let (db, _temp) = open_db(args, ctx)?;
    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    if args.db.is_some() {
        crate::support::groups::note_threshold(&db, threshold);
    }
    let interrupt = ctx.interrupt();
    interrupt.catch_interrupt();

    // A rerun of an unfinished run resumes it.
    let mut expired = 0;
    let resuming = match args.db {
        Some(_) => resume::begin(&db, &args.inputs, &keep_name(&args.keep), interrupt, || {
            expired = expire_window(args, &db, interrupt)?;
            Ok(())
        })?,
        None => false,
    };
    // Nothing stored before this run: no record can be found by name.
    let fresh = db.is_empty()?;

    let fields = fields(args);
    let mut side = Side {
        dropped: args.dropped.as_deref().map(Written::create).transpose()?,
        // A 32nd of --memory, then temporary files.
        clusters: (args.clusters.as_ref()).map(|_| ClusterFile::with_budget(args.memory / 32)),
        rejected: args.rejected.as_deref().map(Written::create).transpose()?,
    };
    let clusters_out = args.clusters.as_deref().map(Written::create).transpose()?;
    let target = match &args.out {
        Some(path) => Target::File(Written::create(path)?),
        None => Target::Stdout(std::io::BufWriter::new(std::io::stdout())),
    };
    let mut counts = Counts {
        expired,
        ..Counts::default()
    };
    let bar = progress(None, "dedup");
    let run = Run {
        args,
        db: &db,
        threshold,
        fresh,
        fields: &fields,
        format,
        interrupt,
    };
    let out = Outputs {
        side: &mut side,
        counts: &mut counts,
        bar: &bar,
    };
    let result = match args.keep {
        Keep::First => first::first(&run, target, out),
        _ if args.db.is_none() => clustered::clustered(&run, target, out),
        _ => grouped::grouped(&run, target, out),
    };
    bar.finish_and_clear();
    for message in counts.bad.lines("bad record(s)") {
        eprintln!("lshdb: {message}");
    }
    let target = match result {
        Ok(target) => target,
        Err(_) if interrupt.interrupted() => return Err(interrupted_message(args, &counts)),
        Err(err) => return Err(err),
    };
    refuse_lost_rejections(args, &counts)?;
    // Everything read: the outputs go into place.
    target.finish()?;
    finish_side(side, clusters_out)?;
    if args.db.is_some() {
        resume::end(&db)?;
    }
    summary(args, &counts, start, threshold, resuming);
    Ok(Outcome::Ok)
}

/// Fails a run that rejected records with nowhere to write them (no
/// `--rejected FILE`), before any output goes into place.
fn refuse_lost_rejections(args: &Args, counts: &Counts) -> Result<(), CliError> {
    if counts.bad.total > 0 && args.rejected.is_none() {
        return fail(format!(
            "{} record(s) were rejected (see above), and without --rejected FILE they would be lost: {}{}; run again with --rejected FILE",
            counts.bad.total,
            written(args, counts),
            match &args.db {
                Some(_) => " (the rerun resumes)",
                None => "",
            }
        ));
    }
    Ok(())
}

/// The record fields the run reads: text, id and the `--keep` score.
fn fields(args: &Args) -> Fields {
    Fields {
        text: args.text_field.clone(),
        id: args.id_field.clone(),
        score: match &args.keep {
            Keep::Max(f) | Keep::Min(f) => Some(f.clone()),
            _ => None,
        },
        flags: Some(("--text-field", "--id-field")),
        shingles: false,
        extra: args.carry.extras(),
    }
}

/// Checks the inputs: one format, standard input at most once and only
/// for a policy that reads once. Returns the format.
fn check_inputs(args: &Args) -> Result<Format, CliError> {
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
    Ok(format)
}

/// With `--window`: removes the documents `--db` stored before the
/// window; returns how many.
fn expire_window(args: &Args, db: &Database, interrupt: &Interrupt) -> Result<u64, CliError> {
    let Some(window) = args.window else {
        return Ok(0);
    };
    let older_than = crate::support::when::now().saturating_sub(window);
    let report = db.expire_with(older_than, lshdb::EXPIRE_BATCH, |_| {
        !interrupt.interrupted()
    })?;
    if report.stopped {
        return fail(format!(
            "interrupted while removing the documents older than the window ({} removed); \
             nothing was read; run the same command again",
            report.removed
        ));
    }
    Ok(report.removed)
}

/// What both keep policies read: the run's arguments, database and
/// settings.
#[derive(Clone, Copy)]
struct Run<'a> {
    args: &'a Args,
    db: &'a Database,
    threshold: f64,
    /// Whether the database held nothing before this run.
    fresh: bool,
    fields: &'a Fields,
    format: Format,
    /// The run's Ctrl-C state.
    interrupt: &'a Interrupt,
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

/// The output's sink, made from the one target at the first chunk (when
/// the input's layout is known).
fn open_sink<'s>(
    sink: &'s mut Option<Sink<Target>>,
    target: &mut Option<Target>,
    layout: &Layout,
) -> Result<&'s mut Sink<Target>, CliError> {
    if sink.is_none() {
        let out = target
            .take()
            .ok_or_else(|| CliError::Message("internal error: no output".into()))?;
        *sink = Some(Sink::new(out, layout)?);
    }
    sink.as_mut()
        .ok_or_else(|| CliError::Message("internal error: no output".into()))
}

/// The 64-bit hash of a record id that tells repeated ids.
fn id_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// Unit `i` of a chunk read again by a grouped policy's second pass: its
/// record, or `None` for a blank line and for a bad record (written to
/// `--rejected`, as counted in the first pass).
fn reread<'c>(
    side: &mut Side,
    chunk: &'c crate::records::Chunk,
    i: usize,
    source: &str,
) -> Result<Option<&'c crate::records::Good>, CliError> {
    let (line, parsed) = &chunk.units[i];
    match parsed {
        Parsed::Blank => Ok(None),
        Parsed::Bad(reason) => {
            side.reject(chunk.original(i), reason, source, *line)?;
            Ok(None)
        }
        Parsed::Good(good) => Ok(Some(good)),
    }
}

/// The reason a record whose id came earlier in the input is rejected.
fn repeated(key: &str) -> String {
    format!("repeated id: `{}` is also earlier in the input", short(key))
}

/// The reason of a refused document, as a bad record's.
fn refusal(err: &lshdb::Error) -> Option<String> {
    match err {
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

/// A record whose key is already stored before this run (by an earlier
/// run): a duplicate of itself when its text is still similar, else a bad
/// record.
fn stored_before(
    db: &Database,
    key: &str,
    text: &str,
    threshold: f64,
) -> Result<Result<Drop, String>, CliError> {
    let hits = db
        .query(text)
        .threshold(threshold)
        .max_bucket(usize::MAX)
        .run()?
        .hits;
    match hits.iter().find(|h| h.key == key) {
        Some(hit) => Ok(Ok(Drop {
            id: key.to_owned(),
            of: key.to_owned(),
            similarity: hit.similarity,
        })),
        None => Ok(Err(format!(
            "id `{}` is already stored in the database with another text",
            short(key)
        ))),
    }
}
