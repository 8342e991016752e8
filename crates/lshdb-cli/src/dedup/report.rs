//! What `dedup` says at the end: the summary of a finished run, and the
//! message of an interrupted one.

use super::{keep_name, Args, Counts};
use crate::output::{json, line};
use crate::CliError;
use serde_json::json;
use std::time::Instant;

/// What a run that stopped before its end wrote: nothing, or (without
/// `--out`) the kept records decided so far, to standard output.
pub(super) fn written(args: &Args, counts: &Counts) -> String {
    match (&args.out, counts.kept) {
        (None, n) if n > 0 => format!(
            "{n} kept record(s) went to standard output before the stop (an incomplete output); no output file was written"
        ),
        _ => "no output was written".to_owned(),
    }
}

/// The message of a run stopped by Ctrl-C: what was written, what is
/// committed.
pub(super) fn interrupted_message(args: &Args, counts: &Counts) -> CliError {
    let written = written(args, counts);
    CliError::Interrupted(match &args.db {
        Some(path) => format!(
            "interrupted: {written}; the records kept so far are committed to {}; run the same command again to finish (it resumes)",
            path.display()
        ),
        None => format!("interrupted: {written}"),
    })
}

/// Prints the summary: on standard output with `--out`, else on standard
/// error (standard output holds the kept records).
pub(super) fn summary(
    args: &Args,
    counts: &Counts,
    start: Instant,
    threshold: f64,
    resuming: bool,
) {
    let seconds = start.elapsed().as_secs_f64();
    let summary =
        if args.json {
            let mut summary = json!({
                "read": counts.read, "kept": counts.kept, "dropped": counts.dropped,
                "bad": counts.bad.total, "rejected": counts.bad.total, "seconds": seconds,
                "threshold": threshold, "keep": keep_name(&args.keep), "resumed": resuming,
            });
            if args.window.is_some() {
                summary["expired"] = json!(counts.expired);
            }
            summary.to_string()
        } else {
            format!(
            "read {} record(s): {} kept, {} dropped as near-duplicates, {} rejected; {:.1} s{}{}",
            counts.read,
            counts.kept,
            counts.dropped,
            counts.bad.total,
            seconds,
            if resuming { " (resumed)" } else { "" },
            match args.window {
                Some(_) => format!("; {} stored record(s) fell out of the window", counts.expired),
                None => String::new(),
            }
        )
        };
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
}
