//! The redb tables of an lshdb file and the format version.
//!
//! `docs/format.md` describes each table, key and value encoding. Any change
//! here is a format change: bump [`FORMAT_VERSION`].

use redb::TableDefinition;

/// The format version this build writes and reads.
///
/// Version 2 adds the posting runs (`crate::store::runs`): MinHash postings
/// beyond the fresh ones in `buckets`. A version-1 file is a version-2 file
/// without runs.
///
/// Version 3 stops storing MinHash values: a signature record keeps the set
/// size and SimHash, with a value count of zero, and the values are
/// recomputed from the stored shingle set where needed. A version-2 file is
/// a version-3 file whose signature records still hold their values (they
/// are used as they are).
///
/// Version 4 drops the `keys` table (external key → id, a B-tree whose
/// random inserts were most of a large file's write cost): a document's key
/// is indexed by one more posting, `(KEY_BAND, key_hash(key), id)`, in the
/// fresh postings and the runs like its band postings, and a look-up
/// compares the key its document record stores.
///
/// Version 5 keys each run block by its last posting instead of its first,
/// in the table `run_blocks_by_last` (was `run_blocks`): the block holding
/// the start of a bucket is then the first one at or after it, and a
/// look-up reads that block's leaf only. Keyed by its first posting, a
/// block filled its leaf, so a look-up of the last block at or before a
/// key landed on the next block's leaf and stepped back: two leaf reads.
///
/// So this build reads versions 1 to 5; opening an older file for writing
/// upgrades it to version 5 in one commit before anything else is written
/// to it: it marks the version, moves the run blocks under their last
/// posting, and moves the `keys` table's entries into key postings (an
/// older reader would not see postings in runs, nor find values in new
/// records, nor find keys, nor find blocks).
pub const FORMAT_VERSION: u32 = 5;

/// The band number of key postings (format 4): `(KEY_BAND, key_hash(key),
/// id)` sorts after every MinHash band's postings.
pub const KEY_BAND: u32 = u32::MAX;

/// The oldest format version this build reads.
pub const OLDEST_FORMAT_VERSION: u32 = 1;

/// The value of `meta["format"]`: this magic followed by the format version
/// as u32 little-endian.
pub const FORMAT_MAGIC: &[u8; 8] = b"lshdb\0\0\0";

/// The first bytes of every redb file (redb's own magic number).
pub const REDB_MAGIC: &[u8; 9] = b"redb\x1a\x0a\xa9\x0d\x0a";

/// Metadata: `format` (magic + version), `settings` (a `Tag::Config` record
/// holding the settings, `store::settings_record`), `next_id` (u64 LE).
pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// Document id → `Tag::Doc` record (external key, optional raw text).
pub const DOCS: TableDefinition<u64, &[u8]> = TableDefinition::new("docs");

/// Document id → `Tag::Set` record (sorted shingle hashes, delta + varint).
pub const SETS: TableDefinition<u64, &[u8]> = TableDefinition::new("sets");

/// Document id → `Tag::Signature` record (set size, SimHash, MinHash values).
pub const SIGS: TableDefinition<u64, &[u8]> = TableDefinition::new("sigs");

/// MinHash LSH postings: (band, band key, document id) → ().
pub const BUCKETS: TableDefinition<(u32, u64, u64), ()> = TableDefinition::new("buckets");

/// SimHash block postings: (block index, block value, document id) → ().
pub const BLOCKS: TableDefinition<(u32, u64, u64), ()> = TableDefinition::new("simhash_blocks");

/// Key names in [`META`].
pub mod meta_keys {
    /// Magic and format version.
    pub const FORMAT: &str = "format";
    /// The stored settings.
    pub const SETTINGS: &str = "settings";
    /// The next document id to hand out.
    pub const NEXT_ID: &str = "next_id";
}

/// Application labels: name → value, both UTF-8 (for example `scan.root`,
/// the folder `lshdb scan` indexes). Added after format 1 was fixed, without
/// a version bump: the table is created by the first
/// [`crate::Database::set_label`], and a file without it has no labels.
/// Readers that do not know the table ignore it.
pub const LABELS: TableDefinition<&str, &str> = TableDefinition::new("labels");
