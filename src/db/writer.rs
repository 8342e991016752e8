//! The operations of one write transaction: insert, replace, remove, and
//! dedup-on-write, with the document-id counter.

use super::clusters::run::{band_keys_by_document, NewDocs, StoredView};
use super::clusters::upkeep::Upkeep;
use super::clusters::upkeep::ALL_BANDS;
use super::held::Held;
use super::load_filter::LoadFilter;
use super::{Pipeline, Unique};
use crate::pipeline::Prepared;
use crate::query::plan::{self, PlanOptions};
use crate::store::clusters::{Row, NEXT_CLUSTER};
use crate::store::codec::SignatureRecord;
use crate::store::containment::ContainmentWriter;
use crate::store::meta;
use crate::store::schema::{meta_keys, META};
use crate::store::tables::{key_posting, Index, WriteTables};
use crate::store::times::TimeWriter;
use crate::Result;
use rayon::prelude::*;
use redb::{Table, WriteTransaction};
use std::sync::Arc;

mod many;

/// The tables of a write transaction and the pipeline that derives index
/// keys.
pub(crate) struct Writer<'t, 'p> {
    tables: WriteTables<'t>,
    meta: Table<'t, &'static str, &'static [u8]>,
    next_id: u64,
    pipeline: &'p Pipeline,
    /// The containment index, when the settings keep one.
    containment: Option<ContainmentWriter<'t>>,
    /// The clusters' upkeep, when the settings keep clusters.
    clusters: Option<Upkeep<'t>>,
    /// The cluster the last document stored joined.
    joined: Option<Row>,
    /// The time index, when the settings keep one.
    times: Option<TimeWriter<'t>>,
    /// What the load this transaction is part of has written, when it
    /// began on an empty file: the clusters' upkeep reads only the bands
    /// where it may meet a stored document.
    load: Option<Arc<LoadFilter>>,
    /// The last committed state, for the clusters' probes of a bulk load
    /// to read on every core.
    view: Option<Arc<StoredView<'p>>>,
}

impl<'t, 'p> Writer<'t, 'p> {
    pub fn open(txn: &'t WriteTransaction, pipeline: &'p Pipeline) -> Result<Self> {
        let meta_table = txn.open_table(META)?;
        let next_id = meta::read_u64(&meta_table, meta_keys::NEXT_ID)?.max(1);
        let next_cluster = meta::read_u64(&meta_table, NEXT_CLUSTER)?;
        Ok(Self {
            tables: WriteTables::open(txn)?,
            meta: meta_table,
            next_id,
            pipeline,
            containment: match pipeline.containment() {
                Some(ensemble) => Some(ContainmentWriter::open(txn, ensemble)?),
                None => None,
            },
            clusters: Upkeep::open(txn, pipeline, next_cluster)?,
            joined: None,
            times: match pipeline.timestamps() {
                true => Some(TimeWriter::open(txn)?),
                false => None,
            },
            load: None,
            view: None,
        })
    }

    /// Lets [`Writer::insert_many`] find new documents' stored neighbours
    /// for the clusters' upkeep in `view` (the state this transaction
    /// began from), on every core.
    pub fn look_in(&mut self, view: Arc<StoredView<'p>>) {
        self.view = Some(view);
    }

    /// Tells the writer that everything stored was written by a load that
    /// added it to `filter` (before this transaction, or earlier in it).
    pub fn know_load(&mut self, filter: Arc<LoadFilter>) {
        self.load = Some(filter);
    }

    /// The bands in which a stored document may share a bucket with band
    /// keys `band_keys` (every band without a load filter).
    fn bands_met(&self, band_keys: &[u64]) -> u64 {
        self.load
            .as_ref()
            .map_or(ALL_BANDS, |filter| filter.bands_met(band_keys))
    }

    /// [`Writer::bands_met`] of each of `docs` (on every core; none
    /// without clusters).
    fn bands_met_many(&self, docs: &[&Prepared]) -> Vec<u64> {
        if self.clusters.is_none() {
            return Vec::new();
        }
        match &self.load {
            Some(filter) => docs
                .par_iter()
                .map(|doc| filter.bands_met(&doc.band_keys))
                .collect(),
            None => vec![ALL_BANDS; docs.len()],
        }
    }

