//! Maintained near-duplicate clusters with stable ids (`docs/clusters.md`):
//! reading them ([`Database::cluster_of`], [`Database::members`],
//! [`Database::clusters`]; every document's in `documents.rs`), turning them on or off for an existing file,
//! and checking them against [`Database::groups`]. Their upkeep on every
//! write is `upkeep.rs`.

mod check;
mod documents;
pub(crate) mod priority;
pub(crate) mod run;
pub(crate) mod upkeep;

pub(crate) use check::check;
pub use documents::{DocumentCluster, DocumentClusters};

use super::Database;
use crate::config::{Representative, Settings};
use crate::pipeline::{Document, Pipeline};
use crate::store::clusters::{ClusterRead, Row, CLUSTER_ALIASES, CLUSTER_MEMBERS, CLUSTER_OF};
use crate::store::clusters::{ClusterWrite, CLUSTERS, NEXT_CLUSTER};
use crate::store::meta;
use crate::store::priorities::{PriorityWriter, PRIORITIES};
use crate::store::schema::META;
use crate::store::tables::{Index, ReadTables, Reader, WriteTables};
use crate::{Error, Result};
use redb::{ReadableTable, WriteTransaction};
use upkeep::Upkeep;

/// A maintained cluster: its stable id, its representative's key and its
/// size.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ClusterInfo {
    /// The cluster id (stable: see `docs/clusters.md`).
    pub id: u64,
    /// The representative's key, chosen by the file's
    /// [`Representative`] policy.
    pub representative: String,
    /// Members, the representative included.
    pub size: u64,
}

impl Database {
    /// Whether the file maintains clusters (see [`crate::Config::clusters`]).
    pub fn has_clusters(&self) -> bool {
        self.settings.clusters.is_some()
    }

    /// The cluster of the document stored under `key`: `None` when no
    /// document is stored under it. Every stored document is in a cluster,
    /// of one when it has no near-duplicate.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("c.lshdb"), Config::jaccard(0.7).clusters(true))?;
    /// db.insert("a", "The quick brown fox jumps over the lazy dog")?;
    /// let joined = db.insert_clustered("b", "The quick brown fox jumped over the lazy dog")?;
    /// let cluster = db.cluster_of("a")?.unwrap();
    /// assert_eq!(joined, Some(cluster.clone()));
    /// assert_eq!((cluster.representative.as_str(), cluster.size), ("a", 2));
    /// let members: Vec<String> = db.members(cluster.id)?.collect::<lshdb::Result<_>>()?;
    /// assert_eq!(members, ["a", "b"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the file keeps no clusters;
    /// storage errors.
    pub fn cluster_of(&self, key: &str) -> Result<Option<ClusterInfo>> {
        self.with_clusters(|_, tables, clusters| {
            let Some(id) = tables.id_of(key)? else {
                return Ok(None);
            };
            let cluster = clusters
                .cluster_of(id)?
                .ok_or_else(|| Error::corrupted(format!("document {id} is in no cluster")))?;
            let row = clusters
                .row(cluster)?
                .ok_or_else(|| Error::corrupted(format!("cluster {cluster} has no row")))?;
            Ok(Some(info(tables, row)?))
        })
    }

    /// Cluster `id`, or the cluster it merged into; `None` when it is gone
    /// (all its documents removed) or was never handed out.
    ///
    /// # Errors
    /// As [`Database::cluster_of`].
    pub fn cluster(&self, id: u64) -> Result<Option<ClusterInfo>> {
        self.with_clusters(|_, tables, clusters| match clusters.resolve(id)? {
            Some(row) => Ok(Some(info(tables, row)?)),
            None => Ok(None),
        })
    }

    /// The keys of cluster `id`'s members (or of the cluster it merged
    /// into), in the order they were stored, streamed from one read
    /// snapshot; nothing for a cluster that is gone.
    ///
    /// # Errors
    /// As [`Database::cluster_of`]; the iterator yields storage errors.
    pub fn members(&self, id: u64) -> Result<Members> {
        self.with_clusters(|txn, _, clusters| {
            let id = clusters.resolve(id)?.map_or(u64::MAX, |row| row.id);
            Ok(Members {
                range: clusters.members_from(id, None)?,
                docs: txn.open_table(crate::store::schema::DOCS)?,
            })
        })
    }

