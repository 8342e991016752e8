//! How a file of an older format moves forward: opened for writing, a file
//! of format 1 to 4 becomes a file of the current format in one commit,
//! before anything else is written to it (`docs/format.md`, "How an old
//! file moves forward"). The store's side of older files (reading them as
//! they are) is `store::legacy`; nothing else knows their layouts.

use super::keys::write_key_postings;
use crate::store::legacy::{FIRST_KEYED_BLOCKS, KEYS};
use crate::store::meta;
use crate::store::runs::{last_posting, RunWriter, RUN_BLOCKS};
use crate::store::schema::{meta_keys, META};
use crate::store::tables::WriteTables;
use crate::Result;
use redb::{ReadableTable, WriteTransaction};

/// Marks a file of an older format as the current one, in one commit,
/// before anything of the new format is written to it: creates the tables
/// it lacks (the posting runs of format 2), moves its run blocks under
/// their last posting (format 5) and replaces its `keys` table by key
/// postings (format 4). Signature records that hold MinHash values
/// (formats 1 and 2) stay as they are: they are read as they are, and
/// rewriting them would cost a pass over every record.
pub(super) fn upgrade(db: &redb::Database) -> Result<()> {
    let txn = db.begin_write()?;
    {
        let mut meta_table = txn.open_table(META)?;
        meta_table.insert(meta_keys::FORMAT, meta::format_record().as_slice())?;
        WriteTables::open(&txn)?; // creates the new tables
    }
    // Before anything reads or writes runs in the new table.
    rekey_run_blocks(&txn)?;
    replace_keys_table(&txn)?;
    txn.commit()?;
    Ok(())
}

/// Replaces the `keys` table of a file of format 1 to 3, if it has one, by
/// key postings written from the document table; part of the upgrade to
/// format 4, in the upgrade's transaction.
fn replace_keys_table(txn: &WriteTransaction) -> Result<()> {
    if !txn.delete_table(KEYS)? {
        return Ok(());
    }
    let mut runs = RunWriter::open(txn)?;
    write_key_postings(txn, &mut runs)
}

/// Moves the run blocks of a file of format 2 to 4 (keyed by their first
/// posting) to the table of format 5, each under its last posting: one
/// pass over the blocks, as they are (a damaged block fails the upgrade,
/// whose transaction then leaves the file as it was).
fn rekey_run_blocks(txn: &WriteTransaction) -> Result<()> {
    let old = match txn.open_table(FIRST_KEYED_BLOCKS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    {
        let mut new = txn.open_table(RUN_BLOCKS)?;
        for row in old.iter()? {
            let (key, bytes) = row?;
            let (run, band, _, _) = key.value();
            let (last, id) = last_posting(bytes.value())
                .map_err(|e| crate::store::runs::context(e, run, band))?;
            new.insert((run, band, last, id), bytes.value())?;
        }
    }
    drop(old);
    txn.delete_table(FIRST_KEYED_BLOCKS)?;
    Ok(())
}
