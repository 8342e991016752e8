//! [`Writer::insert_many`]: one chunk of a bulk load written as one
//! posting run, with its clusters' upkeep. The new documents' stored
//! neighbours are looked up in the last committed state on the pool while
//! this thread writes their records, so that the two overlap.

use super::{append_postings, Writer};
use crate::db::clusters::run::{before_run_in, NewDoc, NewDocs};
use crate::pipeline::Prepared;
use crate::store::tables::Index as _;
use crate::Result;
use std::borrow::Cow;

/// What the records loop of [`Writer::insert_many`] leaves for the rest.
struct Written<'d> {
    /// Documents that replaced another: a later one of the same key in
    /// the chunk, or a stored one.
    replaced: u64,
    /// Whether one of them replaced a stored document (removed in this
    /// transaction, so the last committed state is no longer its state).
    stored_replaced: bool,
    /// By new document (in id order), the cluster its replaced version
    /// left empty.
    reuse: Vec<Option<u64>>,
    /// (id, timestamp) for the time index.
    stamps: Vec<(u64, Option<u64>)>,
    /// (id, set size, signature) for the containment index.
    stored: Vec<(u64, u32, &'d [u32])>,
    /// The run's band and key postings, and its SimHash block postings.
    postings: Vec<(u32, u64, u64)>,
    blocks: Vec<(u32, u64, u64)>,
}

impl Writer<'_, '_> {
    /// Stores many documents, as [`Writer::insert`] would one by one (a
    /// later document with the same key replaces an earlier one), but with
    /// their band and key postings written as one posting run instead of
    /// B-tree rows, which is what makes bulk loads fast. Ids follow the
    /// key order. Returns how many documents replaced a stored one.
    pub fn insert_many(&mut self, docs: &[&Prepared]) -> Result<u64> {
        let order = key_order(docs);
        let bands = self.bands_met_many(docs);
        // Ids are given in key order, from the counter on.
        let first = self.next_id;
        let joining: NewDocs<'_> = match self.clusters {
            Some(_) => (order.iter().enumerate())
                .map(|(place, &i)| NewDoc {
                    id: first + place as u64,
                    band_keys: Cow::Borrowed(&docs[i].band_keys),
                    bands: bands[i],
                    set: (!docs[i].set.is_empty()).then_some(docs[i].set.as_slice()),
                })
                .collect(),
            None => Vec::new(),
        };
        // The stored clusters of the new documents, found in the last
        // committed state on the pool while this thread writes the
        // records (no lock is held across it). That state is this
        // transaction's unless a stored document is replaced; then the
        // look-up is made again below, in the transaction.
        let view = (self.view.clone()).filter(|_| joining.iter().all(|d| d.set.is_some()));
        let (pipeline, mut looked) = (self.pipeline, None);
        let written = rayon::in_place_scope(|scope| {
            if let Some(view) = &view {
                let threshold = pipeline.clusters().map_or(1.0, |c| c.1);
                let (joining, looked) = (&joining, &mut looked);
                scope.spawn(move |_| {
                    *looked = Some(before_run_in(view, pipeline, threshold, joining));
                });
            }
            self.write_records(docs, &order)
        });
        let mut written = written?;
        debug_assert_eq!(self.next_id, first + order.len() as u64);
        let around = match looked {
            Some(found) if !written.stored_replaced => {
                self.clusters.as_ref().map(|_| found).transpose()?
            }
            _ => self.clusters_before_run(&joining)?,
        };
        self.tables
            .put_run(std::mem::take(&mut written.postings), &written.blocks)?;
        if let Some(containment) = &mut self.containment {
            containment.put_many(written.stored.into_iter())?;
        }
        self.clusters_after_run(&joining, around, &written.reuse)?;
        self.stamp_many(written.stamps)?;
        Ok(written.replaced)
    }

    /// Writes the records of `docs` in `order`, under ids from the
    /// counter, removing the stored documents they replace; gathers what
    /// the rest of [`Writer::insert_many`] writes.
    fn write_records<'d>(&mut self, docs: &[&'d Prepared], order: &[usize]) -> Result<Written<'d>> {
        let mut written = Written {
            replaced: (docs.len() - order.len()) as u64,
            stored_replaced: false,
            reuse: Vec::new(),
            stamps: Vec::with_capacity(order.len()),
            stored: Vec::with_capacity(order.len()),
            postings: Vec::new(),
            blocks: Vec::new(),
        };
        for &i in order {
            let doc = docs[i];
            let mut vacated = None;
            if let Some(old) = self.stored_id(&doc.key)? {
                vacated = self.delete(old, &doc.key)?;
                written.replaced += 1;
                written.stored_replaced = true;
            }
            let id = self.new_id();
            if let Some(clusters) = &mut self.clusters {
                clusters.set_priority(id, doc.priority)?;
                written.reuse.push(vacated);
            }
            self.tables.put_records(id, &doc.encode())?;
            written.stamps.push((id, doc.timestamp));
            written
                .stored
                .push((id, doc.set_len(), doc.signature.as_slice()));
            append_postings(doc, id, &mut written.postings, &mut written.blocks);
        }
        written.postings.sort_unstable();
        written.blocks.sort_unstable();
        Ok(written)
    }
}

impl Writer<'_, '_> {
    /// The id stored under `key`, without reading the file when the
    /// load's filter rules the key out (the load never wrote it, and
    /// nothing else was written since the load began on an empty file).
    fn stored_id(&self, key: &str) -> Result<Option<u64>> {
        match &self.load {
            Some(filter) if !filter.may_hold_key(key) => Ok(None),
            _ => self.tables.id_of(key),
        }
    }
}

/// The places of `docs` in key order, the last occurrence of each key
/// winning. Documents are numbered in that order: documents with similar
/// keys (pages of one site, packages of one family) are often
/// near-duplicates, and nearby ids make all pairs' and queries' record
/// reads walk instead of seek (`store::walk`): all pairs over 3 M
/// documents ran 1.36x longer with ids in input order.
fn key_order(docs: &[&Prepared]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by(|&a, &b| docs[a].key.cmp(&docs[b].key).then(a.cmp(&b)));
    order.dedup_by(|later, earlier| {
        let same = docs[*later].key == docs[*earlier].key;
        if same {
            *earlier = *later; // keep the later occurrence
        }
        same
    });
    order
}
