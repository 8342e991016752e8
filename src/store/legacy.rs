//! What the store knows of files written by formats 1 to 3, in one place,
//! so the current layout's code needs none of it (`docs/format.md`,
//! "How an old file moves forward").
//!
//! An older file is read as it is (read-only handles leave it untouched)
//! and upgraded to the current format when opened for writing
//! (`db::upgrade`). What differs, and where it is handled:
//!
//! - the `keys` table (formats 1 to 3): opened here for read transactions
//!   looked up through [`LegacyKeys`] and checked by [`check_key`] and
//!   [`check_key_count`]; the upgrade replaces it by key postings;
//! - no posting runs (format 1): `ReadRuns::open` reads a file without the
//!   run tables as having no runs, and the upgrade creates them;
//! - MinHash values in signature records (formats 1 and 2): the record
//!   codec decodes them, and they are used as they are where present
//!   (`Pipeline::stored_signature`); records written since hold none and
//!   their values are recomputed from the stored set.

use crate::Result;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTableMetadata, TableDefinition};

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

/// What `check` finds wrong with document `id`'s entry in a `keys` table.
///
/// # Errors
/// Storage errors.
pub fn check_key(
    table: &ReadOnlyTable<&'static str, u64>,
    key: &str,
    id: u64,
) -> Result<Option<String>> {
    Ok(match table.get(key)?.map(|v| v.value()) {
        Some(found) if found == id => None,
        Some(other) => Some(format!(
            "key `{key}` of document {id} points at document {other}"
        )),
        None => Some(format!(
            "document {id} (key `{key}`) is missing from the key table"
        )),
    })
}

/// What `check` finds wrong with a `keys` table as a whole: one entry per
/// stored document.
///
/// # Errors
/// Storage errors.
pub fn check_key_count(
    table: &ReadOnlyTable<&'static str, u64>,
    documents: u64,
) -> Result<Option<String>> {
    let keys = table.len()?;
    Ok((keys != documents).then(|| format!("{keys} keys stored for {documents} documents")))
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

#[cfg(test)]
mod tests {
    use super::*;
    use redb::backends::InMemoryBackend;
    use redb::ReadableDatabase;

    #[test]
    fn a_keys_table_is_read_and_checked_entry_by_entry_and_by_count() {
        let db = redb::Database::builder()
            .create_with_backend(InMemoryBackend::new())
            .unwrap();
        let read = db.begin_read().unwrap();
        assert!(open_keys_table(&read).unwrap().is_none()); // current format
        drop(read);
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(KEYS).unwrap();
            table.insert("a", 1).unwrap();
            table.insert("b", 5).unwrap();
        }
        txn.commit().unwrap();
        let read = db.begin_read().unwrap();
        let table = open_keys_table(&read).unwrap().unwrap();
        assert_eq!(check_key(&table, "a", 1).unwrap(), None);
        assert_eq!(
            check_key(&table, "b", 2).unwrap().unwrap(),
            "key `b` of document 2 points at document 5"
        );
        assert_eq!(
            check_key(&table, "c", 3).unwrap().unwrap(),
            "document 3 (key `c`) is missing from the key table"
        );
        assert_eq!(check_key_count(&table, 2).unwrap(), None);
        assert_eq!(
            check_key_count(&table, 3).unwrap().unwrap(),
            "2 keys stored for 3 documents"
        );
        let keys = Some(table);
        assert_eq!(keys.legacy_id("a").unwrap(), Some(Some(1)));
        assert_eq!(keys.legacy_id("z").unwrap(), Some(None));
        assert_eq!(().legacy_id("a").unwrap(), None);
    }
}
