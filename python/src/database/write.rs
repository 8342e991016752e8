//! Writes: single inserts and removes, dedup-on-write, bulk loads and
//! recorded batches.

use super::{BatchOp, Database};
use crate::convert::{bulk_options, report_dict, PyPairs};
use crate::errors::Fail;
use crate::texts::TextBatch;
use lshdb::{Document, Unique};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::VecDeque;

#[pymethods]
impl Database {
    fn insert(&self, py: Python<'_>, key: &str, text: &str) -> PyResult<()> {
        self.write_call(py, |db| Ok(db.insert(key, text)?))
    }

    fn insert_items(&self, py: Python<'_>, key: &str, items: Vec<Vec<u8>>) -> PyResult<()> {
        self.write_call(py, |db| Ok(db.insert_items(key, &items)?))
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
        self.write_call(py, |db| {
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
    #[pyo3(signature = (keys, texts, batch = None, max_rejected = None))]
    fn insert_columns<'py>(
        &self,
        py: Python<'py>,
        keys: TextBatch,
        texts: TextBatch,
        batch: Option<usize>,
        max_rejected: Option<usize>,
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
            Ok(db.insert_bulk(
                keys.into_iter().zip(texts),
                &bulk_options(batch, max_rejected),
                |_| true,
            )?)
        })?;
        report_dict(py, &report)
    }

    /// Bulk load from an iterator of (key, text) pairs, pulled a slice at
    /// a time.
    #[pyo3(signature = (pairs, batch = None, max_rejected = None))]
    fn insert_pairs<'py>(
        &self,
        py: Python<'py>,
        pairs: &Bound<'py, PyAny>,
        batch: Option<usize>,
        max_rejected: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut source = PyPairs {
            iter: pairs.try_iter()?.unbind(),
            buf: VecDeque::new(),
            error: None,
            done: false,
        };
        let (report, error) = self.read(py, |db| {
            let report =
                db.insert_bulk(source.by_ref(), &bulk_options(batch, max_rejected), |_| {
                    true
                })?;
            Ok((report, source.error.take()))
        })?;
        if let Some(error) = error {
            return Err(error);
        }
        report_dict(py, &report)
    }

    /// Applies a recorded batch in one transaction: all or nothing.
    fn apply_batch(&self, py: Python<'_>, ops: Vec<BatchOp>) -> PyResult<Vec<bool>> {
        self.write_call(py, |db| {
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
        self.write_call(py, |db| Ok(db.remove(key)?))
    }
}
