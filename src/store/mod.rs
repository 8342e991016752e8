//! Storage: the redb schema, record codecs, format versioning, and the
//! record-level reads and writes of a transaction.

pub mod cache;
pub mod clusters;
pub mod codec;
pub mod containment;
pub(crate) mod keys;
pub(crate) mod legacy;
pub mod meta;
pub mod priorities;
pub mod probe;
pub mod runs;
pub mod schema;
pub mod settings_record;
pub(crate) mod tables;
pub mod times;
pub(crate) mod walk;
