//! Every document with its cluster ([`Database::document_clusters`]): one
//! read snapshot walked in document-id order, so a caller that needs the
//! cluster of every document (a dedup pass that keeps each cluster's
//! representative, an export of cluster labels) makes no key look-up and
//! opens no transaction per document.

use super::{key_of, open_clusters, ClusterInfo};
use crate::db::Database;
use crate::store::clusters::ClusterRead;
use crate::store::tables::{ReadTables, Reader};
use crate::{Error, Result};

/// A stored document with its cluster ([`Database::document_clusters`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct DocumentCluster {
    /// The document's key.
    pub key: String,
    /// Its cluster.
    pub cluster: ClusterInfo,
    /// Its Jaccard similarity to the cluster's representative, as
    /// [`Database::similarity`] computes it (1 for the representative).
    pub similarity: f64,
}

/// Every document with its cluster ([`Database::document_clusters`]).
pub struct DocumentClusters {
    /// Document id → cluster id, from the first document on.
    range: redb::OwnedRange<u64, u64>,
    tables: ReadTables,
    clusters: ClusterRead,
    /// The last representative read: (document id, key, shingle set), as
    /// members of a cluster often come one after another.
    representative: Option<(u64, String, Vec<u32>)>,
    /// The current document's set, reused.
    set: Vec<u32>,
}

impl Database {
    /// Every stored document with its cluster and its similarity to the
    /// cluster's representative, in the order the documents were stored
    /// (document-id order), from one read snapshot; memory does not grow
    /// with the database.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("d.lshdb"), Config::jaccard(0.7).clusters(true))?;
    /// db.insert("a", "The quick brown fox jumps over the lazy dog")?;
    /// db.insert("b", "Something else entirely, about boats")?;
    /// db.insert("c", "The quick brown fox jumped over the lazy dog")?;
    /// let all: Vec<_> = db.document_clusters()?.collect::<lshdb::Result<_>>()?;
    /// let keys: Vec<&str> = all.iter().map(|d| d.key.as_str()).collect();
    /// assert_eq!(keys, ["a", "b", "c"]);
    /// assert_eq!(all[2].cluster, all[0].cluster);
    /// assert_eq!((all[0].cluster.representative.as_str(), all[0].similarity), ("a", 1.0));
    /// assert!(all[2].similarity < 1.0 && all[1].cluster.size == 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Database::cluster_of`]; the iterator yields storage errors.
    pub fn document_clusters(&self) -> Result<DocumentClusters> {
        self.require_clusters()?;
        crate::guard::guard(|| {
            let txn = self.store().begin_read()?;
            let clusters = open_clusters(&txn)?;
            Ok(DocumentClusters {
                range: clusters.of.range_owned(0..)?,
                tables: ReadTables::open(&txn)?,
                clusters,
                representative: None,
                set: Vec::new(),
            })
        })
    }
}

impl DocumentClusters {
    /// Document `doc` of cluster `cluster`, with its similarity to the
    /// representative.
    fn read(&mut self, doc: u64, cluster: u64) -> Result<DocumentCluster> {
        let row = self
            .clusters
            .row(cluster)?
            .ok_or_else(|| Error::corrupted(format!("cluster {cluster} has no row")))?;
        let key = key_of(&self.tables.docs, doc)?;
        let info = |representative: String| ClusterInfo {
            id: row.id,
            representative,
            size: row.size,
        };
        if row.representative == doc {
            return Ok(DocumentCluster {
                cluster: info(key.clone()),
                key,
                similarity: 1.0,
            });
        }
        let held = self.representative.as_ref().map(|r| r.0);
        if held != Some(row.representative) {
            let id = row.representative;
            let mut set = Vec::new();
            self.set_of(id, &mut set)?;
            self.representative = Some((id, key_of(&self.tables.docs, id)?, set));
        }
        let mut set = std::mem::take(&mut self.set);
        self.set_of(doc, &mut set)?;
        let Some((_, representative, rep_set)) = &self.representative else {
            return Err(Error::corrupted("a representative read was lost"));
        };
        let similarity = crate::sketch::measures::jaccard(&set, rep_set);
        let cluster = info(representative.clone());
        self.set = set;
        Ok(DocumentCluster {
            key,
            cluster,
            similarity,
        })
    }

    /// Decodes document `id`'s shingle set into `out`.
    fn set_of(&self, id: u64, out: &mut Vec<u32>) -> Result<()> {
        if self.tables.set_into(id, out)? {
            Ok(())
        } else {
            Err(Error::corrupted(format!(
                "document {id} has no shingle set"
            )))
        }
    }
}

impl Iterator for DocumentClusters {
    type Item = Result<DocumentCluster>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.range.next()?;
        Some(crate::guard::guard(|| {
            let (doc, cluster) = entry?;
            let (doc, cluster) = (doc.value(), cluster.value());
            self.read(doc, cluster)
        }))
    }
}
