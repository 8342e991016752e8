//! Sketches and measures over hashed shingle sets.
//!
//! The middle of the pipeline: a sorted set of `u32` shingle hashes comes in
//! from [`crate::shingle`]; out go exact similarities ([`measures`]), MinHash
//! signatures ([`minhash`], [`oph`], [`bottomk`]), SimHash fingerprints
//! ([`simhash`]), the LSH banding that files signatures into buckets
//! ([`lsh`]) and the LSH Ensemble maths of containment search
//! ([`ensemble`]).

pub mod bottomk;
pub mod ensemble;
pub mod exact;
pub mod lsh;
pub mod measures;
pub mod minhash;
pub mod oph;
pub mod signer;
pub mod simhash;
