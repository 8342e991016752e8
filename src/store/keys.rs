//! The storage side of the key index: a document's key posting (format 4),
//! and the `keys` table that files of formats 1 to 3 keep instead, read
//! where a read transaction still has one.

use crate::hash::key_hash;
use crate::store::schema::KEY_BAND;
use crate::Result;
use redb::ReadOnlyTable;

/// The key posting (format 4) of document `id` stored under `key`.
pub fn key_posting(key: &str, id: u64) -> (u32, u64, u64) {
    (KEY_BAND, key_hash(key), id)
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
