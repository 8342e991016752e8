//! The storage side of the key index: a document's key posting (format 4;
//! the `keys` table of older files is read in `store::legacy`).

use crate::hash::key_hash;
use crate::store::schema::KEY_BAND;

/// The key posting (format 4) of document `id` stored under `key`.
pub fn key_posting(key: &str, id: u64) -> (u32, u64, u64) {
    (KEY_BAND, key_hash(key), id)
}
