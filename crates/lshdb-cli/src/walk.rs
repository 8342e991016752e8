//! Folder walks for `scan` and `add DIR`, with ripgrep's rules (the
//! `ignore` crate ripgrep uses): `.gitignore`, `.ignore` and
//! `.git/info/exclude` files are honoured, hidden entries skipped, and
//! `--glob`, `--exclude`, `--type`, `--no-ignore`, `--hidden` change that.
//! Only regular files are listed; symbolic links are never followed.

use crate::{fail, CliError};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The walk flags of `scan` and `add`.
#[derive(clap::Args, Clone, Default)]
pub struct WalkArgs {
    /// Only files matching this glob (ripgrep's --glob; `!GLOB` excludes);
    /// may be repeated.
    #[arg(long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// Leave out files matching this glob; may be repeated.
    #[arg(long = "exclude", value_name = "GLOB")]
    excludes: Vec<String>,
    /// Only files of this type (ripgrep's type names: rust, md, txt, ...);
    /// may be repeated.
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// Do not honour .gitignore, .ignore and .git/info/exclude files.
    #[arg(long)]
    no_ignore: bool,
    /// Also walk hidden files and folders (names starting with `.`).
    #[arg(long)]
    hidden: bool,
}

/// What a walk found: regular files (key, path), sorted by path, and the
/// entries it could not read.
#[derive(Default)]
pub struct Found {
    pub files: Vec<(String, PathBuf)>,
    pub unreadable: u64,
}

/// Walks `root`; keys are paths relative to it, names [`escape`]d and
/// joined with `/`, after `prefix`. `skip`: a canonical path never listed
/// (the database file).
pub fn walk(
    root: &Path,
    args: &WalkArgs,
    skip: Option<&Path>,
    prefix: &str,
) -> Result<Found, CliError> {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .follow_links(false)
        .hidden(!args.hidden)
        .parents(!args.no_ignore)
        .ignore(!args.no_ignore)
        .git_ignore(!args.no_ignore)
        .git_global(false)
        .git_exclude(!args.no_ignore)
        // .gitignore files count outside a git repository too: a folder
        // copied out of one keeps its rules.
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    filters(&mut builder, root, args)?;
    let mut found = Found::default();
    for entry in builder.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                if entry_is_root_error(&err) {
                    return fail(format!("cannot read folder {}: {err}", root.display()));
                }
                found.unreadable += 1;
                continue;
            }
        };
        // The entry's own type: symbolic links are not followed.
        let Some(kind) = entry.file_type() else {
            continue; // standard input: never here
        };
        if !kind.is_file() {
            continue;
        }
        let path = entry.into_path();
        if skip.is_some() && std::fs::canonicalize(&path).ok().as_deref() == skip {
            continue;
        }
        let key = key_of(root, &path);
        let key = if prefix.is_empty() {
            key
        } else {
            format!("{}/{key}", prefix.trim_end_matches('/'))
        };
        found.files.push((key, path));
    }
    Ok(found)
}

/// The walk's `--glob`, `--exclude` and `--type` filters.
fn filters(
    builder: &mut ignore::WalkBuilder,
    root: &Path,
    args: &WalkArgs,
) -> Result<(), CliError> {
    if !args.globs.is_empty() || !args.excludes.is_empty() {
        let mut overrides = ignore::overrides::OverrideBuilder::new(root);
        for glob in &args.globs {
            overrides
                .add(glob)
                .map_err(|e| CliError::Message(format!("bad --glob {glob}: {e}")))?;
        }
        for glob in &args.excludes {
            overrides
                .add(&format!("!{glob}"))
                .map_err(|e| CliError::Message(format!("bad --exclude {glob}: {e}")))?;
        }
        builder.overrides(
            overrides
                .build()
                .map_err(|e| CliError::Message(format!("bad --glob or --exclude: {e}")))?,
        );
    }
    if !args.types.is_empty() {
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        for name in &args.types {
            if !types.definitions().iter().any(|d| d.name() == name) {
                return fail(format!(
                    "unknown file type `{name}` (--type); ripgrep's names work, such as txt, md, rust, py, html"
                ));
            }
            types.select(name);
        }
        builder.types(
            types
                .build()
                .map_err(|e| CliError::Message(format!("bad --type: {e}")))?,
        );
    }
    Ok(())
}

/// Whether a walk error is about the root itself (depth 0).
fn entry_is_root_error(err: &ignore::Error) -> bool {
    match err {
        ignore::Error::WithDepth { depth, .. } => *depth == 0,
        ignore::Error::WithPath { err, .. } => entry_is_root_error(err),
        _ => false,
    }
}

/// The key of a file: its path relative to the walked folder, names
/// [`escape`]d and joined with `/`.
pub fn key_of(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| escape(c.as_os_str()))
        .collect::<Vec<_>>()
        .join("/")
}

/// A file name as text, one to one: valid UTF-8 stays as it is except
/// that `\` becomes `\\`, and each byte that is not valid UTF-8 becomes
/// `\xNN` (two lower-case hex digits). Names that differ only in such
/// bytes keep different keys, and no escaped name can equal another.
pub fn escape(name: &OsStr) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}
