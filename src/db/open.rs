//! Creating and opening database files: the [`Builder`] with its options,
//! header checks, format version and stored settings.
//!
//! **Processes.** A file is opened for writing in redb's
//! `ConcurrencyMode::SingleWriter`: one process writes while any number of
//! processes hold it read-only ([`Builder::read_only`]) and follow its
//! commits — an application keeps its database open and the admin CLI
//! inspects it meanwhile. A second writer gets [`Error::AlreadyOpen`]
//! (or waits, [`Builder::wait`]). A caller's storage backend has no file
//! locks, so it is opened in redb's default exclusive mode instead, and the
//! caller must not open the same storage twice at once.

use super::header::{check_backend_header, check_header, may_repair};
use super::store::{Engine, Store};
use super::{Database, Pipeline};
use crate::config::{Config, Settings};
use crate::store::cache::{RecordCache, DEFAULT_RECORD_CACHE_BYTES};
use crate::store::meta;
use crate::store::schema::{meta_keys, FORMAT_VERSION, META, OLDEST_FORMAT_VERSION};
use crate::store::tables::WriteTables;
use crate::{Error, Result};
use parking_lot::Mutex;
use redb::ConcurrencyMode;
use std::path::Path;
use std::time::{Duration, Instant};

/// The default page-cache size.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// How to create or open a database: memory, an expected configuration,
/// read-only access, waiting for another writer. [`Database::create`] and
/// [`Database::open`] are this builder with its defaults.
///
/// ```
/// use lshdb::{Config, Database};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("pages.lshdb");
/// let db = Database::builder().cache_bytes(16 << 20).create(&path, Config::jaccard(0.8))?;
/// db.insert("a", "some text worth keeping")?;
/// // Another process (or this one) may read while the writer is open.
/// let reader = Database::builder().read_only(true).open(&path)?;
/// assert_eq!(reader.len()?, 1);
/// assert!(reader.insert("b", "more text").is_err()); // Error::ReadOnly
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    cache_bytes: Option<usize>,
    record_cache_bytes: Option<usize>,
    kept_filter_bytes: Option<usize>,
    expect: Option<Config>,
    read_only: bool,
    wait: Option<Duration>,
    durability: super::Durability,
}

