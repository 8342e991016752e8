//! Conversions between the `lshdb` crate's values and Python's: hits,
//! explain records, warnings and bulk reports, any serialisable report
//! (settings) through one generic conversion, and a Python iterator of
//! (key, text) pairs read a slice at a time.

use lshdb::{BulkOptions, Explain, Hints, Hit, Warning};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList};
use serde_json::Value;
use std::collections::VecDeque;

/// A serialisable library report as Python values: objects become dicts,
/// arrays lists, numbers int or float, `None` for null. Goes through
/// `serde_json::Value` (already built for the CLI; a report is small) rather
/// than a dependency such as `pythonize`, whose releases trail PyO3's.
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    report: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(report)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    value_to_python(py, &value)
}

fn value_to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, item) in fields {
                dict.set_item(key, value_to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A query warning in Python's words: the library's facts with the
/// `max_bucket=` argument to pass and the call that builds a missing index.
pub(crate) fn warning(w: &Warning) -> String {
    w.describe(&Hints {
        max_bucket: "max_bucket={}",
        build_containment: "db.rebuild(containment=True)",
    })
}

pub(crate) fn hits(hits: Vec<Hit>) -> Vec<(String, f64)> {
    hits.into_iter().map(|h| (h.key, h.similarity)).collect()
}

/// An explain record's `sketch_seconds`, `lookup_seconds`,
/// `verify_seconds` and `warnings` (in Python's words), in that order.
fn timings_and_warnings(
    d: &Bound<'_, PyDict>,
    [sketch, lookup, verify]: [std::time::Duration; 3],
    warnings: &[Warning],
) -> PyResult<()> {
    d.set_item("sketch_seconds", sketch.as_secs_f64())?;
    d.set_item("lookup_seconds", lookup.as_secs_f64())?;
    d.set_item("verify_seconds", verify.as_secs_f64())?;
    d.set_item("warnings", warnings.iter().map(warning).collect::<Vec<_>>())
}

pub(crate) fn explain_dict<'py>(py: Python<'py>, e: &Explain) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("buckets_probed", e.buckets_probed)?;
    d.set_item("posting_sizes", e.posting_sizes.clone())?;
    let truncated: Vec<(usize, usize)> = e
        .truncated_buckets
        .iter()
        .map(|t| (t.band, t.read))
        .collect();
    d.set_item("truncated_buckets", truncated)?;
    d.set_item("candidates", e.candidates)?;
    d.set_item("pruned_by_length", e.pruned_by_length)?;
    d.set_item("pruned_by_signature", e.pruned_by_signature)?;
    d.set_item("verified", e.verified)?;
    d.set_item("returned", e.returned)?;
    d.set_item(
        "candidate_probability_at_threshold",
        e.candidate_probability_at_threshold,
    )?;
    timings_and_warnings(
        &d,
        [e.sketch_time, e.lookup_time, e.verify_time],
        &e.warnings,
    )?;
    d.set_item("recall_estimate", e.recall_estimate)?;
    d.set_item("forest", e.forest)?;
    Ok(d)
}

/// A containment search's explain record: what it probed (`classes`,
/// each as its serde form), counts, `recall_estimate` (a lower bound),
/// timings and warnings.
pub(crate) fn containment_explain_dict<'py>(
    py: Python<'py>,
    e: &lshdb::ContainmentExplain,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("scanned", e.scanned)?;
    d.set_item("classes", to_python(py, &e.classes)?)?;
    d.set_item("candidates", e.candidates)?;
    d.set_item("pruned_by_length", e.pruned_by_length)?;
    d.set_item("verified", e.verified)?;
    d.set_item("returned", e.returned)?;
    d.set_item("recall_estimate", e.recall_estimate)?;
    timings_and_warnings(
        &d,
        [e.sketch_time, e.lookup_time, e.verify_time],
        &e.warnings,
    )?;
    Ok(d)
}

