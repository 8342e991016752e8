//! lshdb: a persistent, embedded similarity database.
//!
//! Documents become sets of hashed shingles ([`shingle`]); MinHash turns each
//! set into a short signature and LSH banding files it into buckets
//! ([`sketch`]); exact Jaccard similarity on the stored sets verifies every
//! candidate. SimHash fingerprints serve the cosine-style use case.
//!
//! The similarity core, end to end:
//!
//! ```
//! use lshdb::shingle::{ShingleConfig, Shingler};
//! use lshdb::sketch::lsh::{tune, TuneGoal};
//! use lshdb::sketch::measures::jaccard;
//! use lshdb::sketch::minhash::{MinHashConfig, MinHasher};
//!
//! let shingler = Shingler::new(ShingleConfig::default())?; // char 5-shingles
//! let hasher = MinHasher::new(MinHashConfig::default())?; // 128 values
//! let banding = tune(&TuneGoal::new(0.8, 128))?.banding;
//!
//! let a = shingler.set("An embedded, fast, safe and concurrent key-value store written in Rust.");
//! let b = shingler.set("An embedded, fast, safe and concurrent key-value store, written in Rust!");
//! let (mut keys_a, mut keys_b) = (Vec::new(), Vec::new());
//! banding.band_keys(&hasher.signature(a.as_slice()), &mut keys_a);
//! banding.band_keys(&hasher.signature(b.as_slice()), &mut keys_b);
//! // Near-duplicates share a bucket in at least one band...
//! assert!(keys_a.iter().zip(&keys_b).any(|(x, y)| x == y));
//! // ...and the candidate is verified exactly.
//! assert!(jaccard(a.as_slice(), b.as_slice()) > 0.8);
//! # Ok::<(), lshdb::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Data from disk and from users never panics the library: no unwrap/expect.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod config;
mod db;
mod error;
mod guard;
pub mod hash;
mod pipeline;
mod query;
mod report;
pub mod shingle;
pub mod sketch;
mod sketcher;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod store;
#[cfg(not(feature = "internals"))]
mod store;
#[cfg(test)]
mod testing;

pub use config::{Config, Representative, Settings, MAX_SIMHASH_DISTANCE};
pub use db::{
    AsDocument, Batch, Builder, BulkOptions, BulkReport, CheckReport, ClusterInfo, Clusters,
    ContainmentQuery, Database, DeepStats, DocumentBuf, DocumentCluster, DocumentClusters,
    DuplicateOf, Durability, ExpireReport, ExportedDocument, Members, Prioritised, Query,
    SkippedDocument, Stats, StoredDocument, Timestamped, Unique, UniqueReport, DEFAULT_BATCH,
    DEFAULT_LOAD_FILTER_BYTES, DEFAULT_LOOK_UP_BYTES, DEFAULT_MAX_CHUNK_BYTES,
    DEFAULT_MAX_HELD_BYTES, EXPIRE_BATCH, MAX_LABEL_BYTES,
};
pub use error::{Error, Result};
pub use pipeline::MAX_KEY_BYTES;
pub use query::{
    ClassProbe, ContainmentExplain, ContainmentHit, ContainmentResult, Explain, Groups, Hints, Hit,
    Pair, QueryResult, SimHashHit, TruncatedBucket, Warning, DEFAULT_MAX_BUCKET,
};
/// The trait a storage backend implements for
/// [`Builder::create_with_backend`] and [`Builder::open_with_backend`]:
/// redb's own, re-exported so that a backend is written against the redb
/// version lshdb uses.
pub use redb::StorageBackend;
pub use report::{ContainmentSettings, SettingsReport};
pub use sketcher::{Document, Sketch, Sketcher, MAX_DOCUMENT_BYTES};
/// The file format version this build writes and reads (`docs/format.md`).
pub use store::schema::FORMAT_VERSION;
