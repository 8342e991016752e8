//! Single documents and whole-database transfer: `get`, `remove`, `export`,
//! `import`.

use crate::args::{open_read_only, open_waiting, Wait};
use crate::input::{open_input, Backlog};
use crate::interrupt::Interrupt;
use crate::output::{escaped, json, line, short};
use crate::records::{Fields, Keyed, Source};
use crate::support::context::Context;
use crate::support::load::{good_records, load, report, Skips};
use crate::support::outfile::{same_file, Output};
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{DocumentBuf, Settings};
use serde_json::json;
use std::cell::RefCell;
use std::io::{BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Show a stored document.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb get pages.lshdb https://a.example/1 --json")]
pub struct GetArgs {
    /// The database file.
    file: PathBuf,
    /// The document's key.
    key: String,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

pub fn get(args: &GetArgs, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    let Some(doc) = db.get(&args.key)? else {
        return fail(format!("no document with key `{}`", short(&args.key)));
    };
    let cluster = match db.has_clusters() {
        true => db.cluster_of(&args.key)?,
        false => None,
    };
    if args.json {
        let mut value = json!({
            "key": doc.key,
            "shingles": doc.shingles,
            "simhash": doc.simhash.map(|s| format!("{s:016x}")),
            "text": doc.text,
        });
        if let Some(c) = &cluster {
            value["cluster"] =
                json!({"id": c.id, "representative": c.representative, "size": c.size});
        }
        json(&value);
    } else {
        line(format_args!("key       {}", escaped(&doc.key)));
        line(format_args!("shingles  {}", doc.shingles));
        if let Some(s) = doc.simhash {
            line(format_args!("simhash   {s:016x}"));
        }
        if let Some(c) = &cluster {
            line(format_args!(
                "cluster   {} ({} members, representative {})",
                c.id,
                c.size,
                escaped(&c.representative)
            ));
        }
        match &doc.text {
            Some(text) => line(format_args!("text\n{text}")),
            None => {
                line("text      (not stored; create the database with --store-text to keep it)")
            }
        }
    }
    Ok(Outcome::Ok)
}

/// Remove documents by key.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb remove pages.lshdb key1 key2")]
pub struct RemoveArgs {
    /// The database file.
    file: PathBuf,
    /// Keys to remove.
    #[arg(required = true)]
    keys: Vec<String>,
    /// One JSON object: {"removed": N, "missing": [KEY, ...]}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

pub fn remove(args: &RemoveArgs, ctx: &Context) -> CmdResult {
    let db = open_waiting(&args.file, &args.wait, ctx)?;
    let mut batch = db.batch()?;
    let mut missing = Vec::new();
    for key in &args.keys {
        if !batch.remove(key)? {
            missing.push(key.as_str());
        }
    }
    batch.commit()?;
    let removed = args.keys.len() - missing.len();
    if args.json {
        json(&json!({"removed": removed, "missing": missing}));
        return Ok(Outcome::Ok);
    }
    line(format_args!("removed {removed} document(s)"));
    for key in missing {
        eprintln!("lshdb: note: no document with key `{}`", escaped(key));
    }
    Ok(Outcome::Ok)
}

/// Write every document as JSON Lines: a header line with the settings,
/// then {"id", "text"} when text is stored, else {"id", "shingles"} (the
/// hashed set, which `import` accepts into a database with the same
/// shingling).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb export pages.lshdb --out backup.jsonl\n  \
                        lshdb export damaged.lshdb --salvage --out rescued.jsonl"
)]
pub struct ExportArgs {
    /// The database file.
    file: PathBuf,
    /// Output file (default: standard output). Written to a temporary file
    /// in the same folder and renamed into place once complete; never the
    /// database file itself.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep going past damaged records: write every readable document and
    /// report the others; exit code 3 when any was skipped.
    #[arg(long)]
    salvage: bool,
}

/// The export format version, the header's `lshdb_export` value.
const EXPORT_VERSION: u64 = 1;

/// The first line of every export.
fn export_header(settings: &Settings) -> serde_json::Value {
    json!({
        "lshdb_export": EXPORT_VERSION,
        "format": lshdb::FORMAT_VERSION,
        "settings": crate::render::export_settings(settings),
    })
}

/// Refuses an output path that is the database file itself, under any
/// name (see [`same_file`]).
fn refuse_database_as_output(db: &Path, out: &Path) -> Result<(), CliError> {
    if same_file(db, out) {
        return fail(format!(
            "{} is the database file itself ({}); export to another file",
            out.display(),
            db.display()
        ));
    }
    Ok(())
}

pub fn export(args: &ExportArgs, ctx: &Context) -> CmdResult {
    // Before opening: even a clean open and close rewrites the file's header.
    if let Some(path) = &args.out {
        refuse_database_as_output(&args.file, path)?;
    }
    let db = open_read_only(&args.file, ctx)?;
    let mut file = None;
    let mut stdout = None;
    let out: &mut dyn Write = match &args.out {
        Some(path) => {
            ctx.interrupt().catch_interrupt();
            file.insert(Output::create(path)?)
        }
        None => stdout.insert(BufWriter::new(std::io::stdout().lock())),
    };
    let mut failure = writeln!(out, "{}", export_header(db.settings())).err();
    let mut count = 0u64;
    let mut skipped = Vec::new();
    if failure.is_none() {
        let mut write = |doc: lshdb::ExportedDocument| {
            if ctx.interrupt().interrupted() {
                return false;
            }
            let value = match doc.text {
                Some(text) => json!({"id": doc.key, "text": text}),
                None => json!({"id": doc.key, "shingles": doc.shingles}),
            };
            match writeln!(out, "{value}") {
                Ok(()) => {
                    count += 1;
                    true
                }
                Err(err) => {
                    failure = Some(err);
                    false
                }
            }
        };
        if args.salvage {
            db.for_each_salvage(&mut write, |skip| skipped.push(skip))?;
        } else {
            db.for_each(&mut write)?;
        }
    }
    let written = match failure {
        Some(err) => Err(err),
        // The last buffered lines can meet a closed pipe too.
        None => out.flush(),
    };
    if let Err(err) = written {
        if err.kind() == std::io::ErrorKind::BrokenPipe && args.out.is_none() {
            return Ok(Outcome::Ok);
        }
        return Err(err.into());
    }
    print_skipped(&skipped);
    if let Some(output) = file {
        let salvaged = args.salvage.then_some(skipped.len());
        finish_export(output, count, salvaged, ctx.interrupt())?;
    }
    if skipped.is_empty() {
        return Ok(Outcome::Ok);
    }
    eprintln!(
        "lshdb: {} document(s) could not be read and are not in the export; \
         run `lshdb check` for the damage",
        skipped.len()
    );
    Ok(Outcome::Damaged)
}

/// Puts an export's output file in place (unless interrupted) and says
/// what it holds; `skipped`: the unreadable documents of a salvage.
fn finish_export(
    output: Output,
    count: u64,
    skipped: Option<usize>,
    interrupt: &Interrupt,
) -> Result<(), CliError> {
    if interrupt.interrupted() {
        let target = output.target().display().to_string();
        drop(output);
        return fail(format!("interrupted: {target} was not written"));
    }
    output.finish()?;
    match skipped {
        Some(skipped) => line(format_args!(
            "exported {count} document(s); {skipped} skipped as unreadable"
        )),
        None => line(format_args!("exported {count} document(s)")),
    }
    Ok(())
}

/// The documents a salvaging export could not read, on standard error.
fn print_skipped(skipped: &[lshdb::SkippedDocument]) {
    for skip in skipped {
        match (&skip.key, skip.id) {
            (Some(key), Some(id)) => {
                eprintln!(
                    "lshdb: skipped `{}` (document {id}): {}",
                    escaped(key),
                    skip.reason
                )
            }
            (Some(key), None) => eprintln!("lshdb: skipped `{}`: {}", escaped(key), skip.reason),
            (None, Some(id)) => eprintln!("lshdb: skipped document {id}: {}", skip.reason),
            (None, None) => eprintln!("lshdb: stopped early: {}", skip.reason),
        }
    }
}

/// Load JSON Lines written by `export` (or any {"id", "text"} lines).
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  lshdb create new.lshdb && lshdb import new.lshdb --in backup.jsonl"
)]
pub struct ImportArgs {
    /// The database file.
    file: PathBuf,
    /// Input file (default: standard input).
    #[arg(long = "in", value_name = "FILE")]
    input: Option<String>,
    /// Documents per commit.
    #[arg(long, default_value_t = lshdb::DEFAULT_BATCH)]
    batch: usize,
    /// Accept shingle sets from input without an export header, unchecked:
    /// they must have been made with this database's shingling.
    #[arg(long)]
    unchecked_shingles: bool,
    #[command(flatten)]
    carry: crate::args::CarryArgs,
    /// One JSON object as the summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

/// Longest first line read as a possible export header.
const MAX_HEADER: u64 = 1 << 20;

/// Reads the first line of `input` and, when it is an export header,
/// returns it with the rest of the input; otherwise the whole input.
fn split_header(
    mut input: Box<dyn BufRead + Send>,
) -> Result<(Option<serde_json::Value>, Box<dyn BufRead + Send>), CliError> {
    let mut first = Vec::new();
    (&mut input)
        .take(MAX_HEADER)
        .read_until(b'\n', &mut first)?;
    let header = serde_json::from_slice::<serde_json::Value>(&first)
        .ok()
        .filter(|v| v.get("lshdb_export").is_some());
    match header {
        Some(header) => Ok((Some(header), input)),
        None => Ok((None, Box::new(std::io::Cursor::new(first).chain(input)))),
    }
}

/// Why shingle-set lines cannot go into this database, if they cannot.
fn shingle_refusal(
    header: Option<&serde_json::Value>,
    settings: &Settings,
    unchecked: bool,
) -> Result<Option<String>, CliError> {
    let stored = crate::render::export_settings(settings);
    let Some(header) = header else {
        return Ok((!unchecked).then(|| {
            "a shingle set without an export header, whose shingling cannot be checked; \
             import the texts, or pass --unchecked-shingles if the sets were made with this \
             database's settings"
                .to_owned()
        }));
    };
    if header["lshdb_export"].as_u64() != Some(EXPORT_VERSION) {
        return fail(format!(
            "the export header says export version {}, which this lshdb does not read \
             (it reads {EXPORT_VERSION}); upgrade lshdb",
            header["lshdb_export"]
        ));
    }
    let file = &header["settings"];
    if !file.is_object() {
        return fail("the export header has no settings");
    }
    let differences: Vec<String> = ["shingle", "whitespace", "seed", "stop_words", "hash"]
        .iter()
        .filter(|name| file[**name] != stored[**name])
        .map(|name| {
            let show = |v: &serde_json::Value| match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "default".to_owned(),
                other => other.to_string(),
            };
            format!(
                "{name}: stored {}, file {}",
                show(&stored[*name]),
                show(&file[*name])
            )
        })
        .collect();
    if differences.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!(
        "a shingle set made with other settings than this database's ({}); import the \
         texts, or into a database created with the file's settings",
        differences.join("; ")
    )))
}

