//! `lshdb expire`: remove every document older than a time, walking the
//! time index, a bounded number per commit (`Database::expire_with`).

use crate::args::{open_waiting, Wait};
use crate::output::{json, line};
use crate::support::context::Context;
use crate::support::when::{now, parse_when, rfc3339, When};
use crate::{CliError, CmdResult, Outcome};
use serde_json::json;
use std::path::PathBuf;

/// Remove the documents stamped before a time (needs the time index:
/// `create --timestamps`, or `rebuild --timestamps`).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb expire pages.lshdb --older-than 30d\n  \
                  lshdb expire pages.lshdb --older-than 2026-01-01T00:00:00Z --json"
)]
pub struct Args {
    /// The database file.
    file: PathBuf,
    /// Remove documents stamped before this time: a duration before now
    /// (45s, 90m, 12h, 30d), an RFC 3339 time (2026-01-31T00:00:00Z) or
    /// seconds since the Unix epoch.
    #[arg(long, value_parser = parse_when, value_name = "TIME")]
    older_than: When,
    /// Documents removed per commit.
    #[arg(long, default_value_t = lshdb::EXPIRE_BATCH, value_name = "N")]
    batch: usize,
    /// One JSON object: {"removed", "commits", "older_than", "stopped"}
    /// (older_than in seconds since the Unix epoch).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

pub fn run(args: &Args, ctx: &Context) -> CmdResult {
    let older_than = args.older_than.resolve(now());
    let db = open_waiting(&args.file, &args.wait, ctx)?;
    ctx.interrupt().catch_interrupt();
    let report = db.expire_with(older_than, args.batch, |r| {
        ctx.interrupt().note_progress(format!(
            "expired {} document(s) in {} commit(s)",
            r.removed, r.commits
        ));
        !ctx.interrupt().interrupted()
    })?;
    if report.stopped {
        return Err(CliError::Interrupted(format!(
            "interrupted: {} document(s) older than {} removed in {} commit(s); run it again \
             for the rest",
            report.removed,
            rfc3339(older_than),
            report.commits
        )));
    }
    if args.json {
        json(&json!({
            "removed": report.removed,
            "commits": report.commits,
            "older_than": older_than,
            "stopped": report.stopped,
        }));
    } else {
        line(format_args!(
            "expired {} document(s) older than {} in {} commit(s)",
            report.removed,
            rfc3339(older_than),
            report.commits
        ));
    }
    Ok(Outcome::Ok)
}
