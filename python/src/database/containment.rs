//! Containment search: stored documents that hold most of a passage.

use super::read::input;
use super::Database;
use crate::convert::containment_explain_dict;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Containment hits as (key, containment, jaccard).
type ContainmentHits = Vec<(String, f64, f64)>;

#[pymethods]
impl Database {
    /// Documents holding at least a fraction `threshold` of the query's
    /// shingles; `exhaustive` compares with every stored set.
    #[pyo3(signature = (text = None, *, items = None, key = None, threshold, limit = None, max_bucket = None, exhaustive = false, explain = false))]
    #[allow(clippy::too_many_arguments)]
    fn query_containment<'py>(
        &self,
        py: Python<'py>,
        text: Option<String>,
        items: Option<Vec<Vec<u8>>>,
        key: Option<String>,
        threshold: f64,
        limit: Option<usize>,
        max_bucket: Option<usize>,
        exhaustive: bool,
        explain: bool,
    ) -> PyResult<(ContainmentHits, Option<Bound<'py, PyDict>>)> {
        let result = self.read(py, |db| {
            let mut query = input(db, &text, &items, &key)?
                .containment(threshold)
                .exhaustive(exhaustive);
            if let Some(k) = limit {
                query = query.limit(k);
            }
            if let Some(n) = max_bucket {
                query = query.max_bucket(n);
            }
            Ok(query.run()?)
        })?;
        let explained = if explain {
            Some(containment_explain_dict(py, &result.explain)?)
        } else {
            None
        };
        let hits = result
            .hits
            .into_iter()
            .map(|h| (h.key, h.containment, h.jaccard))
            .collect();
        Ok((hits, explained))
    }
}
