//! The tables of the maintained near-duplicate clusters (`docs/clusters.md`,
//! `docs/format.md`), and their row-level reads and writes.
//!
//! They exist only in files whose settings keep clusters
//! (`Settings::clusters`), and are written in the same transaction as the
//! documents they describe. A cluster id comes from a counter; a cluster
//! merged into an older one leaves an alias to it, so an id once handed
//! out still resolves while any of its documents remains clustered.

use crate::{Error, Result};
use redb::{
    ReadOnlyTable, ReadTransaction, ReadableTable, Table, TableDefinition, TableError,
    WriteTransaction,
};

/// Document id → cluster id.
pub const CLUSTER_OF: TableDefinition<u64, u64> = TableDefinition::new("cluster_of");

/// (cluster id, document id) → (): a cluster's members, in id order.
pub const CLUSTER_MEMBERS: TableDefinition<(u64, u64), ()> =
    TableDefinition::new("cluster_members");

/// Cluster id → (representative document id, size).
pub const CLUSTERS: TableDefinition<u64, (u64, u64)> = TableDefinition::new("clusters");

/// Merged cluster id → the id it merged into (itself perhaps an alias).
pub const CLUSTER_ALIASES: TableDefinition<u64, u64> = TableDefinition::new("cluster_aliases");

/// The key of the cluster id counter (the next id to hand out, u64 LE;
/// absent: 1) in the `meta` table, which every write commits anyway.
pub const NEXT_CLUSTER: &str = "next_cluster";

/// A cluster as stored: its id, representative document id and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The cluster id.
    pub id: u64,
    /// The representative's document id.
    pub representative: u64,
    /// Members.
    pub size: u64,
}

/// The cluster tables of one transaction.
pub struct ClusterTables<O, M, C, A> {
    /// Document → cluster.
    pub of: O,
    /// Cluster members.
    pub members: M,
    /// Cluster rows.
    pub clusters: C,
    /// Aliases of merged clusters.
    pub aliases: A,
}

/// The cluster tables of a read transaction.
pub type ClusterRead = ClusterTables<
    ReadOnlyTable<u64, u64>,
    ReadOnlyTable<(u64, u64), ()>,
    ReadOnlyTable<u64, (u64, u64)>,
    ReadOnlyTable<u64, u64>,
>;

/// The cluster tables of a write transaction.
pub type ClusterWrite<'t> = ClusterTables<
    Table<'t, u64, u64>,
    Table<'t, (u64, u64), ()>,
    Table<'t, u64, (u64, u64)>,
    Table<'t, u64, u64>,
>;

/// Opens a table of a read transaction; `None` when it was never created
/// (clusters turned on, before the first write).
fn open_read<K: redb::Key + 'static, V: redb::Value + 'static>(
    txn: &ReadTransaction,
    def: TableDefinition<K, V>,
) -> Result<Option<ReadOnlyTable<K, V>>> {
    match txn.open_table(def) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(err) => Err(Error::from(redb::Error::from(err))),
    }
}

impl ClusterRead {
    /// The cluster tables of a read transaction; `None` when the file has
    /// none (yet).
    pub fn open(txn: &ReadTransaction) -> Result<Option<Self>> {
        let (Some(of), Some(members), Some(clusters), Some(aliases)) = (
            open_read(txn, CLUSTER_OF)?,
            open_read(txn, CLUSTER_MEMBERS)?,
            open_read(txn, CLUSTERS)?,
            open_read(txn, CLUSTER_ALIASES)?,
        ) else {
            return Ok(None);
        };
        Ok(Some(Self {
            of,
            members,
            clusters,
            aliases,
        }))
    }

    /// The clusters from id `from` on, in id order, owning their snapshot.
    pub fn rows_from(&self, from: u64) -> Result<redb::OwnedRange<u64, (u64, u64)>> {
        Ok(self.clusters.range_owned(from..)?)
    }

    /// The members of cluster `id` after document `after`, owning their
    /// snapshot.
    pub fn members_from(
        &self,
        id: u64,
        after: Option<u64>,
    ) -> Result<redb::OwnedRange<(u64, u64), ()>> {
        let start = match after {
            Some(doc) => (id, doc.saturating_add(1)),
            None => (id, 0),
        };
        Ok(self.members.range_owned(start..=(id, u64::MAX))?)
    }
}

