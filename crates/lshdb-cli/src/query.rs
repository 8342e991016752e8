//! `lshdb query`: near-duplicates of a text, a file, a stored key, or of
//! every record of a JSON Lines stream.

use crate::args::{open_read_only, JsonFields};
use crate::input::{read_text_file, FileText, InputError};
use crate::output::{escaped, json, line, similarity};
use crate::support::context::Context;
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{Database, DocumentBuf, Query, QueryResult};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Find stored near-duplicates of a text, a file, a stored key, or many
/// queries from JSON Lines (one JSON result line per query).
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["text", "query_file", "key", "jsonl"]))]
#[command(
    after_help = "Exit code 1 when nothing is found (as grep), unless --allow-empty.\n\
                        Examples:\n  lshdb query pages.lshdb --text 'breaking news ...' --limit 5\n  \
                        lshdb query pages.lshdb --key https://a.example/1 --top 10 --explain\n  \
                        lshdb query pages.lshdb --file a.txt --threshold 1   # exact duplicates\n  \
                        lshdb query pages.lshdb --text 'some text' --simhash 3\n  \
                        lshdb query pages.lshdb --file passage.txt --containment 0.8   # where it came from\n  \
                        lshdb query pages.lshdb --jsonl queries.jsonl > results.jsonl"
)]
pub struct Args {
    /// The database file.
    file: PathBuf,
    /// Query text.
    #[arg(long)]
    text: Option<String>,
    /// Read the query text from a file.
    #[arg(long = "file", value_name = "PATH")]
    query_file: Option<PathBuf>,
    /// Near-duplicates of the stored document with this key.
    #[arg(long)]
    key: Option<String>,
    /// Many queries, one per record (JSON Lines, CSV or Parquet; fields
    /// and --format as in `add`); `-` is standard input. Output: one JSON
    /// line per query.
    #[arg(long, visible_alias = "records", value_name = "FILE|-")]
    jsonl: Option<String>,
    #[command(flatten)]
    fields: JsonFields,
    /// Verified similarity a hit needs (default: the index threshold); 1
    /// finds exact duplicates (identical shingle sets).
    #[arg(long, value_parser = parse_query_threshold, value_name = "T")]
    threshold: Option<f64>,
    /// At most this many hits, best first.
    #[arg(long)]
    limit: Option<usize>,
    /// The K most similar documents, whatever their similarity (every
    /// candidate verified; --explain shows a recall estimate).
    #[arg(long, value_name = "K", conflicts_with_all = ["threshold", "limit"])]
    top: Option<usize>,
    /// SimHash search: documents whose fingerprint is within D bits of the
    /// query's (a database created with --simhash).
    #[arg(long, value_name = "D", conflicts_with_all = ["threshold", "top", "jsonl", "explain"])]
    simhash: Option<u32>,
    /// Containment search: documents holding at least this fraction T of
    /// the query's shingles (|Q ∩ X| / |Q| ≥ T, T in (0, 1]), for finding
    /// where a passage came from; prints containment, Jaccard and key.
    #[arg(long, value_name = "T", value_parser = parse_query_threshold,
          conflicts_with_all = ["threshold", "top", "simhash"])]
    containment: Option<f64>,
    /// With --containment: compare the query with every stored set instead
    /// of probing the containment index (exact recall, linear time).
    #[arg(long, requires = "containment")]
    exhaustive: bool,
    /// Exit with 0 also when nothing is found.
    #[arg(long)]
    allow_empty: bool,
    /// Read at most this many postings per bucket.
    #[arg(long)]
    max_bucket: Option<usize>,
    /// Report what each step of the plan did and cost.
    #[arg(long)]
    explain: bool,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

impl Args {
    fn configure<'db>(&self, mut query: Query<'db>) -> Query<'db> {
        if let Some(t) = self.threshold {
            query = query.threshold(t);
        }
        if let Some(k) = self.limit {
            query = query.limit(k);
        }
        if let Some(n) = self.max_bucket {
            query = query.max_bucket(n);
        }
        if let Some(k) = self.top {
            query = query.top(k);
        }
        query
    }

    /// The outcome when `found` is false: exit code 1, as grep, unless
    /// `--allow-empty`.
    fn outcome(&self, found: bool) -> Outcome {
        if found || self.allow_empty {
            Outcome::Ok
        } else {
            Outcome::Empty
        }
    }
}

/// Parses a query threshold: in (0, 1], where 1 means exact duplicates.
fn parse_query_threshold(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t == 1.0 => Ok(t),
        _ => crate::args::parse_threshold(s)
            .map_err(|e| e.replace("strictly between 0 and 1", "above 0 and at most 1")),
    }
}

