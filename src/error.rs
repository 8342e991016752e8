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
        "{} has lshdb format version {found}; this build reads version {supported} only{hint}",
        path.display()
    )]
    FormatVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this build reads.
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

    /// Another process (or another handle in this process) has the file open.
    #[error(
        "{} is already open in another process or handle; lshdb allows one writer per file — \
         close the other one and retry",
        path.display()
    )]
    AlreadyOpen {
        /// The file.
        path: PathBuf,
    },

    /// Stored data failed its checksum or could not be decoded.
    #[error("the database is damaged: {0}; run `lshdb check` and restore from a backup or export")]
    Corrupted(String),

    /// A feature of the index was not enabled when the database was created.
    #[error("{0} is not enabled in this database; create it with that index turned on")]
    IndexDisabled(&'static str),

    /// An earlier commit failed; the handle refuses writes until reopened,
    /// since the state in memory can no longer be trusted.
    #[error("an earlier write failed ({0}); reopen the database before writing again")]
    Poisoned(String),

    /// An I/O error outside the storage engine (reading an input file, ...).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    /// An error of the storage engine (redb) not covered by another variant.
    #[error("storage error: {0}")]
    Storage(redb::Error),
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

    /// Shorthand for [`Error::Corrupted`].
    pub(crate) fn corrupted(what: impl Into<String>) -> Self {
        Error::Corrupted(what.into())
    }
}

impl From<redb::Error> for Error {
    fn from(err: redb::Error) -> Self {
        match err {
            redb::Error::Corrupted(what) => Error::Corrupted(format!("storage engine: {what}")),
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
