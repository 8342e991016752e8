//! `lshdb pairs`, `lshdb groups`, `lshdb clusters` and `lshdb
//! similarity`: every verified near-duplicate pair, the clusters they
//! form, the clusters a file maintains with stable ids, and the similarity
//! of two stored documents.

use crate::args::{open_read_only, parse_threshold};
use crate::output::{escaped, json, line, progress, similarity, spinner};
use crate::support::context::Context;
use crate::support::groups::{note_threshold, print_groups};
use crate::{CliError, CmdResult, Outcome};
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

pub fn pairs(args: &PairsArgs, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    ctx.interrupt().catch_interrupt();
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
        !ctx.interrupt().interrupted()
    };
    if args.exact {
        db.exact_pairs(threshold, emit)?;
    } else {
        note_threshold(&db, threshold);
        db.pairs(threshold, emit)?;
    }
    bar.finish_and_clear();
    if ctx.interrupt().interrupted() {
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

pub fn groups(args: &GroupsArgs, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    note_threshold(&db, threshold);
    let bar = spinner("grouping");
    let groups = db.groups(threshold)?;
    bar.finish_and_clear();
    print_groups(&groups, threshold, args.json);
    Ok(Outcome::Ok)
}

/// The clusters the file maintains (created with `--clusters`), with
/// their stable ids, streamed.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb clusters pages.lshdb\n  lshdb clusters pages.lshdb --min-size 1 --json"
)]
pub struct ClustersArgs {
    /// The database file.
    file: PathBuf,
    /// Only clusters of at least this many members (1 lists documents
    /// without a near-duplicate too).
    #[arg(long, default_value_t = 2)]
    min_size: u64,
    /// One JSON object per cluster:
    /// {"id": N, "representative": KEY, "size": N, "members": [KEY, ...]};
    /// with --documents, one per document.
    #[arg(long)]
    json: bool,
    /// A line per document instead, in the order stored, with its cluster
    /// and its similarity to the representative:
    /// {"key": KEY, "cluster": N, "representative": KEY, "size": N,
    /// "similarity": X}.
    #[arg(long)]
    documents: bool,
}

pub fn clusters(args: &ClustersArgs, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    if !db.has_clusters() {
        return Err(CliError::Message(format!(
            "{} keeps no clusters: run `lshdb rebuild {} --clusters` to build them",
            args.file.display(),
            args.file.display()
        )));
    }
    ctx.interrupt().catch_interrupt();
    if args.documents {
        return document_clusters(&db, args, ctx);
    }
    for cluster in db.clusters()? {
        let cluster = cluster?;
        if cluster.size < args.min_size {
            continue;
        }
        let members: Vec<String> = db.members(cluster.id)?.collect::<lshdb::Result<_>>()?;
        if args.json {
            json(&json!({
                "id": cluster.id,
                "representative": cluster.representative,
                "size": cluster.size,
                "members": members,
            }));
        } else {
            line(format_args!(
                "cluster {}\t{} members\trepresentative {}",
                cluster.id,
                cluster.size,
                escaped(&cluster.representative)
            ));
            for member in &members {
                line(format_args!("\t{}", escaped(member)));
            }
        }
        if ctx.interrupt().interrupted() {
            return Err(CliError::Interrupted(
                "interrupted: stopped after the clusters printed above".into(),
            ));
        }
    }
    Ok(Outcome::Ok)
}

/// `clusters --documents`: every document with its cluster, streamed from
/// one snapshot ([`lshdb::Database::document_clusters`]).
fn document_clusters(db: &lshdb::Database, args: &ClustersArgs, ctx: &Context) -> CmdResult {
    for document in db.document_clusters()? {
        let document = document?;
        let cluster = &document.cluster;
        if cluster.size < args.min_size {
            continue;
        }
        if args.json {
            json(&json!({
                "key": document.key,
                "cluster": cluster.id,
                "representative": cluster.representative,
                "size": cluster.size,
                "similarity": document.similarity,
            }));
        } else {
            line(format_args!(
                "{}\tcluster {}\t{} to {}",
                escaped(&document.key),
                cluster.id,
                similarity(document.similarity),
                escaped(&cluster.representative)
            ));
        }
        if ctx.interrupt().interrupted() {
            return Err(CliError::Interrupted(
                "interrupted: stopped after the documents printed above".into(),
            ));
        }
    }
    Ok(Outcome::Ok)
}

/// The Jaccard similarity of two stored documents.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb similarity pages.lshdb page-1 page-2")]
pub struct SimilarityArgs {
    /// The database file.
    file: PathBuf,
    /// One document's key.
    a: String,
    /// The other's.
    b: String,
    /// One JSON object: {"a": KEY, "b": KEY, "similarity": X}.
    #[arg(long)]
    json: bool,
}

pub fn similarity_of(args: &SimilarityArgs, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    let Some(found) = db.similarity(&args.a, &args.b)? else {
        let missing = if db.get(&args.a)?.is_none() {
            &args.a
        } else {
            &args.b
        };
        return Err(lshdb::Error::NotFound(missing.clone()).into());
    };
    if args.json {
        json(&json!({"a": args.a, "b": args.b, "similarity": found}));
    } else {
        line(format_args!("{}", similarity(found)));
    }
    Ok(Outcome::Ok)
}
