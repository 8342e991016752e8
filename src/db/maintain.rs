//! Maintenance: integrity check and compaction (statistics are
//! `stats.rs`, re-banding is `reband.rs`).

use super::Database;
use crate::pipeline::Pipeline;
use crate::sketch::ensemble::Ensemble;
use crate::store::codec::{self, SignatureRecord};
use crate::store::containment;
use crate::store::probe::Probe;
use crate::store::tables::{Index, Postings, ReadTables, Reader, WriteTables};
use crate::{Error, Result};
use redb::{ReadableTable, ReadableTableMetadata};
use std::collections::HashSet;

/// Problems kept in a [`CheckReport`] at most (the count goes on).
const MAX_PROBLEMS: usize = 1000;

/// What [`Database::check`] found.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[non_exhaustive]
pub struct CheckReport {
    /// Documents walked.
    pub documents: u64,
    /// LSH bucket postings walked (as [`crate::DeepStats::postings`] counts them).
    pub postings: u64,
    /// SimHash block postings walked (as [`crate::Stats::simhash_postings`]).
    pub simhash_postings: u64,
    /// Containment index postings (as [`crate::Stats::containment_postings`]).
    pub containment_postings: u64,
    /// Whether the storage engine's own check of every page checksum
    /// passed; `None` when it was not run (see [`Database::check_pages`]).
    pub storage_ok: Option<bool>,
    /// Problems found, at most 1,000 described.
    pub problems: Vec<String>,
    /// Problems found in all.
    pub problem_count: u64,
}

impl CheckReport {
    /// Whether nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.storage_ok != Some(false) && self.problem_count == 0
    }

    pub(super) fn problem(&mut self, what: String) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(what);
        }
    }
}

impl Database {
    /// Walks the whole file from one read snapshot, without changing it:
    /// every record's checksum and encoding, keys ↔ documents, and every
    /// posting each document should have (and no others). Works on
    /// read-only handles, also while another process writes.
    ///
    /// A panic of the storage engine on a damaged page ends the walk with
    /// that problem reported, not with an error.
    pub fn check(&self) -> Result<CheckReport> {
        let mut report = CheckReport::default();
        match crate::guard::guard(|| self.walk_check(&mut report)) {
            Ok(()) => Ok(report),
            Err(err @ (Error::Corrupted(_) | Error::Storage(_))) => {
                report.problem(format!("the walk stopped: {err}"));
                Ok(report)
            }
            Err(other) => Err(other),
        }
    }

    /// [`Database::check`], plus the storage engine's own check of every
    /// page checksum (redb's `check_integrity`), which needs write access:
    /// redb also rebuilds its allocator state. Opening for writing repairs
    /// a file whose writer crashed, so this is also the way to repair one;
    /// the file is marked as closed cleanly when the handle closes: use
    /// [`Database::close`] to learn whether that worked.
    ///
    /// # Errors
    /// [`Error::ReadOnly`] on a read-only handle; [`Error::Io`] when the
    /// check cannot write what it repaired (a full disk); other storage
    /// errors.
    pub fn check_pages(&mut self) -> Result<CheckReport> {
        let merging = self.pause_merger();
        let report = self.check_pages_alone();
        self.resume_merger(merging);
        report
    }