impl Builder {
    /// Bytes of redb's page cache (default 64 MiB). Bounds the memory of
    /// reads and bulk loads.
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = Some(bytes);
        self
    }

    /// Bytes of decoded signature and shingle-set records kept for queries
    /// (default 64 MiB; 0 turns it off).
    pub fn record_cache_bytes(mut self, bytes: usize) -> Self {
        self.record_cache_bytes = Some(bytes);
        self
    }

    /// Bytes of whole run filters a file with clusters keeps in memory
    /// between write transactions, for the clusters' upkeep (default 384
    /// MiB, about 18 M documents' worth at 21 bytes each; past it, runs
    /// are probed row by row, slower). Unused without clusters.
    pub fn kept_filter_bytes(mut self, bytes: usize) -> Self {
        self.kept_filter_bytes = Some(bytes);
        self
    }

    /// A configuration the stored one must match: opening fails with
    /// [`Error::ConfigMismatch`] naming the first differing field otherwise.
    pub fn expect(mut self, config: Config) -> Self {
        self.expect = Some(config);
        self
    }

    /// Opens without write access (default false). A read-only handle never
    /// changes the file's contents, works on a file the user may only read,
    /// and may be open in any number of processes while one other process
    /// writes; its queries see the writer's commits as they land. Writes
    /// return [`Error::ReadOnly`].
    ///
    /// A file whose writer crashed needs a repair first. The open makes it
    /// when it may — the file and its folder are not read-only and no
    /// writer has it open — by opening the file for writing once, and then
    /// goes on read-only; otherwise it fails with [`Error::NeedsRepair`].
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// When another process has the file open for writing, retry for up to
    /// `timeout` instead of failing at once with [`Error::AlreadyOpen`].
    pub fn wait(mut self, timeout: Duration) -> Self {
        self.wait = Some(timeout);
        self
    }

    /// How durable the handle's commits are (default
    /// [`Durability::Immediate`](super::Durability::Immediate)). With
    /// [`Durability::None`](super::Durability::None) a commit reaches the
    /// disk only with the next durable one ([`Database::flush`], a clean
    /// close), and the file is opened so that no other process may open it
    /// meanwhile; see [`super::Durability`]. Read-only opens ignore it.
    pub fn durability(mut self, durability: super::Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Creates a new database file at `path`.
    ///
    /// # Errors
    /// [`Error::FileExists`] when the path exists; [`Error::InvalidParameter`]
    /// for an invalid configuration; [`Error::InvalidParameter`] for a
    /// read-only builder; storage errors.
    pub fn create(&self, path: impl AsRef<Path>, config: Config) -> Result<Database> {
        let path = path.as_ref();
        crate::guard::guard(|| {
            self.refuse_read_only_create()?;
            let (settings, pipeline) = resolve(&config)?;
            if path.exists() {
                return Err(Error::FileExists {
                    path: path.to_owned(),
                });
            }
            let db = self
                .redb(self.file_mode())
                .create(path)
                .map_err(|e| map_open_error(path, "create", e))?;
            self.initialize(db, path, settings, pipeline)
                .inspect_err(|_| {
                    // A file without lshdb metadata is of no use and would
                    // block a retry with FileExists: remove it (best effort).
                    let _ = std::fs::remove_file(path);
                })
        })
    }

    /// Opens an existing database; its configuration comes from the file.
    ///
    /// # Errors
    /// [`Error::NotADatabase`], [`Error::FormatVersion`],
    /// [`Error::AlreadyOpen`] (another process writes it; not for
    /// read-only opens), [`Error::NeedsRepair`] (read-only open of a file
    /// whose writer crashed, which it may not repair: see
    /// [`Builder::read_only`]), [`Error::ConfigMismatch`],
    /// [`Error::NotADatabase`] (a FIFO, a folder, a device),
    /// [`Error::Corrupted`] (also a truncated file), [`Error::Io`] naming
    /// the file (missing, permission denied).
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Database> {
        let path = path.as_ref();
        crate::guard::guard(|| {
            check_header(path)?;
            let started = Instant::now();
            let mut repaired = false;
            loop {
                match self.open_engine(path) {
                    Err(Error::AlreadyOpen { .. }) if self.keep_waiting(started) => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(Error::AlreadyOpen { path, .. }) => {
                        return Err(Error::AlreadyOpen {
                            path,
                            waited: self.wait,
                        })
                    }
                    Err(Error::NeedsRepair { .. }) if !repaired && may_repair(path) => {
                        repaired = true;
                        self.repair(path)?;
                    }
                    Err(err) => return Err(err),
                    Ok(engine) => return self.attach(Store::new(engine, path), path),
                }
            }
        })
    }

    /// Creates a new database on a caller-supplied redb storage backend
    /// instead of a file: memory, an encrypted or remote store, or a test
    /// harness that injects faults. Every operation then works as on a
    /// file, with the same durability: a commit returns once the backend's
    /// `sync_data` has.
    ///
    /// Such a database has no path: [`Database::path`] returns the
    /// placeholder `<backend>`, errors that name a file name that, and
    /// [`crate::Stats::file_bytes`] is 0. redb takes no file lock on a
    /// backend, so the caller must not open the same storage twice at once.
    ///
    /// # Errors
    /// [`Error::FileExists`] when the backend is not empty (open it with
    /// [`Builder::open_with_backend`]); [`Error::InvalidParameter`] for an
    /// invalid configuration; [`Error::Io`] when the backend fails to report
    /// its length; storage errors.
    pub fn create_with_backend(
        &self,
        backend: impl crate::StorageBackend,
        config: Config,
    ) -> Result<Database> {
        crate::guard::guard(|| {
            self.refuse_read_only_create()?;
            let (settings, pipeline) = resolve(&config)?;
            let path = Path::new(BACKEND_PATH);
            // redb would open what the backend holds; creating means starting empty.
            if backend
                .len()
                .map_err(Error::io("read the length of", path))?
                != 0
            {
                return Err(Error::FileExists {
                    path: path.to_owned(),
                });
            }
            let db = self
                .redb(ConcurrencyMode::ExclusiveWriter)
                .create_with_backend(backend)
                .map_err(|e| map_open_error(path, "create", e))?;
            self.initialize(db, path, settings, pipeline)
        })
    }

    /// Opens an existing database on a caller-supplied redb storage
    /// backend, as [`Builder::open`] opens a file (see
    /// [`Builder::create_with_backend`] for what differs without a path).
    /// A backend left by an interrupted commit is repaired by a writable
    /// open, as a file is.
    ///
    /// # Errors
    /// [`Error::NotADatabase`] (the backend is empty, does not start with a
    /// redb header, or holds a redb database without lshdb metadata),
    /// [`Error::FormatVersion`], [`Error::ConfigMismatch`],
    /// [`Error::Corrupted`], [`Error::Io`] when reading the header fails;
    /// other storage errors.
    pub fn open_with_backend(&self, backend: impl crate::StorageBackend) -> Result<Database> {
        crate::guard::guard(|| {
            let path = Path::new(BACKEND_PATH);
            check_backend_header(path, &backend)?;
            let redb = self.redb(ConcurrencyMode::ExclusiveWriter);
            let store = if self.read_only {
                Engine::Read(
                    redb.open_read_only_with_backend(backend)
                        .map_err(|e| map_open_error(path, "open", e))?,
                )
            } else {
                // Not empty (checked above), so redb opens, and never initializes.
                Engine::Write(std::sync::Arc::new(
                    redb.create_with_backend(backend)
                        .map_err(|e| map_open_error(path, "open", e))?,
                ))
            };
            self.attach(Store::new(store, path), path)
        })
    }

    fn redb(&self, mode: ConcurrencyMode) -> redb::Builder {
        let mut builder = redb::Database::builder();
        builder.set_cache_size(self.cache_bytes.unwrap_or(DEFAULT_CACHE_BYTES));
        builder.set_concurrency_mode(mode);
        builder
    }

    /// How a file is shared: one writer beside read-only processes, or,
    /// for non-durable commits (which live in this process only), one
    /// process alone.
    fn file_mode(&self) -> ConcurrencyMode {
        match self.durability {
            super::Durability::None if !self.read_only => ConcurrencyMode::ExclusiveWriter,
            _ => ConcurrencyMode::SingleWriter,
        }
    }

    /// Opens the redb database at `path` as the builder says.
    fn open_engine(&self, path: &Path) -> Result<Engine> {
        let redb = self.redb(self.file_mode());
        if self.read_only {
            redb.open_read_only(path)
                .map(Engine::Read)
                .map_err(|e| map_open_error(path, "open", e))
        } else {
            redb.open(path)
                .map(|db| Engine::Write(std::sync::Arc::new(db)))
                .map_err(|e| map_open_error(path, "open for writing", e))
        }
    }

    /// Repairs a file whose writer crashed, for a read-only open: opens it
    /// for writing once (the storage engine repairs it then) and closes it.
    /// When that fails — another writer has opened it meanwhile (and has
    /// repaired it), or the file may not be written after all — the
    /// read-only open goes on and reports what it finds.
    fn repair(&self, path: &Path) -> Result<()> {
        match self.redb(ConcurrencyMode::SingleWriter).open(path) {
            Ok(db) => Ok(db.close()?),
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => Ok(()),
            Err(redb::DatabaseError::Storage(redb::StorageError::Io(io)))
                if io.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                Ok(())
            }
            Err(other) => Err(map_open_error(path, "repair", other)),
        }
    }

    fn refuse_read_only_create(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::invalid(
                "read_only",
                "a database cannot be created read-only; create it, then open it read-only",
            ));
        }
        Ok(())
    }

    fn keep_waiting(&self, started: Instant) -> bool {
        self.wait.is_some_and(|limit| started.elapsed() < limit)
    }

    /// Writes a new database's metadata and creates every table, in one
    /// durable transaction.
    fn initialize(
        &self,
        db: redb::Database,
        path: &Path,
        settings: Settings,
        pipeline: Pipeline,
    ) -> Result<Database> {
        let txn = db.begin_write()?;
        {
            let mut meta_table = txn.open_table(META)?;
            meta::write_header(&mut meta_table, &settings)?;
            meta::write_u64(&mut meta_table, meta_keys::NEXT_ID, 1)?;
            WriteTables::open(&txn)?; // creates every table
            super::clusters::create_tables(&txn, &pipeline)?;
        }
        txn.commit()?;
        Ok(self.handle(
            Store::new(Engine::Write(std::sync::Arc::new(db)), path),
            path,
            settings,
            pipeline,
        ))
    }

    /// Makes an opened redb database a [`Database`]: reads and checks the
    /// stored settings against the expected configuration.
    fn attach(&self, store: Store, path: &Path) -> Result<Database> {
        let (settings, version) = read_settings(path, &store)?;
        if !store.is_read_only() && version < FORMAT_VERSION {
            super::upgrade::upgrade(store.writable()?)?;
        }
        if let Some(expected) = &self.expect {
            if let Some((field, stored, given)) = settings.first_difference(&expected.resolve()?) {
                return Err(Error::ConfigMismatch {
                    field,
                    stored,
                    given,
                });
            }
        }
        let pipeline = Pipeline::new(&settings)?;
        Ok(self.handle(store, path, settings, pipeline))
    }

    /// A handle on an opened (or just created) database, not poisoned.
    fn handle(
        &self,
        store: Store,
        path: &Path,
        settings: Settings,
        pipeline: Pipeline,
    ) -> Database {
        let cache_bytes = self
            .record_cache_bytes
            .unwrap_or(DEFAULT_RECORD_CACHE_BYTES);
        let merger = match store.shared() {
            Some(engine) => super::merger::Merger::start(engine),
            None => super::merger::Merger::none(),
        };
        Database {
            merger,
            db: store,
            path: path.to_owned(),
            settings,
            pipeline,
            poisoned: Mutex::new(None),
            cache: RecordCache::new(cache_bytes),
            durability: self.durability,
            kept_filters: Mutex::new(super::kept_filters::KeptFilters::new(
                self.kept_filter_bytes
                    .unwrap_or(super::kept_filters::KEPT_FILTER_BYTES),
            )),
            holder: Default::default(),
        }
    }
}

