//! Atomic output files: written to a temporary file beside the target and
//! renamed over it only when complete, so a failed or interrupted command
//! never leaves a truncated file or clobbers an older one (`export --out`,
//! `dedup --out/--dropped`).

use crate::CliError;
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use tempfile::TempPath;

/// Whether two paths name one existing file: the same path, a symbolic
/// link to it or a hard link (same device and inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// An I/O error without the temporary file's path that the `tempfile`
/// crate adds to it (`… at path "/dir/.tmpXYZ"`): its cause alone.
pub fn io_cause(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at path \"") {
        Some(at) if err.raw_os_error().is_none() => text[..at].to_owned(),
        _ => text,
    }
}

/// An output file being written: a temporary file in the target's folder,
/// renamed over the target only by [`Output::finish`]. Dropped unfinished,
/// it is deleted and the target is untouched. An existing target that is
/// not a regular file (`/dev/stdout`, a FIFO) is written directly: there
/// is nothing there to truncate or to replace.
pub struct Output {
    writer: BufWriter<std::fs::File>,
    /// The temporary file, deleted when dropped (unfinished); `None` when
    /// the target is written directly.
    temp: Option<TempPath>,
    target: PathBuf,
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

impl Output {
    pub fn create(out: &Path) -> Result<Self, CliError> {
        if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new().write(true).open(out)?;
            return Ok(Self {
                writer: BufWriter::new(file),
                temp: None,
                target: out.to_path_buf(),
            });
        }
        // Write through a symbolic link, as opening the path would.
        let is_link = std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink());
        let target = match is_link {
            true => std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf()),
            false => out.to_path_buf(),
        };
        let folder = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        // As `File::create` would: 0666 less the umask, or the mode of the
        // file it replaces.
        let permissions = match std::fs::metadata(&target) {
            Ok(meta) => meta.permissions(),
            Err(_) => std::fs::Permissions::from_mode(0o666),
        };
        builder.permissions(permissions);
        let temp = builder.tempfile_in(folder).map_err(|e| {
            // A missing or unwritable folder is the usual cause: name the
            // output, with the folder's own error when it has one.
            let cause = std::fs::metadata(folder).err().unwrap_or(e);
            CliError::Message(format!("cannot create {}: {cause}", out.display()))
        })?;
        let (file, temp) = temp.into_parts();
        Ok(Self {
            writer: BufWriter::new(file),
            temp: Some(temp),
            target,
        })
    }

    /// The file this output replaces when finished.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, syncs and renames the file into place.
    /// Errors name the target, never the temporary file.
    pub fn finish(self) -> Result<(), CliError> {
        let target = self.target.clone();
        let named = |e: std::io::Error| {
            CliError::Message(format!(
                "cannot write {}: {}",
                target.display(),
                io_cause(&e)
            ))
        };
        let file = self
            .writer
            .into_inner()
            .map_err(|e| named(e.into_error()))?;
        let Some(temp) = self.temp else {
            return Ok(());
        };
        file.sync_all().map_err(named)?;
        temp.persist(&self.target).map_err(|e| named(e.error))?;
        if let Some(folder) = self.target.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Make the rename durable; not every file system can sync a folder.
            if let Ok(dir) = std::fs::File::open(folder) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }
}
