//! What the store knows of files written by formats 1 to 3, in one place,
//! so the current layout's code needs none of it (`docs/format.md`,
//! "How an old file moves forward").
//!
//! An older file is read as it is (read-only handles leave it untouched)
//! and upgraded to the current format when opened for writing
//! (`db::upgrade`). What differs, and where it is handled:
//!
//! - the `keys` table (formats 1 to 3): opened here for read transactions
//!   and looked up through [`LegacyKeys`]; the upgrade replaces it by key
//!   postings;
//! - no posting runs (format 1): `ReadRuns::open` reads a file without the
//!   run tables as having no runs, and the upgrade creates them;
//! - MinHash values in signature records (formats 1 and 2): the record
//!   codec decodes them, and they are used as they are where present
//!   (`Pipeline::stored_signature`); records written since hold none and
//!   their values are recomputed from the stored set.

use crate::Result;
use redb::{ReadOnlyTable, ReadTransaction, TableDefinition};

/// External key → internal document id; files of formats 1 to 3 only
/// (format 4 indexes keys by `KEY_BAND` postings).
pub const KEYS: TableDefinition<&str, u64> = TableDefinition::new("keys");

/// The `keys` table of a file of format 1 to 3, `None` for a file of the
/// current format.
///
/// # Errors
/// Storage errors other than the table's absence.
pub fn open_keys_table(txn: &ReadTransaction) -> Result<Option<ReadOnlyTable<&'static str, u64>>> {
    match txn.open_table(KEYS) {
        Ok(table) => Ok(Some(table)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// The `keys` table of files of formats 1 to 3, where a transaction has
/// one: `()` for a write transaction (opening a file for writing upgrades
/// it to format 4).
pub trait LegacyKeys {
    /// `Some` (the id, if any) when there is a `keys` table, `None` when
    /// keys are indexed by postings.
    fn legacy_id(&self, key: &str) -> Result<Option<Option<u64>>>;
}

impl LegacyKeys for () {
    fn legacy_id(&self, _: &str) -> Result<Option<Option<u64>>> {
        Ok(None)
    }
}

impl LegacyKeys for Option<ReadOnlyTable<&'static str, u64>> {
    fn legacy_id(&self, key: &str) -> Result<Option<Option<u64>>> {
        match self {
            Some(table) => Ok(Some(table.get(key)?.map(|v| v.value()))),
            None => Ok(None),
        }
    }
}
