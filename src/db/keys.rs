//! The key index of format 4: a document's external key is indexed by one
//! posting, `(KEY_BAND, key_hash(key), id)`, kept with its band postings
//! (fresh, then in runs, merged and filtered like them). This file owns
//! what is particular to key postings: their check, and writing them from
//! the document table — when a file of format 1 to 3 is upgraded (its
//! `keys` table is replaced, `db::upgrade`) and when re-banding rebuilds
//! every posting.

use super::maintain::CheckReport;
use crate::hash::key_hash;
use crate::store::codec;
use crate::store::legacy;
use crate::store::probe::Probe;
use crate::store::runs::RunWriter;
use crate::store::schema::{DOCS, KEY_BAND};
use crate::store::tables::{context, Index, Postings, ReadTables, Reader};
use crate::Result;
use rayon::prelude::*;
use redb::{ReadableTable, WriteTransaction};

/// Documents whose key postings make one run when they are written from
/// the document table (24 MiB of postings in memory).
const CHUNK: usize = 1 << 20;

/// Checks that a look-up of `key` finds document `id`, stored under it.
pub(super) fn check_document(
    tables: &ReadTables,
    id: u64,
    key: &str,
    report: &mut CheckReport,
) -> Result<()> {
    if let Some(legacy) = &tables.keys {
        if let Some(problem) = legacy::check_key(legacy, key, id)? {
            report.problem(problem);
        }
        return Ok(());
    }
    // The first id at or after this one under the key's hash.
    let mut found = Vec::new();
    let probe = Probe::first_from(KEY_BAND, key_hash(key), id);
    tables.postings(Postings::Buckets, probe, &mut found)?;
    if found.first() != Some(&id) {
        report.problem(format!(
            "document {id} (key `{key}`) is missing from the key index"
        ));
    }
    Ok(())
}

/// Checks the key index as a whole, after every document was checked by
/// [`check_document`]: one entry per document, no key stored twice, and
/// (when the count is off) no key posting that no document accounts for.
pub(super) fn check_index(tables: &ReadTables, report: &mut CheckReport) -> Result<()> {
    if let Some(legacy) = &tables.keys {
        if let Some(problem) = legacy::check_key_count(legacy, report.documents)? {
            report.problem(problem);
        }
        return Ok(());
    }
    let mut count = 0u64;
    let mut previous: Option<(u64, u64)> = None;
    for posting in tables.key_postings()? {
        let (_, hash, id) = posting?;
        count += 1;
        // Two ids under one hash: distinct keys sharing a hash are fine,
        // one key stored twice is not.
        if let Some((_, last_id)) = previous.filter(|p| p.0 == hash) {
            let (a, b) = (tables.key(last_id)?, tables.key(id)?);
            if a.is_some() && a == b {
                report.problem(format!(
                    "key `{}` is stored twice: documents {last_id} and {id}",
                    a.unwrap_or_default()
                ));
            }
        }
        previous = Some((hash, id));
    }
    if count != report.documents {
        report.problem(format!(
            "{count} key postings for {} documents",
            report.documents
        ));
        for posting in tables.key_postings()? {
            let (_, hash, id) = posting?;
            let belongs = matches!(tables.key(id), Ok(Some(key)) if key_hash(&key) == hash);
            if !belongs {
                report.problem(format!(
                    "key posting {hash:016x} points at document {id}, which is not stored under a key of that hash"
                ));
            }
        }
    }
    Ok(())
}

/// Writes the key posting of every stored document as posting runs, one
/// per [`CHUNK`] documents (merged as the merge policy says).
pub(super) fn write_key_postings(txn: &WriteTransaction, runs: &mut RunWriter<'_>) -> Result<()> {
    let docs = txn.open_table(DOCS)?;
    let mut entries = docs.iter()?;
    let mut chunk: Vec<(u32, u64, u64)> = Vec::with_capacity(CHUNK);
    loop {
        chunk.clear();
        for entry in entries.by_ref().take(CHUNK) {
            let (id, bytes) = entry?;
            let id = id.value();
            let doc = codec::decode_doc(bytes.value()).map_err(|e| context(e, "document", id))?;
            chunk.push((KEY_BAND, key_hash(&doc.key), id));
        }
        if chunk.is_empty() {
            return Ok(());
        }
        chunk.par_sort_unstable();
        let count = chunk.len() as u64;
        runs.add_run(chunk.drain(..).map(Ok), count)?;
    }
}
