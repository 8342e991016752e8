//! The time index's tables: each document's timestamp, by time and by id,
//! and their writes, walks and check.
//!
//! The tables exist only in files whose settings turn the index on
//! (`Settings::timestamps`); they are written in the same transaction as
//! the document's other records (`db::writer`), so a document and its
//! stamp come and go together. Timestamps are seconds since the Unix epoch
//! (`docs/expiry.md`, `docs/format.md`).

use crate::{Error, Result};
use redb::{
    ReadOnlyTable, ReadTransaction, ReadableTable, Table, TableDefinition, TableError,
    WriteTransaction,
};

/// (timestamp, document id) → (): the documents in time order, which
/// expiry walks from the oldest.
pub const TIMES: TableDefinition<(u64, u64), ()> = TableDefinition::new("times");

/// Document id → timestamp: what a removal deletes from [`TIMES`].
pub const STAMPS: TableDefinition<u64, u64> = TableDefinition::new("stamps");

/// Seconds since the Unix epoch now (0 for a clock set before 1970).
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The time index of a write transaction.
pub struct TimeWriter<'t> {
    times: Table<'t, (u64, u64), ()>,
    stamps: Table<'t, u64, u64>,
    /// The stamp of documents given none: the time the writer opened.
    now: u64,
}

impl<'t> TimeWriter<'t> {
    /// Opens (creating when absent) the tables; documents given no
    /// timestamp get the current time.
    pub fn open(txn: &'t WriteTransaction) -> Result<Self> {
        Ok(Self {
            times: txn.open_table(TIMES)?,
            stamps: txn.open_table(STAMPS)?,
            now: now(),
        })
    }

    /// Stamps document `id` with `at`, or with the current time when `None`.
    pub fn put(&mut self, id: u64, at: Option<u64>) -> Result<()> {
        let at = at.unwrap_or(self.now);
        if let Some(old) = self.stamps.insert(id, at)? {
            self.times.remove((old.value(), id))?;
        }
        self.times.insert((at, id), ())?;
        Ok(())
    }

    /// Stamps many new documents, `(id, at)` as [`TimeWriter::put`] does,
    /// with the entries inserted in key order (sequential B-tree writes
    /// when a bulk load's stamps do not follow its ids).
    pub fn put_many(&mut self, mut docs: Vec<(u64, Option<u64>)>) -> Result<()> {
        docs.sort_unstable_by_key(|&(id, _)| id);
        let mut times = Vec::with_capacity(docs.len());
        for (id, at) in docs {
            let at = at.unwrap_or(self.now);
            if let Some(old) = self.stamps.insert(id, at)? {
                self.times.remove((old.value(), id))?;
            }
            times.push((at, id));
        }
        times.sort_unstable();
        for key in times {
            self.times.insert(key, ())?;
        }
        Ok(())
    }

    /// Removes document `id`'s stamp, if it has one.
    pub fn remove(&mut self, id: u64) -> Result<()> {
        if let Some(at) = self.stamps.remove(id)? {
            self.times.remove((at.value(), id))?;
        }
        Ok(())
    }
}

/// The (timestamp, id) table, opened for reading.
pub type TimesTable = ReadOnlyTable<(u64, u64), ()>;

/// The id → timestamp table, opened for reading.
pub type StampsTable = ReadOnlyTable<u64, u64>;

/// The time index of a read transaction: `None` when the file has none
/// yet (an index turned on, before the first write).
pub fn open_read(txn: &ReadTransaction) -> Result<Option<(TimesTable, StampsTable)>> {
    match (
        absent(txn.open_table(TIMES))?,
        absent(txn.open_table(STAMPS))?,
    ) {
        (Some(times), Some(stamps)) => Ok(Some((times, stamps))),
        _ => Ok(None),
    }
}

/// A table opened for reading, `None` when the file has none.
fn absent<T>(result: std::result::Result<T, TableError>) -> Result<Option<T>> {
    match result {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(err) => Err(Error::from(redb::Error::from(err))),
    }
}

/// The stamp of document `id`, when it has one.
pub fn stamp_of(stamps: &impl ReadableTable<u64, u64>, id: u64) -> Result<Option<u64>> {
    Ok(stamps.get(id)?.map(|v| v.value()))
}

/// Checks the time index against the stored document ids (`ids`, in id
/// order): every document has one stamp and one time entry, and there are
/// no others. Problems are passed to `problem`.
pub fn check(
    times: &impl ReadableTable<(u64, u64), ()>,
    stamps: &impl ReadableTable<u64, u64>,
    ids: impl Iterator<Item = Result<u64>>,
    documents: u64,
    mut problem: impl FnMut(String),
) -> Result<()> {
    for id in ids {
        let id = id?;
        match stamp_of(stamps, id)? {
            None => problem(format!("document {id} has no timestamp")),
            Some(at) => {
                if times.get((at, id))?.is_none() {
                    problem(format!(
                        "document {id} (stamped {at}) is missing from the time index"
                    ));
                }
            }
        }
    }
    let (n_times, n_stamps) = (times.len()?, stamps.len()?);
    if n_stamps != documents || n_times != documents {
        problem(format!(
            "{n_stamps} timestamps and {n_times} time index entries for {documents} documents"
        ));
        for entry in times.iter()? {
            let (at, id) = entry?.0.value();
            if stamp_of(stamps, id)? != Some(at) {
                problem(format!(
                    "time index entry ({at}, {id}) belongs to no stored document"
                ));
            }
        }
    }
    Ok(())
}
