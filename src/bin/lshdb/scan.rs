//! `lshdb scan DIR`: the main job. Index every text file under a folder,
//! incrementally, and show the near-duplicate groups.
//!
//! Keys are paths relative to DIR. The database (default `DIR/.lshdb`)
//! keeps each file's text, so a second scan can tell new, changed, removed
//! and unchanged files apart and touches only what changed. Hidden files and
//! folders (names starting with `.`) and symbolic links are not followed;
//! binary files (a NUL byte or invalid UTF-8), empty files and files above
//! the document size limit are skipped and counted.

use crate::add::{catch_interrupt, interrupted, load};
use crate::args::parse_threshold;
use crate::input::{read_text_file, FileText};
use crate::output::{json, line, progress};
use crate::pairs::{group_json, note_threshold, print_groups};
use crate::{fail, CliError, CmdResult, Outcome};
use lshdb::{Config, Database};
use serde_json::json;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

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

pub fn run(args: &Args) -> CmdResult {
    if !args.dir.is_dir() {
        return fail(format!("{} is not a folder", args.dir.display()));
    }
    let db_path = args.db.clone().unwrap_or_else(|| args.dir.join(".lshdb"));
    let db = if db_path.exists() {
        Database::open(&db_path)?
    } else {
        let threshold = args.threshold.unwrap_or(0.8);
        Database::create(&db_path, Config::jaccard(threshold).store_text(true))?
    };
    if !db.settings().store_text {
        return fail(format!(
            "{} does not store texts, which scan needs to notice changed files; \
             scan into a new database with --db",
            db_path.display()
        ));
    }
    catch_interrupt();
    let skip = std::fs::canonicalize(&db_path).ok();
    let mut walk = Walk::default();
    walk_dir(&args.dir, &args.dir, skip.as_deref(), &mut walk)?;

    // Classify against what is stored.
    let bar = progress(Some(walk.files.len() as u64), "reading");
    let mut pending = Vec::new();
    let (mut added, mut changed, mut unchanged) = (0u64, 0u64, 0u64);
    let mut seen = HashSet::new();
    for (key, path) in &walk.files {
        bar.inc(1);
        let text = match read_text_file(path) {
            Ok(FileText::Text(text)) if text.trim().is_empty() => {
                walk.empty += 1;
                continue;
            }
            Ok(FileText::Text(text)) => text,
            Ok(FileText::Binary) => {
                walk.binary += 1;
                continue;
            }
            Ok(FileText::TooLarge(_)) => {
                walk.too_large += 1;
                continue;
            }
            Err(_) => {
                walk.unreadable += 1;
                continue;
            }
        };
        seen.insert(key.clone());
        match db.get(key)? {
            Some(stored) if stored.text.as_deref() == Some(text.as_str()) => unchanged += 1,
            Some(_) => {
                changed += 1;
                pending.push((key.clone(), text));
            }
            None => {
                added += 1;
                pending.push((key.clone(), text));
            }
        }
    }
    bar.finish_and_clear();
    let mut gone = Vec::new();
    db.for_each(|doc| {
        if !seen.contains(&doc.key) {
            gone.push(doc.key);
        }
        true
    })?;
    if !pending.is_empty() {
        load(&db, pending.into_iter(), lshdb::DEFAULT_BATCH)?;
    }
    if interrupted() {
        return Err(CliError::Interrupted(
            "interrupted: files indexed so far are committed; run scan again to finish".to_owned(),
        ));
    }
    if !gone.is_empty() {
        let mut batch = db.batch()?;
        for key in &gone {
            batch.remove(key)?;
        }
        batch.commit()?;
    }

    let threshold = args.threshold.unwrap_or(db.settings().threshold);
    note_threshold(&db, threshold);
    let bar = progress(None, "grouping");
    let groups = db.groups(threshold)?;
    bar.finish_and_clear();
    let removed = gone.len() as u64;
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
        args.dir.display(),
        db_path.display()
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
    print_groups(&groups, threshold, false);
    Ok(Outcome::Ok)
}

/// Collects regular files under `dir` (keys relative to `root`), sorted,
/// skipping hidden entries, symbolic links and the database file itself.
fn walk_dir(root: &Path, dir: &Path, skip: Option<&Path>, walk: &mut Walk) -> Result<(), CliError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(crate::io_context("cannot read folder", dir))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            walk.unreadable += 1;
            continue;
        };
        if kind.is_dir() {
            if walk_dir(root, &path, skip, walk).is_err() {
                walk.unreadable += 1;
            }
        } else if kind.is_file() {
            if skip.is_some() && std::fs::canonicalize(&path).ok().as_deref() == skip {
                continue;
            }
            let key = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            walk.files.push((key, path));
        }
    }
    Ok(())
}
