//! `Database`: the whole [`lshdb::Database`] for Python.
//!
//! **Sharing:** one lock, see `shared.rs`.
//!
//! **Batches.** [`lshdb::Batch`] borrows the `Database`, which a Python
//! object cannot hold beside its owner without `unsafe`. So a Python batch
//! records its operations and [`Database::apply_batch`] replays them in one
//! `Batch` when the `with` block ends: all or nothing, one fsync.
//!
//! **Streams.** `pairs()` and `keys()` run on a background thread
//! (`stream.rs`); conversions of results to Python values are in
//! `convert.rs`.

mod shared;

pub(crate) use shared::Shared;

use crate::config::{settings_dict, ConfigArgs};
use crate::convert::{bulk_options, explain_dict, hits, report_dict, PyPairs};
use crate::errors::{guard, run, Fail};
use crate::sketcher::Sketcher;
use crate::stream::{Item, Stream};
use crate::texts::TextBatch;
use lshdb::{Database as Db, Document, Unique};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use std::collections::VecDeque;
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

    fn insert(&self, py: Python<'_>, key: &str, text: &str) -> PyResult<()> {
        self.read(py, |db| Ok(db.insert(key, text)?))
    }

    fn insert_items(&self, py: Python<'_>, key: &str, items: Vec<Vec<u8>>) -> PyResult<()> {
        self.read(py, |db| Ok(db.insert_items(key, &items)?))
    }

    #[pyo3(signature = (key, text = None, *, items = None, threshold))]
    fn insert_unique(
        &self,
        py: Python<'_>,
        key: &str,
        text: Option<String>,
        items: Option<Vec<Vec<u8>>>,
        threshold: f64,
    ) -> PyResult<Option<(String, f64)>> {
        self.read(py, |db| {
            let unique = match (&text, &items) {
                (Some(text), None) => db.insert_unique(key, text.as_str(), threshold)?,
                (None, Some(items)) => {
                    let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                    db.insert_unique(key, Document::Items(&items), threshold)?
                }
                _ => return Err(Fail::Input("insert_unique: give text or items".to_owned())),
            };
            Ok(match unique {
                Unique::Inserted => None,
                Unique::Duplicate(hit) => Some((hit.key, hit.similarity)),
            })
        })
    }

    /// Bulk load from two equally long batches of keys and texts.
    #[pyo3(signature = (keys, texts, batch = None))]
    fn insert_columns<'py>(
        &self,
        py: Python<'py>,
        keys: TextBatch,
        texts: TextBatch,
        batch: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let report = self.read(py, |db| {
            let (keys, texts) = (keys.strs()?, texts.strs()?);
            if keys.len() != texts.len() {
                return Err(Fail::Input(format!(
                    "insert_many: {} keys but {} texts",
                    keys.len(),
                    texts.len()
                )));
            }
            Ok(db.insert_bulk(keys.into_iter().zip(texts), &bulk_options(batch), |_| true)?)
        })?;
        report_dict(py, &report)
    }

    /// Bulk load from an iterator of (key, text) pairs, pulled a slice at
    /// a time.
    #[pyo3(signature = (pairs, batch = None))]
    fn insert_pairs<'py>(
        &self,
        py: Python<'py>,
        pairs: &Bound<'py, PyAny>,
        batch: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut source = PyPairs {
            iter: pairs.try_iter()?.unbind(),
            buf: VecDeque::new(),
            error: None,
            done: false,
        };
        let (report, error) = self.read(py, |db| {
            let report = db.insert_bulk(source.by_ref(), &bulk_options(batch), |_| true)?;
            Ok((report, source.error.take()))
        })?;
        if let Some(error) = error {
            return Err(error);
        }
        report_dict(py, &report)
    }

    /// Applies a recorded batch in one transaction: all or nothing.
    fn apply_batch(&self, py: Python<'_>, ops: Vec<BatchOp>) -> PyResult<Vec<bool>> {
        self.read(py, |db| {
            let mut batch = db.batch()?;
            let mut removed = Vec::new();
            for (kind, key, text, items) in &ops {
                match (kind.as_str(), text, items) {
                    ("insert", Some(text), None) => batch.insert(key, text.as_str())?,
                    ("insert", None, Some(items)) => {
                        let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                        batch.insert(key, Document::Items(&items))?
                    }
                    ("remove", None, None) => removed.push(batch.remove(key)?),
                    _ => return Err(Fail::Input(format!("batch: unknown operation `{kind}`"))),
                }
            }
            batch.commit()?;
            Ok(removed)
        })
    }

    fn remove(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.read(py, |db| Ok(db.remove(key)?))
    }

    /// (key, text, shingles, simhash) or None.
    #[allow(clippy::type_complexity)]
    fn get(
        &self,
        py: Python<'_>,
        key: &str,
    ) -> PyResult<Option<(String, Option<String>, usize, Option<u64>)>> {
        self.read(py, |db| {
            Ok(db.get(key)?.map(|d| (d.key, d.text, d.shingles, d.simhash)))
        })
    }

    fn contains(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.read(py, |db| Ok(db.contains(key)?))
    }

    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        self.read(py, |db| Ok(db.len()?))
    }

    #[pyo3(signature = (text = None, *, items = None, key = None, threshold = None, limit = None, max_bucket = None, explain = false))]
    #[allow(clippy::too_many_arguments)]
    fn query<'py>(
        &self,
        py: Python<'py>,
        text: Option<String>,
        items: Option<Vec<Vec<u8>>>,
        key: Option<String>,
        threshold: Option<f64>,
        limit: Option<usize>,
        max_bucket: Option<usize>,
        explain: bool,
    ) -> PyResult<(Hits, Option<Bound<'py, PyDict>>)> {
        let result = self.read(py, |db| {
            let query = match (&text, &items, &key) {
                (Some(text), None, None) => db.query(text),
                (None, Some(items), None) => db.query_items(items),
                (None, None, Some(key)) => db.query_key(key),
                _ => {
                    return Err(Fail::Input(
                        "query: give exactly one of text, items= or key=".to_owned(),
                    ))
                }
            };
            Ok(with_options(query, threshold, limit, max_bucket).run()?)
        })?;
        let explained = if explain {
            Some(explain_dict(py, &result.explain)?)
        } else {
            None
        };
        Ok((hits(result.hits), explained))
    }

    /// Queries many texts in parallel; a text with no shingles has no hits.
    #[pyo3(signature = (texts, *, threshold = None, limit = None, max_bucket = None))]
    fn query_many(
        &self,
        py: Python<'_>,
        texts: TextBatch,
        threshold: Option<f64>,
        limit: Option<usize>,
        max_bucket: Option<usize>,
    ) -> PyResult<Vec<Vec<(String, f64)>>> {
        self.read(py, |db| {
            let texts = texts.strs()?;
            texts
                .par_iter()
                .map(|text| {
                    let query = with_options(db.query(text), threshold, limit, max_bucket);
                    match query.run() {
                        Ok(result) => Ok(hits(result.hits)),
                        Err(lshdb::Error::EmptyDocument { .. }) => Ok(Vec::new()),
                        Err(err) => Err(Fail::Db(err)),
                    }
                })
                .collect()
        })
    }

    /// (key, distance, fingerprint) within `max_distance` bits.
    #[pyo3(signature = (text, max_distance, *, limit = None))]
    fn simhash_search(
        &self,
        py: Python<'_>,
        text: String,
        max_distance: u32,
        limit: Option<usize>,
    ) -> PyResult<Vec<(String, u32, u64)>> {
        self.read(py, |db| {
            let query = with_options(db.query(&text), None, limit, None);
            let (hits, _) = query.near_simhash(max_distance)?;
            Ok(hits
                .into_iter()
                .map(|h| (h.key, h.distance, h.fingerprint))
                .collect())
        })
    }

    #[pyo3(signature = (threshold = None))]
    fn pairs(&self, threshold: Option<f64>) -> Stream {
        self.stream(move |db, emit| {
            let t = threshold.unwrap_or(db.settings().threshold);
            db.pairs(t, |p| emit(Item::Pair((p.a, p.b, p.similarity))))?;
            Ok(())
        })
    }

    fn keys(&self) -> Stream {
        self.stream(|db, emit| {
            db.for_each(|doc| emit(Item::Key(doc.key)))?;
            Ok(())
        })
    }

    #[pyo3(signature = (threshold = None))]
    fn groups(&self, py: Python<'_>, threshold: Option<f64>) -> PyResult<Vec<Vec<(String, f64)>>> {
        self.read(py, |db| {
            let t = threshold.unwrap_or(db.settings().threshold);
            Ok(db.groups(t)?.groups)
        })
    }

    fn exact_pairs(&self, py: Python<'_>, threshold: f64) -> PyResult<Vec<Pair3>> {
        self.read(py, |db| {
            let mut out = Vec::new();
            db.exact_pairs(threshold, |p| {
                out.push((p.a, p.b, p.similarity));
                true
            })?;
            Ok(out)
        })
    }

    #[pyo3(signature = (*, deep = false))]
    fn stats<'py>(&self, py: Python<'py>, deep: bool) -> PyResult<Bound<'py, PyDict>> {
        let s = self.read(py, |db| {
            Ok(if deep { db.stats_deep()? } else { db.stats()? })
        })?;
        guard(py, || crate::convert::stats_dict(py, &s))
    }

    #[pyo3(signature = (*, pages = false))]
    fn check<'py>(&self, py: Python<'py>, pages: bool) -> PyResult<Bound<'py, PyDict>> {
        let r = if pages {
            self.write(py, |db| Ok(db.check_pages()?))?
        } else {
            self.read(py, |db| Ok(db.check()?))?
        };
        guard(py, || crate::convert::check_dict(py, &r))
    }

    fn compact(&self, py: Python<'_>) -> PyResult<bool> {
        self.write(py, |db| Ok(db.compact()?))
    }

    #[pyo3(signature = (threshold, bands = None, rows = None))]
    fn rebuild(
        &self,
        py: Python<'_>,
        threshold: f64,
        bands: Option<usize>,
        rows: Option<usize>,
    ) -> PyResult<()> {
        let banding = match (bands, rows) {
            (Some(b), Some(r)) => Some((b, r)),
            (None, None) => None,
            _ => {
                return Err(
                    Fail::Input("rebuild: give both bands and rows, or neither".to_owned())
                        .into_py(py),
                )
            }
        };
        self.write(py, |db| Ok(db.reband(threshold, banding)?))
    }

    fn get_label(&self, py: Python<'_>, name: &str) -> PyResult<Option<String>> {
        self.read(py, |db| Ok(db.label(name)?))
    }

    fn set_label(&self, py: Python<'_>, name: &str, value: &str) -> PyResult<()> {
        self.read(py, |db| Ok(db.set_label(name, value)?))
    }
}

/// `query` with the options a Python call gave (`None`: the default).
fn with_options(
    mut query: lshdb::Query<'_>,
    threshold: Option<f64>,
    limit: Option<usize>,
    max_bucket: Option<usize>,
) -> lshdb::Query<'_> {
    if let Some(t) = threshold {
        query = query.threshold(t);
    }
    if let Some(k) = limit {
        query = query.limit(k);
    }
    if let Some(n) = max_bucket {
        query = query.max_bucket(n);
    }
    query
}