    /// Every cluster, in id order, from one read snapshot, with its
    /// representative and size; memory does not grow with the database.
    /// Clusters of one (documents without a near-duplicate) are included:
    /// filter on [`ClusterInfo::size`] for the groups.
    ///
    /// # Errors
    /// As [`Database::cluster_of`]; the iterator yields storage errors.
    pub fn clusters(&self) -> Result<Clusters> {
        self.with_clusters(|txn, _, clusters| {
            Ok(Clusters {
                range: clusters.rows_from(0)?,
                docs: txn.open_table(crate::store::schema::DOCS)?,
            })
        })
    }

    /// Inserts (or replaces) a document as [`Database::insert`] does, and
    /// returns the cluster it joined (or founded); `None` when the file
    /// keeps no clusters.
    ///
    /// # Errors
    /// As [`Database::insert`].
    pub fn insert_clustered<'a>(
        &self,
        key: &str,
        doc: impl Into<Document<'a>>,
    ) -> Result<Option<ClusterInfo>> {
        let prepared = self.pipeline().prepare(key, doc.into())?;
        let row = self.write(|w| {
            w.insert(&prepared)?;
            Ok(w.joined())
        })?;
        match row {
            Some(row) => self.with_clusters(|_, tables, _| info(tables, row).map(Some)),
            None => Ok(None),
        }
    }

    /// Builds the clusters of an existing file with representative policy
    /// `policy`, in one transaction, and records them in the settings: from
    /// then on every write maintains them. Rebuilds them (with fresh ids)
    /// when the file has them. The documents' priorities are kept when the
    /// file's policy was [`Representative::Priority`] and stays so; any
    /// other change of policy drops them (documents stored before a file
    /// turns to the priority policy have priority 0).
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::Poisoned`], storage errors.
    pub fn build_clusters(&mut self, policy: Representative) -> Result<()> {
        self.set_clusters(Some(policy))
    }

    /// Drops the clusters and their tables.
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::Poisoned`], storage errors.
    pub fn drop_clusters(&mut self) -> Result<()> {
        self.set_clusters(None)
    }

    fn set_clusters(&mut self, policy: Option<Representative>) -> Result<()> {
        crate::guard::guard(|| {
            self.check_poisoned()?;
            let settings = Settings {
                clusters: policy,
                ..self.settings.clone()
            };
            self.change_settings(settings, |txn, pipeline| {
                txn.delete_table(CLUSTER_OF)?;
                txn.delete_table(CLUSTER_MEMBERS)?;
                txn.delete_table(CLUSTERS)?;
                txn.delete_table(CLUSTER_ALIASES)?;
                // Priorities are kept while the policy ranks by them.
                if policy != Some(Representative::Priority) {
                    txn.delete_table(PRIORITIES)?;
                }
                rebuild(txn, pipeline)
            })
        })
    }

    /// Runs `f` on a read snapshot's document and cluster tables.
    fn with_clusters<T>(
        &self,
        f: impl FnOnce(&redb::ReadTransaction, &ReadTables, &ClusterRead) -> Result<T>,
    ) -> Result<T> {
        self.require_clusters()?;
        crate::guard::guard(|| {
            let txn = self.store().begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let clusters = open_clusters(&txn)?;
            f(&txn, &tables, &clusters)
        })
    }

    /// An error unless the file keeps clusters.
    fn require_clusters(&self) -> Result<()> {
        if self.has_clusters() {
            return Ok(());
        }
        Err(Error::invalid(
            "clusters",
            "this database keeps no clusters (they are turned on at creation, or built later)",
        ))
    }
}

/// The cluster tables of a read snapshot of a file whose settings keep
/// clusters.
fn open_clusters(txn: &redb::ReadTransaction) -> Result<ClusterRead> {
    ClusterRead::open(txn)?.ok_or_else(|| {
        Error::corrupted("the settings keep clusters but the file has no cluster tables")
    })
}

