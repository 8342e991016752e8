//! Single documents and whole-database transfer: `get`, `remove`, `export`,
//! `import`.

use crate::add::{catch_interrupt, good_records, load, report, Skips};
use crate::args::{open, open_read_only, open_waiting, Wait};
use crate::input::{open_input, JsonLines};
use crate::output::{json, line};
use crate::{fail, CmdResult, Outcome};
use serde_json::json;
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;

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

pub fn get(args: &GetArgs) -> CmdResult {
    let db = open_read_only(&args.file)?;
    let Some(doc) = db.get(&args.key)? else {
        return fail(format!("no document with key `{}`", args.key));
    };
    if args.json {
        json(&json!({
            "key": doc.key,
            "shingles": doc.shingles,
            "simhash": doc.simhash.map(|s| format!("{s:016x}")),
            "text": doc.text,
        }));
    } else {
        line(format_args!("key       {}", doc.key));
        line(format_args!("shingles  {}", doc.shingles));
        if let Some(s) = doc.simhash {
            line(format_args!("simhash   {s:016x}"));
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
    #[command(flatten)]
    wait: Wait,
}

pub fn remove(args: &RemoveArgs) -> CmdResult {
    let db = open_waiting(&args.file, &args.wait)?;
    let mut batch = db.batch()?;
    let mut missing = Vec::new();
    for key in &args.keys {
        if !batch.remove(key)? {
            missing.push(key.as_str());
        }
    }
    batch.commit()?;
    line(format_args!(
        "removed {} document(s)",
        args.keys.len() - missing.len()
    ));
    for key in missing {
        eprintln!("lshdb: note: no document with key `{key}`");
    }
    Ok(Outcome::Ok)
}

/// Write every document as JSON Lines: {"id", "text"} when text is stored,
/// else {"id", "shingles"} (the hashed set, which `import` accepts).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb export pages.lshdb --out backup.jsonl")]
pub struct ExportArgs {
    /// The database file.
    file: PathBuf,
    /// Output file (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn export(args: &ExportArgs) -> CmdResult {
    let db = open_read_only(&args.file)?;
    let mut out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(crate::io_context("cannot create", path))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut failure = None;
    let mut count = 0u64;
    db.for_each(|doc| {
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
    })?;
    if let Some(err) = failure {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(Outcome::Ok);
        }
        return Err(err.into());
    }
    if let Err(err) = out.flush() {
        // The last buffered lines can meet the closed pipe too.
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(Outcome::Ok);
        }
        return Err(err.into());
    }
    if args.out.is_some() {
        line(format_args!("exported {count} document(s)"));
    }
    Ok(Outcome::Ok)
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
}

pub fn import(args: &ImportArgs) -> CmdResult {
    let db = open(&args.file)?;
    catch_interrupt();
    let path = args.input.as_deref().unwrap_or("-");
    let skips = RefCell::new(Skips {
        input: path.to_owned(),
        ..Skips::default()
    });
    let input = open_input(path).map_err(crate::io_context(
        "cannot open input",
        std::path::Path::new(path),
    ))?;
    let reader = JsonLines::new(input, "id", "text");
    let summary = load(&db, good_records(reader, &skips, false), args.batch)?;
    report(&summary, skips.into_inner())
}
