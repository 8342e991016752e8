//! Reads: look-ups, queries (one or many, in parallel), SimHash search,
//! and the streamed or collected pair and group listings.

use super::{Database, Hits, Pair3};
use crate::convert::{explain_dict, hits};
use crate::errors::Fail;
use crate::items::ItemSets;
use crate::stream::{Item, Stream};
use crate::texts::TextBatch;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

#[pymethods]
impl Database {
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

    /// Jaccard of the sets stored under `a` and `b`; None when one is missing.
    fn similarity(&self, py: Python<'_>, a: &str, b: &str) -> PyResult<Option<f64>> {
        self.read(py, |db| Ok(db.similarity(a, b)?))
    }

    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        self.read(py, |db| Ok(db.len()?))
    }

    #[pyo3(signature = (text = None, *, items = None, key = None, threshold = None, limit = None, max_bucket = None, top = None, explain = false))]
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
        top: Option<usize>,
        explain: bool,
    ) -> PyResult<(Hits, Option<Bound<'py, PyDict>>)> {
        let result = self.read(py, |db| {
            let mut query = with_options(
                input(db, &text, &items, &key)?,
                threshold,
                limit,
                max_bucket,
            );
            if let Some(k) = top {
                query = query.top(k);
            }
            Ok(query.run()?)
        })?;
        let explained = if explain {
            Some(explain_dict(py, &result.explain)?)
        } else {
            None
        };
        Ok((hits(result.hits), explained))
    }

    /// Queries many texts or item sets (`items=`) in parallel on the rayon
    /// pool, all of it without the GIL; an input with no shingles has no
    /// hits. It takes no place of the query gate (see `gate.rs`): it runs on
    /// the pool's threads, one per core.
    #[pyo3(signature = (texts = None, *, items = None, threshold = None, limit = None, max_bucket = None))]
    fn query_many(
        &self,
        py: Python<'_>,
        texts: Option<TextBatch>,
        items: Option<ItemSets>,
        threshold: Option<f64>,
        limit: Option<usize>,
        max_bucket: Option<usize>,
    ) -> PyResult<Vec<Hits>> {
        self.read(py, |db| {
            let one =
                |query: lshdb::Query<'_>| match with_options(query, threshold, limit, max_bucket)
                    .run()
                {
                    Ok(result) => Ok(hits(result.hits)),
                    Err(lshdb::Error::EmptyDocument { .. }) => Ok(Vec::new()),
                    Err(err) => Err(Fail::Db(err)),
                };
            match (&texts, &items) {
                (Some(texts), None) => {
                    let texts = texts.strs()?;
                    texts.par_iter().map(|text| one(db.query(text))).collect()
                }
                (None, Some(sets)) => {
                    let sets = crate::items::slices(sets);
                    sets.par_iter()
                        .map(|set| one(db.query_items(set)))
                        .collect()
                }
                _ => Err(Fail::Input(
                    "query_many: give texts or items=, not both".to_owned(),
                )),
            }
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

    /// Every stored document as (key, text, shingle hashes), in id order:
    /// what `lshdb export` writes.
    fn documents(&self) -> Stream {
        self.stream(|db, emit| {
            db.for_each(|doc| emit(Item::Document((doc.key, doc.text, doc.shingles))))?;
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
}

/// `query` with the options a Python call gave (`None`: the default).
pub(super) fn with_options(
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

/// The query of exactly one of a text, an item set or a stored key.
pub(super) fn input<'db>(
    db: &'db lshdb::Database,
    text: &Option<String>,
    items: &Option<Vec<Vec<u8>>>,
    key: &Option<String>,
) -> Result<lshdb::Query<'db>, Fail> {
    Ok(match (text, items, key) {
        (Some(text), None, None) => db.query(text),
        (None, Some(items), None) => db.query_items(items),
        (None, None, Some(key)) => db.query_key(key),
        _ => {
            return Err(Fail::Input(
                "query: give exactly one of text, items= or key=".to_owned(),
            ))
        }
    })
}