pub fn run(args: &Args, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    if let Some(path) = &args.jsonl {
        return run_jsonl(&db, args, path, ctx);
    }
    let (label, query) = if let Some(text) = &args.text {
        (serde_json::Value::Null, db.query(text))
    } else if let Some(path) = &args.query_file {
        let text = match read_text_file(path)
            .map_err(crate::io_context("cannot read query file", path))?
        {
            FileText::Text(text) => text,
            FileText::Binary => return fail(format!("{} is not a text file", path.display())),
            FileText::TooLarge => {
                return fail(format!(
                    "{} is too large for a document: larger than the limit of {} bytes",
                    path.display(),
                    lshdb::MAX_DOCUMENT_BYTES
                ))
            }
        };
        (json!(path.to_string_lossy()), db.query(&text))
    } else if let Some(key) = &args.key {
        (json!(key), db.query_key(key))
    } else {
        return fail("give --text, --file, --key or --jsonl");
    };
    if let Some(distance) = args.simhash {
        return run_simhash(args, &label, args.configure(query), distance);
    }
    if let Some(t) = args.containment {
        let result = args
            .configure(query)
            .containment(t)
            .exhaustive(args.exhaustive)
            .run()?;
        crate::containment::print(&label, t, &result, args.json, args.explain);
        return Ok(args.outcome(!result.hits.is_empty()));
    }
    let result = args.configure(query).run()?;
    if args.json {
        json(&result_json(&label, &result, args.explain));
    } else {
        crate::render::print_warnings(&result.explain.warnings);
        for hit in &result.hits {
            line(format_args!(
                "{}\t{}",
                similarity(hit.similarity),
                escaped(&hit.key)
            ));
        }
        if args.explain {
            crate::render::print_explain(&result.explain);
        }
        if result.hits.is_empty() {
            eprintln!("lshdb: no near-duplicates found");
        }
    }
    Ok(args.outcome(!result.hits.is_empty()))
}

/// `query --simhash D`: Hamming search on the SimHash index.
fn run_simhash(
    args: &Args,
    label: &serde_json::Value,
    query: Query<'_>,
    distance: u32,
) -> CmdResult {
    let (hits, truncated) = query.near_simhash(distance).map_err(|err| match err {
        lshdb::Error::IndexDisabled(_) => CliError::Message(format!(
            "{} has no SimHash index; create the database with `lshdb create FILE --simhash`",
            args.file.display()
        )),
        other => other.into(),
    })?;
    let warnings: Vec<String> = if truncated.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "{} SimHash block(s) held more than the cap and were cut there; for an exhaustive \
             answer run the query again with `--max-bucket {}`",
            truncated.len(),
            args.max_bucket
                .unwrap_or(lshdb::DEFAULT_MAX_BUCKET)
                .saturating_mul(10)
        )]
    };
    if args.json {
        let hits: Vec<_> = hits
            .iter()
            .map(|h| json!({"key": h.key, "distance": h.distance, "fingerprint": format!("{:016x}", h.fingerprint)}))
            .collect();
        json(&json!({"query": label, "hits": hits, "warnings": warnings}));
    } else {
        for warning in &warnings {
            eprintln!("lshdb: note: {warning}");
        }
        for hit in &hits {
            line(format_args!("{}\t{}", hit.distance, escaped(&hit.key)));
        }
        if hits.is_empty() {
            eprintln!("lshdb: nothing found within {distance} bit(s)");
        }
    }
    Ok(args.outcome(!hits.is_empty()))
}

fn run_jsonl(db: &Database, args: &Args, path: &str, ctx: &Context) -> CmdResult {
    ctx.interrupt().catch_interrupt();
    let stopped = |answered: u64| {
        CliError::Interrupted(format!(
            "interrupted: stopped after the {answered} result line(s) printed above"
        ))
    };
    let reader = match args.fields.open(path, Vec::new(), ctx.interrupt()) {
        Err(_) if ctx.interrupt().interrupted() => return Err(stopped(0)),
        reader => reader?,
    };
    let mut answered = 0u64;
    let mut found = false;
    for item in reader {
        if ctx.interrupt().interrupted() {
            return Err(stopped(answered));
        }
        match item {
            Ok(record) => {
                let query = match &record.doc {
                    DocumentBuf::Text(text) => db.query(text),
                    DocumentBuf::Shingles(_) => {
                        eprintln!("lshdb: skipped line {}: queries need text", record.line);
                        continue;
                    }
                };
                let label = json!(record.key);
                let answered_one = match args.containment {
                    Some(t) => args
                        .configure(query)
                        .containment(t)
                        .exhaustive(args.exhaustive)
                        .run()
                        .map(|result| {
                            json(&crate::containment::result_json(
                                &label,
                                t,
                                &result,
                                args.explain,
                            ));
                            !result.hits.is_empty()
                        }),
                    None => args.configure(query).run().map(|result| {
                        json(&result_json(&label, &result, args.explain));
                        !result.hits.is_empty()
                    }),
                };
                match answered_one {
                    Ok(hit) => {
                        found |= hit;
                        answered += 1;
                        ctx.interrupt()
                            .note_progress(format!("{answered} result line(s) printed"));
                    }
                    Err(lshdb::Error::EmptyDocument { .. }) => {
                        eprintln!("lshdb: skipped line {}: empty text", record.line)
                    }
                    Err(err) => return Err(CliError::from(err)),
                }
            }
            Err(InputError::Bad { line, reason }) => {
                eprintln!("lshdb: skipped line {line}: {reason}")
            }
            Err(InputError::Io(err)) => {
                return fail(format!("reading input {path} failed: {err}"));
            }
        }
    }
    if ctx.interrupt().interrupted() {
        return Err(stopped(answered));
    }
    Ok(args.outcome(found))
}

/// One query's JSON line: its similarity hits.
fn result_json(label: &Value, result: &QueryResult, explain: bool) -> Value {
    let hits = result.hits.iter();
    let hits = hits.map(|h| json!({"key": h.key, "similarity": h.similarity}));
    let explain = explain.then(|| crate::render::explain_json(&result.explain));
    crate::render::query_json(label, hits.collect(), &result.explain.warnings, explain)
}
