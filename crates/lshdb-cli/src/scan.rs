//! `lshdb scan DIR`: the main job. Index every text file under a folder,
//! incrementally, and show the near-duplicate groups.
//!
//! Keys are paths relative to DIR (see [`crate::walk::key_of`]). The database (default
//! `DIR/.lshdb`) keeps each file's text, so a second scan can tell new,
//! changed, removed and unchanged files apart and touches only what
//! changed. The walk follows ripgrep's rules (`crate::walk`: .gitignore,
//! hidden files and folders skipped, globs, types); symbolic
//! links and anything that is not a regular file are not read; binary
//! files (a NUL byte or invalid UTF-8), empty files and files above the
//! document size limit are skipped and counted.
//!
//! A rescan removes the documents whose files are gone, so it guards
//! against pointing at the wrong database or the wrong folder: the
//! database records the folder it indexes (the label [`ROOT_LABEL`]), and a
//! scan that would remove more than half of the stored documents stops
//! before removing any.

use crate::args::{open_waiting, parse_threshold, Wait};
use crate::input::{read_regular_file, FileText};
use crate::interrupt::Interrupt;
use crate::output::{escaped, json, line, progress};
use crate::support::context::Context;
use crate::support::groups::{group_json, note_threshold, print_groups};
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{BulkOptions, Config, Database};
use serde_json::json;
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The label holding the folder a database was built from: its canonical
/// path, written as [`crate::walk::escape`] writes names.
pub const ROOT_LABEL: &str = "scan.root";

/// Index every text file under DIR and print the near-duplicate groups.
/// Run it again to pick up added, changed and deleted files.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  lshdb scan ~/notes\n  \
                        lshdb scan /usr/share/doc --db /tmp/doc.lshdb --threshold 0.7 --json")]
pub struct Args {
    /// The folder to index.
    dir: PathBuf,
    /// The database file (default: DIR/.lshdb).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Similarity threshold for groups (and for the index, when the
    /// database is created by this run). Default 0.8.
    #[arg(long, value_parser = parse_threshold)]
    threshold: Option<f64>,
    /// One JSON object: counts and groups.
    #[arg(long)]
    json: bool,
    /// Claim an existing database for DIR: one built by an older scan of
    /// this folder (which did not record it), or by a scan of this folder
    /// before it moved. Its documents without a file under DIR are removed.
    #[arg(long)]
    adopt: bool,
    #[command(flatten)]
    walk: crate::walk::WalkArgs,
    #[command(flatten)]
    wait: Wait,
    /// Remove the documents of missing files even when they are more than
    /// half of those stored (otherwise scan stops: the folder may be empty,
    /// unmounted or the wrong one).
    #[arg(long)]
    allow_removals: bool,
}

/// What the walk found.
#[derive(Default)]
struct Walk {
    files: Vec<(String, PathBuf)>,
    binary: u64,
    empty: u64,
    too_large: u64,
    unreadable: u64,
}

/// How the files compared with what is stored.
#[derive(Default)]
struct Counts {
    added: u64,
    changed: u64,
    unchanged: u64,
    /// Stored documents whose file is gone, removed.
    removed: u64,
    /// Keys of readable text files.
    seen: HashSet<String>,
}

pub fn run(args: &Args, ctx: &Context) -> CmdResult {
    check_folder(&args.dir)?;
    let root = crate::walk::escape(std::fs::canonicalize(&args.dir)?.as_os_str());
    let db_path = args.db.clone().unwrap_or_else(|| args.dir.join(".lshdb"));
    let db = open_or_create(args, ctx, &db_path, &root)?;
    ctx.interrupt().catch_interrupt();
    let skip = std::fs::canonicalize(&db_path).ok();
    let found = crate::walk::walk(&args.dir, &args.walk, skip.as_deref(), "")?;
    let mut walk = Walk {
        files: found.files,
        unreadable: found.unreadable,
        ..Walk::default()
    };

    // The stored keys (only keys: texts are compared one file at a time).
    let mut stored = HashSet::new();
    db.for_each(|doc| {
        stored.insert(doc.key);
        true
    })?;
    // Stored keys without a file: removed at the end. Checked before
    // anything is written, and again once every file has been read.
    let stored_count = stored.len();
    let walked: HashSet<&str> = walk.files.iter().map(|(k, _)| k.as_str()).collect();
    let missing = stored
        .iter()
        .filter(|k| !walked.contains(k.as_str()))
        .count();
    check_removals(args, &db_path, missing, stored_count, "nothing was changed")?;

    let mut counts = load_changed(&db, &mut walk, ctx.interrupt())?;
    let gone: Vec<String> = stored
        .into_iter()
        .filter(|k| !counts.seen.contains(k))
        .collect();
    check_removals(
        args,
        &db_path,
        gone.len(),
        stored_count,
        "the added and changed files are indexed, nothing was removed",
    )?;
    if !gone.is_empty() {
        let mut batch = db.batch()?;
        for key in &gone {
            batch.remove(key)?;
        }
        batch.commit()?;
    }
    counts.removed = gone.len() as u64;

    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    note_threshold(&db, threshold);
    let bar = progress(None, "grouping");
    let groups = db.groups(threshold)?;
    bar.finish_and_clear();
    report(args, &db, &db_path, &walk, &counts, (threshold, &groups))
}

