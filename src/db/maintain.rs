//! Maintenance: integrity check, compaction and statistics (re-banding is
//! `reband.rs`).

use super::Database;
use crate::store::codec::{self, SignatureRecord};
use crate::store::containment;
use crate::store::runs::RunTables;
use crate::store::tables::{Index, Postings, ReadTables, Reader, WriteTables};
use crate::{Error, Result};
use redb::{ReadableTable, ReadableTableMetadata};
use std::collections::HashSet;

/// Problems kept in a [`CheckReport`] at most (the count goes on).
const MAX_PROBLEMS: usize = 1000;

/// What [`Database::check`] found.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CheckReport {
    /// Documents walked.
    pub documents: u64,
    /// LSH bucket postings walked (as [`Stats::postings`] counts them).
    pub postings: u64,
    /// SimHash block postings walked (as [`Stats::simhash_postings`]).
    pub simhash_postings: u64,
    /// Containment index postings (as [`Stats::containment_postings`]).
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

/// What [`Database::stats`] reports.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Stored documents.
    pub documents: u64,
    /// The file's length in bytes.
    pub file_bytes: u64,
    /// Bytes the file occupies on disk (on Unix, its allocated blocks; the
    /// length elsewhere). redb grows a file by doubling, and later by whole
    /// regions, leaving the unwritten tail sparse, so this can be less
    /// than [`Stats::file_bytes`].
    pub allocated_bytes: u64,
    /// Mean number of distinct shingles per document.
    pub mean_shingles: f64,
    /// Non-empty buckets over all bands.
    pub buckets: u64,
    /// LSH bucket postings over all bands.
    pub postings: u64,
    /// SimHash block postings (0 without a SimHash index).
    pub simhash_postings: u64,
    /// Containment index postings, one per prefix tree per document (0
    /// without a containment index).
    pub containment_postings: u64,
    /// `histogram[i]` = buckets holding 2^i to 2^(i+1) − 1 documents.
    pub histogram: Vec<u64>,
    /// The largest buckets as (band, bucket key, documents), largest first.
    pub largest: Vec<(u32, u64, u64)>,
    /// Posting runs (format 2), and the postings they hold — those of
    /// removed documents that no merge has dropped yet included.
    pub runs: usize,
    /// Postings in runs: band postings and (format 4) key postings, one
    /// per document.
    pub run_postings: u64,
    /// Fresh postings (those of single writes, not yet in a run), band and
    /// key postings.
    pub fresh_postings: u64,
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
    /// a file whose writer crashed, so this is also the way to repair one.
    ///
    /// # Errors
    /// [`Error::ReadOnly`] on a read-only handle; storage errors.
    pub fn check_pages(&mut self) -> Result<CheckReport> {
        let db = self.db.writable_mut()?;
        let storage_ok =
            crate::guard::guard(|| Ok(db.check_integrity().unwrap_or(false))).unwrap_or(false);
        let mut report = self.check()?;
        report.storage_ok = Some(storage_ok);
        Ok(report)
    }

    fn walk_check(&self, report: &mut CheckReport) -> Result<()> {
        {
            let txn = self.db.begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let pipeline = &self.pipeline;
            let n = pipeline.num_perm();
            let (mut record, mut band_keys, mut blocks, mut set) = (
                SignatureRecord::default(),
                Vec::new(),
                Vec::new(),
                Vec::new(),
            );
            let mut expected_postings = 0u64;
            let mut unverifiable = HashSet::new();
            let containment = match pipeline.containment() {
                Some(ensemble) => Some((ensemble, containment::open_read(&txn)?)),
                None => None,
            };
            let mut containment_problems = Vec::new();
            for entry in tables.docs.iter()? {
                let (id, bytes) = entry?;
                let id = id.value();
                report.documents += 1;
                match codec::decode_doc(bytes.value()) {
                    Ok(doc) => super::keys::check_document(&tables, id, &doc.key, report)?,
                    Err(e) => {
                        report.problem(crate::store::tables::context(e, "document", id).to_string())
                    }
                }
                // Only a set that was read can be compared with its signature
                // (a missing or damaged one is reported here, once).
                let set_read = match tables.set_into(id, &mut set) {
                    Ok(true) => true,
                    Ok(false) => {
                        report.problem(format!("document {id} has no shingle set"));
                        false
                    }
                    Err(e) => {
                        report.problem(e.to_string());
                        false
                    }
                };
                match tables.signature_into(id, &mut record) {
                    Ok(true) => {}
                    Ok(false) => {
                        report.problem(format!("document {id} has no signature"));
                        continue;
                    }
                    Err(e) => {
                        report.problem(e.to_string());
                        continue;
                    }
                }
                // Format 3 stores no MinHash values: they are recomputed from
                // the set. Values stored by older files must equal those.
                if record.values.is_empty() {
                    if !set_read {
                        // Its band keys cannot be recomputed: its postings
                        // are counted, not checked (the set was reported).
                        unverifiable.insert(id);
                        pipeline.simhash_blocks_into(record.simhash, &mut blocks);
                        expected_postings += (pipeline.banding().bands() + blocks.len()) as u64;
                        continue;
                    }
                    pipeline.complete_signature(&mut record, &set);
                } else if record.values.len() != n {
                    report.problem(format!(
                        "signature of document {id} has {} values, expected {n}",
                        record.values.len()
                    ));
                    continue;
                } else if set_read && record.values != pipeline.signature_of(&set) {
                    report.problem(format!(
                        "stored signature of document {id} does not match its shingle set"
                    ));
                }
                if set_read && record.set_len as usize != set.len() {
                    report.problem(format!(
                        "signature of document {id} records {} shingles, its set has {}",
                        record.set_len,
                        set.len()
                    ));
                }
                if let Some((ensemble, table)) = &containment {
                    match table {
                        Some(table) => containment::check_document(
                            table,
                            ensemble,
                            id,
                            &record,
                            &mut containment_problems,
                        )?,
                        None => containment_problems.push(format!(
                            "document {id} is missing from the containment index"
                        )),
                    }
                    for problem in containment_problems.drain(..) {
                        report.problem(problem);
                    }
                }
                pipeline.index_keys(&record, &mut band_keys, &mut blocks);
                expected_postings += (band_keys.len() + blocks.len()) as u64;
                for (band, &key) in band_keys.iter().enumerate() {
                    // The first id at or after this one in the bucket, from
                    // the fresh postings and every run.
                    let mut found = Vec::new();
                    tables.postings(
                        Postings::Buckets,
                        band as u32,
                        key,
                        id.checked_sub(1),
                        1,
                        &mut found,
                    )?;
                    if found.first() != Some(&id) {
                        report.problem(format!(
                            "document {id} is missing from its bucket in band {band}"
                        ));
                    }
                }
                for (block, &value) in blocks.iter().enumerate() {
                    if tables.blocks.get((block as u32, value, id))?.is_none() {
                        report.problem(format!(
                            "document {id} is missing from SimHash block {block}"
                        ));
                    }
                }
            }
            super::keys::check_index(&tables, report)?;
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
            if let Some((ensemble, Some(table))) = &containment {
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
            if report.postings + report.simhash_postings != expected_postings {
                self.find_stray_postings(&tables, &unverifiable, report)?;
            }
            Ok(())
        }
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

    /// Document count, size on disk, and the bucket-size distribution.
    pub fn stats(&self) -> Result<Stats> {
        crate::guard::guard(|| {
            let txn = self.db.begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let runs = tables.runs.as_ref();
            let metadata = std::fs::metadata(&self.path).ok();
            let mut stats = Stats {
                runs: runs.map_or(0, |r| r.list().len()),
                run_postings: runs.map_or(0, RunTables::postings_count),
                fresh_postings: tables.buckets.len()?,
                documents: tables.len()?,
                file_bytes: metadata.as_ref().map_or(0, |m| m.len()),
                allocated_bytes: metadata.as_ref().map_or(0, allocated),
                ..Stats::default()
            };
            let mut shingles = 0u64;
            for entry in tables.sigs.iter()? {
                let (id, bytes) = entry?;
                shingles += u64::from(
                    codec::peek_set_len(bytes.value())
                        .map_err(|e| crate::store::tables::context(e, "signature", id.value()))?,
                );
            }
            if stats.documents > 0 {
                stats.mean_shingles = shingles as f64 / stats.documents as f64;
            }
            let mut current: Option<((u32, u64), u64)> = None;
            let record_bucket = |stats: &mut Stats, (band, key): (u32, u64), size: u64| {
                stats.buckets += 1;
                let class = (63 - size.leading_zeros()) as usize;
                if stats.histogram.len() <= class {
                    stats.histogram.resize(class + 1, 0);
                }
                stats.histogram[class] += 1;
                stats.largest.push((band, key, size));
                if stats.largest.len() > 64 {
                    stats.largest.sort_by_key(|b| std::cmp::Reverse(b.2));
                    stats.largest.truncate(10);
                }
            };
            for entry in tables.all_postings()? {
                let (band, key, _) = entry?;
                stats.postings += 1;
                current = match current {
                    Some((bucket, size)) if bucket == (band, key) => Some((bucket, size + 1)),
                    Some((bucket, size)) => {
                        record_bucket(&mut stats, bucket, size);
                        Some(((band, key), 1))
                    }
                    None => Some(((band, key), 1)),
                };
            }
            if let Some((bucket, size)) = current {
                record_bucket(&mut stats, bucket, size);
            }
            stats.simhash_postings = tables.blocks.len()?;
            if let Some(table) = containment::open_read(&txn)? {
                stats.containment_postings = table.len()?;
            }
            stats
                .largest
                .sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            stats.largest.truncate(10);
            Ok(stats)
        })
    }
}

/// The bytes a file occupies on disk.
fn allocated(metadata: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::blocks(metadata) * 512
    }
    #[cfg(not(unix))]
    {
        metadata.len()
    }
}
