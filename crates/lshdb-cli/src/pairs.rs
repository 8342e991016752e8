//! `lshdb pairs` and `lshdb groups`: every verified near-duplicate pair, and
//! the clusters they form.

use crate::args::{open_read_only, parse_threshold};
use crate::output::{escaped, json, line, progress, similarity, spinner};
use crate::{CliError, CmdResult, Outcome};
use lshdb::{Database, Groups};
use serde_json::json;
use std::path::PathBuf;

/// Every verified near-duplicate pair, one per line.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb pairs pages.lshdb --threshold 0.9 --json | head\n  lshdb pairs pages.lshdb --threshold 0.5 --exact"
)]
pub struct PairsArgs {
    /// The database file.
    file: PathBuf,
    /// Verified similarity a pair needs (default: the index threshold).
    #[arg(long, value_parser = parse_threshold)]
    threshold: Option<f64>,
    /// One JSON object per line: {"a": KEY, "b": KEY, "similarity": X}.
    #[arg(long)]
    json: bool,
    /// Exact mode: every pair by prefix filtering over all stored sets, no
    /// LSH (holds every set in memory; for corpora that fit).
    #[arg(long)]
    exact: bool,
}

pub fn pairs(args: &PairsArgs) -> CmdResult {
    let db = open_read_only(&args.file)?;
    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    crate::interrupt::catch_interrupt();
    let bar = progress(None, "pairs");
    let mut found = 0u64;
    let emit = |pair: lshdb::Pair| {
        found += 1;
        bar.inc(1);
        if args.json {
            json(&json!({"a": pair.a, "b": pair.b, "similarity": pair.similarity}));
        } else {
            line(format_args!(
                "{}\t{}\t{}",
                similarity(pair.similarity),
                escaped(&pair.a),
                escaped(&pair.b)
            ));
        }
        !crate::interrupt::interrupted()
    };
    if args.exact {
        db.exact_pairs(threshold, emit)?;
    } else {
        note_threshold(&db, threshold);
        db.pairs(threshold, emit)?;
    }
    bar.finish_and_clear();
    if crate::interrupt::interrupted() {
        return Err(CliError::Interrupted(format!(
            "interrupted: stopped after the {found} pair(s) printed above"
        )));
    }
    Ok(Outcome::Ok)
}

/// Near-duplicate groups (connected components of the pairs).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb groups pages.lshdb --threshold 0.8")]
pub struct GroupsArgs {
    /// The database file.
    file: PathBuf,
    /// Verified similarity that links two documents (default: the index
    /// threshold).
    #[arg(long, value_parser = parse_threshold)]
    threshold: Option<f64>,
    /// One JSON object per group:
    /// {"group": N, "members": [{"key": KEY, "similarity": X}, ...]}.
    #[arg(long)]
    json: bool,
}

pub fn groups(args: &GroupsArgs) -> CmdResult {
    let db = open_read_only(&args.file)?;
    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    note_threshold(&db, threshold);
    let bar = spinner("grouping");
    let groups = db.groups(threshold)?;
    bar.finish_and_clear();
    print_groups(&groups, threshold, args.json);
    Ok(Outcome::Ok)
}

/// Prints groups as text or JSON lines (shared with `scan`).
pub fn print_groups(groups: &Groups, threshold: f64, as_json: bool) {
    if as_json {
        for (i, members) in groups.groups.iter().enumerate() {
            json(&group_json(i, members));
        }
        return;
    }
    line(format_args!(
        "{} near-duplicate group(s) at similarity ≥ {threshold} ({} verified pairs)",
        groups.groups.len(),
        groups.pairs
    ));
    for (i, members) in groups.groups.iter().enumerate() {
        line("");
        line(format_args!(
            "group {} ({} documents)",
            i + 1,
            members.len()
        ));
        for (key, best) in members {
            line(format_args!("  {}\t{}", similarity(*best), escaped(key)));
        }
    }
}

/// One group as JSON.
pub fn group_json(index: usize, members: &[(String, f64)]) -> serde_json::Value {
    json!({
        "group": index + 1,
        "members": members.iter().map(|(k, s)| json!({"key": k, "similarity": s})).collect::<Vec<_>>(),
    })
}

/// Warns when a threshold below the index threshold will miss pairs.
pub fn note_threshold(db: &Database, threshold: f64) {
    let index = db.settings().threshold;
    if threshold < index {
        eprintln!(
            "lshdb: note: threshold {threshold} is below the index threshold {index}; \
             some pairs will be missed (rebuild with `lshdb rebuild {} --threshold {threshold}`)",
            crate::output::shell_arg(&db.path().to_string_lossy())
        );
    }
}
