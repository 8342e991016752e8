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
//! - run blocks keyed by their first posting (formats 2 to 4), in the
//!   `run_blocks` table ([`FIRST_KEYED_BLOCKS`]): `ReadRuns::open` opens it
//!   when the file has no `run_blocks_by_last` and looks buckets up with
//!   [`first_keyed_postings`]; the upgrade moves every block to
//!   `run_blocks_by_last` under its last posting (format 5);
//! - MinHash values in signature records (formats 1 and 2): the record
//!   codec decodes them, and they are used as they are where present
//!   (`Pipeline::stored_signature`); records written since hold none and
//!   their values are recomputed from the stored set.

use crate::store::probe::Probe;
use crate::store::runs::collect_blocks;
use crate::Result;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable, ReadableTableMetadata, TableDefinition};

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

/// Run blocks keyed by their first posting, `(run, band, first key, first
/// id)` → `Tag::Block` record: files of formats 2 to 4 (format 5 keys them
/// by their last posting, `store::runs::RUN_BLOCKS`).
pub const FIRST_KEYED_BLOCKS: TableDefinition<(u32, u32, u64, u64), &[u8]> =
    TableDefinition::new("run_blocks");

/// A read transaction's [`FIRST_KEYED_BLOCKS`] table.
pub type FirstKeyedBlocks = ReadOnlyTable<(u32, u32, u64, u64), &'static [u8]>;

/// The run blocks of a file of format 2 to 4 read as it is; `None` when the
/// file has none.
///
/// # Errors
/// Storage errors other than the table's absence.
pub fn open_first_keyed_blocks(txn: &ReadTransaction) -> Result<Option<FirstKeyedBlocks>> {
    match txn.open_table(FIRST_KEYED_BLOCKS) {
        Ok(table) => Ok(Some(table)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Appends to `out` the ids of `probe`'s list in run `run` of a
/// [`FIRST_KEYED_BLOCKS`] table, ascending, at most its `cap`; true when
/// cut there: the block holding the bucket's start is the last one
/// starting at or before `(key, start)`, followed by the next ones while
/// the bucket goes on.
///
/// # Errors
/// Storage errors and damaged blocks.
pub fn first_keyed_postings(
    blocks: &impl ReadableTable<(u32, u32, u64, u64), &'static [u8]>,
    run: u32,
    probe: Probe,
    out: &mut Vec<u64>,
) -> Result<bool> {
    let Some(start) = probe.start() else {
        return Ok(false);
    };
    let (band, key, cap) = (probe.index, probe.key, probe.cap);
    let first = blocks
        .range(..=(run, band, key, start))?
        .next_back()
        .transpose()?
        .map(|(k, _)| k.value())
        .filter(|k| (k.0, k.1) == (run, band));
    let from = first.unwrap_or((run, band, key, start));
    let rows = blocks.range(from..=(run, band, key, u64::MAX))?;
    collect_blocks(rows, run, band, key, start, cap, out)
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
