//! Timestamps and expiry: inserting with a timestamp, reading one, and
//! removing the documents older than a time (`Database::expire_with`).

use super::Database;
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pymethods]
impl Database {
    /// Inserts (or replaces) the document under `key`, stamped with `at`
    /// (seconds since the Unix epoch).
    fn insert_at(&self, py: Python<'_>, key: &str, text: &str, at: u64) -> PyResult<()> {
        self.write_call(py, |db| Ok(db.insert_at(key, text, at)?))
    }

    /// The timestamp of the document under `key`, or None.
    fn timestamp(&self, py: Python<'_>, key: &str) -> PyResult<Option<u64>> {
        self.read(py, |db| Ok(db.timestamp(key)?))
    }

    /// Removes the documents stamped before `older_than`, `batch` per
    /// commit: {"removed", "commits"}.
    #[pyo3(signature = (older_than, *, batch = None))]
    fn expire<'py>(
        &self,
        py: Python<'py>,
        older_than: u64,
        batch: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let batch = batch.unwrap_or(lshdb::EXPIRE_BATCH);
        let report = self.write_call(py, |db| Ok(db.expire_with(older_than, batch, |_| true)?))?;
        let out = PyDict::new(py);
        out.set_item("removed", report.removed)?;
        out.set_item("commits", report.commits)?;
        Ok(out)
    }
}
