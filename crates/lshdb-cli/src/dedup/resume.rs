//! Resuming an unfinished `dedup --db` run. A run records, in the label
//! [`RUN_LABEL`], its inputs, its keep policy and how many documents the
//! database held when it started; it clears the label when it finishes.
//! A run of the same command that finds the label set (after Ctrl-C, a
//! kill, or any error) first removes the documents the unfinished run
//! stored — those after the first `start` in id order, which is the order
//! they were stored in — and then runs from the start. So its outputs are
//! exactly an uninterrupted run's, and earlier runs' documents are never
//! taken for this run's.

use crate::interrupt::Interrupt;
use crate::{fail, CliError};
use lshdb::Database;
use serde_json::json;

/// The label naming the inputs of a run that has not finished, so that a
/// rerun of the same command resumes it (see `docs/cli.md`).
pub(super) const RUN_LABEL: &str = "dedup.unfinished";

/// Documents removed per commit when rolling back.
const REMOVE_BATCH: usize = 10_000;

/// Marks the start of a run of `inputs` under `keep` in `db`; when the
/// label names an unfinished run of the same command, first removes what
/// that run stored. Then `prepare` runs (`--window`'s expiry), before the
/// run's start is taken, so that what it removes never shifts the start.
/// Returns whether it rolled back (the run resumes).
pub(super) fn begin(
    db: &Database,
    inputs: &[String],
    keep: &str,
    interrupt: &Interrupt,
    prepare: impl FnOnce() -> Result<(), CliError>,
) -> Result<bool, CliError> {
    let label = db.label(RUN_LABEL)?.unwrap_or_default();
    let unfinished: Option<serde_json::Value> = serde_json::from_str(&label).ok();
    let start = unfinished.as_ref().and_then(|u| {
        let same = u["inputs"] == json!(inputs) && u["keep"] == json!(keep);
        u["start"].as_u64().filter(|_| same)
    });
    let resuming = match start {
        Some(start) => roll_back(db, start, interrupt)?,
        None => false,
    };
    prepare()?;
    // After a roll-back the database holds `start` documents again, less
    // what `prepare` removed.
    let start = db.len()?;
    let run = json!({"inputs": inputs, "keep": keep, "start": start}).to_string();
    if run.len() > lshdb::MAX_LABEL_BYTES {
        // Too many inputs to name: such a run cannot be resumed.
        db.set_label(RUN_LABEL, "")?;
        return Ok(false);
    }
    db.set_label(RUN_LABEL, &run)?;
    Ok(resuming)
}

/// Marks the run finished.
pub(super) fn end(db: &Database) -> Result<(), CliError> {
    Ok(db.set_label(RUN_LABEL, "")?)
}

/// Removes every document after the first `start` in id order: those an
/// unfinished run stored. Returns false, removing nothing, when the
/// database holds fewer than `start` (changed since: the run cannot be
/// told apart). Interrupted, it stops between commits (the label stays,
/// and the next rerun removes the rest).
fn roll_back(db: &Database, start: u64, interrupt: &Interrupt) -> Result<bool, CliError> {
    let mut seen = 0u64;
    let mut keys = Vec::new();
    db.for_each(|doc| {
        seen += 1;
        if seen > start {
            keys.push(doc.key);
        }
        !interrupt.interrupted()
    })?;
    if interrupt.interrupted() {
        return fail("interrupted");
    }
    if seen < start {
        return Ok(false);
    }
    for chunk in keys.chunks(REMOVE_BATCH) {
        if interrupt.interrupted() {
            return fail("interrupted");
        }
        let mut batch = db.batch()?;
        for key in chunk {
            batch.remove(key)?;
        }
        batch.commit()?;
    }
    Ok(true)
}
