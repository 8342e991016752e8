//! SimHash search: stored documents whose 64-bit fingerprint is within a
//! Hamming distance of the query's, found through block tables.
//!
//! The index cuts each fingerprint into d + 1 blocks (d = the distance it was
//! built for). By the pigeonhole principle two fingerprints within distance
//! d agree exactly on at least one block, so one posting look-up per block
//! finds every candidate; each is then verified by exact Hamming distance.

use super::{plan::TruncatedBucket, Query};
use crate::sketch::simhash::{block, hamming};
use crate::store::codec::SignatureRecord;
use crate::store::tables::{Index, Postings, ReadTables, Reader};
use crate::{Error, Result};

/// A stored document near the query in SimHash space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHashHit {
    /// The stored document's key.
    pub key: String,
    /// Hamming distance between the fingerprints.
    pub distance: u32,
    /// The stored fingerprint.
    pub fingerprint: u64,
}

impl Query<'_> {
    /// Documents whose SimHash fingerprint is within `max_distance` bits of
    /// the query's, closest first (ties by key). Honours
    /// [`Query::max_bucket`] and [`Query::limit`]; buckets cut at the cap
    /// are reported by an `Err`-free truncation: see the returned list.
    ///
    /// # Errors
    /// [`Error::IndexDisabled`] when the database has no SimHash index;
    /// [`Error::InvalidParameter`] when `max_distance` exceeds the distance
    /// the index was built for.
    pub fn near_simhash(
        mut self,
        max_distance: u32,
    ) -> Result<(Vec<SimHashHit>, Vec<TruncatedBucket>)> {
        crate::guard::guard(|| {
            let blocks = self
                .db
                .pipeline()
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
            let txn = self.db.store().begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let fingerprint = self.sketch(&tables, true)?.simhash;
            let mut candidates = Vec::new();
            let mut truncated = Vec::new();
            for i in 0..blocks {
                let before = candidates.len();
                let value = block(fingerprint, i, blocks)?;
                if tables.postings(
                    Postings::Blocks,
                    i,
                    value,
                    None,
                    self.options.max_bucket,
                    &mut candidates,
                )? {
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
                if Some(id) == self.options.exclude || !tables.signature_into(id, &mut record)? {
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
            if let Some(limit) = self.options.limit {
                hits.truncate(limit);
            }
            Ok((hits, truncated))
        })
    }
}
