//! Where `dedup` writes: the kept records' target (a file or standard
//! output), the side outputs (`--dropped` lines, `--clusters`,
//! `--rejected` records), each file compressed when its name ends in `.gz`
//! or `.zst`, and the check that no two of them (nor the database, nor an
//! input) are one file.

use super::cluster_file::ClusterFile;
use super::Args;
use crate::support::outfile::{io_cause, same_file, Output};
use crate::CliError;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output file, compressed by its name (`.gz`: gzip, `.zst`/`.zstd`:
/// zstd, else plain), written through [`Output`] (a temporary file renamed
/// into place by [`Written::finish`]). Write errors name the user's path,
/// never the temporary file.
pub(crate) struct Written {
    inner: Coded,
    path: PathBuf,
}

enum Coded {
    Plain(Output),
    Gzip(flate2::write::GzEncoder<Output>),
    Zstd(zstd::Encoder<'static, Output>),
}

impl Written {
    /// Creates the output at `path`.
    pub fn create(path: &Path) -> Result<Self, CliError> {
        let out = Output::create(path)?;
        let lower = path.to_string_lossy().to_ascii_lowercase();
        let inner = if lower.ends_with(".gz") {
            Coded::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            ))
        } else if lower.ends_with(".zst") || lower.ends_with(".zstd") {
            let encoder = zstd::Encoder::new(out, 3)
                .map_err(|e| CliError::Message(format!("cannot write {}: {e}", path.display())))?;
            Coded::Zstd(encoder)
        } else {
            Coded::Plain(out)
        };
        Ok(Self {
            inner,
            path: path.to_path_buf(),
        })
    }

    /// Ends the compressed stream, then syncs and renames the file into
    /// place.
    pub fn finish(self) -> Result<(), CliError> {
        let named = |e: std::io::Error| {
            CliError::Message(format!(
                "cannot write {}: {}",
                self.path.display(),
                io_cause(&e)
            ))
        };
        let out = match self.inner {
            Coded::Plain(out) => out,
            Coded::Gzip(gz) => gz.finish().map_err(named)?,
            Coded::Zstd(z) => z.finish().map_err(named)?,
        };
        out.finish()
    }
}

impl Write for Written {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = match &mut self.inner {
            Coded::Plain(out) => out.write(buf),
            Coded::Gzip(gz) => gz.write(buf),
            Coded::Zstd(z) => z.write(buf),
        };
        written.map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let flushed = match &mut self.inner {
            Coded::Plain(out) => out.flush(),
            Coded::Gzip(gz) => gz.flush(),
            Coded::Zstd(z) => z.flush(),
        };
        flushed.map_err(|e| self.named(e))
    }
}

impl Written {
    fn named(&self, err: std::io::Error) -> std::io::Error {
        std::io::Error::new(
            err.kind(),
            format!("cannot write {}: {}", self.path.display(), io_cause(&err)),
        )
    }
}

/// An output file or standard output.
pub(super) enum Target {
    File(Written),
    Stdout(std::io::BufWriter<std::io::Stdout>),
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Target::File(f) => f.write(buf),
            Target::Stdout(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Target::File(f) => f.flush(),
            Target::Stdout(s) => s.flush(),
        }
    }
}

impl Target {
    pub fn finish(self) -> Result<(), CliError> {
        match self {
            Target::File(f) => f.finish(),
            Target::Stdout(mut s) => match s.flush() {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
                other => Ok(other?),
            },
        }
    }
}

/// What one record became, for `--dropped` and `--clusters`.
pub(super) struct Drop {
    pub id: String,
    pub of: String,
    pub similarity: f64,
}

impl Drop {
    /// The `--dropped` line: with `cluster`, the id of the cluster the kept
    /// duplicate is in, when `db` keeps clusters and has it stored.
    fn line(&self, db: Option<&lshdb::Database>) -> Result<serde_json::Value, CliError> {
        let mut value =
            json!({"id": self.id, "duplicate_of": self.of, "similarity": self.similarity});
        if let Some(db) = db.filter(|db| db.has_clusters()) {
            if let Some(cluster) = db.cluster_of(&self.of)? {
                value["cluster"] = json!(cluster.id);
            }
        }
        Ok(value)
    }
}

/// The side outputs.
pub(super) struct Side {
    pub dropped: Option<Written>,
    /// The drops by kept record, for `--clusters`.
    pub clusters: Option<ClusterFile>,
    /// The rejected records, as JSON Lines.
    pub rejected: Option<Written>,
}

impl Side {
    /// Reports a dropped record; `db`, the run's database, names the
    /// cluster of its kept duplicate when it keeps clusters.
    pub fn record(&mut self, drop: Drop, db: Option<&lshdb::Database>) -> Result<(), CliError> {
        if let Some(out) = &mut self.dropped {
            writeln!(out, "{}", drop.line(db)?)?;
        }
        if let Some(clusters) = &mut self.clusters {
            clusters.add(&drop.of, drop.id, drop.similarity)?;
        }
        Ok(())
    }

