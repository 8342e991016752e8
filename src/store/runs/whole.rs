//! Whole run filters in memory, for the look-ups of a dedup-on-write load.
//!
//! Such a load probes every run's filter in every band its documents may
//! share, millions of times: through [`RowCache`](super::RowCache) each
//! probe takes a lock, a hash look-up and a pointer to a boxed row (three
//! cache misses). A run's filter is small (10 bits per posting: 1.3 MB per
//! million postings) and never changes once written, so the cache reads
//! it whole, once, into one array per band, and the snapshot's look-ups
//! probe that with no lock and one miss. The bits and their layout are the
//! filter's own ([`super::filter`]); only where they are kept differs.

use super::filter::{self, LINE_BYTES, ROW_BYTES, ROW_LINES};
use crate::store::codec::{unframe, Tag};
use crate::{Error, Result};
use redb::ReadableTable;

/// One run's filter, every band, in memory.
pub struct WholeFilter {
    /// Lines per band.
    lines: u64,
    /// The run's postings when it was read: with `lines`, what a cache
    /// checks before it answers for a run id again.
    postings: u64,
    /// (band, its rows' bits end to end), by band: rows not stored are
    /// zeros, as they have no bit set, and bands with no row are left out.
    /// Bands are not dense (keys have a band of their own, far above).
    bands: Vec<(u32, Box<[u8]>)>,
}

impl WholeFilter {
    /// Reads run `run`'s filter, of `lines` lines per band, the run
    /// listed with `postings` postings.
    pub fn read(
        filters: &impl ReadableTable<(u32, u32, u32), &'static [u8]>,
        run: u32,
        lines: u64,
        postings: u64,
    ) -> Result<Self> {
        let band_bytes = usize::try_from(lines.div_ceil(ROW_LINES))
            .ok()
            .and_then(|rows| rows.checked_mul(ROW_BYTES))
            .ok_or_else(|| Error::corrupted(format!("run {run}: filter of {lines} lines")))?;
        let mut bands: Vec<(u32, Box<[u8]>)> = Vec::new();
        for entry in filters.range((run, 0, 0)..=(run, u32::MAX, u32::MAX))? {
            let (at, row) = entry?;
            let (_, band, row_no) = at.value();
            let payload = unframe(Tag::Filter, row.value())
                .map_err(|e| super::block::context(e, run, band))?;
            let start = row_no as usize * ROW_BYTES;
            if payload.len() != ROW_BYTES || start + ROW_BYTES > band_bytes {
                return Err(super::block::context(
                    Error::corrupted(format!(
                        "filter row {row_no} of {} bytes, for {lines} lines",
                        payload.len()
                    )),
                    run,
                    band,
                ));
            }
            // Rows come in (band, row) order.
            if bands.last().is_none_or(|b| b.0 != band) {
                bands.push((band, vec![0u8; band_bytes].into_boxed_slice()));
            }
            if let Some((_, bits)) = bands.last_mut() {
                bits[start..start + ROW_BYTES].copy_from_slice(payload);
            }
        }
        Ok(Self {
            lines,
            postings,
            bands,
        })
    }

    /// Whether it was read for a run of `lines` lines per band and
    /// `postings` postings: a run id issued again (a run emptied by a
    /// merge, its id reused) names another run, which is read anew.
    pub fn is_of(&self, lines: u64, postings: u64) -> bool {
        (self.lines, self.postings) == (lines, postings)
    }

    /// Whether the run may post under (`band`, `key`), as
    /// [`filter::may_contain`] answers.
    pub fn may_contain(&self, band: u32, key: u64) -> bool {
        let Ok(at) = self.bands.binary_search_by_key(&band, |b| b.0) else {
            return false;
        };
        let bits = &self.bands[at].1;
        let at = filter::line_of(key, self.lines) as usize * LINE_BYTES;
        bits.get(at..at + LINE_BYTES)
            .is_some_and(|line| filter::line_bits_have(line, band, key))
    }

    /// The bytes it takes.
    pub fn bytes(&self) -> usize {
        self.bands.iter().map(|b| b.1.len() + 32).sum::<usize>() + 64
    }
}

