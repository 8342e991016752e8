//! `Database`: the whole [`lshdb::Database`] for Python.
//!
//! **Sharing:** one lock, see `shared.rs`. The methods are grouped by
//! area, one `#[pymethods]` block per file: opening and closing here,
//! `write.rs`, `unique.rs`, `read.rs`, `admin.rs` and `modes.rs`.
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
mod clusters;
mod containment;
mod expire;
mod gate;
mod modes;
mod read;
mod shared;
mod unique;
mod write;

pub use gate::QueryPlace;
pub(crate) use shared::Shared;

use crate::config::{settings_dict, ConfigArgs};
use crate::errors::{run, Fail};
use crate::sketcher::Sketcher;
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
    #[pyo3(signature = (path, threshold = 0.8, *, shingle = "char:5", num_perm = 128, bands = None, rows = None, simhash = None, store_text = false, containment = false, clusters = None, cache_bytes = None, record_cache_bytes = None, kept_filter_bytes = None, durability = "immediate", timestamps = false))]
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
        containment: bool,
        clusters: Option<String>,
        cache_bytes: Option<usize>,
        record_cache_bytes: Option<usize>,
        kept_filter_bytes: Option<usize>,
        durability: &str,
        timestamps: bool,
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
            let config =
                modes::config(&args, containment, clusters.as_deref())?.timestamps(timestamps);
            let durability = modes::parse_durability(durability)?;
            Ok(modes::builder(
                (cache_bytes, record_cache_bytes, kept_filter_bytes),
                durability,
            )
            .create(&path, config)?)
        })?;
        Ok(Self::wrap(db))
    }

    /// Opens `path`; with `create`, creates it first when it does not
    /// exist, from the configuration arguments (None: `create`'s
    /// defaults), which an existing file's settings must then match.
    #[staticmethod]
    #[pyo3(signature = (path, *, read_only = false, wait = None, cache_bytes = None, record_cache_bytes = None, kept_filter_bytes = None, expect = None, durability = "immediate", create = false, threshold = None, shingle = None, num_perm = None, bands = None, rows = None, simhash = None, store_text = None, containment = None, clusters = None, timestamps = None))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        wait: Option<f64>,
        cache_bytes: Option<usize>,
        record_cache_bytes: Option<usize>,
        kept_filter_bytes: Option<usize>,
        expect: Option<Bound<'_, PyDict>>,
        durability: &str,
        create: bool,
        threshold: Option<f64>,
        shingle: Option<String>,
        num_perm: Option<usize>,
        bands: Option<usize>,
        rows: Option<usize>,
        simhash: Option<u32>,
        store_text: Option<bool>,
        containment: Option<bool>,
        clusters: Option<String>,
        timestamps: Option<bool>,
    ) -> PyResult<Self> {
        let given = threshold.is_some()
            || shingle.is_some()
            || num_perm.is_some()
            || bands.is_some()
            || rows.is_some()
            || simhash.is_some()
            || store_text.is_some()
            || containment.is_some()
            || clusters.is_some()
            || timestamps.is_some();
        let fail = |text: &str| Err(Fail::Input(text.to_owned()).into_py(py));
        if given && !create {
            return fail("open: the configuration arguments (threshold=, shingle=, ...) need create=True; to check an existing file's settings, pass expect=");
        }
        if create && (expect.is_some() || read_only) {
            return fail("open: create=True takes the configuration as arguments, and opens for writing: give neither expect= nor read_only=True with it");
        }
        let expect = match expect {
            None if create => {
                let args = ConfigArgs {
                    threshold: threshold.unwrap_or(0.8),
                    shingle: shingle.as_deref().unwrap_or("char:5"),
                    num_perm: num_perm.unwrap_or(128),
                    bands,
                    rows,
                    simhash,
                    store_text: store_text.unwrap_or(false),
                };
                let containment = containment.unwrap_or(false);
                let config = modes::config(&args, containment, clusters.as_deref())
                    .map(|c| c.timestamps(timestamps.unwrap_or(false)));
                Some(config.map_err(|f| f.into_py(py))?)
            }
            None => None,
            Some(d) => Some(expected(py, &d)?),
        };
        let db = run(py, || {
            let durability = modes::parse_durability(durability)?;
            let mut builder = modes::builder(
                (cache_bytes, record_cache_bytes, kept_filter_bytes),
                durability,
            )
            .read_only(read_only);
            if create {
                let config = expect.clone().expect("create=True sets a configuration");
                match builder.create(&path, config) {
                    Err(lshdb::Error::FileExists { .. }) => {}
                    created => return Ok(created?),
                }
            }
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
            let db = shared.write_lock().take();
            drop(db);
            Ok(())
        })
    }
}

/// `open(expect=...)`: a dict of `create`'s configuration arguments,
/// missing ones taking their defaults.
fn expected(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<lshdb::Config> {
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
    let containment: bool = get("containment")?
        .map(|v| v.extract())
        .transpose()?
        .unwrap_or(false);
    let clusters: Option<String> = get("clusters")?.map(|v| v.extract()).transpose()?.flatten();
    let timestamps: bool = get("timestamps")?
        .map(|v| v.extract())
        .transpose()?
        .unwrap_or(false);
    modes::config(&args, containment, clusters.as_deref())
        .map(|c| c.timestamps(timestamps))
        .map_err(|f| f.into_py(py))
}