/// redb's error for opening (or creating, `op`) `path`, in lshdb's terms.
fn map_open_error(path: &Path, op: &'static str, err: redb::DatabaseError) -> Error {
    match err {
        redb::DatabaseError::DatabaseAlreadyOpen => Error::AlreadyOpen {
            path: path.to_owned(),
            waited: None,
        },
        redb::DatabaseError::RepairAborted => Error::NeedsRepair {
            path: path.to_owned(),
        },
        // A file cut inside redb's header (after its magic number), or
        // before the pages the header points to.
        redb::DatabaseError::Storage(redb::StorageError::Io(io))
            if io.kind() == std::io::ErrorKind::UnexpectedEof =>
        {
            Error::corrupted(
                "the file is truncated: it ends before the header or the pages the open reads",
            )
        }
        // Permission denied, a missing folder, a full disk: name the file.
        redb::DatabaseError::Storage(redb::StorageError::Io(source)) => Error::Io {
            op,
            path: path.to_owned(),
            source,
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

/// The stored settings and the file's format version.
fn read_settings(path: &Path, store: &Store) -> Result<(Settings, u32)> {
    let not_lshdb = |reason: &str| Error::NotADatabase {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let txn = store.begin_read()?;
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
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
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
    Ok((meta::decode_settings(settings.value())?, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_builder_cannot_create() {
        let dir = tempfile::tempdir().unwrap();
        let err = Database::builder()
            .read_only(true)
            .create(dir.path().join("x.lshdb"), Config::jaccard(0.8))
            .unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidParameter {
                name: "read_only",
                ..
            }
        ));
        assert!(!dir.path().join("x.lshdb").exists());
    }
}
