//! `Sketcher`: the database's shingling, MinHash, banding and SimHash as
//! batch kernels over many texts or item sets, returning NumPy arrays.
//!
//! The values are the library's own: every one comes from
//! [`lshdb::Sketcher`], the type the database itself runs every document
//! and query through, built from [`lshdb::Config::resolve`] or taken from a
//! database ([`lshdb::Database::sketcher`]). No value is computed here.

use crate::config::{settings_dict, ConfigArgs};
use crate::errors::{run, Fail};
use crate::items::ItemSets;
use crate::texts::TextBatch;
use lshdb::shingle::ShingleSet;
use lshdb::sketch::measures::jaccard;
use lshdb::sketch::signer::TextSigner;
use lshdb::{Document, Settings};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

/// Arrow-style (offsets, values) of many variable-length rows.
type Flattened<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u32>>);

/// Batch sketch kernels with one database configuration.
#[pyclass(module = "lshdb._lshdb", name = "Sketcher", frozen)]
pub struct Sketcher {
    pub(crate) settings: Settings,
    pub(crate) inner: lshdb::Sketcher,
}

impl Sketcher {
    /// The kernels of resolved settings.
    pub fn from_settings(settings: Settings) -> Result<Self, Fail> {
        Ok(Self {
            inner: lshdb::Sketcher::new(&settings)?,
            settings,
        })
    }

    /// A database's own sketcher, with its stored settings.
    pub fn of_database(db: &lshdb::Database) -> Self {
        Self {
            settings: db.settings().clone(),
            inner: db.sketcher().clone(),
        }
    }

    /// The sorted distinct shingle hashes of a text.
    pub(crate) fn set(&self, text: &str) -> Vec<u32> {
        self.inner.shingle_set(Document::Text(text))
    }

    /// Runs `f` on every text, in parallel or not, into rows of `width`
    /// values of a flat output.
    fn per_text<T, F>(&self, texts: &[&str], width: usize, parallel: bool, f: F) -> Vec<T>
    where
        T: Copy + Default + Send,
        F: Fn(&mut TextSigner<'_>, &str, &mut [T]) + Sync,
    {
        let mut out = vec![T::default(); texts.len() * width];
        if width == 0 {
            return out;
        }
        let init = || self.inner.text_signer();
        if parallel {
            out.par_chunks_mut(width)
                .zip(texts.par_iter())
                .for_each_init(init, |signer, (row, text)| f(signer, text, row));
        } else {
            let mut signer = init();
            for (row, text) in out.chunks_mut(width).zip(texts) {
                f(&mut signer, text, row);
            }
        }
        out
    }
}

impl Sketcher {
    /// Runs `f` on every item set, in parallel or not.
    fn per_set<T: Send>(
        &self,
        sets: &ItemSets,
        parallel: bool,
        f: impl Fn(Document<'_>) -> T + Sync,
    ) -> Vec<T> {
        let slices = crate::items::slices(sets);
        let one = |set: &Vec<&[u8]>| f(Document::Items(set));
        if parallel {
            slices.par_iter().map(one).collect()
        } else {
            slices.iter().map(one).collect()
        }
    }

    /// The MinHash signature of an item set (every value `u32::MAX` for an
    /// empty one, as for a text without shingles).
    fn item_signature(&self, doc: Document<'_>) -> Vec<u32> {
        self.inner.signature(&self.inner.shingle_set(doc))
    }
}

/// The documents of a kernel call: texts, or item sets (`items=`).
enum Docs {
    Texts(TextBatch),
    Items(ItemSets),
}

impl Docs {
    fn of(texts: Option<TextBatch>, items: Option<ItemSets>) -> Result<Self, Fail> {
        match (texts, items) {
            (Some(texts), None) => Ok(Docs::Texts(texts)),
            (None, Some(items)) => Ok(Docs::Items(items)),
            _ => Err(Fail::Input(
                "Sketcher: give texts or items=, not both".to_owned(),
            )),
        }
    }
}

pub(crate) fn map<T: Send>(texts: &[&str], parallel: bool, f: impl Fn(&str) -> T + Sync) -> Vec<T> {
    if parallel {
        texts.par_iter().map(|t| f(t)).collect()
    } else {
        texts.iter().map(|t| f(t)).collect()
    }
}

#[pymethods]
impl Sketcher {
    #[new]
    #[pyo3(signature = (shingle = "char:5", num_perm = 128, threshold = 0.8, bands = None, rows = None, *, shingle_seed = None, minhash_seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        shingle: &str,
        num_perm: usize,
        threshold: f64,
        bands: Option<usize>,
        rows: Option<usize>,
        shingle_seed: Option<u32>,
        minhash_seed: Option<u64>,
    ) -> PyResult<Self> {
        let args = ConfigArgs {
            threshold,
            shingle,
            num_perm,
            bands,
            rows,
            simhash: None,
            store_text: false,
        };
        run(py, || {
            let mut config = args.config()?;
            if let Some(seed) = shingle_seed {
                config.shingle.seed = seed;
            }
            if let Some(seed) = minhash_seed {
                config.minhash.seed = seed;
            }
            Sketcher::from_settings(config.resolve()?)
        })
    }

    /// The resolved settings (as `Database.settings`).
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        settings_dict(py, &self.settings)
    }

    #[getter]
    fn num_perm(&self) -> usize {
        self.settings.minhash.num_perm
    }

    #[getter]
    fn bands(&self) -> usize {
        self.settings.bands
    }

    #[getter]
    fn rows(&self) -> usize {
        self.settings.rows
    }

