//! Checks of a database path before redb opens it: that it is a regular
//! file (a FIFO would make the open wait) starting with redb's magic
//! number, so that the error says what the file is; and whether a
//! read-only open may repair a file whose writer crashed.

use crate::store::schema::REDB_MAGIC;
use crate::{Error, Result};
use std::io::Read;
use std::path::Path;

/// Refuses files that are not redb files before redb sees them, so the
/// error says what the file is.
pub(super) fn check_header(path: &Path) -> Result<()> {
    check_file_type(path)?;
    let mut file = std::fs::File::open(path).map_err(Error::io("open", path))?;
    let mut head = [0u8; REDB_MAGIC.len()];
    let mut read = 0;
    while read < head.len() {
        match file
            .read(&mut head[read..])
            .map_err(Error::io("read the header of", path))?
        {
            0 => break,
            n => read += n,
        }
    }
    check_magic(path, &head[..read])
}

/// Refuses a path that is not a regular file (a FIFO, a folder, a
/// device) before opening it: opening a FIFO would wait for a writer.
fn check_file_type(path: &Path) -> Result<()> {
    let kind = std::fs::metadata(path)
        .map_err(Error::io("open", path))?
        .file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = special_kind(kind);
    Err(Error::NotADatabase {
        path: path.to_owned(),
        reason: format!("it is {what}, not a database file"),
    })
}

/// What a file that is not a regular file is, with its article.
fn special_kind(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "a special file"
    }
}

/// [`check_header`] on a storage backend.
pub(super) fn check_backend_header<B: redb::StorageBackend>(
    path: &Path,
    backend: &B,
) -> Result<()> {
    let len = backend
        .len()
        .map_err(Error::io("read the length of", path))?;
    let mut head = [0u8; REDB_MAGIC.len()];
    let read = usize::try_from(len).map_or(head.len(), |len| len.min(head.len()));
    backend
        .read(0, &mut head[..read])
        .map_err(Error::io("read the header of", path))?;
    check_magic(path, &head[..read])
}

/// Whether `head`, the first bytes of a file (all of them when it is
/// shorter than redb's magic number), starts a redb file.
fn check_magic(path: &Path, head: &[u8]) -> Result<()> {
    let not_db = |reason: &str| Error::NotADatabase {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if head.is_empty() {
        return Err(not_db("the file is empty"));
    }
    if head[..] != REDB_MAGIC[..head.len()] {
        return Err(not_db("it does not start with a database header"));
    }
    if head.len() < REDB_MAGIC.len() {
        return Err(Error::corrupted(
            "the file is truncated: it ends inside the database header",
        ));
    }
    Ok(())
}

/// Whether a read-only open may repair `path`: neither the file nor its
/// folder is marked read-only, and this process may write the file. The
/// permission bits are checked as well as access, so that a file made
/// read-only (`chmod a-w`) stays untouched even for a superuser.
pub(super) fn may_repair(path: &Path) -> bool {
    let writable = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.permissions().readonly());
    let folder = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => Path::new("."),
    };
    writable(path) && writable(folder) && std::fs::OpenOptions::new().write(true).open(path).is_ok()
}
