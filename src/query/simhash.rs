//! SimHash search: stored documents whose 64-bit fingerprint is within a
//! Hamming distance of the query's, found through block tables.
//!
//! The index cuts each fingerprint into d + 1 blocks (d = the distance it was
//! built for). By the pigeonhole principle two fingerprints within distance
//! d agree exactly on at least one block, so one posting look-up per block
//! finds every candidate; each is then verified by exact Hamming distance.

use super::plan::{PlanOptions, TruncatedBucket};
use crate::pipeline::Pipeline;
use crate::sketch::simhash::{block, hamming};
use crate::store::codec::SignatureRecord;
use crate::store::probe::Probe;
use crate::store::tables::{Index, Postings, ReadTables, Reader};
use crate::{Error, Result};

/// A stored document near the query in SimHash space.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimHashHit {
    /// The stored document's key.
    pub key: String,
    /// Hamming distance between the fingerprints.
    pub distance: u32,
    /// The stored fingerprint.
    pub fingerprint: u64,
}

/// The SimHash search of the query fingerprint `fingerprint`: one
/// posting look-up per block, candidates verified by exact Hamming
/// distance; `options` gives the bucket cap, the limit and the id to leave
/// out.
///
/// # Errors
/// [`Error::IndexDisabled`] without a SimHash index;
/// [`Error::InvalidParameter`] for a distance above the index's.
pub(crate) fn search(
    tables: &ReadTables,
    pipeline: &Pipeline,
    fingerprint: u64,
    max_distance: u32,
    options: &PlanOptions,
) -> Result<(Vec<SimHashHit>, Vec<TruncatedBucket>)> {
    let blocks = pipeline
        .simhash_blocks()
        .ok_or(Error::IndexDisabled("the SimHash index"))?;
    if max_distance >= blocks {
        return Err(Error::invalid(
            "max_distance",
            format!(
                "this database's SimHash index finds distances up to {}, got {max_distance}",
                blocks - 1
            ),
        ));
    }
    let mut candidates = Vec::new();
    let mut truncated = Vec::new();
    for i in 0..blocks {
        let before = candidates.len();
        let value = block(fingerprint, i, blocks)?;
        let probe = Probe::all(i, value, options.max_bucket);
        if tables.postings(Postings::Blocks, probe, &mut candidates)? {
            truncated.push(TruncatedBucket {
                band: i as usize,
                read: candidates.len() - before,
            });
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    let mut record = SignatureRecord::default();
    let mut hits = Vec::new();
    for id in candidates {
        if Some(id) == options.exclude || !tables.signature_into(id, &mut record)? {
            continue;
        }
        let Some(stored) = record.simhash else {
            continue;
        };
        let distance = hamming(fingerprint, stored);
        if distance <= max_distance {
            let doc = tables.doc(id)?.ok_or_else(|| {
                Error::corrupted(format!("posting points at missing document {id}"))
            })?;
            hits.push(SimHashHit {
                key: doc.key,
                distance,
                fingerprint: stored,
            });
        }
    }
    hits.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.key.cmp(&b.key)));
    if let Some(limit) = options.limit {
        hits.truncate(limit);
    }
    Ok((hits, truncated))
}
