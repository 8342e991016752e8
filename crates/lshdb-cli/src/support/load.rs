//! Records in, a bulk load, a report out: shared by the commands that load
//! documents (`add`, `import`). Bad records are counted and shown a few
//! times per kind ([`Limited`]), the load commits in batches or dedups on
//! write, notes its progress for Ctrl-C, and [`report`] prints what is
//! committed and turns an early stop into the right error.

use crate::input::{InputError, Record};
use crate::output::{line, progress, short, similarity};
use crate::records::Carried;
use crate::support::context::Context;
use crate::{fail, CliError, CmdResult, Outcome};
use indicatif::ProgressBar;
use lshdb::{AsDocument, BulkOptions, BulkReport, Database, Unique};
use std::cell::RefCell;

/// How many records with the same error are described before the rest are
/// only counted.
const SHOWN_PER_ERROR: u64 = 5;

/// Messages grouped by kind: the first [`SHOWN_PER_ERROR`] of each kind
/// kept, the rest only counted, so a thousand lines with the same error
/// print six lines.
#[derive(Default)]
pub struct Limited {
    /// Kept messages, in order.
    shown: Vec<String>,
    /// (kind, count), in order of first appearance.
    kinds: Vec<(String, u64)>,
    /// Messages in all.
    pub total: u64,
}

impl Limited {
    /// Counts a message of `kind`; returns whether it is to be shown.
    fn count(&mut self, kind: &str) -> bool {
        self.total += 1;
        let count = match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.kinds.push((kind.to_owned(), 1));
                1
            }
        };
        count <= SHOWN_PER_ERROR
    }

    /// Keeps `message` unless `kind` has been seen often enough.
    pub fn push(&mut self, kind: &str, message: impl FnOnce() -> String) {
        if self.count(kind) {
            self.shown.push(message());
        }
    }

    /// The lines to print: the kept messages, then one count per kind with
    /// more than were shown (`what`: "line(s)", "document(s)").
    pub fn lines(&self, what: &str) -> Vec<String> {
        let mut out = self.shown.clone();
        for (kind, n) in &self.kinds {
            if *n > SHOWN_PER_ERROR {
                out.push(format!(
                    "… and {} more {what} with the same error ({kind}); {n} in all",
                    n - SHOWN_PER_ERROR
                ));
            }
        }
        out
    }
}

/// Bad records seen so far, and the one that stopped a strict load.
#[derive(Default)]
pub struct Skips {
    pub bad: Limited,
    pub fatal: Option<String>,
    /// The input's name, for read errors (empty: "the input").
    pub input: String,
}

/// The kind of a bad record's reason, for counting repeats: a line's reason
/// up to its details (`malformed JSON: ...`), a file's after its path.
fn reason_kind(line: u64, reason: &str) -> &str {
    if line == 0 {
        reason.rsplit_once(": ").map_or(reason, |(_, kind)| kind)
    } else {
        reason.split_once(": ").map_or(reason, |(kind, _)| kind)
    }
}

/// Turns an input stream into (key, document) pairs for a bulk load, each
/// document with the timestamp and priority its record carried,
/// recording bad records in `skips` (stopping at the first with `strict`).
pub fn good_records<'a>(
    input: impl Iterator<Item = Result<Record, InputError>> + 'a,
    skips: &'a RefCell<Skips>,
    strict: bool,
) -> impl Iterator<Item = (String, Carried)> + 'a {
    input
        .map_while(move |item| match item {
            Ok(Record {
                key,
                doc,
                at,
                priority,
                ..
            }) => Some(Some((key, Carried { doc, at, priority }))),
            Err(InputError::Io(err)) => {
                let mut skips = skips.borrow_mut();
                let input = if skips.input.is_empty() {
                    "the input".to_owned()
                } else {
                    format!("input {}", skips.input)
                };
                skips.fatal = Some(format!("reading {input} failed: {err}"));
                None
            }
            Err(InputError::Bad { line, reason }) => {
                // File records have no line number; their reason names the file.
                let at = if line == 0 {
                    "file".to_owned()
                } else {
                    format!("line {line}")
                };
                if strict {
                    skips.borrow_mut().fatal = Some(format!("{at}: {reason} (--strict)"));
                    None
                } else {
                    let kind = reason_kind(line, &reason).to_owned();
                    let message = || format!("skipped {at}: {reason}");
                    skips.borrow_mut().bad.push(&kind, message);
                    Some(None)
                }
            }
        })
        .flatten()
}

