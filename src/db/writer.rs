//! The operations of one write transaction: insert, replace, remove, and
//! dedup-on-write, with the document-id counter.

use super::{Pipeline, Unique};
use crate::db::prepare::Prepared;
use crate::query::plan::{self, PlanOptions};
use crate::store::meta;
use crate::store::schema::{meta_keys, META};
use crate::store::tables::{Index, WriteTables};
use crate::Result;
use redb::{Table, WriteTransaction};

/// The tables of a write transaction and the pipeline that derives index
/// keys.
pub(crate) struct Writer<'t, 'p> {
    tables: WriteTables<'t>,
    meta: Table<'t, &'static str, &'static [u8]>,
    next_id: u64,
    pipeline: &'p Pipeline,
    /// Whether a stored document was replaced or removed (the record cache
    /// must then be invalidated after the commit).
    deleted: bool,
}

impl<'t, 'p> Writer<'t, 'p> {
    pub fn open(txn: &'t WriteTransaction, pipeline: &'p Pipeline) -> Result<Self> {
        let meta_table = txn.open_table(META)?;
        let next_id = meta::read_u64(&meta_table, meta_keys::NEXT_ID)?.max(1);
        Ok(Self {
            tables: WriteTables::open(txn)?,
            meta: meta_table,
            next_id,
            pipeline,
            deleted: false,
        })
    }

    /// Stores `doc`, replacing the document under the same key (which keeps
    /// its id). Returns true when it replaced one.
    pub fn insert(&mut self, doc: &Prepared) -> Result<bool> {
        let existing = self.tables.id_of(&doc.key)?;
        let id = match existing {
            Some(id) => {
                let pipeline = self.pipeline;
                self.tables
                    .delete(id, &doc.key, |r, b, s| pipeline.index_keys(r, b, s))?;
                self.deleted = true;
                id
            }
            None => {
                let id = self.next_id;
                self.next_id += 1;
                id
            }
        };
        self.tables.put(id, &doc.encode())?;
        Ok(existing.is_some())
    }

    /// Stores many documents, as [`Writer::insert`] would one by one (a
    /// later document with the same key replaces an earlier one), but with
    /// each table's inserts sorted by key: B-tree pages are then touched in
    /// order instead of at random, which is what makes bulk loads fast.
    /// Returns how many documents replaced a stored one.
    pub fn insert_many(&mut self, docs: &[&Prepared]) -> Result<u64> {
        // Documents in key order, the last occurrence of each key winning:
        // the keys table is then filled in order too.
        let mut order: Vec<usize> = (0..docs.len()).collect();
        order.sort_by(|&a, &b| docs[a].key.cmp(&docs[b].key).then(a.cmp(&b)));
        order.dedup_by(|later, earlier| {
            let same = docs[*later].key == docs[*earlier].key;
            if same {
                *earlier = *later; // keep the later occurrence
            }
            same
        });
        let mut replaced = (docs.len() - order.len()) as u64;
        let mut keys = Vec::with_capacity(order.len());
        let (mut postings, mut blocks) = (Vec::new(), Vec::new());
        let pipeline = self.pipeline;
        for i in order {
            let doc = docs[i];
            let id = match self.tables.id_of(&doc.key)? {
                Some(id) => {
                    self.tables
                        .delete(id, &doc.key, |r, b, s| pipeline.index_keys(r, b, s))?;
                    self.deleted = true;
                    replaced += 1;
                    id
                }
                None => {
                    self.next_id += 1;
                    self.next_id - 1
                }
            };
            let encoded = doc.encode();
            self.tables.put_records(id, &encoded)?;
            keys.push((doc.key.as_str(), id));
            postings.extend(
                doc.band_keys
                    .iter()
                    .enumerate()
                    .map(|(b, &k)| (b as u32, k, id)),
            );
            blocks.extend(
                doc.blocks
                    .iter()
                    .enumerate()
                    .map(|(b, &v)| (b as u32, v, id)),
            );
        }
        postings.sort_unstable();
        blocks.sort_unstable();
        self.tables.put_postings(&keys, &postings, &blocks)?;
        Ok(replaced)
    }

    /// Removes the document under `key`; false when there is none.
    pub fn remove(&mut self, key: &str) -> Result<bool> {
        let Some(id) = self.tables.id_of(key)? else {
            return Ok(false);
        };
        let pipeline = self.pipeline;
        self.tables
            .delete(id, key, |r, b, s| pipeline.index_keys(r, b, s))?;
        self.deleted = true;
        Ok(true)
    }

    /// Inserts `doc` unless a stored document other than its own key is a
    /// near-duplicate at `threshold` or above.
    pub fn insert_unique(&mut self, doc: &Prepared, threshold: f64) -> Result<Unique> {
        let sketch = crate::db::prepare::Sketch {
            set: doc.set.clone(),
            signature: doc.signature.clone(),
            band_keys: doc.band_keys.clone(),
            simhash: doc.simhash.unwrap_or(0),
        };
        let own_id = self.tables.id_of(&doc.key)?;
        let options = PlanOptions {
            threshold,
            limit: Some(1),
            exclude: own_id,
            ..PlanOptions::default()
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

    /// Writes the id counter; call before committing. Returns whether a
    /// stored document was replaced or removed: the caller then
    /// invalidates the record cache once the commit has been tried.
    pub fn finish(mut self) -> Result<bool> {
        meta::write_u64(&mut self.meta, meta_keys::NEXT_ID, self.next_id)?;
        Ok(self.deleted)
    }
}
