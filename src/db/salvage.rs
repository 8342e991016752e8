//! Getting documents out of a damaged file: a walk over every document, in
//! id order, that reports the records it cannot read and keeps going
//! (`lshdb export --salvage`).

use super::{Database, ExportedDocument};
use crate::store::tables::{ReadTables, Reader};
use crate::{Error, Result};

/// Documents read per read transaction: a storage-engine failure costs at
/// most a restart after the last document handed over.
const SLICE_DOCS: usize = 1024;

/// Bytes of text and shingles read per read transaction, at most (plus one
/// document): what a salvage walk holds in memory.
const SLICE_BYTES: usize = 16 << 20;

/// A document that [`Database::for_each_salvage`] could not read.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkippedDocument {
    /// Its external key; `None` when its document record could not be
    /// read, or the document table itself could not be read further (the
    /// walk ends there).
    pub key: Option<String>,
    /// Its document id; `None` when the document table could not be read
    /// further.
    pub id: Option<u64>,
    /// What went wrong.
    pub reason: String,
}

/// Reads one document's records: (tables, id) → document.
type ReadDocument = dyn Fn(&ReadTables, u64) -> Result<ExportedDocument>;

/// What one slice of the walk read: documents with their ids, or skips.
type Found = Vec<std::result::Result<(u64, ExportedDocument), SkippedDocument>>;

impl Database {
    /// Like [`Database::for_each`], but for a damaged file: every document
    /// whose records can be read is passed to `f`, in id order, and every
    /// other one to `skipped`, with the reason, instead of ending the walk.
    /// A panic of the storage engine on a damaged page skips the document
    /// being read, and the walk resumes after its id in a new transaction.
    /// When the document table itself cannot be read further, `skipped`
    /// gets one entry without an id and the walk ends. `f` returning false
    /// stops it.
    ///
    /// # Errors
    /// Only when nothing can be read at all (the file cannot begin a read
    /// transaction or has no document table).
    pub fn for_each_salvage(
        &self,
        f: impl FnMut(ExportedDocument) -> bool,
        skipped: impl FnMut(SkippedDocument),
    ) -> Result<()> {
        self.salvage_walk(f, skipped, &read_document)
    }

    /// [`Database::for_each_salvage`] with the record reader as a
    /// parameter, so that tests can make it fail the way damage does.
    fn salvage_walk(
        &self,
        mut f: impl FnMut(ExportedDocument) -> bool,
        mut skipped: impl FnMut(SkippedDocument),
        read: &ReadDocument,
    ) -> Result<()> {
        // The last id handed over or skipped.
        let mut after: Option<u64> = None;
        let mut started = false;
        loop {
            let mut found = Found::new();
            let mut current = None;
            let step =
                crate::guard::guard(|| salvage_slice(self, after, &mut found, &mut current, read));
            started |= !found.is_empty();
            for item in found {
                match item {
                    Ok((id, doc)) => {
                        after = Some(id);
                        if !f(doc) {
                            return Ok(());
                        }
                    }
                    Err(skip) => {
                        after = skip.id;
                        skipped(skip);
                    }
                }
            }
            match step {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                // Reading one document's records failed hard: skip it.
                Err(err) if current.is_some() => {
                    after = current;
                    skipped(SkippedDocument {
                        key: None,
                        id: current,
                        reason: reason(&err),
                    });
                    started = true;
                }
                Err(err) if !started => return Err(err),
                Err(err) => {
                    let at = match after {
                        Some(id) => format!("after document {id}"),
                        None => "at its start".to_owned(),
                    };
                    skipped(SkippedDocument {
                        key: None,
                        id: None,
                        reason: format!("the document table cannot be read {at}: {}", reason(&err)),
                    });
                    return Ok(());
                }
            }
        }
    }
}

