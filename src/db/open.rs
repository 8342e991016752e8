//! Creating and opening database files: header checks, format version,
//! stored settings, and the options that may be given at open time.

use super::{Database, Pipeline};
use crate::config::{Config, Settings};
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

pub(super) fn create(path: &Path, config: Config, options: &OpenOptions) -> Result<Database> {
    let settings = config.resolve()?;
    let pipeline = Pipeline::new(&settings)?;
    if path.exists() {
        return Err(Error::FileExists {
            path: path.to_owned(),
        });
    }
    let db = builder(options)
        .create(path)
        .map_err(|e| map_open_error(path, e))?;
    let txn = db.begin_write()?;
    {
        let mut meta_table = txn.open_table(META)?;
        meta::write_header(&mut meta_table, &settings)?;
        meta::write_u64(&mut meta_table, meta_keys::NEXT_ID, 1)?;
        WriteTables::open(&txn)?; // creates every table
    }
    txn.commit()?;
    Ok(Database {
        db,
        path: path.to_owned(),
        settings,
        pipeline,
        poisoned: Mutex::new(None),
    })
}

/// Refuses files that are not redb files before redb sees them, so the
/// error says what the file is.
fn check_header(path: &Path) -> Result<()> {
    let not_db = |reason: &str| Error::NotADatabase {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let mut file = std::fs::File::open(path)?;
    let mut head = [0u8; REDB_MAGIC.len()];
    let mut read = 0;
    while read < head.len() {
        match file.read(&mut head[read..])? {
            0 => break,
            n => read += n,
        }
    }
    if read == 0 {
        return Err(not_db("the file is empty"));
    }
    if head[..read] != REDB_MAGIC[..read] {
        return Err(not_db("it does not start with a database header"));
    }
    if read < head.len() {
        return Err(not_db("the file is truncated inside its header"));
    }
    Ok(())
}

pub(super) fn open(path: &Path, options: &OpenOptions) -> Result<Database> {
    check_header(path)?;
    let db = builder(options)
        .open(path)
        .map_err(|e| map_open_error(path, e))?;
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
    Ok(Database {
        db,
        path: path.to_owned(),
        settings,
        pipeline,
        poisoned: Mutex::new(None),
    })
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
            return Err(not_lshdb("a redb database without lshdb metadata"))
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