/// An input opened, with its export header if it has one.
type Opened = (Option<serde_json::Value>, Box<dyn BufRead + Send>);

/// Opens an import's input and reads its first line. A named pipe or
/// device is read on a thread of its own (as `records::Source::open`
/// reads one), so that Ctrl-C ends a pipe that stalls mid-stream; the
/// returned backlog then ends a chunk where the pipe has no more bytes.
fn open_import(path: &str, interrupt: &Interrupt) -> Result<(Opened, Backlog), CliError> {
    let name = std::path::Path::new(path);
    let mut backlog = Backlog::default();
    let input = if path != "-" && crate::input::may_wait(name) {
        std::fs::File::open(path).and_then(|file| {
            let input = crate::input::InterruptibleInput::file(file, interrupt.clone());
            backlog = input.backlog();
            crate::input::decoded(input)
        })
    } else {
        open_input(path)
    };
    let input = input.map_err(crate::io_context("cannot open input", name))?;
    Ok((split_header(input)?, backlog))
}

pub fn import(args: &ImportArgs, ctx: &Context) -> CmdResult {
    ctx.set_json(args.json);
    let path = args.input.as_deref().unwrap_or("-");
    // A named input is opened (and its first line read) before the
    // database: opening a FIFO waits for its writer, and Ctrl-C must end
    // that wait at once, without the database held locked meanwhile.
    // Standard input is read after, on a thread of its own, so that Ctrl-C
    // also ends a wait for its first line.
    let named = match path {
        "-" => None,
        _ => Some(open_import(path, ctx.interrupt())?),
    };
    let db = open_waiting(&args.file, &args.wait, ctx)?;
    args.carry.check(&db, &args.file)?;
    ctx.interrupt().catch_interrupt();
    let ((header, input), backlog) = match named {
        Some(opened) => opened,
        None => {
            let interrupt = ctx.interrupt().clone();
            let (opened, _) = ctx
                .interrupt()
                .unless_interrupted(move || open_import("-", &interrupt))
                .ok_or_else(|| {
                    CliError::Interrupted(
                        "interrupted: no input was read; nothing was imported".into(),
                    )
                })??;
            // Records from standard input are handled one at a time, as
            // they come.
            (opened, Backlog::one_at_a_time())
        }
    };
    let refusal = shingle_refusal(header.as_ref(), db.settings(), args.unchecked_shingles)?;
    let fields = Fields {
        text: "text".into(),
        id: Some("id".into()),
        score: None,
        flags: None,
        shingles: true,
        extra: args.carry.extras(),
    };
    let after = u64::from(header.is_some());
    let source = Source::lines(input, after, &fields, path, backlog);
    let reader = Keyed::new(source, &fields, ctx.interrupt())?;
    // A refused shingle set ends the input there, as a fatal record.
    let fatal = RefCell::new(None);
    let checked = ctx.interrupt().interruptible(reader).map_while(|item| {
        if let (Ok(record), Some(why)) = (&item, &refusal) {
            if matches!(record.doc, DocumentBuf::Shingles(_)) {
                *fatal.borrow_mut() = Some(format!("line {}: {why}", record.line));
                return None;
            }
        }
        Some(item)
    });
    let skips = RefCell::new(Skips {
        input: path.to_owned(),
        ..Skips::default()
    });
    let summary = load(&db, good_records(checked, &skips, false), args.batch, ctx)?;
    let mut skips = skips.into_inner();
    if let Some(fatal) = fatal.into_inner() {
        skips.fatal = Some(fatal);
    }
    report(&summary, skips, args.json, ctx)
}