    /// Writes a rejected record (`record`: its original form, see
    /// `Chunk::original`) with the reason and where it was read.
    pub fn reject(
        &mut self,
        record: serde_json::Value,
        reason: &str,
        source: &str,
        line: u64,
    ) -> Result<(), CliError> {
        if let Some(out) = &mut self.rejected {
            writeln!(
                out,
                "{}",
                json!({"record": record, "reason": reason, "source": source, "line": line})
            )?;
        }
        Ok(())
    }
}

/// A path as one file: canonical when it exists, else its folder's
/// canonical path and its name (a file not yet created).
fn canonical(path: &Path) -> PathBuf {
    if let Ok(full) = std::fs::canonicalize(path) {
        return full;
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(folder), path.file_name()) {
        (Ok(folder), Some(name)) => folder.join(name),
        _ => path.to_path_buf(),
    }
}

/// A file given on the command line: (flag, path).
pub(super) type Named<'a> = (&'a str, &'a Path);

/// The first two of `files` that are one file (by canonical path, or as
/// one existing file under two names), the first of them among the first
/// `outputs` (the others are inputs, which may repeat).
pub(super) fn same_paths<'a>(
    files: &[Named<'a>],
    outputs: usize,
) -> Option<(Named<'a>, Named<'a>)> {
    let canon: Vec<PathBuf> = files.iter().map(|(_, p)| canonical(p)).collect();
    for i in 0..outputs.min(files.len()) {
        for j in i + 1..files.len() {
            if canon[i] == canon[j] || same_file(files[i].1, files[j].1) {
                return Some((files[i], files[j]));
            }
        }
    }
    None
}

/// Puts `--dropped`, `--clusters` and `--rejected` into place.
pub(super) fn finish_side(mut side: Side, clusters_out: Option<Written>) -> Result<(), CliError> {
    if let Some(out) = side.dropped.take() {
        out.finish()?;
    }
    if let Some(out) = side.rejected.take() {
        out.finish()?;
    }
    if let (Some(mut out), Some(clusters)) = (clusters_out, side.clusters.take()) {
        clusters.write_to(&mut out)?;
        out.finish()?;
    }
    Ok(())
}

/// Refuses, as a usage error (exit 2) before anything is opened, two of
/// the inputs, the database and the outputs that are one file: the same
/// path (also one not yet created, by its folder's canonical path), a
/// symbolic link or a hard link. An output never overwrites an input, the
/// database or another output.
pub(super) fn check_paths(args: &Args) {
    let mut files: Vec<(&str, &Path)> = vec![];
    for (flag, path) in [
        ("--db", &args.db),
        ("--out", &args.out),
        ("--dropped", &args.dropped),
        ("--clusters", &args.clusters),
        ("--rejected", &args.rejected),
    ] {
        if let Some(path) = path {
            files.push((flag, path));
        }
    }
    let outputs = files.len();
    for input in args.inputs.iter().filter(|p| *p != "-") {
        files.push(("the input", Path::new(input)));
    }
    // Two inputs may be one file; an output may not be anything else.
    let Some(((a, pa), (b, pb))) = same_paths(&files, outputs) else {
        return;
    };
    let message = match (a, b) {
        ("--db", "the input") => format!(
            "--db {} is the input {}; give the database another name",
            pa.display(),
            pb.display()
        ),
        (_, "the input") => format!(
            "{a} {} is the input {}; write the output to another file",
            pa.display(),
            pb.display()
        ),
        ("--db", _) => format!(
            "{b} {} is the database file itself ({}); write the output to another file",
            pb.display(),
            pa.display()
        ),
        _ => format!(
            "{a} {} and {b} {} are one file; give each output its own file",
            pa.display(),
            pb.display()
        ),
    };
    clap::Error::raw(
        clap::error::ErrorKind::ArgumentConflict,
        format!("{message}\n"),
    )
    .exit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_errors_name_the_output_not_the_temporary_file() {
        // The `tempfile` crate adds the temporary file's path to its errors.
        let err = tempfile::Builder::new()
            .tempfile_in("/nonexistent-folder-for-lshdb")
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent-folder-for-lshdb/"));
        assert!(
            !io_cause(&err).contains("nonexistent"),
            "{}",
            io_cause(&err)
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kept.jsonl");
        let out = Written::create(&path).unwrap();
        let named = out.named(err);
        assert!(
            named
                .to_string()
                .starts_with(&format!("cannot write {}: ", path.display())),
            "{named}"
        );
        assert!(!named.to_string().contains("nonexistent"), "{named}");
    }

    #[test]
    fn outputs_are_one_file_by_any_spelling_also_before_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let a = dir.path().join("x.jsonl");
        let b = dir.path().join("sub/../x.jsonl");
        let c = dir.path().join("y.jsonl");
        let files = [
            ("--out", a.as_path()),
            ("--dropped", c.as_path()),
            ("--rejected", b.as_path()),
        ];
        let (first, second) = same_paths(&files, 3).unwrap();
        assert_eq!((first.0, second.0), ("--out", "--rejected"));
        assert!(same_paths(&files[..2], 2).is_none());
        // Inputs may repeat.
        let inputs = [
            ("--out", c.as_path()),
            ("the input", a.as_path()),
            ("the input", b.as_path()),
        ];
        assert!(same_paths(&inputs, 1).is_none());
    }
}