/// Creates the cluster tables of a new file whose settings keep clusters
/// (so that reads find them before the first write).
pub(crate) fn create_tables(txn: &WriteTransaction, pipeline: &Pipeline) -> Result<()> {
    if let Some((policy, _)) = pipeline.clusters() {
        ClusterWrite::open(txn)?;
        if policy == Representative::Priority {
            PriorityWriter::open(txn)?;
        }
    }
    Ok(())
}

/// (Re)builds the clusters of every stored document under `pipeline`'s
/// settings (nothing when they keep none), as if each document were
/// inserted in id order.
pub(crate) fn rebuild(txn: &WriteTransaction, pipeline: &Pipeline) -> Result<()> {
    let next = meta::read_u64(&txn.open_table(META)?, NEXT_CLUSTER)?;
    let Some(mut upkeep) = Upkeep::open(txn, pipeline, next)? else {
        return Ok(());
    };
    upkeep.clear()?;
    let docs = WriteTables::open(txn)?;
    let mut from = 0u64;
    let (mut band_keys, mut blocks) = (Vec::new(), Vec::new());
    loop {
        let mut ids = Vec::with_capacity(CHUNK);
        for entry in docs.sigs.range(from..)?.take(CHUNK) {
            ids.push(entry?.0.value());
        }
        let Some(&last) = ids.last() else { break };
        for id in ids {
            let (mut record, mut set) = Default::default();
            if !pipeline.stored_signature(&docs, id, &mut record, &mut set)? {
                return Err(Error::corrupted(format!("document {id} has no signature")));
            }
            pipeline.index_keys(&record, &mut band_keys, &mut blocks);
            upkeep.join(&docs, pipeline, id, (&band_keys, None), None)?;
        }
        from = last + 1;
    }
    let next = upkeep.finish();
    drop(docs);
    meta::write_u64(&mut txn.open_table(META)?, NEXT_CLUSTER, next)
}

/// Documents a rebuild reads at a time.
const CHUNK: usize = 4096;

/// A cluster's row with its representative's key.
fn info(tables: &impl Reader, row: Row) -> Result<ClusterInfo> {
    let representative = tables
        .key(row.representative)?
        .ok_or_else(|| {
            Error::corrupted(format!(
                "the representative {} of cluster {} is missing",
                row.representative, row.id
            ))
        })?
        .to_string();
    Ok(ClusterInfo {
        id: row.id,
        representative,
        size: row.size,
    })
}

/// The key of stored document `id`.
fn key_of(docs: &redb::ReadOnlyTable<u64, &'static [u8]>, id: u64) -> Result<String> {
    let bytes = docs
        .get(id)?
        .ok_or_else(|| Error::corrupted(format!("clustered document {id} is missing")))?;
    crate::store::codec::decode_doc(bytes.value())
        .map(|doc| doc.key)
        .map_err(|e| crate::store::tables::context(e, "document", id))
}

/// The members of a cluster, as keys ([`Database::members`]).
pub struct Members {
    range: redb::OwnedRange<(u64, u64), ()>,
    docs: redb::ReadOnlyTable<u64, &'static [u8]>,
}

impl Iterator for Members {
    type Item = Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.range.next()?;
        Some(crate::guard::guard(|| {
            let doc = entry?.0.value().1;
            key_of(&self.docs, doc)
        }))
    }
}

/// Every cluster ([`Database::clusters`]).
pub struct Clusters {
    range: redb::OwnedRange<u64, (u64, u64)>,
    docs: redb::ReadOnlyTable<u64, &'static [u8]>,
}

impl Iterator for Clusters {
    type Item = Result<ClusterInfo>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.range.next()?;
        Some(crate::guard::guard(|| {
            let (id, value) = entry?;
            let (representative, size) = value.value();
            Ok(ClusterInfo {
                id: id.value(),
                representative: key_of(&self.docs, representative)?,
                size,
            })
        }))
    }
}