/// Refuses a DIR that is missing or not a folder.
fn check_folder(dir: &Path) -> Result<(), CliError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => fail(format!("{} is not a folder", dir.display())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            fail(format!("{} does not exist", dir.display()))
        }
        Err(err) => Err(crate::io_context("cannot read", dir)(err)),
    }
}

/// Opens the database of an earlier scan of `root` (it must store texts),
/// or creates one that records `root`.
fn open_or_create(
    args: &Args,
    ctx: &Context,
    db_path: &Path,
    root: &str,
) -> Result<Database, CliError> {
    if db_path.exists() {
        let db = open_waiting(db_path, &args.wait, ctx)?;
        if !db.settings().store_text {
            return fail(format!(
                "{} does not store texts, which scan needs to notice changed files; \
                 scan into a new database with --db",
                db_path.display()
            ));
        }
        claim(&db, db_path, root, args)?;
        Ok(db)
    } else {
        let threshold = args.threshold.unwrap_or(0.8);
        let db = Database::create(db_path, Config::jaccard(threshold).store_text(true))?;
        ctx.interrupt().writing();
        db.set_label(ROOT_LABEL, root)?;
        Ok(db)
    }
}

/// Reads, compares and loads the added and changed files lazily (the bulk
/// load holds at most two chunks of texts in memory); counts the skipped
/// files into `walk`.
fn load_changed(db: &Database, walk: &mut Walk, interrupt: &Interrupt) -> Result<Counts, CliError> {
    let counts = RefCell::new(Counts::default());
    let failure = RefCell::new(None);
    let skips = RefCell::new(Walk::default());
    let bar = progress(Some(walk.files.len() as u64), "scanning");
    let pending = walk
        .files
        .iter()
        .take_while(|_| !interrupt.interrupted())
        .filter_map(|(key, path)| {
            bar.inc(1);
            let text = read_text(path, &mut skips.borrow_mut())?;
            let mut counts = counts.borrow_mut();
            counts.seen.insert(key.clone());
            match db.get(key) {
                Ok(Some(stored)) if stored.text.as_deref() == Some(text.as_str()) => {
                    counts.unchanged += 1;
                    None
                }
                Ok(Some(_)) => {
                    counts.changed += 1;
                    Some((key.clone(), text))
                }
                Ok(None) => {
                    counts.added += 1;
                    Some((key.clone(), text))
                }
                Err(err) => {
                    failure.borrow_mut().get_or_insert(err);
                    None
                }
            }
        });
    let report = db.insert_bulk(pending, &BulkOptions::default(), |_| {
        !interrupt.interrupted()
    })?;
    bar.finish_and_clear();
    for (key, err) in &report.rejected {
        eprintln!("lshdb: rejected `{}`: {err}", escaped(key));
    }
    if let Some(err) = failure.into_inner() {
        return Err(err.into());
    }
    if interrupt.interrupted() {
        return Err(CliError::Interrupted(
            "interrupted: files indexed so far are committed; run scan again to finish".to_owned(),
        ));
    }
    let skips = skips.into_inner();
    walk.binary += skips.binary;
    walk.empty += skips.empty;
    walk.too_large += skips.too_large;
    walk.unreadable += skips.unreadable;
    Ok(counts.into_inner())
}

