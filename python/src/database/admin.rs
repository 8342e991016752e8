//! Maintenance: stats, check, compact, rebuild and labels.

use super::Database;
use crate::errors::{guard, Fail};
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pymethods]
impl Database {
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
