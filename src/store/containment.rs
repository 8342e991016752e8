//! The containment index's table: one posting per prefix tree per
//! document, keyed by (size class and tree, prefix key, document id), and
//! its writes, probes and check.
//!
//! The table exists only in files whose settings turn the index on
//! (`Settings::containment`); it is written in the same transaction as the
//! document's other records. Postings are not stored elsewhere: removal and
//! `check` recompute them from the set size and MinHash values (which are
//! themselves recomputed from the stored set), as the band postings are.

use crate::sketch::ensemble::Ensemble;
use crate::store::codec::SignatureRecord;
use crate::{Error, Result};
use redb::{ReadTransaction, ReadableTable, Table, TableDefinition, TableError, WriteTransaction};
use std::collections::HashSet;

/// A containment posting: (class · 256 + tree, prefix key, document id).
pub type Posting = (u16, u64, u64);

/// Containment postings → (). See `docs/format.md`.
pub const CONTAINMENT: TableDefinition<Posting, ()> = TableDefinition::new("containment");

/// The first key part of a posting: size class and tree.
pub fn slot(class: u8, tree: usize) -> u16 {
    u16::from(class) << 8 | tree as u16
}

/// Appends the postings of document `id` with `set_len` elements and
/// MinHash `signature` to `out`.
pub fn postings(
    ensemble: &Ensemble,
    id: u64,
    set_len: u32,
    signature: &[u32],
    out: &mut Vec<Posting>,
) {
    let class = ensemble.class_of(set_len);
    let mut prefixes = Vec::with_capacity(ensemble.trees());
    ensemble.prefixes(signature, &mut prefixes);
    out.extend(
        prefixes
            .into_iter()
            .enumerate()
            .map(|(tree, prefix)| (slot(class, tree), prefix, id)),
    );
}

/// The containment table of a write transaction.
pub struct ContainmentWriter<'t> {
    table: Table<'t, Posting, ()>,
    ensemble: Ensemble,
    scratch: Vec<Posting>,
}

impl<'t> ContainmentWriter<'t> {
    /// Opens (creating when absent) the table.
    pub fn open(txn: &'t WriteTransaction, ensemble: Ensemble) -> Result<Self> {
        Ok(Self {
            table: txn.open_table(CONTAINMENT)?,
            ensemble,
            scratch: Vec::new(),
        })
    }

    /// Posts document `id`, of `set_len` shingles and MinHash `signature`.
    pub fn put(&mut self, id: u64, set_len: u32, signature: &[u32]) -> Result<()> {
        self.scratch.clear();
        postings(&self.ensemble, id, set_len, signature, &mut self.scratch);
        for &posting in &self.scratch {
            self.table.insert(posting, ())?;
        }
        Ok(())
    }

    /// Posts many documents, `(id, set_len, signature)`, with the postings
    /// inserted in key order (sequential B-tree writes).
    pub fn put_many<'a>(
        &mut self,
        docs: impl Iterator<Item = (u64, u32, &'a [u32])>,
    ) -> Result<()> {
        let mut all = Vec::new();
        for (id, set_len, signature) in docs {
            postings(&self.ensemble, id, set_len, signature, &mut all);
        }
        all.sort_unstable();
        for posting in all {
            self.table.insert(posting, ())?;
        }
        Ok(())
    }

    /// Removes the postings of document `id` (of `set_len` shingles and
    /// MinHash `signature`, read before its records are deleted).
    pub fn remove(&mut self, id: u64, set_len: u32, signature: &[u32]) -> Result<()> {
        self.scratch.clear();
        postings(&self.ensemble, id, set_len, signature, &mut self.scratch);
        for &posting in &self.scratch {
            self.table.remove(posting)?;
        }
        Ok(())
    }
}

/// The containment table of a read transaction: `None` when the file has
/// none yet (an index turned on, before the first write).
pub fn open_read(txn: &ReadTransaction) -> Result<Option<redb::ReadOnlyTable<Posting, ()>>> {
    match txn.open_table(CONTAINMENT) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(err) => Err(Error::from(redb::Error::from(err))),
    }
}

/// Appends to `out` the ids posted under `slot` with a prefix key in
/// `range`, at most `cap` of them; true when cut at `cap`.
pub fn probe(
    table: &impl ReadableTable<Posting, ()>,
    slot: u16,
    range: (u64, u64),
    cap: usize,
    out: &mut Vec<u64>,
) -> Result<bool> {
    let iter = table.range((slot, range.0, 0)..=(slot, range.1, u64::MAX))?;
    for (taken, entry) in iter.enumerate() {
        if taken == cap {
            return Ok(true);
        }
        out.push(entry?.0.value().2);
    }
    Ok(false)
}

/// Appends to `out` the ids posted under `slot` with a prefix key in
/// `range` that are not in `seen` (adding them to it), at most `cap` of
/// them; true when cut at `cap`. Copies share every prefix, so a group of
/// thousands of identical sets fills each tree's probe with the same ids:
/// counting only new ones lets the trees together read past the cap.
pub fn probe_unseen(
    table: &impl ReadableTable<Posting, ()>,
    slot: u16,
    range: (u64, u64),
    cap: usize,
    seen: &mut HashSet<u64>,
    out: &mut Vec<u64>,
) -> Result<bool> {
    let mut taken = 0;
    for entry in table.range((slot, range.0, 0)..=(slot, range.1, u64::MAX))? {
        let id = entry?.0.value().2;
        if seen.insert(id) {
            if taken == cap {
                seen.remove(&id);
                return Ok(true);
            }
            taken += 1;
            out.push(id);
        }
    }
    Ok(false)
}

/// Whether every id posted under `slot` in `range` is in `seen`, reading
/// at most `limit` postings (false past that): a probe cut at its cap
/// whose rest later probes of the same query read lost nothing.
pub fn covered(
    table: &impl ReadableTable<Posting, ()>,
    slot: u16,
    range: (u64, u64),
    seen: &HashSet<u64>,
    limit: usize,
) -> Result<bool> {
    let iter = table.range((slot, range.0, 0)..=(slot, range.1, u64::MAX))?;
    for (read, entry) in iter.enumerate() {
        if read == limit || !seen.contains(&entry?.0.value().2) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first non-empty size class at or after `class`, if any: one
/// look-up, so a query skips empty classes without probing their trees.
pub fn next_class(table: &impl ReadableTable<Posting, ()>, class: u8) -> Result<Option<u8>> {
    let mut iter = table.range((slot(class, 0), 0, 0)..)?;
    match iter.next() {
        Some(entry) => Ok(Some((entry?.0.value().0 >> 8) as u8)),
        None => Ok(None),
    }
}

/// Checks that document `id` (signature record `record`) has each of its
/// postings; the problems found are appended to `problems`.
pub fn check_document(
    table: &impl ReadableTable<Posting, ()>,
    ensemble: &Ensemble,
    id: u64,
    record: &SignatureRecord,
    problems: &mut Vec<String>,
) -> Result<()> {
    let mut expected = Vec::new();
    postings(ensemble, id, record.set_len, &record.values, &mut expected);
    for (tree, posting) in expected.into_iter().enumerate() {
        if table.get(posting)?.is_none() {
            problems.push(format!(
                "document {id} is missing from containment tree {tree}"
            ));
        }
    }
    Ok(())
}
