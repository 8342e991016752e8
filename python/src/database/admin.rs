//! Maintenance: stats, check, compact, rebuild (re-banding, the
//! containment index) and labels.

use super::Database;
use crate::errors::{guard, Fail};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Seconds since the Unix epoch now (the stamp of documents a rebuild
/// adds to the time index).
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

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

    /// Re-bands for a new threshold and/or builds (true) or drops (false)
    /// the containment index, the maintained clusters and the time index
    /// (built: every stored document stamped now).
    #[pyo3(signature = (threshold = None, bands = None, rows = None, *, containment = None, clusters = None, timestamps = None))]
    #[allow(clippy::too_many_arguments)]
    fn rebuild(
        &self,
        py: Python<'_>,
        threshold: Option<f64>,
        bands: Option<usize>,
        rows: Option<usize>,
        containment: Option<bool>,
        clusters: Option<String>,
        timestamps: Option<bool>,
    ) -> PyResult<()> {
        let fail = |text: &str| Err(Fail::Input(text.to_owned()).into_py(py));
        let banding = match (bands, rows) {
            (Some(b), Some(r)) => Some((b, r)),
            (None, None) => None,
            _ => return fail("rebuild: give both bands and rows, or neither"),
        };
        let policy = match clusters.as_deref() {
            None | Some("off") => None,
            Some(name) => match lshdb::Representative::from_name(name) {
                Some(policy) => Some(policy),
                None => return fail("rebuild: clusters= takes True, False, \"first\", \"longest\" or \"smallest-key\""),
            },
        };
        let other = containment.is_some() || clusters.is_some() || timestamps.is_some();
        if threshold.is_none() && (banding.is_some() || !other) {
            return fail("rebuild: give threshold= (with bands= and rows=, or neither), containment=True or False, clusters=, timestamps=True or False, or several");
        }
        self.write(py, |db| {
            if let Some(threshold) = threshold {
                db.reband(threshold, banding)?;
            }
            match containment {
                Some(true) => db.build_containment_index()?,
                Some(false) => db.drop_containment_index()?,
                None => {}
            }
            match (clusters.is_some(), policy) {
                (true, Some(policy)) => db.build_clusters(policy)?,
                (true, None) => db.drop_clusters()?,
                (false, _) => {}
            }
            match timestamps {
                Some(true) => db.build_time_index(now())?,
                Some(false) => db.drop_time_index()?,
                None => {}
            }
            Ok(())
        })
    }

    fn get_label(&self, py: Python<'_>, name: &str) -> PyResult<Option<String>> {
        self.read(py, |db| Ok(db.label(name)?))
    }

    fn set_label(&self, py: Python<'_>, name: &str, value: &str) -> PyResult<()> {
        self.read(py, |db| Ok(db.set_label(name, value)?))
    }
}
