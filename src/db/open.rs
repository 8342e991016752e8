//! Creating and opening database files: header checks, format version,
//! stored settings, and the options that may be given at open time.

use super::{Database, Pipeline};
use crate::config::{Config, Settings};
use crate::store::cache::{RecordCache, DEFAULT_RECORD_CACHE_BYTES};
use crate::store::meta;
use crate::store::schema::{meta_keys, FORMAT_VERSION, META, REDB_MAGIC};
use crate::store::tables::WriteTables;
use crate::{Error, Result};
use parking_lot::Mutex;
use redb::ReadableDatabase;
use std::io::Read;
use std::path::Path;

/// Options for opening a database.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Bytes of redb's page cache (default 64 MiB). Bounds the memory of
    /// reads and bulk loads.
    pub cache_bytes: Option<usize>,
    /// Bytes of decoded signature and shingle-set records kept for queries
    /// (default [`DEFAULT_RECORD_CACHE_BYTES`], 64 MiB; 0 turns it off).
    /// See [`crate::store::cache`].
    pub record_cache_bytes: Option<usize>,
    /// A configuration the stored one must match; opening fails with
    /// [`Error::ConfigMismatch`] naming the first differing field otherwise.
    pub expect: Option<Config>,
}

/// The default page-cache size.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

fn builder(options: &OpenOptions) -> redb::Builder {
    let mut builder = redb::Database::builder();
    builder.set_cache_size(options.cache_bytes.unwrap_or(DEFAULT_CACHE_BYTES));
    builder
}

fn map_open_error(path: &Path, err: redb::DatabaseError) -> Error {
    match err {
        redb::DatabaseError::DatabaseAlreadyOpen => Error::AlreadyOpen {
            path: path.to_owned(),
        },
        other => Error::from(other),
    }
}

/// What [`Database::path`] returns for a database on a caller's storage
/// backend, which has no path. Errors that name a file name this instead.
const BACKEND_PATH: &str = "<backend>";

/// The settings and pipeline a new database is created with.
fn resolve(config: &Config) -> Result<(Settings, Pipeline)> {
    let settings = config.resolve()?;
    let pipeline = Pipeline::new(&settings)?;
    Ok((settings, pipeline))
}

pub(super) fn create(path: &Path, config: Config, options: &OpenOptions) -> Result<Database> {
    crate::guard::guard(|| {
        let (settings, pipeline) = resolve(&config)?;
        if path.exists() {
            return Err(Error::FileExists {
                path: path.to_owned(),
            });
        }
        let db = builder(options)
            .create(path)
            .map_err(|e| map_open_error(path, e))?;
        initialize(db, path, settings, pipeline, options).inspect_err(|_| {
            // A file without lshdb metadata is of no use and would block a
            // retry with FileExists: remove it (best effort).
            let _ = std::fs::remove_file(path);
        })
    })
}

pub(super) fn create_with_backend<B: redb::StorageBackend>(
    backend: B,
    config: Config,
    options: &OpenOptions,
) -> Result<Database> {
    crate::guard::guard(|| {
        let (settings, pipeline) = resolve(&config)?;
        let path = Path::new(BACKEND_PATH);
        // redb would open what the backend holds; creating means starting empty.
        if backend.len()? != 0 {
            return Err(Error::FileExists {
                path: path.to_owned(),
            });
        }
        let db = builder(options)
            .create_with_backend(backend)
            .map_err(|e| map_open_error(path, e))?;
        initialize(db, path, settings, pipeline, options)
    })
}

/// Writes a new database's metadata and creates every table, in one
/// durable transaction.
fn initialize(
    db: redb::Database,
    path: &Path,
    settings: Settings,
    pipeline: Pipeline,
    options: &OpenOptions,
) -> Result<Database> {
    let txn = db.begin_write()?;
    {
        let mut meta_table = txn.open_table(META)?;
        meta::write_header(&mut meta_table, &settings)?;
        meta::write_u64(&mut meta_table, meta_keys::NEXT_ID, 1)?;
        WriteTables::open(&txn)?; // creates every table
    }
    txn.commit()?;
    Ok(handle(db, path, settings, pipeline, options))
}