/// What a load did, all of it committed: the library's [`BulkReport`]
/// (for a `--unique` load, filled in from its chunks) and the
/// near-duplicates `--unique` left out.
pub struct Summary {
    /// The library's report; its `rejected` holds the last commit's.
    pub report: BulkReport,
    /// The first [`KEPT_REJECTIONS`] documents refused, with the reason,
    /// for `--json` (the report counts them all).
    pub rejected: Vec<(String, String)>,
    /// Near-duplicates not added (`--unique`).
    pub duplicates: u64,
    text: String,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Ends a load: the skipped records on standard error, the summary on
/// standard output, and an error when the load stopped early (a fatal
/// record, exit 1, or Ctrl-C, exit 130), saying that what is reported is
/// committed, or when it added nothing at all (exit 1).
pub fn report(summary: &Summary, skips: Skips, as_json: bool, ctx: &Context) -> CmdResult {
    let interrupt = ctx.interrupt();
    for message in skips.bad.lines("bad record(s)") {
        eprintln!("lshdb: {message}");
    }
    if as_json {
        let complete = skips.fatal.is_none() && !interrupt.interrupted();
        crate::output::json(&crate::render::bulk_json(
            &summary.report,
            &summary.rejected,
            summary.duplicates,
            skips.bad.total,
            complete,
        ));
    } else {
        line(format_args!(
            "{summary}; {} bad record(s) skipped",
            skips.bad.total
        ));
    }
    if let Some(fatal) = skips.fatal {
        return fail(format!(
            "stopped at {fatal}; everything reported above is committed"
        ));
    }
    if interrupt.interrupted() {
        return Err(CliError::Interrupted(
            "interrupted: everything reported above is committed; run the command again to continue"
                .to_owned(),
        ));
    }
    let rejected = summary.report.rejected_count;
    if summary.report.inserted == 0 && summary.duplicates == 0 {
        return fail(if skips.bad.total + rejected == 0 {
            "nothing was added: the input holds no records"
        } else {
            "nothing was added: every record was skipped or rejected (see above)"
        });
    }
    Ok(Outcome::Ok)
}

/// A refused document's reason without its key (which the message shows
/// shortened), and the kind of reason for counting repeats.
fn rejection(err: &lshdb::Error) -> (&'static str, String) {
    match err {
        lshdb::Error::EmptyDocument { .. } => (
            "empty",
            "empty after normalisation; there is nothing to index".to_owned(),
        ),
        lshdb::Error::DocumentTooLarge { len, max, .. } => (
            "too large",
            format!("{len} bytes, above the limit of {max}; split it or index a part of it"),
        ),
        lshdb::Error::InvalidKey { .. } => ("bad key", err.to_string()),
        other => ("other", other.to_string()),
    }
}

/// Refused documents a load's `--json` summary lists; the rest are counted.
pub const KEPT_REJECTIONS: usize = 1000;

/// A load's refused documents: the messages to print, and the first
/// [`KEPT_REJECTIONS`] for `--json`. Bounded however many come.
#[derive(Default)]
struct Rejections {
    messages: Limited,
    kept: Vec<(String, String)>,
}

impl Rejections {
    /// Counts a refused document, keeping its message unless many like it
    /// came before.
    fn add(&mut self, key: &str, err: &lshdb::Error) {
        let (kind, reason) = rejection(err);
        self.messages
            .push(kind, || format!("rejected `{}`: {reason}", short(key)));
        if self.kept.len() < KEPT_REJECTIONS {
            self.kept.push((key.to_owned(), err.to_string()));
        }
    }
}

/// What a bulk load has committed so far.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Committed {
    inserted: u64,
    replaced: u64,
    commits: u64,
    rejected: u64,
}

impl Committed {
    fn text(&self) -> String {
        format!(
            "added {} document(s) ({} replaced) in {} commit(s); {} rejected",
            self.inserted, self.replaced, self.commits, self.rejected
        )
    }
}

