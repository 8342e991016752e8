//! Kernels for data pipelines that keep documents in columnar batches
//! (Spark's `mapInArrow`, `lshdb.spark`): one pass that gives each text
//! its band keys *and* its shingle set, and exact Jaccard over many pairs
//! of flattened sets.
//!
//! As in [`crate::sketcher`], every value is the library's own: the set,
//! the signature of that set and its band keys come from
//! [`lshdb::Sketcher`] (what the database stores for the text), and the
//! similarity from [`jaccard`].

use crate::errors::{run, Fail};
use crate::sketcher::{map, Sketcher};
use crate::texts::TextBatch;
use lshdb::shingle::ShingleSet;
use lshdb::sketch::measures::jaccard;
use lshdb::Document;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use rayon::prelude::*;

/// Band keys `(n, bands)`, then the shingle sets as (offsets, values).
type Sketches<'py> = (
    Bound<'py, PyArray2<u64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
);

/// Every text's band keys and sorted distinct shingle hashes in one pass
/// (each text is shingled once). A text without shingles (empty, or only
/// white space) gets an empty set and band keys of 0: the database refuses
/// such a document, and callers must leave it out of the buckets.
#[pyfunction]
#[pyo3(signature = (sketcher, texts, parallel = true))]
pub fn sketch_batch<'py>(
    py: Python<'py>,
    sketcher: &Bound<'py, Sketcher>,
    texts: TextBatch,
    parallel: bool,
) -> PyResult<Sketches<'py>> {
    let sk: &Sketcher = sketcher.get();
    let bands = sk.settings.bands;
    let (keys, offsets, values) = run(py, || {
        let texts = texts.strs()?;
        let rows = map(&texts, parallel, |text| {
            let set = sk.inner.shingle_set(Document::Text(text));
            let mut keys = Vec::with_capacity(bands);
            if set.is_empty() {
                keys.resize(bands, 0);
            } else {
                sk.inner
                    .band_keys_into(&sk.inner.signature(&set), &mut keys);
            }
            (keys, set)
        });
        let mut keys = Vec::with_capacity(rows.len() * bands);
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0i64);
        let mut values = Vec::with_capacity(rows.iter().map(|r| r.1.len()).sum());
        for (k, set) in rows {
            keys.extend_from_slice(&k);
            values.extend_from_slice(&set);
            offsets.push(values.len() as i64);
        }
        let n = offsets.len() - 1;
        let keys = Array2::from_shape_vec((n, bands), keys)
            .map_err(|e| Fail::Input(format!("internal shape error: {e}")))?;
        Ok((keys, offsets, values))
    })?;
    Ok((
        keys.into_pyarray(py),
        offsets.into_pyarray(py),
        values.into_pyarray(py),
    ))
}

/// Flattened sets: set `i` is `values[offsets[i]..offsets[i + 1]]`.
struct Sets {
    offsets: Vec<i64>,
    values: Vec<u32>,
}

impl Sets {
    fn new(offsets: PyReadonlyArray1<'_, i64>, values: PyReadonlyArray1<'_, u32>) -> Self {
        Sets {
            offsets: offsets.as_array().to_vec(),
            values: values.as_array().to_vec(),
        }
    }

    /// Checks the layout once: offsets start in bounds and never decrease.
    fn check(&self, what: &str) -> Result<usize, Fail> {
        let n = self.offsets.len().saturating_sub(1);
        let ok = self.offsets.first().is_none_or(|&o| o >= 0)
            && self.offsets.windows(2).all(|w| w[0] <= w[1])
            && self
                .offsets
                .last()
                .is_none_or(|&o| usize::try_from(o).is_ok_and(|o| o <= self.values.len()));
        if ok {
            Ok(n)
        } else {
            Err(Fail::Input(format!(
                "jaccard_pairs: `{what}` offsets are out of bounds or decreasing"
            )))
        }
    }

    fn get(&self, i: usize) -> &[u32] {
        &self.values[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// Exact Jaccard similarity of set `a[i]` and set `b[i]` for every `i`: a
/// float64 array. Sets produced by [`sketch_batch`] are sorted and
/// distinct and are compared as they are; any other set is sorted and
/// de-duplicated first.
#[pyfunction]
#[pyo3(signature = (a_offsets, a_values, b_offsets, b_values, parallel = true))]
pub fn jaccard_pairs<'py>(
    py: Python<'py>,
    a_offsets: PyReadonlyArray1<'py, i64>,
    a_values: PyReadonlyArray1<'py, u32>,
    b_offsets: PyReadonlyArray1<'py, i64>,
    b_values: PyReadonlyArray1<'py, u32>,
    parallel: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let a = Sets::new(a_offsets, a_values);
    let b = Sets::new(b_offsets, b_values);
    let out = run(py, || {
        let (na, nb) = (a.check("a")?, b.check("b")?);
        if na != nb {
            return Err(Fail::Input(format!(
                "jaccard_pairs: the two batches differ in length ({na} and {nb})"
            )));
        }
        let f = |i: usize| {
            let (x, y) = (a.get(i), b.get(i));
            if is_set(x) && is_set(y) {
                jaccard(x, y)
            } else {
                let x = ShingleSet::from_hashes(x.to_vec());
                let y = ShingleSet::from_hashes(y.to_vec());
                jaccard(x.as_slice(), y.as_slice())
            }
        };
        Ok(if parallel {
            (0..na).into_par_iter().map(f).collect()
        } else {
            (0..na).map(f).collect::<Vec<f64>>()
        })
    })?;
    Ok(out.into_pyarray(py))
}

/// Strictly increasing: what [`jaccard`] needs.
fn is_set(x: &[u32]) -> bool {
    x.windows(2).all(|w| w[0] < w[1])
}