/// Reads documents after id `after` into `found`, noting in `current` the
/// id being read. Returns true at the end of the document table.
fn salvage_slice(
    db: &Database,
    after: Option<u64>,
    found: &mut Found,
    current: &mut Option<u64>,
    read: &ReadDocument,
) -> Result<bool> {
    let txn = db.store().begin_read()?;
    let tables = ReadTables::open(&txn)?;
    let range = match after {
        Some(id) if id == u64::MAX => return Ok(true),
        Some(id) => tables.docs.range(id + 1..)?,
        None => tables.docs.range(0..)?,
    };
    let mut bytes = 0;
    for entry in range {
        let id = entry?.0.value();
        *current = Some(id);
        let result = read(&tables, id);
        *current = None;
        match result {
            Ok(doc) => {
                bytes += doc.text.as_ref().map_or(0, String::len) + doc.shingles.len() * 4;
                found.push(Ok((id, doc)));
            }
            Err(err) => found.push(Err(SkippedDocument {
                key: tables.key(id).ok().flatten().map(|key| key.to_string()),
                id: Some(id),
                reason: reason(&err),
            })),
        }
        if found.len() >= SLICE_DOCS || bytes >= SLICE_BYTES {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One document's records, as [`Database::for_each`] reads them.
fn read_document(tables: &ReadTables, id: u64) -> Result<ExportedDocument> {
    let doc = tables
        .doc(id)?
        .ok_or_else(|| Error::corrupted(format!("document {id} vanished")))?;
    let mut shingles = Vec::new();
    if !tables.set_into(id, &mut shingles)? {
        return Err(Error::corrupted(format!(
            "document {id} has no shingle set"
        )));
    }
    Ok(ExportedDocument {
        key: doc.key,
        text: doc.text,
        shingles,
    })
}

/// The reason to report: the damage itself, without the advice that
/// [`Error::Corrupted`]'s message adds.
fn reason(err: &Error) -> String {
    match err {
        Error::Corrupted(what) => what.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::SkippedDocument;
    use crate::{Database, ExportedDocument, Result};

    /// The keys a salvage walk handed over, and the documents it skipped.
    fn walked(
        walk: impl FnOnce(
            &mut dyn FnMut(ExportedDocument) -> bool,
            &mut dyn FnMut(SkippedDocument),
        ) -> Result<()>,
    ) -> (Vec<String>, Vec<SkippedDocument>) {
        let (mut good, mut bad) = (Vec::new(), Vec::new());
        let mut keep = |doc: ExportedDocument| {
            good.push(doc.key);
            true
        };
        walk(&mut keep, &mut |skip| bad.push(skip)).unwrap();
        (good, bad)
    }

    #[test]
    fn salvage_walks_past_a_damaged_set_record() {
        let (_dir, path, db) = crate::testing::new_db("s.lshdb");
        // More documents than one slice, to cross slice boundaries.
        let n = super::SLICE_DOCS * 2 + 5;
        let mut batch = db.batch().unwrap();
        for i in 0..n {
            batch
                .insert(
                    &format!("k{i:05}"),
                    format!("document number {i} of many").as_str(),
                )
                .unwrap();
        }
        batch.commit().unwrap();
        drop(db);
        let victims = ["k00003", "k01024", "k02050"];
        {
            let file = redb::Database::open(&path).unwrap();
            let txn = file.begin_write().unwrap();
            {
                use crate::store::schema::SETS;
                use redb::ReadableTable;
                let mut sets = txn.open_table(SETS).unwrap();
                for key in victims {
                    // Stored one by one in key order: ids 1, 2, ...
                    let id = key[1..].parse::<u64>().unwrap() + 1;
                    let mut bytes = sets.get(id).unwrap().unwrap().value().to_vec();
                    let at = bytes.len() / 2;
                    bytes[at] ^= 0x10;
                    sets.insert(id, bytes.as_slice()).unwrap();
                }
            }
            txn.commit().unwrap();
        }
        let db = Database::open(&path).unwrap();
        assert!(db.for_each(|_| true).is_err());
        let (good, bad) = walked(|f, skipped| db.for_each_salvage(f, skipped));
        assert_eq!(good.len(), n - victims.len());
        assert!(
            good.windows(2).all(|w| w[0] < w[1]),
            "id order (here also key order), no repeats"
        );
        let bad_keys: Vec<_> = bad.iter().map(|s| s.key.clone().unwrap()).collect();
        assert_eq!(bad_keys, victims);
        assert!(
            bad.iter().all(|s| s.reason.contains("checksum mismatch")),
            "{bad:?}"
        );
        // Stopping early.
        let mut seen = 0;
        db.for_each_salvage(
            |_| {
                seen += 1;
                seen < 10
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(seen, 10);
    }

    #[test]
    fn salvage_survives_a_storage_engine_panic() {
        let (_dir, _, db) = crate::testing::new_db("p.lshdb");
        let mut batch = db.batch().unwrap();
        for i in 0..50 {
            batch
                .insert(&format!("k{i:02}"), format!("text number {i}").as_str())
                .unwrap();
        }
        batch.commit().unwrap();
        // As redb does on some damaged pages: a panic while reading k07
        // and k31 (each time it is read).
        let panicky = |tables: &crate::store::tables::ReadTables, id: u64| {
            let doc = super::read_document(tables, id)?;
            if doc.key == "k07" || doc.key == "k31" {
                panic!("damaged page under {}", doc.key);
            }
            Ok(doc)
        };
        let (good, bad) = walked(|f, skipped| db.salvage_walk(f, skipped, &panicky));
        assert_eq!(good.len(), 48);
        assert!(good.windows(2).all(|w| w[0] < w[1]));
        // Stored one by one: k07 is document 8, k31 document 32.
        assert_eq!(
            bad.iter().map(|s| s.id.unwrap()).collect::<Vec<_>>(),
            [8, 32]
        );
        assert!(
            bad.iter()
                .all(|s| s.reason.contains("storage engine failed") && s.id.is_some()),
            "{bad:?}"
        );
    }
}