    /// Sorted distinct shingle hashes of every text, as Arrow-style
    /// (offsets, values): text i has values[offsets[i]:offsets[i+1]].
    #[pyo3(signature = (texts = None, parallel = true, *, items = None))]
    fn shingles<'py>(
        &self,
        py: Python<'py>,
        texts: Option<TextBatch>,
        parallel: bool,
        items: Option<ItemSets>,
    ) -> PyResult<Flattened<'py>> {
        let (offsets, values) = run(py, || {
            let sets = match Docs::of(texts, items)? {
                Docs::Texts(texts) => map(&texts.strs()?, parallel, |t| self.set(t)),
                Docs::Items(sets) => {
                    self.per_set(&sets, parallel, |doc| self.inner.shingle_set(doc))
                }
            };
            let mut offsets = Vec::with_capacity(sets.len() + 1);
            offsets.push(0i64);
            let total = sets.iter().map(Vec::len).sum();
            let mut values = Vec::with_capacity(total);
            for set in sets {
                values.extend_from_slice(&set);
                offsets.push(values.len() as i64);
            }
            Ok((offsets, values))
        })?;
        Ok((offsets.into_pyarray(py), values.into_pyarray(py)))
    }

    /// MinHash signatures, an (n, num_perm) uint32 array.
    #[pyo3(signature = (texts = None, parallel = true, *, items = None))]
    fn signatures<'py>(
        &self,
        py: Python<'py>,
        texts: Option<TextBatch>,
        parallel: bool,
        items: Option<ItemSets>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let width = self.settings.minhash.num_perm;
        let flat = run(py, || match Docs::of(texts, items)? {
            Docs::Texts(texts) => Ok(self.per_text(
                &texts.strs()?,
                width,
                parallel,
                |signer, text, row| row.copy_from_slice(signer.sign(text)),
            )),
            Docs::Items(sets) => Ok(self
                .per_set(&sets, parallel, |doc| self.item_signature(doc))
                .concat()),
        })?;
        to_2d(py, flat, width)
    }

    /// LSH band keys, an (n, bands) uint64 array.
    #[pyo3(signature = (texts = None, parallel = true, *, items = None))]
    fn band_keys<'py>(
        &self,
        py: Python<'py>,
        texts: Option<TextBatch>,
        parallel: bool,
        items: Option<ItemSets>,
    ) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let width = self.settings.bands;
        let keys_of = |signature: &[u32]| {
            let mut keys = Vec::with_capacity(width);
            self.inner.band_keys_into(signature, &mut keys);
            keys
        };
        let flat = run(py, || match Docs::of(texts, items)? {
            Docs::Texts(texts) => Ok(self.per_text(
                &texts.strs()?,
                width,
                parallel,
                |signer, text, row| row.copy_from_slice(&keys_of(signer.sign(text))),
            )),
            Docs::Items(sets) => Ok(self
                .per_set(&sets, parallel, |doc| keys_of(&self.item_signature(doc)))
                .concat()),
        })?;
        to_2d(py, flat, width)
    }

    /// 64-bit SimHash fingerprints (term-frequency weighted shingles), a
    /// uint64 array.
    #[pyo3(signature = (texts = None, parallel = true, *, items = None))]
    fn simhash<'py>(
        &self,
        py: Python<'py>,
        texts: Option<TextBatch>,
        parallel: bool,
        items: Option<ItemSets>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let out = run(py, || match Docs::of(texts, items)? {
            Docs::Texts(texts) => Ok(map(&texts.strs()?, parallel, |t| {
                self.inner.simhash(Document::Text(t))
            })),
            Docs::Items(sets) => Ok(self.per_set(&sets, parallel, |doc| self.inner.simhash(doc))),
        })?;
        Ok(out.into_pyarray(py))
    }

    /// Exact Jaccard similarity of two texts' shingle sets, pairwise over
    /// two equally long batches.
    #[pyo3(signature = (a, b, parallel = true))]
    fn jaccard_texts<'py>(
        &self,
        py: Python<'py>,
        a: TextBatch,
        b: TextBatch,
        parallel: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = run(py, || {
            let (a, b) = (a.strs()?, b.strs()?);
            if a.len() != b.len() {
                return Err(Fail::Input(format!(
                    "jaccard: the two batches differ in length ({} and {})",
                    a.len(),
                    b.len()
                )));
            }
            let pairs: Vec<(&str, &str)> = a.into_iter().zip(b).collect();
            let f = |(x, y): &(&str, &str)| jaccard(&self.set(x), &self.set(y));
            Ok(if parallel {
                pairs.par_iter().map(f).collect()
            } else {
                pairs.iter().map(f).collect::<Vec<f64>>()
            })
        })?;
        Ok(out.into_pyarray(py))
    }
}

/// Exact Jaccard similarity of two sets of shingle hashes (any order,
/// repeats ignored).
#[pyfunction]
pub fn jaccard_sets(
    py: Python<'_>,
    a: PyReadonlyArray1<'_, u32>,
    b: PyReadonlyArray1<'_, u32>,
) -> PyResult<f64> {
    let (a, b) = (a.as_array().to_vec(), b.as_array().to_vec());
    run(py, || {
        let (a, b) = (ShingleSet::from_hashes(a), ShingleSet::from_hashes(b));
        Ok(jaccard(a.as_slice(), b.as_slice()))
    })
}

fn to_2d<T: numpy::Element>(
    py: Python<'_>,
    flat: Vec<T>,
    width: usize,
) -> PyResult<Bound<'_, PyArray2<T>>> {
    let n = flat.len().checked_div(width).unwrap_or(0);
    let array = Array2::from_shape_vec((n, width), flat)
        .map_err(|e| Fail::Input(format!("internal shape error: {e}")).into_py(py))?;
    Ok(array.into_pyarray(py))
}
