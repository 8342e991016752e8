//! Re-banding: the MinHash postings rebuilt for a new threshold (or an
//! explicit bands × rows), from the stored documents, in one transaction.
//!
//! Documents are read in id order in chunks; each chunk's signatures are
//! recomputed from the stored sets on every core (files written before
//! format 3 store them: those are used as they are), and its postings,
//! sorted, become one posting run. The runs are then merged into one, as
//! `compact` merges them, so memory holds one chunk and the rebuild writes
//! each posting about twice.

use super::{Database, Pipeline};
use crate::config::Settings;
use crate::sketch::lsh::{tune, TuneGoal};
use crate::store::codec::{self, SignatureRecord};
use crate::store::runs::{
    RunWriter, DEAD_IDS, RUNS, RUN_BLOCKS, RUN_BUILDING, RUN_FILTERS, RUN_FILTER_LINES,
    RUN_GARBAGE, RUN_MERGES,
};
use crate::store::schema::{BUCKETS, SETS, SIGS};
use crate::store::tables::context;
use crate::{Error, Result};
use rayon::prelude::*;
use redb::{ReadableTable, WriteTransaction};

/// Documents re-banded per posting run (about 100 MB of postings at 16
/// bands).
const CHUNK: usize = 1 << 18;

impl Database {
    /// Re-bands the index for a new threshold: the tuner picks bands and
    /// rows (or `bands` gives them), and the bucket tables are rebuilt from
    /// the stored documents, in one transaction, without re-reading any
    /// input.
    pub fn reband(&mut self, threshold: f64, bands: Option<(usize, usize)>) -> Result<()> {
        crate::guard::guard(|| {
            self.check_poisoned()?;
            crate::config::check_threshold("threshold", threshold)?;
            let n = self.settings.minhash.num_perm;
            let (bands, rows) = match bands {
                Some(explicit) => explicit,
                None => {
                    let banding = tune(&TuneGoal::new(threshold, n))?.banding;
                    (banding.bands(), banding.rows())
                }
            };
            let settings = Settings {
                threshold,
                bands,
                rows,
                ..self.settings.clone()
            };
            self.change_settings(settings, |txn, pipeline| {
                txn.delete_table(BUCKETS)?;
                txn.delete_table(RUN_BLOCKS)?;
                txn.delete_table(RUNS)?;
                txn.delete_table(DEAD_IDS)?;
                txn.delete_table(RUN_FILTERS)?;
                txn.delete_table(RUN_FILTER_LINES)?;
                // The merger is stopped (`change_settings`): no merge is
                // under way, and new runs may take any id.
                txn.delete_table(RUN_MERGES)?;
                txn.delete_table(RUN_GARBAGE)?;
                txn.delete_table(RUN_BUILDING)?;
                txn.open_table(BUCKETS)?;
                rebuild_postings(txn, pipeline)?;
                // New bands and threshold make new edges.
                super::clusters::rebuild(txn, pipeline)
            })
        })
    }
}

/// Writes every stored document's band postings under `pipeline`'s
/// banding as runs, one per chunk of documents, and its key posting, then
/// merges them.
fn rebuild_postings(txn: &WriteTransaction, pipeline: &Pipeline) -> Result<()> {
    let sigs = txn.open_table(SIGS)?;
    let sets = txn.open_table(SETS)?;
    let mut runs = RunWriter::open(txn)?;
    let mut entries = sigs.iter()?;
    let mut chunk: Vec<(u64, SignatureRecord, Vec<u32>)> = Vec::with_capacity(CHUNK);
    loop {
        chunk.clear();
        for entry in entries.by_ref().take(CHUNK) {
            let (id, bytes) = entry?;
            let id = id.value();
            let mut record = SignatureRecord::default();
            codec::decode_signature(bytes.value(), &mut record)
                .map_err(|e| context(e, "signature", id))?;
            let mut set = Vec::new();
            if record.values.is_empty() {
                let stored = sets.get(id)?.ok_or_else(|| {
                    Error::corrupted(format!(
                        "document {id} has a signature record but no shingle set"
                    ))
                })?;
                codec::decode_set_into(stored.value(), &mut set)
                    .map_err(|e| context(e, "shingle set", id))?;
            }
            chunk.push((id, record, set));
        }
        if chunk.is_empty() {
            break;
        }
        let banding = pipeline.banding();
        let mut postings: Vec<(u32, u64, u64)> = chunk
            .par_iter_mut()
            .flat_map_iter(|(id, record, set)| {
                pipeline.complete_signature(record, set);
                let mut keys = Vec::with_capacity(banding.bands());
                banding.band_keys(&record.values, &mut keys);
                let id = *id;
                keys.into_iter()
                    .enumerate()
                    .map(move |(band, key)| (band as u32, key, id))
            })
            .collect();
        postings.par_sort_unstable();
        let per_band = chunk.len() as u64;
        runs.add_run(postings.into_iter().map(Ok), per_band)?;
    }
    super::keys::write_key_postings(txn, &mut runs)?;
    runs.merge_all()
}
