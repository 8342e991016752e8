//! Reads of many document ids in ascending order: a [`Walker`] steps along
//! the id-keyed tables instead of descending their B-trees once per id.
//!
//! A query's candidates are verified in id order, and near-duplicates tend
//! to have nearby ids (a family of packages, a crawl of one site, a batch
//! of one import), so the next id wanted is usually a few entries past the
//! last one. Walking there costs a step per entry; a far jump (ids more
//! than [`MAX_STEPS`] apart) starts a new range, which costs what one `get`
//! costs. Reads out of order are answered too, by a new range.

use crate::store::codec::{self, DocRecord, SignatureRecord};
use crate::store::tables::{context, Index, ReadTables, Reader};
use crate::Result;
use redb::{AccessGuard, ReadOnlyTable};
use std::cell::RefCell;

/// Entries walked before a look-up starts a new range instead.
pub const MAX_STEPS: usize = 32;

type Bytes = &'static [u8];

/// One walk over one id-keyed table.
struct Walk<'t> {
    table: &'t ReadOnlyTable<u64, Bytes>,
    state: RefCell<Option<Position<'t>>>,
}

/// Where a walk stands: every id in `from..head` is absent, and `head` is
/// the next entry (None at the end of the table).
struct Position<'t> {
    range: redb::Range<'t, u64, Bytes>,
    from: u64,
    head: Option<(u64, AccessGuard<'t, Bytes>)>,
}

impl<'t> Walk<'t> {
    fn new(table: &'t ReadOnlyTable<u64, Bytes>) -> Self {
        Self {
            table,
            state: RefCell::new(None),
        }
    }

    /// `f` of the value stored under `id`, or None when there is none.
    fn with<T>(&self, id: u64, f: impl FnOnce(&[u8]) -> Result<T>) -> Result<Option<T>> {
        let mut state = self.state.borrow_mut();
        // Ids are handed out in order, so the gap between two ids bounds
        // the entries between them: walk only a short gap.
        let near = |p: &Position<'_>| {
            id >= p.from
                && p.head
                    .as_ref()
                    .is_none_or(|(key, _)| id - key.min(&id) <= MAX_STEPS as u64)
        };
        if !state.as_ref().is_some_and(near) {
            *state = Some(self.seek(id)?);
        }
        let mut steps = 0;
        loop {
            let Some(position) = state.as_mut() else {
                return Ok(None);
            };
            match position.head.take() {
                None => return Ok(None),
                Some((key, value)) if key > id => {
                    position.head = Some((key, value));
                    position.from = id;
                    return Ok(None);
                }
                Some((key, value)) if key == id => {
                    let out = f(value.value());
                    position.head = next(&mut position.range)?;
                    position.from = id.saturating_add(1);
                    return out.map(Some);
                }
                Some(_) if steps == MAX_STEPS => *state = Some(self.seek(id)?),
                Some(_) => {
                    steps += 1;
                    position.head = next(&mut position.range)?;
                }
            }
        }
    }

    /// A new range starting at `id`.
    fn seek(&self, id: u64) -> Result<Position<'t>> {
        let mut range = self.table.range(id..)?;
        let head = next(&mut range)?;
        Ok(Position {
            range,
            from: id,
            head,
        })
    }
}

fn next<'t>(
    range: &mut redb::Range<'t, u64, Bytes>,
) -> Result<Option<(u64, AccessGuard<'t, Bytes>)>> {
    match range.next() {
        None => Ok(None),
        Some(entry) => {
            let (key, value) = entry?;
            Ok(Some((key.value(), value)))
        }
    }
}

/// A [`Reader`] over a read snapshot whose document, set and signature
/// reads walk their tables (see the module comment). For one thread.
pub struct Walker<'t> {
    tables: &'t ReadTables,
    docs: Walk<'t>,
    sets: Walk<'t>,
    sigs: Walk<'t>,
}

impl<'t> Walker<'t> {
    /// A walker over `tables`.
    pub fn new(tables: &'t ReadTables) -> Self {
        Self {
            tables,
            docs: Walk::new(&tables.docs),
            sets: Walk::new(&tables.sets),
            sigs: Walk::new(&tables.sigs),
        }
    }
}

impl Reader for Walker<'_> {
    fn index(&self) -> &dyn Index {
        self.tables
    }

    fn doc(&self, id: u64) -> Result<Option<DocRecord>> {
        self.docs.with(id, |bytes| {
            codec::decode_doc(bytes).map_err(|e| context(e, "document", id))
        })
    }

    fn set_into(&self, id: u64, out: &mut Vec<u32>) -> Result<bool> {
        let found = self.sets.with(id, |bytes| {
            codec::decode_set_into(bytes, out).map_err(|e| context(e, "shingle set", id))
        })?;
        Ok(found.is_some())
    }

    fn signature_into(&self, id: u64, out: &mut SignatureRecord) -> Result<bool> {
        let found = self.sigs.with(id, |bytes| {
            codec::decode_signature(bytes, out).map_err(|e| context(e, "signature", id))
        })?;
        Ok(found.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Database};

    #[test]
    fn answers_every_order_as_direct_reads_do() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path().join("w.lshdb"), Config::jaccard(0.8)).unwrap();
        for i in 0..200 {
            db.insert(
                &format!("doc{i}"),
                format!("text number {i} of the walk test").as_str(),
            )
            .unwrap();
        }
        // Holes: removed ids, and a run longer than MAX_STEPS.
        for i in (0..200).step_by(7).chain(100..150) {
            db.remove(&format!("doc{i}")).unwrap();
        }
        let txn = db.store().begin_read().unwrap();
        let tables = ReadTables::open(&txn).unwrap();
        let walker = Walker::new(&tables);

        let mut ids: Vec<u64> = (0..=210).collect(); // ascending, past the end
        ids.extend((0..=210).rev()); // descending, across every hole
        ids.extend([5, 5, 3, 90, 91, 160, 2, 199, 200, 201, 1, 0, 150, 99]); // any order, repeats
        let mut rng = crate::hash::SplitMix64::new(3);
        ids.extend((0..300).map(|_| rng.next_u64() % 220));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut ra, mut rb) = (SignatureRecord::default(), SignatureRecord::default());
        for id in ids {
            assert_eq!(walker.doc(id).unwrap(), tables.doc(id).unwrap(), "doc {id}");
            assert_eq!(
                (
                    walker.set_into(id, &mut a).unwrap(),
                    walker.signature_into(id, &mut ra).unwrap()
                ),
                (
                    tables.set_into(id, &mut b).unwrap(),
                    tables.signature_into(id, &mut rb).unwrap()
                ),
                "found {id}"
            );
            assert_eq!((&a, &ra), (&b, &rb), "records {id}");
        }
    }
}
