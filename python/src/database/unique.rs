//! Bulk writes of item sets and of shingle hashes, and dedup-on-write of many documents at once
//! on the library's pipelined path (`insert_unique_bulk`): chunks are
//! shingled and looked up on every core while the previous one is written,
//! with one commit per `batch` accepted documents, not one per document.

use super::Database;
use crate::convert::{bulk_options, report_dict};
use crate::errors::Fail;
use crate::texts::TextBatch;
use lshdb::{AsDocument, BulkOptions, DuplicateOf, Unique};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Documents per chunk of `insert_unique_many`: each chunk is decided
/// seeing every document accepted before it.
const CHUNK: usize = 4096;

/// One outcome: (0, "", 0.0) inserted; (1, key, similarity) a duplicate
/// of the document under `key`; (2, message, 0.0) rejected.
type Outcome = (u8, String, f64);

/// Each document's item set, borrowed as the library takes it.
fn item_refs(items: &[Vec<Vec<u8>>]) -> Vec<Vec<&[u8]>> {
    items
        .iter()
        .map(|set| set.iter().map(Vec::as_slice).collect())
        .collect()
}

fn check_lengths(what: &str, keys: usize, docs: usize) -> Result<(), Fail> {
    if keys == docs {
        Ok(())
    } else {
        Err(Fail::Input(format!(
            "{what}: {keys} keys but {docs} documents"
        )))
    }
}

#[pymethods]
impl Database {
    /// Bulk load of item sets: `keys[i]` gets the set `items[i]`.
    #[pyo3(signature = (keys, items, batch = None, max_rejected = None))]
    fn insert_item_columns<'py>(
        &self,
        py: Python<'py>,
        keys: TextBatch,
        items: Vec<Vec<Vec<u8>>>,
        batch: Option<usize>,
        max_rejected: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let report = self.read(py, |db| {
            let keys = keys.strs()?;
            check_lengths("insert_many", keys.len(), items.len())?;
            let refs = item_refs(&items);
            let docs = keys.into_iter().zip(refs.iter().map(Vec::as_slice));
            Ok(db.insert_bulk(docs, &bulk_options(batch, max_rejected), |_| true)?)
        })?;
        report_dict(py, &report)
    }

    /// Bulk load of shingle hashes computed elsewhere (an export, another
    /// tool): `keys[i]` gets the set `shingles[i]`, used as it is.
    #[pyo3(signature = (keys, shingles, batch = None, max_rejected = None))]
    fn insert_shingle_columns<'py>(
        &self,
        py: Python<'py>,
        keys: TextBatch,
        shingles: Vec<Vec<u32>>,
        batch: Option<usize>,
        max_rejected: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let report = self.read(py, |db| {
            let keys = keys.strs()?;
            check_lengths("insert_many", keys.len(), shingles.len())?;
            Ok(db.insert_bulk(
                keys.into_iter().zip(shingles),
                &bulk_options(batch, max_rejected),
                |_| true,
            )?)
        })?;
        report_dict(py, &report)
    }

    /// Dedup-on-write of many documents (texts or item sets), in order:
    /// each is compared with the stored documents and those accepted
    /// before it. Returns each document's outcome and the commits made.
    #[pyo3(signature = (keys, texts = None, *, items = None, threshold, batch = None, memory = None, duplicate_of = "first"))]
    #[allow(clippy::too_many_arguments)]
    fn insert_unique_many(
        &self,
        py: Python<'_>,
        keys: TextBatch,
        texts: Option<TextBatch>,
        items: Option<Vec<Vec<Vec<u8>>>>,
        threshold: f64,
        batch: Option<usize>,
        memory: Option<usize>,
        duplicate_of: &str,
    ) -> PyResult<(Vec<Outcome>, u64)> {
        let Some(which) = DuplicateOf::from_name(duplicate_of) else {
            let message = format!("duplicate_of={duplicate_of:?}: use \"first\" or \"best\"");
            return Err(Fail::Input(message).into_py(py));
        };
        let mut options = bulk_options(batch, None).duplicate_of(which);
        if let Some(bytes) = memory {
            options = options.memory(bytes);
        }
        self.read(py, |db| {
            let keys = keys.strs()?;
            match (&texts, &items) {
                (Some(texts), None) => {
                    let texts = texts.strs()?;
                    check_lengths("insert_unique_many", keys.len(), texts.len())?;
                    unique_bulk(db, &keys, &texts, threshold, &options)
                }
                (None, Some(items)) => {
                    check_lengths("insert_unique_many", keys.len(), items.len())?;
                    let refs = item_refs(items);
                    let sets: Vec<&[&[u8]]> = refs.iter().map(Vec::as_slice).collect();
                    unique_bulk(db, &keys, &sets, threshold, &options)
                }
                _ => Err(Fail::Input(
                    "insert_unique_many: give texts= or items=, not both".to_owned(),
                )),
            }
        })
    }
}

/// Runs `insert_unique_bulk` over `keys` and `docs` in chunks.
fn unique_bulk<T: AsDocument + Copy + Send>(
    db: &lshdb::Database,
    keys: &[&str],
    docs: &[T],
    threshold: f64,
    options: &BulkOptions,
) -> Result<(Vec<Outcome>, u64), Fail> {
    let chunks = keys
        .chunks(CHUNK)
        .zip(docs.chunks(CHUNK))
        .map(|(k, d)| k.iter().copied().zip(d.iter().copied()).collect::<Vec<_>>());
    let mut out = Vec::with_capacity(keys.len());
    let report = db.insert_unique_bulk(chunks, threshold, options, |decided| {
        out.extend(decided.into_iter().map(|outcome| match outcome {
            Ok(Unique::Inserted) => (0, String::new(), 0.0),
            Ok(Unique::Duplicate(hit)) => (1, hit.key, hit.similarity),
            Err(err) => (2, crate::errors::message(&err), 0.0),
        }));
        true
    })?;
    Ok((out, report.commits))
}