impl<'t> ClusterWrite<'t> {
    /// Opens (creating when absent) the cluster tables of a write
    /// transaction.
    pub fn open(txn: &'t WriteTransaction) -> Result<Self> {
        Ok(Self {
            of: txn.open_table(CLUSTER_OF)?,
            members: txn.open_table(CLUSTER_MEMBERS)?,
            clusters: txn.open_table(CLUSTERS)?,
            aliases: txn.open_table(CLUSTER_ALIASES)?,
        })
    }

    /// Files document `doc` in cluster `id`.
    pub fn add_member(&mut self, id: u64, doc: u64) -> Result<()> {
        self.of.insert(doc, id)?;
        self.members.insert((id, doc), ())?;
        Ok(())
    }

    /// Takes document `doc` out of its cluster; returns that cluster's id,
    /// `None` when the document was in none.
    pub fn remove_member(&mut self, doc: u64) -> Result<Option<u64>> {
        let Some(id) = self.of.remove(doc)?.map(|v| v.value()) else {
            return Ok(None);
        };
        self.members.remove((id, doc))?;
        Ok(Some(id))
    }

    /// Stores (or replaces) a cluster's row.
    pub fn put(&mut self, row: Row) -> Result<()> {
        self.clusters
            .insert(row.id, (row.representative, row.size))?;
        Ok(())
    }

    /// Deletes cluster `id`'s row (its members are moved or gone).
    pub fn delete(&mut self, id: u64) -> Result<()> {
        self.clusters.remove(id)?;
        Ok(())
    }

    /// Records that cluster `from` merged into cluster `into`.
    pub fn alias(&mut self, from: u64, into: u64) -> Result<()> {
        self.aliases.insert(from, into)?;
        Ok(())
    }

    /// Empties every cluster table (for a rebuild).
    pub fn clear(&mut self) -> Result<()> {
        self.of.retain(|_, _| false)?;
        self.members.retain(|_, _| false)?;
        self.clusters.retain(|_, _| false)?;
        self.aliases.retain(|_, _| false)?;
        Ok(())
    }
}

impl<O, M, C, A> ClusterTables<O, M, C, A>
where
    O: ReadableTable<u64, u64>,
    M: ReadableTable<(u64, u64), ()>,
    C: ReadableTable<u64, (u64, u64)>,
    A: ReadableTable<u64, u64>,
{
    /// The cluster of document `doc`, `None` when it is in none.
    pub fn cluster_of(&self, doc: u64) -> Result<Option<u64>> {
        Ok(self.of.get(doc)?.map(|v| v.value()))
    }

    /// Cluster `id`'s row, `None` when there is no such cluster.
    pub fn row(&self, id: u64) -> Result<Option<Row>> {
        Ok(self.clusters.get(id)?.map(|v| {
            let (representative, size) = v.value();
            Row {
                id,
                representative,
                size,
            }
        }))
    }

    /// The cluster an id stands for now: itself, or the cluster it merged
    /// into (following aliases, each to a smaller id); `None` when that
    /// cluster is gone.
    pub fn resolve(&self, mut id: u64) -> Result<Option<Row>> {
        loop {
            if let Some(row) = self.row(id)? {
                return Ok(Some(row));
            }
            match self.aliases.get(id)?.map(|v| v.value()) {
                Some(into) if into < id => id = into,
                Some(into) => {
                    return Err(Error::corrupted(format!(
                        "cluster {id} is an alias of the younger cluster {into}"
                    )))
                }
                None => return Ok(None),
            }
        }
    }

    /// The members of cluster `id`, ascending.
    pub fn members_of(&self, id: u64) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for entry in self.members.range((id, 0)..=(id, u64::MAX))? {
            out.push(entry?.0.value().1);
        }
        Ok(out)
    }

    /// The number of clusters and of clustered documents.
    pub fn counts(&self) -> Result<(u64, u64)> {
        Ok((self.clusters.len()?, self.of.len()?))
    }
}