    /// [`Database::check_pages`] with the merger stopped.
    fn check_pages_alone(&mut self) -> Result<CheckReport> {
        let path = self.path.clone();
        let db = self.db.writable_mut()?;
        let storage_ok = match crate::guard::guard(|| Ok(db.check_integrity())) {
            Ok(Ok(clean)) => clean,
            // Not damage: the check could not write what it repaired.
            Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(source)))) => {
                return Err(self.poison(Error::Io {
                    op: "check the pages of",
                    path,
                    source,
                }));
            }
            Ok(Err(_)) | Err(_) => false,
        };
        let mut report = self.check()?;
        report.storage_ok = Some(storage_ok);
        Ok(report)
    }

    /// Closes the handle, as dropping it does, but reports a failure,
    /// which a drop cannot. Closing a writable handle writes the storage
    /// engine's allocator state and marks the file as closed cleanly; when
    /// that fails (a full disk), the file needs a repair, which its next
    /// writable open makes, and read-only opens refuse it until then.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be written; other storage
    /// errors.
    pub fn close(mut self) -> Result<()> {
        let path = self.path.clone();
        self.merger.stop();
        let engine = self.db.into_engine()?;
        crate::guard::guard(move || {
            let closed = match engine {
                super::store::Engine::Write(db) => match std::sync::Arc::try_unwrap(db) {
                    Ok(db) => db.close(),
                    // Not reached: the merger, its only other holder, stopped.
                    Err(db) => {
                        drop(db);
                        Ok(())
                    }
                },
                super::store::Engine::Read(db) => db.close(),
            };
            closed.map_err(|err| match err {
                redb::DatabaseError::Storage(redb::StorageError::Io(source)) => Error::Io {
                    op: "close",
                    path,
                    source,
                },
                other => Error::from(other),
            })
        })
    }

    fn walk_check(&self, report: &mut CheckReport) -> Result<()> {
        let txn = self.db.begin_read()?;
        let tables = ReadTables::open(&txn)?;
        let containment = match self.pipeline.containment() {
            Some(ensemble) => Some((ensemble, containment::open_read(&txn)?)),
            None => None,
        };
        let mut walk = Walk {
            tables: &tables,
            pipeline: &self.pipeline,
            containment,
            record: SignatureRecord::default(),
            band_keys: Vec::new(),
            blocks: Vec::new(),
            set: Vec::new(),
            expected_postings: 0,
            unverifiable: HashSet::new(),
            containment_problems: Vec::new(),
        };
        for entry in tables.docs.iter()? {
            let (id, bytes) = entry?;
            walk.check_document(id.value(), bytes.value(), report)?;
        }
        super::keys::check_index(&tables, report)?;
        super::expire::check_time_index(self, &txn, &tables, report)?;
        walk.count_postings(report)?;
        if report.postings + report.simhash_postings != walk.expected_postings {
            self.find_stray_postings(&tables, &walk.unverifiable, report)?;
        }
        super::clusters::check(&txn, &tables, &self.cache, &self.pipeline, report)
    }

    /// Walks the posting tables for postings no document accounts for.
    /// Postings of documents in `unverifiable` (whose sets are missing or
    /// damaged) are not judged.
    fn find_stray_postings(
        &self,
        tables: &ReadTables,
        unverifiable: &HashSet<u64>,
        report: &mut CheckReport,
    ) -> Result<()> {
        let (mut record, mut set) = (SignatureRecord::default(), Vec::new());
        let (mut band_keys, mut blocks) = (Vec::new(), Vec::new());
        let simhash = tables
            .blocks
            .iter()?
            .map(|entry| entry.map(|(k, _)| k.value()).map_err(Error::from));
        type Postings<'a> = Box<dyn Iterator<Item = Result<(u32, u64, u64)>> + 'a>;
        let sources: [(&str, Postings<'_>); 2] = [
            ("bucket", Box::new(tables.all_postings()?)),
            ("SimHash block", Box::new(simhash)),
        ];
        for (name, postings) in sources {
            for entry in postings {
                let (index, key, id) = entry?;
                if unverifiable.contains(&id) {
                    continue;
                }
                let expected =
                    match self
                        .pipeline
                        .stored_signature(tables, id, &mut record, &mut set)
                    {
                        Ok(true) => {
                            self.pipeline
                                .index_keys(&record, &mut band_keys, &mut blocks);
                            let keys = if name == "bucket" {
                                &band_keys
                            } else {
                                &blocks
                            };
                            keys.get(index as usize) == Some(&key)
                        }
                        _ => false,
                    };
                if !expected {
                    report.problem(format!(
                        "{name} posting ({index}, {key:016x}) points at document {id}, which does not belong there"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reclaims the space of deleted data; true when anything was moved.
    pub fn compact(&mut self) -> Result<bool> {
        let merging = self.pause_merger();
        let compacted = self.compact_alone();
        self.resume_merger(merging);
        compacted
    }

    /// [`Database::compact`] with the merger stopped: a merge it left
    /// unfinished is deleted by `merge_all`.
    fn compact_alone(&mut self) -> Result<bool> {
        crate::guard::guard(|| {
            self.check_poisoned()?;
            // Merge every run into one, dropping removed documents' postings.
            let txn = self.writable()?.begin_write()?;
            {
                let mut tables = WriteTables::open(&txn)?;
                tables.flush_fresh_all()?;
                tables.runs.merge_all()?;
            }
            txn.commit()?;
            let db = self.db.writable_mut()?;
            Ok(db.compact()?)
        })
    }
}

/// Whether a record of document `id` was read; a missing (`what` names
/// it) or damaged one is a problem.
fn was_read(read: Result<bool>, id: u64, what: &str, report: &mut CheckReport) -> bool {
    match read {
        Ok(true) => true,
        Ok(false) => {
            report.problem(format!("document {id} has no {what}"));
            false
        }
        Err(e) => {
            report.problem(e.to_string());
            false
        }
    }
}

/// The buffers and running counts of one [`Database::check`] walk.
struct Walk<'a> {
    tables: &'a ReadTables,
    pipeline: &'a Pipeline,
    containment: Option<(Ensemble, Option<ContainmentTable>)>,
    record: SignatureRecord,
    band_keys: Vec<u64>,
    blocks: Vec<u64>,
    set: Vec<u32>,
    /// Postings the documents walked so far account for.
    expected_postings: u64,
    /// Documents whose postings are counted, not checked (no readable set).
    unverifiable: HashSet<u64>,
    containment_problems: Vec<String>,
}

/// The containment index table, opened for reading.
type ContainmentTable = redb::ReadOnlyTable<containment::Posting, ()>;

impl Walk<'_> {
    /// Checks one document's records and postings against each other.
    fn check_document(&mut self, id: u64, bytes: &[u8], report: &mut CheckReport) -> Result<()> {
        report.documents += 1;
        match codec::decode_doc(bytes) {
            Ok(doc) => super::keys::check_document(self.tables, id, &doc.key, report)?,
            Err(e) => report.problem(crate::store::tables::context(e, "document", id).to_string()),
        }
        // Only a set that was read can be compared with its signature
        // (a missing or damaged one is reported here, once).
        let set_read = self.tables.set_into(id, &mut self.set);
        let set_read = was_read(set_read, id, "shingle set", report);
        let signature_read = self.tables.signature_into(id, &mut self.record);
        if !was_read(signature_read, id, "signature", report) {
            return Ok(());
        }
        if !self.check_signature(id, set_read, report) {
            return Ok(());
        }
        self.check_containment(id, report)?;
        self.check_postings(id, report)
    }

    /// Compares the signature with the set; false when the document's
    /// postings cannot be checked further.
    fn check_signature(&mut self, id: u64, set_read: bool, report: &mut CheckReport) -> bool {
        let pipeline = self.pipeline;
        let n = pipeline.num_perm();
        let record = &mut self.record;
        // Format 3 stores no MinHash values: they are recomputed from
        // the set. Values stored by older files must equal those.
        if record.values.is_empty() {
            if !set_read {
                // Its band keys cannot be recomputed: its postings
                // are counted, not checked (the set was reported).
                self.unverifiable.insert(id);
                pipeline.simhash_blocks_into(record.simhash, &mut self.blocks);
                self.expected_postings += (pipeline.banding().bands() + self.blocks.len()) as u64;
                return false;
            }
            pipeline.complete_signature(record, &self.set);
        } else if record.values.len() != n {
            report.problem(format!(
                "signature of document {id} has {} values, expected {n}",
                record.values.len()
            ));
            return false;
        } else if set_read && record.values != pipeline.signature_of(&self.set) {
            report.problem(format!(
                "stored signature of document {id} does not match its shingle set"
            ));
        }
        if set_read && record.set_len as usize != self.set.len() {
            report.problem(format!(
                "signature of document {id} records {} shingles, its set has {}",
                record.set_len,
                self.set.len()
            ));
        }
        true
    }

    /// Checks the document's containment postings, when the file has
    /// the index.
    fn check_containment(&mut self, id: u64, report: &mut CheckReport) -> Result<()> {
        if let Some((ensemble, table)) = &self.containment {
            match table {
                Some(table) => containment::check_document(
                    table,
                    ensemble,
                    id,
                    &self.record,
                    &mut self.containment_problems,
                )?,
                None => self.containment_problems.push(format!(
                    "document {id} is missing from the containment index"
                )),
            }
            for problem in self.containment_problems.drain(..) {
                report.problem(problem);
            }
        }
        Ok(())
    }

    /// Checks that the document stands in each of its LSH buckets and
    /// SimHash blocks.
    fn check_postings(&mut self, id: u64, report: &mut CheckReport) -> Result<()> {
        let tables = self.tables;
        self.pipeline
            .index_keys(&self.record, &mut self.band_keys, &mut self.blocks);
        self.expected_postings += (self.band_keys.len() + self.blocks.len()) as u64;
        for (band, &key) in self.band_keys.iter().enumerate() {
            // The first id at or after this one in the bucket, from
            // the fresh postings and every run.
            let mut found = Vec::new();
            let probe = Probe::first_from(band as u32, key, id);
            tables.postings(Postings::Buckets, probe, &mut found)?;
            if found.first() != Some(&id) {
                report.problem(format!(
                    "document {id} is missing from its bucket in band {band}"
                ));
            }
        }
        for (block, &value) in self.blocks.iter().enumerate() {
            if tables.blocks.get((block as u32, value, id))?.is_none() {
                report.problem(format!(
                    "document {id} is missing from SimHash block {block}"
                ));
            }
        }
        Ok(())
    }

    /// Compares the table sizes with the documents walked and counts the
    /// postings of every index.
    fn count_postings(&self, report: &mut CheckReport) -> Result<()> {
        let tables = self.tables;
        for (name, table_len) in [
            ("shingle sets", tables.sets.len()?),
            ("signatures", tables.sigs.len()?),
        ] {
            if table_len != report.documents {
                report.problem(format!(
                    "{table_len} {name} stored for {} documents",
                    report.documents
                ));
            }
        }
        report.postings = 0;
        for posting in tables.all_postings()? {
            posting?;
            report.postings += 1;
        }
        report.simhash_postings = tables.blocks.len()?;
        if let Some((ensemble, Some(table))) = &self.containment {
            report.containment_postings = table.len()?;
            let expected = report.documents * ensemble.trees() as u64;
            if report.containment_postings != expected {
                report.problem(format!(
                    "{} containment postings for {} documents of {} trees (expected {expected})",
                    report.containment_postings,
                    report.documents,
                    ensemble.trees()
                ));
            }
        }
        Ok(())
    }
}
