//! Maintained clusters: `cluster_of`, `cluster`, `members` and
//! `clusters` (streamed), and `insert_clustered`.

use super::Database;
use crate::stream::{Item, Stream};
use pyo3::prelude::*;

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

    /// Inserts (or replaces) a document; the cluster it joined.
    fn insert_clustered(
        &self,
        py: Python<'_>,
        key: &str,
        text: &str,
    ) -> PyResult<Option<Cluster3>> {
        self.write_call(py, |db| Ok(db.insert_clustered(key, text)?.map(three)))
    }
}
