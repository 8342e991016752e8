//! [`KeptFilters`]: the whole run filters a file with clusters keeps in
//! memory from one write transaction to the next.
//!
//! The clusters' upkeep probes every bucket of every new document in every
//! run, uncapped (`clusters::upkeep::probe`). Reading each run's filter
//! rows through redb in every transaction made a single durable insert into
//! a 1 M-document file 2.2× as costly with clusters as without, and a bulk
//! load 10 times slower. So writes that commit or fail loudly (single
//! writes, bulk loads) share these filters; a [`crate::Batch`], which can
//! be aborted, does not.
//!
//! Only filters of committed runs are kept: they are read when a
//! transaction begins, for the runs it lists then. Ids stay unambiguous:
//! no transaction that shares the filters issues a run id at or below the
//! highest one issued before (`RunWriter::share_filters`), and a run list
//! that shows an id issued again empties the cache (`RowCache::follow`).

use super::writer::Writer;
use crate::store::runs::RowCache;
use crate::Result;
use std::sync::Arc;

/// Bytes of whole run filters kept at most: 10 bits per posting, 17
/// postings per document of 16 bands (its band keys and its key), so about
/// 21 bytes per document and 18 M documents' worth (the 170 M postings of
/// a 10 M-document file take about 203 MiB). Runs beyond it are probed row
/// by row.
pub(crate) const KEPT_FILTER_BYTES: usize = 384 << 20;

/// The filters, and the highest run id issued by the transactions that
/// shared them.
pub(crate) struct KeptFilters {
    cache: Arc<RowCache>,
    issued: u32,
}

impl KeptFilters {
    /// Nothing kept yet; at most `bytes` of filters kept.
    pub fn new(bytes: usize) -> Self {
        Self {
            cache: Arc::new(RowCache::whole_filters_only(bytes)),
            issued: 0,
        }
    }

    /// Lets `writer`'s transaction probe through the kept filters (reading
    /// those of runs listed now and not kept yet).
    pub fn share(&self, writer: &mut Writer<'_, '_>) -> Result<()> {
        writer
            .tables_mut()
            .share_run_filters(&self.cache, self.issued)
    }

    /// The filters, for read transactions of the same file (which read
    /// only committed runs).
    pub fn rows(&self) -> Arc<RowCache> {
        Arc::clone(&self.cache)
    }

    /// Notes the highest run id a committed transaction issued or listed.
    pub fn committed(&mut self, issued: u32) {
        self.issued = self.issued.max(issued);
    }
}
