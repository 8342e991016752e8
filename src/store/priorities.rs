//! The priorities of the documents of a file whose clusters choose their
//! representatives by priority (`Representative::Priority`,
//! `docs/clusters.md`, `docs/format.md`): document id → priority.
//!
//! Only priorities other than 0 are stored (a document without a row has
//! priority 0), so files whose documents are given none stay as they
//! were. The table is written in the same transaction as the document it
//! describes, and exists only in files with that policy.

use crate::{Error, Result};
use redb::{ReadTransaction, ReadableTable, Table, TableDefinition, TableError, WriteTransaction};

/// Document id → priority (never 0: 0 is the absence of a row).
pub const PRIORITIES: TableDefinition<u64, i64> = TableDefinition::new("priorities");

/// The priority table of a write transaction.
pub struct PriorityWriter<'t> {
    table: Table<'t, u64, i64>,
}

impl<'t> PriorityWriter<'t> {
    /// Opens (creating when absent) the table.
    pub fn open(txn: &'t WriteTransaction) -> Result<Self> {
        Ok(Self {
            table: txn.open_table(PRIORITIES)?,
        })
    }

    /// Gives document `id` priority `priority` (`None`: 0).
    pub fn put(&mut self, id: u64, priority: Option<i64>) -> Result<()> {
        match priority.unwrap_or(0) {
            0 => {
                self.table.remove(id)?;
            }
            p => {
                self.table.insert(id, p)?;
            }
        }
        Ok(())
    }

    /// Removes document `id`'s priority, if it has one.
    pub fn remove(&mut self, id: u64) -> Result<()> {
        self.table.remove(id)?;
        Ok(())
    }

    /// The priority of document `id`.
    pub fn get(&self, id: u64) -> Result<i64> {
        priority_of(&self.table, id)
    }
}

/// The priority of document `id` in `table` (0 when it has no row).
pub fn priority_of(table: &impl ReadableTable<u64, i64>, id: u64) -> Result<i64> {
    Ok(table.get(id)?.map_or(0, |v| v.value()))
}

/// The priority table of a read transaction; `None` when the file has
/// none (no document was given a priority yet, or the policy is another).
pub fn open_read(txn: &ReadTransaction) -> Result<Option<redb::ReadOnlyTable<u64, i64>>> {
    match txn.open_table(PRIORITIES) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(err) => Err(Error::from(redb::Error::from(err))),
    }
}

/// Checks the priority table against the stored documents (`stored`
/// answers whether a document id is stored): every row belongs to a
/// stored document and none holds 0. Problems go to `problem`.
pub fn check(
    table: &impl ReadableTable<u64, i64>,
    mut stored: impl FnMut(u64) -> Result<bool>,
    mut problem: impl FnMut(String),
) -> Result<()> {
    for entry in table.iter()? {
        let (id, priority) = entry?;
        let (id, priority) = (id.value(), priority.value());
        if priority == 0 {
            problem(format!("document {id} has a stored priority of 0"));
        }
        if !stored(id)? {
            problem(format!(
                "priority {priority} belongs to document {id}, which is not stored"
            ));
        }
    }
    Ok(())
}

/// The rank of a priority for the representative policy: the smallest
/// rank wins, so the highest priority ranks first.
pub fn rank(priority: i64) -> u64 {
    // Order-preserving i64 → u64, then reversed.
    !((priority as u64) ^ (1 << 63))
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn higher_priorities_rank_first() {
        let order = [i64::MAX, 7, 1, 0, -1, -7, i64::MIN];
        for pair in order.windows(2) {
            assert!(rank(pair[0]) < rank(pair[1]), "{pair:?}");
        }
    }
}