    /// The write tables, for what a load keeps between transactions.
    pub fn tables_mut(&mut self) -> &mut WriteTables<'t> {
        &mut self.tables
    }

    /// Stores `doc`, replacing the document under the same key. Returns
    /// true when it replaced one.
    ///
    /// A stored document's records never change: a replacement is stored
    /// under a new id and the old id is removed. So whatever holds records
    /// by id (the record cache, in this process or another) can never hold
    /// a stale one: an id either still has its records or is gone.
    pub fn insert(&mut self, doc: &Prepared) -> Result<bool> {
        let old = self.tables.id_of(&doc.key)?;
        let vacated = match old {
            Some(old) => self.delete(old, &doc.key)?,
            None => None,
        };
        let id = self.new_id();
        let encoded = doc.encode();
        self.tables.put(id, &encoded)?;
        if let Some(containment) = &mut self.containment {
            containment.put(id, doc.set_len(), &doc.signature)?;
        }
        self.stamp(id, doc)?;
        if let Some(clusters) = &mut self.clusters {
            clusters.set_priority(id, doc.priority)?;
        }
        self.join_cluster(id, doc, vacated)?;
        Ok(old.is_some())
    }

    /// Files new document `id` (stored from `doc`) in its cluster, when the
    /// file keeps clusters (`clusters::upkeep`); `vacated` is the cluster
    /// its replaced version left empty, which it takes over when it joins
    /// no other.
    fn join_cluster(&mut self, id: u64, doc: &Prepared, vacated: Option<u64>) -> Result<()> {
        if let Some(clusters) = &mut self.clusters {
            // The set as prepared, unless trimmed (`Prepared::trim`).
            let set = Some(&doc.set[..]).filter(|set| set.len() == doc.set_len() as usize);
            let held = (&doc.band_keys[..], set);
            let row = clusters.join(&self.tables, self.pipeline, id, held, vacated)?;
            self.joined = Some(row);
        }
        Ok(())
    }

    /// The cluster the last document stored joined (`None` without
    /// clusters).
    pub fn joined(&self) -> Option<Row> {
        self.joined
    }

    /// Stamps document `id` in the time index, when the file keeps one.
    fn stamp(&mut self, id: u64, doc: &Prepared) -> Result<()> {
        match &mut self.times {
            Some(times) => times.put(id, doc.timestamp),
            None => Ok(()),
        }
    }

    /// Stamps many new documents, `(id, given stamp)`, in the time index
    /// when the file keeps one.
    fn stamp_many(&mut self, stamps: Vec<(u64, Option<u64>)>) -> Result<()> {
        match &mut self.times {
            Some(times) => times.put_many(stamps),
            None => Ok(()),
        }
    }

    /// A fresh document id.
    fn new_id(&mut self) -> u64 {
        self.take_ids(1)
    }

    /// Cluster upkeep of new documents `new` about to be written as one
    /// run: their stored neighbours' clusters (`clusters::run`), probed in
    /// the bands `bands` gives by document.
    fn clusters_before_run(&self, new: &NewDocs<'_>) -> Result<Option<Vec<Vec<u64>>>> {
        match &self.clusters {
            Some(clusters) => Ok(Some(clusters.before_run(
                &self.tables,
                self.pipeline,
                new,
            )?)),
            None => Ok(None),
        }
    }

    /// Cluster upkeep of new documents `new` once their run is written:
    /// they join their clusters (`clusters::run`).
    fn clusters_after_run(
        &mut self,
        new: &NewDocs<'_>,
        stored: Option<Vec<Vec<u64>>>,
        reuse: &[Option<u64>],
    ) -> Result<()> {
        if let (Some(clusters), Some(stored)) = (&mut self.clusters, stored) {
            clusters.after_run(&self.tables, self.pipeline, new, stored, reuse)?;
        }
        Ok(())
    }

    /// `n` fresh document ids; returns the first.
    pub fn take_ids(&mut self, n: usize) -> u64 {
        self.next_id += n as u64;
        self.next_id - n as u64
    }

    /// Stores documents whose keys are not stored yet, under ids from
    /// [`Writer::take_ids`], in the order given; their band and key
    /// postings are appended to `run` instead, for [`Writer::put_run`]. So a pipeline can store
    /// documents chunk by chunk and their postings as one run per commit.
    pub fn put_new(
        &mut self,
        docs: &[(&Prepared, u64)],
        run: &mut Vec<(u32, u64, u64)>,
    ) -> Result<()> {
        let mut blocks = Vec::new();
        for &(doc, id) in docs {
            let encoded = doc.encode();
            self.tables.put_records(id, &encoded)?;
            if let Some(clusters) = &mut self.clusters {
                clusters.set_priority(id, doc.priority)?;
            }
            append_postings(doc, id, run, &mut blocks);
        }
        self.stamp_many(docs.iter().map(|&(doc, id)| (id, doc.timestamp)).collect())?;
        blocks.sort_unstable();
        self.tables.put_postings(&[], &blocks)?;
        if let Some(containment) = &mut self.containment {
            containment.put_many(
                docs.iter()
                    .map(|&(doc, id)| (id, doc.set_len(), doc.signature.as_slice())),
            )?;
        }
        Ok(())
    }

    /// Writes band and key postings (of documents stored with
    /// [`Writer::put_new`]) as one posting run.
    pub fn put_run(&mut self, mut postings: Vec<(u32, u64, u64)>) -> Result<()> {
        if postings.is_empty() {
            return Ok(());
        }
        let mut joining = Vec::new();
        if self.clusters.is_some() {
            for mut doc in band_keys_by_document(&postings) {
                // A document replaced before its postings were written is gone.
                if redb::ReadableTable::get(&self.tables.sigs, doc.id)?.is_some() {
                    doc.bands = self.bands_met(&doc.band_keys);
                    joining.push(doc);
                }
            }
        }
        let around = self.clusters_before_run(&joining)?;
        // A dedup's run is a million postings and more, sorted while the
        // load's other core is often idle: on every core.
        postings.par_sort_unstable();
        self.tables.put_run(postings, &[])?;
        self.clusters_after_run(&joining, around, &[])
    }

    /// Removes the document under `key`; false when there is none.
    pub fn remove(&mut self, key: &str) -> Result<bool> {
        let Some(id) = self.tables.id_of(key)? else {
            return Ok(false);
        };
        self.delete(id, key)?;
        Ok(true)
    }

    /// Deletes stored document `id` (under `key`) with every posting of it:
    /// its band keys, SimHash blocks and containment postings, recomputed
    /// from its stored records; then takes it out of its cluster. Returns
    /// the cluster it left empty, if any.
    fn delete(&mut self, id: u64, key: &str) -> Result<Option<u64>> {
        let (mut record, mut set) = (SignatureRecord::default(), Vec::new());
        let (mut band_keys, mut blocks) = (Vec::new(), Vec::new());
        if self
            .pipeline
            .stored_signature(&self.tables, id, &mut record, &mut set)?
        {
            self.pipeline
                .index_keys(&record, &mut band_keys, &mut blocks);
            if let Some(containment) = &mut self.containment {
                containment.remove(id, record.set_len, &record.values)?;
            }
        }
        if let Some(times) = &mut self.times {
            times.remove(id)?;
        }
        self.tables.delete(id, key, &band_keys, &blocks)?;
        match &mut self.clusters {
            Some(clusters) => clusters.leave(&self.tables, self.pipeline, id),
            None => Ok(None),
        }
    }

    /// Inserts `doc` unless a stored document other than its own key is a
    /// near-duplicate at `threshold` or above.
    pub fn insert_unique(&mut self, doc: &Prepared, threshold: f64) -> Result<Unique> {
        let sketch = crate::pipeline::Sketch {
            set: doc.set.clone(),
            signature: doc.signature.clone(),
            band_keys: doc.band_keys.clone(),
            simhash: doc.simhash.unwrap_or(0),
        };
        let own_id = self.tables.id_of(&doc.key)?;
        let options = PlanOptions {
            exclude: own_id,
            ..PlanOptions::dedup(threshold, false)
        };
        let planned = plan::run(&self.tables, self.pipeline, &sketch, &options)?;
        if let Some(hit) = plan::resolve(&self.tables, planned.hits)?
            .into_iter()
            .next()
        {
            return Ok(Unique::Duplicate(hit));
        }
        self.insert(doc)?;
        Ok(Unique::Inserted)
    }

    /// [`Writer::insert_unique`] of each document in order, each seeing
    /// the ones before it — with the accepted documents held in memory
    /// (a map of their band keys) and written as one run at the end, not
    /// posting by posting. Decisions are those of one call per document:
    /// the stored side is the same plan, the held side is verified as
    /// the plan verifies (`query::verify::verify_in_memory`), and ties go to the
    /// lower id, i.e. to stored documents, then to earlier ones. A
    /// document whose key is stored or held goes the one-by-one way,
    /// after the held documents are written. Only in buckets above
    /// `max_bucket` can the decisions differ: held documents count
    /// against no cap.
    pub fn insert_unique_many(
        &mut self,
        docs: Vec<Result<Prepared>>,
        threshold: f64,
    ) -> Result<Vec<Result<Unique>>> {
        let options = PlanOptions::dedup(threshold, false);
        let mut held = Held::default();
        let mut out = Vec::with_capacity(docs.len());
        for doc in docs {
            let doc = match doc {
                Ok(doc) => doc,
                Err(err) => {
                    out.push(Err(err));
                    continue;
                }
            };
            if held.contains_key(&doc.key) || self.tables.id_of(&doc.key)?.is_some() {
                self.write_held(&mut held)?;
                out.push(Ok(self.insert_unique(&doc, threshold)?));
                continue;
            }
            let sketch = crate::pipeline::Sketch {
                set: doc.set.clone(),
                signature: doc.signature.clone(),
                band_keys: doc.band_keys.clone(),
                simhash: doc.simhash.unwrap_or(0),
            };
            let stored = plan::run(&self.tables, self.pipeline, &sketch, &options)?
                .hits
                .first()
                .copied();
            let best = held.best(self.pipeline, &doc, threshold, options.prune);
            // Ties go to the lower id: stored documents come before held ones.
            let stored = stored.filter(|&(_, s)| best.is_none_or(|(_, b)| s >= b));
            if let Some((id, s)) = stored {
                let hit = plan::resolve(&self.tables, vec![(id, s)])?.remove(0);
                out.push(Ok(Unique::Duplicate(hit)));
            } else if let Some((i, s)) = best {
                out.push(Ok(Unique::Duplicate(crate::query::Hit {
                    key: held.get(i).0.key.clone(),
                    similarity: s,
                })));
            } else {
                // Ranked by position: ties go to the earlier document.
                let rank = held.len() as u64;
                held.push(doc, rank);
                out.push(Ok(Unique::Inserted));
            }
        }
        self.write_held(&mut held)?;
        Ok(out)
    }

    /// Writes the held documents of [`Writer::insert_unique_many`] and
    /// empties `held`.
    fn write_held(&mut self, held: &mut Held) -> Result<()> {
        if !held.is_empty() {
            let docs: Vec<&Prepared> = held.docs().map(|(doc, _)| doc).collect();
            self.insert_many(&docs)?;
        }
        *held = Held::default();
        Ok(())
    }

    /// Writes the id counter; call before committing.
    pub fn finish(self) -> Result<()> {
        self.finish_runs().map(|_| ())
    }

    /// [`Writer::finish`], returning the highest run id issued or listed
    /// ([`WriteTables::run_ids_issued`]), for a load that keeps a cache of
    /// run filters from one transaction to the next.
    pub fn finish_runs(mut self) -> Result<u32> {
        self.tables.flush_fresh()?;
        if let Some(clusters) = self.clusters.take() {
            meta::write_u64(&mut self.meta, NEXT_CLUSTER, clusters.finish())?;
        }
        meta::write_u64(&mut self.meta, meta_keys::NEXT_ID, self.next_id)?;
        Ok(self.tables.run_ids_issued())
    }
}

/// Appends document `id`'s MinHash postings (band, key, id) and its key
/// posting to `postings`, and its SimHash block postings to `blocks`.
fn append_postings(
    doc: &Prepared,
    id: u64,
    postings: &mut Vec<(u32, u64, u64)>,
    blocks: &mut Vec<(u32, u64, u64)>,
) {
    let band = |(b, &k): (usize, &u64)| (b as u32, k, id);
    postings.extend(doc.band_keys.iter().enumerate().map(band));
    postings.push(key_posting(&doc.key, id));
    blocks.extend(doc.blocks.iter().enumerate().map(band));
}
