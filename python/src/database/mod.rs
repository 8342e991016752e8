//! `Database`: the whole [`lshdb::Database`] for Python.
//!
//! **Sharing:** one lock, see `shared.rs`. The methods are grouped by
//! area, one `#[pymethods]` block per file: opening and closing here,
//! `write.rs`, `read.rs` and `admin.rs`.
//!
//! **Batches.** [`lshdb::Batch`] borrows the `Database`, which a Python
//! object cannot hold beside its owner without `unsafe`. So a Python batch
//! records its operations and [`Database::apply_batch`] replays them in one
//! `Batch` when the `with` block ends: all or nothing, one fsync.
//!
//! **Streams.** `pairs()` and `keys()` run on a background thread
//! (`stream.rs`); conversions of results to Python values are in
//! `convert.rs`.

mod admin;
mod read;
mod shared;
mod write;

pub(crate) use shared::Shared;

use crate::config::{settings_dict, ConfigArgs};
use crate::errors::{run, Fail};
use crate::sketcher::Sketcher;
use lshdb::Database as Db;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// The native database handle; `lshdb.Database` wraps it.
#[pyclass(module = "lshdb._lshdb", name = "Database", frozen)]
pub struct Database {
    shared: Arc<Shared>,
    path: PathBuf,
}

/// One operation of a batch, as `lshdb.Batch` records it:
/// ("insert", key, text, None), ("insert", key, None, items) or
/// ("remove", key, None, None).
type BatchOp = (String, String, Option<String>, Option<Vec<Vec<u8>>>);

pub(crate) type Pair3 = (String, String, f64);

/// Hits as (key, similarity) tuples.
type Hits = Vec<(String, f64)>;

#[pymethods]
impl Database {
    #[staticmethod]
    #[pyo3(signature = (path, threshold = 0.8, *, shingle = "char:5", num_perm = 128, bands = None, rows = None, simhash = None, store_text = false, cache_bytes = None, record_cache_bytes = None))]
    #[allow(clippy::too_many_arguments)]
    fn create(
        py: Python<'_>,
        path: PathBuf,
        threshold: f64,
        shingle: &str,
        num_perm: usize,
        bands: Option<usize>,
        rows: Option<usize>,
        simhash: Option<u32>,
        store_text: bool,
        cache_bytes: Option<usize>,
        record_cache_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let args = ConfigArgs {
            threshold,
            shingle,
            num_perm,
            bands,
            rows,
            simhash,
            store_text,
        };
        let db = run(py, || {
            let config = args.config()?;
            let mut builder = Db::builder();
            if let Some(bytes) = cache_bytes {
                builder = builder.cache_bytes(bytes);
            }
            if let Some(bytes) = record_cache_bytes {
                builder = builder.record_cache_bytes(bytes);
            }
            Ok(builder.create(&path, config)?)
        })?;
        Ok(Self::wrap(db))
    }

    #[staticmethod]
    #[pyo3(signature = (path, *, read_only = false, wait = None, cache_bytes = None, record_cache_bytes = None, expect = None))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        wait: Option<f64>,
        cache_bytes: Option<usize>,
        record_cache_bytes: Option<usize>,
        expect: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let expect = match expect {
            None => None,
            Some(d) => {
                let get = |name: &str| d.get_item(name);
                let shingle: Option<String> = get("shingle")?.map(|v| v.extract()).transpose()?;
                let args = ConfigArgs {
                    threshold: get("threshold")?
                        .map(|v| v.extract())
                        .transpose()?
                        .unwrap_or(0.8),
                    shingle: shingle.as_deref().unwrap_or("char:5"),
                    num_perm: get("num_perm")?
                        .map(|v| v.extract())
                        .transpose()?
                        .unwrap_or(128),
                    bands: get("bands")?.map(|v| v.extract()).transpose()?.flatten(),
                    rows: get("rows")?.map(|v| v.extract()).transpose()?.flatten(),
                    simhash: get("simhash")?.map(|v| v.extract()).transpose()?.flatten(),
                    store_text: get("store_text")?
                        .map(|v| v.extract())
                        .transpose()?
                        .unwrap_or(false),
                };
                Some(args.config().map_err(|f| f.into_py(py))?)
            }
        };
        let db = run(py, || {
            let mut builder = Db::builder().read_only(read_only);
            if let Some(config) = expect {
                builder = builder.expect(config);
            }
            if let Some(seconds) = wait {
                let wait = Duration::try_from_secs_f64(seconds).map_err(|_| {
                    Fail::Input(format!(
                        "invalid parameter `wait`: {seconds} is not a number of seconds ≥ 0"
                    ))
                })?;
                builder = builder.wait(wait);
            }
            if let Some(bytes) = cache_bytes {
                builder = builder.cache_bytes(bytes);
            }
            if let Some(bytes) = record_cache_bytes {
                builder = builder.record_cache_bytes(bytes);
            }
            Ok(builder.open(&path)?)
        })?;
        Ok(Self::wrap(db))
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.shared.db.read_recursive().is_none()
    }

    #[getter]
    fn read_only(&self, py: Python<'_>) -> PyResult<bool> {
        self.read(py, |db| Ok(db.is_read_only()))
    }

    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let settings = self.read(py, |db| Ok(db.settings().clone()))?;
        settings_dict(py, &settings)
    }

    /// Kernels with this database's stored settings.
    fn sketcher(&self, py: Python<'_>) -> PyResult<Sketcher> {
        self.read(py, |db| Ok(Sketcher::of_database(db)))
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let shared = &self.shared;
        run(py, || {
            shared.closing.store(true, Ordering::Relaxed);
            let db = shared.db.write().take();
            drop(db);
            Ok(())
        })
    }
}