/// Refuses files that are not redb files before redb sees them, so the
/// error says what the file is.
fn check_header(path: &Path) -> Result<()> {
    let mut file = std::fs::File::open(path)?;
    let mut head = [0u8; REDB_MAGIC.len()];
    let mut read = 0;
    while read < head.len() {
        match file.read(&mut head[read..])? {
            0 => break,
            n => read += n,
        }
    }
    check_magic(path, &head[..read])
}

/// [`check_header`] on a storage backend.
fn check_backend_header<B: redb::StorageBackend>(path: &Path, backend: &B) -> Result<()> {
    let len = backend.len()?;
    let mut head = [0u8; REDB_MAGIC.len()];
    let read = usize::try_from(len).map_or(head.len(), |len| len.min(head.len()));
    backend.read(0, &mut head[..read])?;
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
        return Err(not_db("the file is truncated inside its header"));
    }
    Ok(())
}

pub(super) fn open(path: &Path, options: &OpenOptions) -> Result<Database> {
    crate::guard::guard(|| {
        check_header(path)?;
        let db = builder(options)
            .open(path)
            .map_err(|e| map_open_error(path, e))?;
        attach(db, path, options)
    })
}

pub(super) fn open_with_backend<B: redb::StorageBackend>(
    backend: B,
    options: &OpenOptions,
) -> Result<Database> {
    crate::guard::guard(|| {
        let path = Path::new(BACKEND_PATH);
        check_backend_header(path, &backend)?;
        // Not empty (checked above), so redb opens, and never initializes.
        let db = builder(options)
            .create_with_backend(backend)
            .map_err(|e| map_open_error(path, e))?;
        attach(db, path, options)
    })
}

/// Makes an opened redb database a [`Database`]: reads and checks the
/// stored settings against `options`.
fn attach(db: redb::Database, path: &Path, options: &OpenOptions) -> Result<Database> {
    let settings = read_settings(path, &db)?;
    if let Some(expected) = &options.expect {
        if let Some((field, stored, given)) = settings.first_difference(&expected.resolve()?) {
            return Err(Error::ConfigMismatch {
                field,
                stored,
                given,
            });
        }
    }
    let pipeline = Pipeline::new(&settings)?;
    Ok(handle(db, path, settings, pipeline, options))
}

/// A handle on an opened (or just created) database, not poisoned.
fn handle(
    db: redb::Database,
    path: &Path,
    settings: Settings,
    pipeline: Pipeline,
    options: &OpenOptions,
) -> Database {
    let cache_bytes = options
        .record_cache_bytes
        .unwrap_or(DEFAULT_RECORD_CACHE_BYTES);
    Database {
        db,
        path: path.to_owned(),
        settings,
        pipeline,
        poisoned: Mutex::new(None),
        cache: RecordCache::new(cache_bytes),
    }
}

fn read_settings(path: &Path, db: &redb::Database) -> Result<Settings> {
    let not_lshdb = |reason: &str| Error::NotADatabase {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let txn = db.begin_read()?;
    let meta_table = match txn.open_table(META) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => {
            return Err(not_lshdb(
                "a redb database without lshdb metadata; if an lshdb create was \
                 interrupted, delete the file and create it again",
            ))
        }
        Err(other) => return Err(other.into()),
    };
    let format = meta_table
        .get(meta_keys::FORMAT)?
        .ok_or_else(|| not_lshdb("its metadata has no lshdb format record"))?;
    let version = meta::parse_format(format.value())
        .ok_or_else(|| not_lshdb("its format record is not lshdb's"))?;
    if version != FORMAT_VERSION {
        return Err(Error::FormatVersion {
            path: path.to_owned(),
            found: version,
            supported: FORMAT_VERSION,
            hint: if version > FORMAT_VERSION {
                "; it was written by a newer lshdb: upgrade lshdb to open it"
            } else {
                "; export it with the lshdb version that wrote it and import it here"
            },
        });
    }
    let settings = meta_table
        .get(meta_keys::SETTINGS)?
        .ok_or_else(|| Error::corrupted("the settings record is missing"))?;
    meta::decode_settings(settings.value())
}