/// A walked file's text; `None`, counted in `skips`, for a binary, empty,
/// too large or unreadable one.
fn read_text(path: &Path, skips: &mut Walk) -> Option<String> {
    match read_regular_file(path) {
        Ok(Some(FileText::Text(text))) if text.trim().is_empty() => skips.empty += 1,
        Ok(Some(FileText::Text(text))) => return Some(text),
        Ok(Some(FileText::Binary)) => skips.binary += 1,
        Ok(Some(FileText::TooLarge)) => skips.too_large += 1,
        Ok(None) | Err(_) => skips.unreadable += 1,
    }
    None
}

/// Prints the counts and the groups, as text or one JSON object.
fn report(
    args: &Args,
    db: &Database,
    db_path: &Path,
    walk: &Walk,
    counts: &Counts,
    (threshold, groups): (f64, &lshdb::Groups),
) -> CmdResult {
    let Counts {
        added,
        changed,
        unchanged,
        removed,
        ..
    } = *counts;
    if args.json {
        json(&json!({
            "db": db_path.to_string_lossy(),
            "files": walk.files.len(),
            "added": added,
            "changed": changed,
            "removed": removed,
            "unchanged": unchanged,
            "skipped": {"binary": walk.binary, "empty": walk.empty,
                        "too_large": walk.too_large, "unreadable": walk.unreadable},
            "documents": db.len()?,
            "threshold": threshold,
            "groups": groups.groups.iter().enumerate()
                .map(|(i, g)| group_json(i, g)).collect::<Vec<_>>(),
        }));
        return Ok(Outcome::Ok);
    }
    line(format_args!(
        "scanned {} file(s) under {} into {}: {added} added, {changed} changed, {removed} removed, {unchanged} unchanged",
        walk.files.len(),
        escaped(&args.dir.to_string_lossy()),
        escaped(&db_path.to_string_lossy())
    ));
    line(format_args!(
        "skipped {} binary, {} empty, {} too large, {} unreadable file(s); {} document(s) indexed",
        walk.binary,
        walk.empty,
        walk.too_large,
        walk.unreadable,
        db.len()?
    ));
    line("");
    print_groups(groups, threshold, false);
    Ok(Outcome::Ok)
}

/// Checks that an existing database was built by a scan of `root` (or,
/// with `--adopt`, records that it now is).
fn claim(db: &Database, db_path: &Path, root: &str, args: &Args) -> Result<(), CliError> {
    let recorded = db.label(ROOT_LABEL)?;
    if recorded.as_deref() == Some(root) {
        return Ok(());
    }
    if args.adopt {
        db.set_label(ROOT_LABEL, root)?;
        return Ok(());
    }
    match recorded {
        Some(other) => fail(format!(
            "{} was built by a scan of {other}, not of {root}; a scan would remove every \
             document without a file here. Scan {other} instead, give this folder its own \
             --db, or pass --adopt if {root} is that folder moved",
            db_path.display()
        )),
        None => fail(format!(
            "{} was not built by `lshdb scan` (it records no scanned folder); a scan of {root} \
             would remove every document without a file there. Give this folder its own \
             --db, or pass --adopt if an older scan of {root} built it",
            db_path.display()
        )),
    }
}

/// Stops a scan that would remove more than half of the stored documents,
/// unless `--allow-removals`.
fn check_removals(
    args: &Args,
    db_path: &Path,
    removing: usize,
    stored: usize,
    state: &str,
) -> Result<(), CliError> {
    if args.allow_removals || removing * 2 <= stored {
        return Ok(());
    }
    fail(format!(
        "scan would remove {removing} of the {stored} stored document(s) of {}, whose files \
         under {} are missing or no longer text; {state}. If the folder is empty, unmounted \
         or not the one indexed, fix that and scan again; to remove them, pass --allow-removals",
        db_path.display(),
        args.dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use crate::walk::escape;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn escape_is_one_to_one() {
        let cases: [&[u8]; 7] = [
            b"plain.txt",
            "café.txt".as_bytes(),
            b"caf\xe9.txt",
            b"caf\\xe9.txt",
            b"back\\slash",
            b"\xff\xfe",
            b"\\xff\\xfe",
        ];
        let escaped: Vec<String> = cases.iter().map(|c| escape(OsStr::from_bytes(c))).collect();
        assert_eq!(
            escaped,
            [
                "plain.txt",
                "café.txt",
                "caf\\xe9.txt",
                "caf\\\\xe9.txt",
                "back\\\\slash",
                "\\xff\\xfe",
                "\\\\xff\\\\xfe",
            ]
        );
        let distinct: std::collections::HashSet<&String> = escaped.iter().collect();
        assert_eq!(distinct.len(), cases.len());
    }
}