/// `Database.stats()`: the counts, and with `deep=True` the bucket-size
/// `histogram` (a list of counts) and the `largest` buckets as (band, key,
/// documents) tuples.
pub(crate) fn stats_dict<'py>(py: Python<'py>, s: &lshdb::Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("documents", s.documents)?;
    d.set_item("file_bytes", s.file_bytes)?;
    d.set_item("allocated_bytes", s.allocated_bytes)?;
    d.set_item("simhash_postings", s.simhash_postings)?;
    d.set_item("containment_postings", s.containment_postings)?;
    d.set_item("runs", s.runs)?;
    d.set_item("run_postings", s.run_postings)?;
    d.set_item("fresh_postings", s.fresh_postings)?;
    if let Some(deep) = &s.deep {
        d.set_item("mean_shingles", deep.mean_shingles)?;
        d.set_item("buckets", deep.buckets)?;
        d.set_item("postings", deep.postings)?;
        d.set_item("histogram", deep.histogram.clone())?;
        d.set_item("largest", deep.largest.clone())?;
    }
    Ok(d)
}

/// `Database.check()`: [`lshdb::CheckReport`] as it serialises, and its
/// verdict, `clean`.
pub(crate) fn check_dict<'py>(
    py: Python<'py>,
    r: &lshdb::CheckReport,
) -> PyResult<Bound<'py, PyDict>> {
    let d = to_python(py, r)?.cast_into::<PyDict>()?;
    d.set_item("clean", r.is_clean())?;
    Ok(d)
}

/// (key, text) pairs pulled from a Python iterator a slice at a time,
/// taking the GIL only for each slice.
pub(crate) struct PyPairs {
    pub(crate) iter: Py<PyIterator>,
    pub(crate) buf: VecDeque<(String, String)>,
    /// Why the Python iterator stopped early, if it raised.
    pub(crate) error: Option<PyErr>,
    pub(crate) done: bool,
}

impl Iterator for PyPairs {
    type Item = (String, String);

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() && !self.done {
            Python::attach(|py| {
                let mut iter = self.iter.bind(py).clone();
                for _ in 0..1024 {
                    match iter.next() {
                        None => {
                            self.done = true;
                            break;
                        }
                        Some(Err(err)) => {
                            self.error = Some(err);
                            self.done = true;
                            break;
                        }
                        Some(Ok(item)) => match item.extract::<(String, String)>() {
                            Ok(pair) => self.buf.push_back(pair),
                            Err(_) => {
                                self.error = Some(crate::errors::raise(
                                    py,
                                    "InvalidType",
                                    format!(
                                        "insert_many(): argument `docs`: expected (key: str, text: str) pairs, got {}",
                                        item.repr().map(|r| r.to_string()).unwrap_or_default()
                                    ),
                                ));
                                self.done = true;
                                break;
                            }
                        },
                    }
                }
            });
        }
        self.buf.pop_front()
    }
}

pub(crate) fn report_dict<'py>(
    py: Python<'py>,
    r: &lshdb::BulkReport,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("inserted", r.inserted)?;
    d.set_item("replaced", r.replaced)?;
    let rejected: Vec<(String, String)> = r
        .rejected
        .iter()
        .map(|(k, e)| (k.clone(), crate::errors::message(e)))
        .collect();
    d.set_item("rejected", rejected)?;
    d.set_item("rejected_count", r.rejected_count)?;
    d.set_item("commits", r.commits)?;
    Ok(d)
}

/// The bulk options of a Python call: `batch` documents per commit and
/// `max_rejected` refusals kept in the report (`None`: the defaults).
pub(crate) fn bulk_options(batch: Option<usize>, max_rejected: Option<usize>) -> BulkOptions {
    let options = match batch {
        Some(n) => BulkOptions::default().batch(n),
        None => BulkOptions::default(),
    };
    match max_rejected {
        Some(n) => options.max_rejected(n),
        None => options,
    }
}
