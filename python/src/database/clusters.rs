//! Maintained clusters: `cluster_of`, `cluster`, `members`, `clusters`
//! and `document_clusters` (streamed), `insert_clustered`, and the writes
//! of documents with a priority (and a timestamp): `insert_document`,
//! `insert_unique_document`, `insert_carried_columns`.

use super::Database;
use crate::convert::{bulk_options, report_dict};
use crate::errors::Fail;
use crate::stream::{Item, Stream};
use crate::texts::TextBatch;
use lshdb::{AsDocument, Document, Unique};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A document with the timestamp and priority a call gave it.
struct Carried<'a> {
    doc: Document<'a>,
    at: Option<u64>,
    priority: Option<i64>,
}

impl AsDocument for Carried<'_> {
    fn as_document(&self) -> Document<'_> {
        self.doc
    }

    fn timestamp(&self) -> Option<u64> {
        self.at
    }

    fn priority(&self) -> Option<i64> {
        self.priority
    }
}

/// Runs `f` on the document of `text` or `items` (exactly one given).
fn with_document<T>(
    func: &str,
    text: Option<&str>,
    items: Option<&[Vec<u8>]>,
    f: impl FnOnce(Document<'_>) -> Result<T, Fail>,
) -> Result<T, Fail> {
    match (text, items) {
        (Some(text), None) => f(Document::Text(text)),
        (None, Some(items)) => {
            let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
            f(Document::Items(&items))
        }
        _ => Err(Fail::Input(format!("{func}: give text or items"))),
    }
}

/// A cluster as (id, representative key, size).
type Cluster3 = (u64, String, u64);

fn three(c: lshdb::ClusterInfo) -> Cluster3 {
    (c.id, c.representative, c.size)
}

#[pymethods]
impl Database {
    /// The cluster of the document under `key`, None when none is stored.
    fn cluster_of(&self, py: Python<'_>, key: &str) -> PyResult<Option<Cluster3>> {
        self.read(py, |db| Ok(db.cluster_of(key)?.map(three)))
    }

    /// Cluster `id` (or the one it merged into), None when gone.
    fn cluster(&self, py: Python<'_>, id: u64) -> PyResult<Option<Cluster3>> {
        self.read(py, |db| Ok(db.cluster(id)?.map(three)))
    }

    /// The keys of cluster `id`'s members, streamed.
    fn members(&self, id: u64) -> Stream {
        self.stream(move |db, emit| {
            for key in db.members(id)? {
                if !emit(Item::Key(key?)) {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Every cluster as (id, representative, size), streamed.
    fn clusters(&self) -> Stream {
        self.stream(|db, emit| {
            for cluster in db.clusters()? {
                if !emit(Item::Cluster(three(cluster?))) {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Every document as (key, cluster id, representative, size,
    /// similarity to the representative), in id order, streamed.
    fn document_clusters(&self) -> Stream {
        self.stream(|db, emit| {
            for doc in db.document_clusters()? {
                let d = doc?;
                let c = d.cluster;
                let item = (d.key, c.id, c.representative, c.size, d.similarity);
                if !emit(Item::DocumentCluster(item)) {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Inserts (or replaces) a document; the cluster it joined.
    fn insert_clustered(
        &self,
        py: Python<'_>,
        key: &str,
        text: &str,
    ) -> PyResult<Option<Cluster3>> {
        self.write_call(py, |db| Ok(db.insert_clustered(key, text)?.map(three)))
    }

    /// Inserts (or replaces) a document with a timestamp and a priority
    /// (either may be None).
    #[pyo3(signature = (key, text = None, *, items = None, at = None, priority = None))]
    fn insert_document(
        &self,
        py: Python<'_>,
        key: &str,
        text: Option<String>,
        items: Option<Vec<Vec<u8>>>,
        at: Option<u64>,
        priority: Option<i64>,
    ) -> PyResult<()> {
        self.write_call(py, |db| {
            with_document("insert", text.as_deref(), items.as_deref(), |doc| {
                let doc = Carried { doc, at, priority };
                Ok(db.insert_document(key, &doc)?)
            })
        })
    }

    /// Dedup on write of a document with a priority: None when stored,
    /// else the near-duplicate's (key, similarity).
    #[pyo3(signature = (key, text = None, *, items = None, threshold, priority = None))]
    fn insert_unique_document(
        &self,
        py: Python<'_>,
        key: &str,
        text: Option<String>,
        items: Option<Vec<Vec<u8>>>,
        threshold: f64,
        priority: Option<i64>,
    ) -> PyResult<Option<(String, f64)>> {
        self.write_call(py, |db| {
            with_document("insert_unique", text.as_deref(), items.as_deref(), |doc| {
                let doc = Carried {
                    doc,
                    at: None,
                    priority,
                };
                Ok(match db.insert_unique_document(key, &doc, threshold)? {
                    Unique::Inserted => None,
                    Unique::Duplicate(hit) => Some((hit.key, hit.similarity)),
                })
            })
        })
    }

    /// Bulk load of equally long columns of keys and texts, with a column
    /// of priorities and/or one of timestamps (seconds since the Unix
    /// epoch).
    #[pyo3(signature = (keys, texts, priorities = None, timestamps = None, batch = None, max_rejected = None))]
    #[allow(clippy::too_many_arguments)]
    fn insert_carried_columns<'py>(
        &self,
        py: Python<'py>,
        keys: TextBatch,
        texts: TextBatch,
        priorities: Option<Vec<i64>>,
        timestamps: Option<Vec<u64>>,
        batch: Option<usize>,
        max_rejected: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let report = self.read(py, |db| {
            let (keys, texts) = (keys.strs()?, texts.strs()?);
            let column = |name: &str, len: Option<usize>| match len {
                Some(len) if len != keys.len() => Err(Fail::Input(format!(
                    "insert_many: {} keys and {len} {name}",
                    keys.len()
                ))),
                _ => Ok(()),
            };
            column("texts", Some(texts.len()))?;
            column("priorities", priorities.as_ref().map(Vec::len))?;
            column("timestamps", timestamps.as_ref().map(Vec::len))?;
            if priorities.is_some()
                && db.settings().clusters != Some(lshdb::Representative::Priority)
            {
                return Err(Fail::Input(NOT_PRIORITY.to_owned()));
            }
            if timestamps.is_some() && !db.has_time_index() {
                return Err(lshdb::Error::NoTimeIndex.into());
            }
            let docs = texts.into_iter().enumerate().map(|(i, text)| Carried {
                doc: Document::Text(text),
                at: timestamps.as_ref().map(|t| t[i]),
                priority: priorities.as_ref().map(|p| p[i]),
            });
            Ok(db.insert_bulk(
                keys.into_iter().zip(docs),
                &bulk_options(batch, max_rejected),
                |_| true,
            )?)
        })?;
        report_dict(py, &report)
    }
}

/// Why a file takes no priorities, as Python words it.
const NOT_PRIORITY: &str = "insert_many: priorities= needs a database whose clusters choose \
     their representatives by priority (clusters='priority')";
