//! The crate's one error type.
//!
//! Every fallible public function returns [`Result`]. Messages are written for
//! the person who has to act on them: they say what was wrong and what to do.
//! redb's several error types are wrapped through `From`, with the cases a
//! user can act on (file locked, damaged file) given their own variants.

use std::path::PathBuf;

/// Everything that can go wrong in lshdb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its valid range (a threshold outside (0, 1),
    /// bands × rows larger than the number of permutations, k = 0, ...).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name as the API or CLI spells it.
        name: &'static str,
        /// What is wrong and which values are accepted.
        reason: String,
    },

    /// A document has no shingles: its text is empty (or only white space),
    /// or its item set is empty.
    #[error("document `{key}` is empty after normalisation; there is nothing to index")]
    EmptyDocument {
        /// The document's key.
        key: String,
    },

    /// A key is longer than [`crate::MAX_KEY_BYTES`] or empty.
    #[error("key of {len} bytes is not accepted: keys must be 1 to {max} bytes of UTF-8")]
    InvalidKey {
        /// The key's length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },

    /// A document is larger than [`crate::MAX_DOCUMENT_BYTES`].
    #[error(
        "document `{key}` has {len} bytes, above the limit of {max}; split it or index a part of it"
    )]
    DocumentTooLarge {
        /// The document's key.
        key: String,
        /// Its size in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },

    /// No document is stored under this key.
    #[error("no document with key `{0}`")]
    NotFound(String),

    /// `create` was given a path that already exists.
    #[error("{} already exists; open it, or choose another path to create a new database", path.display())]
    FileExists {
        /// The file.
        path: PathBuf,
    },

    /// The file exists but is not an lshdb database.
    #[error("{} is not an lshdb database ({reason})", path.display())]
    NotADatabase {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },

    /// The file was written in a format this build does not read.
    #[error(
        "{} has lshdb format version {found}; this build reads versions 1 to {supported}{hint}",
        path.display()
    )]
    FormatVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
        /// What to do about it.
        hint: &'static str,
    },

    /// An option given at open time contradicts the configuration stored in
    /// the file.
    #[error(
        "the database was created with {field} = {stored}, but {given} was asked for; \
         open it without that option (the stored value applies) or rebuild it"
    )]
    ConfigMismatch {
        /// The setting.
        field: &'static str,
        /// The stored value.
        stored: String,
        /// The requested value.
        given: String,
    },

    /// Another process (or another handle in this process) has the file open
    /// for writing: lshdb allows one writer per file at a time. Read-only
    /// handles ([`crate::Builder::read_only`]) can open it meanwhile (not
    /// beside a writer with [`crate::Durability::None`]), and
    /// [`crate::Builder::wait`] waits for the writer to close.
    #[error("{}", already_open(path, *waited))]
    AlreadyOpen {
        /// The file.
        path: PathBuf,
        /// How long the open waited for the writer ([`crate::Builder::wait`]),
        /// when it did.
        waited: Option<std::time::Duration>,
    },

    /// A write was attempted on a handle opened read-only.
    #[error("{} was opened read-only; open it for writing to change it", path.display())]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },

    /// A write through the handle on the thread that holds its write
    /// transaction open: a [`crate::Batch`] not yet committed or dropped, or
    /// a dedup-on-write load calling its input or callback. It would wait
    /// for that transaction forever; write through the batch, or end it
    /// first.
    #[error(
        "{holder} holds {}'s write transaction open on this thread: a write through the \
         handle would wait for it forever; write through it, or commit or drop it first",
        path.display()
    )]
    WriteInProgress {
        /// The file.
        path: PathBuf,
        /// What holds the transaction ("a batch", "a dedup-on-write load").
        holder: &'static str,
    },

    /// The file was not closed cleanly (its writer crashed or was killed),
    /// and this read-only open could not repair it: a read-only open repairs
    /// such a file only when it may write it (neither the file nor its folder
    /// is read-only) and no writer has it open.
    #[error(
        "{} was not closed cleanly (its writer crashed or was killed) and needs a repair, \
         which this read-only open could not make (the file or its folder is read-only, or \
         the process may not write it); open it for writing once, as a user who may write it, \
         to repair it",
        path.display()
    )]
    NeedsRepair {
        /// The file.
        path: PathBuf,
    },

    /// The handle was opened in another process: a `Database` must not
    /// cross `fork()`. Every call in the child fails with this error and
    /// changes nothing; the parent's handle keeps working. Open the
    /// database again in the child (or start children with `spawn`).
    #[error(
        "{} was opened in process {opened_in}, and this is process {current}: a database \
         handle does not cross fork(); open the database again in this process",
        path.display()
    )]
    WrongProcess {
        /// The file.
        path: PathBuf,
        /// The id of the process that opened the handle.
        opened_in: u32,
        /// The id of the process that made the call.
        current: u32,
    },

    /// Stored data failed its checksum or could not be decoded.
    #[error("the database is damaged: {0}; restore it from a backup or export")]
    Corrupted(String),

    /// A feature of the index was not enabled when the database was created.
    #[error("{0} is not enabled in this database; create it with that index turned on")]
    IndexDisabled(&'static str),

    /// The database keeps no time index, which expiry and timestamps need
    /// ([`crate::Config::timestamps`],
    /// [`crate::Database::build_time_index`]).
    #[error(
        "this database keeps no time index, which expiry walks: build it on this file (the \
         documents stored so far are stamped with the time of the build), or create the \
         file with timestamps turned on"
    )]
    NoTimeIndex,

    /// An earlier commit failed; the handle refuses writes until reopened,
    /// since the state in memory can no longer be trusted.
    #[error("an earlier write failed ({0}); reopen the database before writing again")]
    Poisoned(String),

    /// An I/O error outside the storage engine (opening the file, reading
    /// its header, a storage backend's length).
    #[error("cannot {op} {}", path.display())]
    Io {
        /// What was being done ("open", "read the header of", ...).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// An error of the storage engine (redb) not covered by another variant.
    #[error("storage engine error")]
    Storage(#[source] redb::Error),
}

/// The message of [`Error::AlreadyOpen`].
fn already_open(path: &std::path::Path, waited: Option<std::time::Duration>) -> String {
    let path = path.display();
    match waited {
        None => format!(
            "{path} is open for writing in another process or handle, and lshdb allows one \
             writer per file; read-only opens work meanwhile (unless that writer commits \
             non-durably) — close the other writer, or wait for it"
        ),
        Some(waited) => format!(
            "{path} is still open for writing in another process or handle after waiting {} \
             seconds, and lshdb allows one writer per file; read-only opens work meanwhile \
             (unless that writer commits non-durably) — close the other writer, or try again \
             later",
            waited.as_secs_f64()
        ),
    }
}

/// `Result` with lshdb's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub(crate) fn io(
        op: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_owned();
        move |source| Error::Io { op, path, source }
    }

    /// Shorthand for [`Error::Corrupted`].
    pub(crate) fn corrupted(what: impl Into<String>) -> Self {
        Error::Corrupted(what.into())
    }
}

impl From<redb::Error> for Error {
    fn from(err: redb::Error) -> Self {
        match err {
            redb::Error::Corrupted(what) => Error::Corrupted(format!("storage engine: {what}")),
            // A read that ended before the data the engine expected: the
            // file was cut (a copy stopped early, a full disk, truncate).
            redb::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                Error::Corrupted(format!(
                    "the file is truncated: a read ended before the data it expected ({io})"
                ))
            }
            other => Error::Storage(other),
        }
    }
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(err: $t) -> Self {
                Error::from(redb::Error::from(err))
            }
        }
    )*};
}

from_redb!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::CompactionError,
    redb::SetDurabilityError
);