/// A load that failed part-way (a full disk, ...): the summary of what is
/// committed, for standard output, and the error, saying it is kept.
fn failed_load(committed: &str, added: u64, err: &CliError, ctx: &Context) -> (String, String) {
    (
        format!("{committed}; stopped by an error"),
        format!(
            "{}; the {added} document(s) reported above are committed and kept",
            crate::InContext(err, ctx)
        ),
    )
}

/// Prints a load's refused documents, and the summary and error of a load
/// that failed part-way.
fn end_load<T>(
    result: Result<T, CliError>,
    rejections: &Limited,
    committed: &str,
    added: u64,
    ctx: &Context,
) -> Result<T, CliError> {
    for message in rejections.lines("document(s)") {
        eprintln!("lshdb: {message}");
    }
    result.map_err(|err| {
        let (summary, error) = failed_load(committed, added, &err, ctx);
        if ctx.json() {
            crate::output::json(&serde_json::json!({
                "inserted": added, "complete": false, "stopped_by_error": true,
            }));
        } else {
            line(summary);
        }
        CliError::Message(error)
    })
}

/// Bulk load with a spinner counting documents; returns the summary.
pub fn load<D: AsDocument + Send>(
    db: &Database,
    records: impl Iterator<Item = (String, D)>,
    batch: usize,
    ctx: &Context,
) -> Result<Summary, CliError> {
    let bar = progress(None, "adding");
    let counter = bar.clone();
    let loader = Loader {
        db,
        batch,
        bar: &bar,
        ctx,
    };
    loader.bulk(records.inspect(move |_| counter.inc(1)))
}

/// A load's setting: the database, the documents per commit, the bar the
/// caller moves as records are read (it shows what is committed), and the
/// run's context.
#[derive(Clone, Copy)]
pub struct Loader<'a> {
    pub db: &'a Database,
    pub batch: usize,
    pub bar: &'a ProgressBar,
    pub ctx: &'a Context,
}

impl Loader<'_> {
    /// A bulk load of `records`; returns the summary.
    pub fn bulk<D: AsDocument + Send>(
        self,
        records: impl Iterator<Item = (String, D)>,
    ) -> Result<Summary, CliError> {
        let interrupt = self.ctx.interrupt();
        let mut committed = Committed::default();
        let mut rejections = Rejections::default();
        // The report keeps a commit's worth of rejections, not a stream's:
        // each is counted here as its commit comes.
        let options = BulkOptions::default()
            .batch(self.batch)
            .max_rejected(self.batch.max(1));
        let result = self.db.insert_bulk(records, &options, |r| {
            let new = (r.rejected_count - committed.rejected) as usize;
            // At most a commit's worth: `max_rejected` is the batch.
            for (key, err) in &r.rejected[r.rejected.len().saturating_sub(new)..] {
                rejections.add(key, err);
            }
            committed = Committed {
                inserted: r.inserted,
                replaced: r.replaced,
                commits: r.commits,
                rejected: r.rejected_count,
            };
            interrupt.note_progress(committed.text());
            self.bar
                .set_message(format!("{} added", committed.inserted));
            !interrupt.interrupted()
        });
        self.bar.finish_and_clear();
        let report = end_load(
            result.map_err(CliError::from),
            &rejections.messages,
            &committed.text(),
            committed.inserted,
            self.ctx,
        )?;
        Ok(Summary {
            report,
            rejected: rejections.kept,
            duplicates: 0,
            text: committed.text(),
        })
    }
}

/// Says on standard output that `key` was not added, being a
/// near-duplicate of `hit`.
fn print_duplicate(key: &str, hit: &lshdb::Hit) {
    line(format_args!(
        "duplicate: `{}` is a near-duplicate of `{}` ({}); not added",
        short(key),
        short(&hit.key),
        similarity(hit.similarity)
    ));
}

/// Documents per `insert_unique_many` call of a dedup-on-write load.
const UNIQUE_CHUNK: usize = 1024;