#[cfg(test)]
mod tests {
    use super::super::{filter, ReadRuns, RowCache, RunTables};
    use crate::testing::new_db;
    use crate::BulkOptions;
    use std::sync::Arc;

    /// A load's snapshots hold its runs' filters whole, and they answer
    /// every probe as the rows do.
    #[test]
    fn whole_filters_answer_as_the_rows() {
        let (_dir, _path, db) = new_db("w.lshdb");
        let docs: Vec<(String, String)> = (0..3000)
            .map(|i| {
                (
                    format!("k{i}"),
                    format!("document {i} about {} things", i % 97),
                )
            })
            .collect();
        let options = BulkOptions::default().batch(500);
        db.insert_bulk(
            docs.iter().map(|(k, t)| (k.as_str(), t.as_str())),
            &options,
            |_| true,
        )
        .unwrap();
        let txn = db.store().begin_read().unwrap();
        let mut runs = ReadRuns::open(&txn).unwrap().unwrap();
        assert!(runs.list().len() > 1, "several runs: {:?}", runs.list());
        runs.share_rows(Arc::new(RowCache::with_parts(64 << 20, 32 << 20)))
            .unwrap();
        let filters = runs.filters().unwrap();
        let mut met = 0;
        for &(run, _) in runs.list() {
            let whole = runs.whole_filter(run).expect("held whole");
            let lines = runs.filter_lines(run).unwrap();
            for i in 0..20_000u64 {
                let (band, key) = ((i % 17) as u32, crate::hash::mix64(i));
                let rows = filter::may_contain(filters, None, run, lines, band, key).unwrap();
                assert_eq!(whole.may_contain(band, key), rows, "run {run} band {band}");
            }
            // Keys the run holds are met (the filter has no false negative).
            for posting in runs.scan(run, 0..=u32::MAX).unwrap().take(2000) {
                let (band, key, _) = posting.unwrap();
                assert!(whole.may_contain(band, key));
                met += 1;
            }
        }
        assert!(met > 0);
        // A cache too small for them keeps none: the rows answer.
        let mut runs = ReadRuns::open(&txn).unwrap().unwrap();
        runs.share_rows(Arc::new(RowCache::with_parts(1024, 512)))
            .unwrap();
        assert!(runs.whole_filter(runs.list()[0].0).is_none());
    }
}

#[cfg(test)]
mod reuse_tests {
    use super::super::RowCache;
    use crate::testing::new_db;
    use crate::BulkOptions;

    /// A run id listed again with other postings (a run emptied by a
    /// merge, its id issued again) is read anew, not answered from the
    /// filter kept under that id.
    #[test]
    fn a_kept_filter_answers_only_for_the_run_it_was_read_for() {
        let (_dir, _path, db) = new_db("r.lshdb");
        let docs: Vec<(String, String)> = (0..400)
            .map(|i| (format!("k{i}"), format!("text number {i} of the test")))
            .collect();
        db.insert_bulk(
            docs.iter().map(|(k, t)| (k.as_str(), t.as_str())),
            &BulkOptions::default(),
            |_| true,
        )
        .unwrap();
        let txn = db.store().begin_read().unwrap();
        let runs = super::super::ReadRuns::open(&txn).unwrap().unwrap();
        let filters = super::super::RunTables::filters(&runs).unwrap();
        let list = super::super::RunTables::list(&runs).to_vec();
        let run = list[0].0;
        let lines = super::super::RunTables::filter_lines(&runs, run).unwrap();
        let cache = RowCache::with_parts(64 << 20, 32 << 20);
        let first = cache
            .whole_filters(filters, &list, &[(run, lines)])
            .unwrap();
        let again = cache
            .whole_filters(filters, &list, &[(run, lines)])
            .unwrap();
        assert!(std::sync::Arc::ptr_eq(&first[0].1, &again[0].1), "kept");
        let other = [(run, list[0].1 + 1)];
        let reread = cache
            .whole_filters(filters, &other, &[(run, lines)])
            .unwrap();
        assert!(
            !std::sync::Arc::ptr_eq(&first[0].1, &reread[0].1),
            "read anew"
        );
        assert!(reread[0].1.is_of(lines, list[0].1 + 1));
    }
}
