//! How a file of an older format moves forward: opened for writing, a file
//! of format 1 to 3 becomes a file of the current format in one commit,
//! before anything else is written to it (`docs/format.md`, "How an old
//! file moves forward"). The store's side of older files (reading them as
//! they are) is `store::legacy`; nothing else knows their layouts.

use super::keys::write_key_postings;
use crate::store::legacy::KEYS;
use crate::store::meta;
use crate::store::runs::RunWriter;
use crate::store::schema::{meta_keys, META};
use crate::store::tables::WriteTables;
use crate::Result;
use redb::WriteTransaction;

/// Marks a file of an older format as the current one, in one commit,
/// before anything of the new format is written to it: creates the tables
/// it lacks (the posting runs of format 2) and replaces its `keys` table by
/// key postings (format 4). Signature records that hold MinHash values
/// (formats 1 and 2) stay as they are: they are read as they are, and
/// rewriting them would cost a pass over every record.
pub(super) fn upgrade(db: &redb::Database) -> Result<()> {
    let txn = db.begin_write()?;
    {
        let mut meta_table = txn.open_table(META)?;
        meta_table.insert(meta_keys::FORMAT, meta::format_record().as_slice())?;
        WriteTables::open(&txn)?; // creates the new tables
    }
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