impl Loader<'_> {
    /// Dedup-on-write load, `insert_unique_many` over chunks of documents,
    /// committing every `batch` documents; Ctrl-C is noticed between chunks.
    pub fn unique(
        self,
        records: impl Iterator<Item = (String, Carried)>,
        threshold: f64,
    ) -> Result<Summary, CliError> {
        let interrupt = self.ctx.interrupt();
        // What is committed.
        let mut report = BulkReport::default();
        let mut duplicates = 0u64;
        let mut rejections = Rejections::default();
        let text = |report: &BulkReport, duplicates: u64| {
            format!(
                "added {} document(s); {duplicates} near-duplicate(s) not added; {} rejected",
                report.inserted, report.rejected_count
            )
        };
        let mut records = records;
        let result = (|| -> Result<(), CliError> {
            let mut done = false;
            while !done && !interrupt.interrupted() {
                let mut txn = self.db.batch()?;
                // The open transaction's counts.
                let (mut new, mut dup, mut rejected) = (0u64, 0u64, 0u64);
                let mut left = self.batch.max(1);
                while left > 0 && !done && !interrupt.interrupted() {
                    // Prepared in parallel, checked in order (one call per chunk).
                    let want = left.min(UNIQUE_CHUNK);
                    let chunk: Vec<(String, Carried)> = records.by_ref().take(want).collect();
                    done = chunk.len() < want;
                    left -= chunk.len();
                    let results = txn.insert_unique_many(&chunk, threshold)?;
                    for ((key, _), result) in chunk.into_iter().zip(results) {
                        match result {
                            Ok(Unique::Inserted) => new += 1,
                            Ok(Unique::Duplicate(hit)) => {
                                dup += 1;
                                print_duplicate(&key, &hit);
                            }
                            Err(
                                err @ (lshdb::Error::EmptyDocument { .. }
                                | lshdb::Error::InvalidKey { .. }
                                | lshdb::Error::DocumentTooLarge { .. }),
                            ) => {
                                rejections.add(&key, &err);
                                rejected += 1;
                            }
                            Err(err) => return Err(err.into()),
                        }
                    }
                }
                txn.commit()?;
                report.commits += 1;
                report.inserted += new;
                report.rejected_count += rejected;
                duplicates += dup;
                interrupt.note_progress(text(&report, duplicates));
                self.bar.set_message(format!("{} added", report.inserted));
            }
            Ok(())
        })();
        self.bar.finish_and_clear();
        let summary = text(&report, duplicates);
        end_load(
            result,
            &rejections.messages,
            &summary,
            report.inserted,
            self.ctx,
        )?;
        Ok(Summary {
            report,
            rejected: rejections.kept,
            duplicates,
            text: summary,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_load_reports_what_is_committed_before_the_error() {
        let committed = Committed {
            inserted: 20,
            replaced: 1,
            commits: 2,
            rejected: 0,
        };
        let err = CliError::from(std::io::Error::from_raw_os_error(28));
        let ctx = Context::default();
        let (summary, error) = failed_load(&committed.text(), committed.inserted, &err, &ctx);
        assert_eq!(
            summary,
            "added 20 document(s) (1 replaced) in 2 commit(s); 0 rejected; stopped by an error"
        );
        assert!(
            error.starts_with("I/O error: No space left on device"),
            "{error}"
        );
        assert!(
            error.ends_with("; the 20 document(s) reported above are committed and kept"),
            "{error}"
        );
    }

    #[test]
    fn repeated_errors_are_shown_a_few_times_then_counted() {
        let mut limited = Limited::default();
        for i in 0..1000 {
            limited.push("malformed JSON", || {
                format!("skipped line {i}: malformed JSON")
            });
        }
        limited.push("missing field `text`", || "skipped line 1001".to_owned());
        let lines = limited.lines("bad record(s)");
        assert_eq!(lines.len(), 7, "{lines:?}");
        assert_eq!(lines[0], "skipped line 0: malformed JSON");
        assert_eq!(lines[5], "skipped line 1001");
        assert_eq!(
            lines[6],
            "… and 995 more bad record(s) with the same error (malformed JSON); 1000 in all"
        );
        assert_eq!(limited.total, 1001);
        assert_eq!(
            reason_kind(3, "malformed JSON: expected value"),
            "malformed JSON"
        );
        assert_eq!(reason_kind(0, "docs/a: b.txt: binary file"), "binary file");
    }
}
