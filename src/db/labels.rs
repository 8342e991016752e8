//! Application labels: small named strings an application stores in the
//! database file next to its documents (`lshdb scan` records the folder it
//! indexes). They live in their own table, which older files lack: reads
//! treat a missing table as empty and never create it.

use super::Database;
use crate::store::schema::LABELS;
use crate::{Error, Result};

/// Longest label name or value, in bytes.
pub const MAX_LABEL_BYTES: usize = 64 * 1024;

impl Database {
    /// Stores `value` under the label `name`, replacing any earlier value,
    /// durably (one transaction).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an empty name or a name or value
    /// longer than 64 KiB; [`Error::Poisoned`]; storage errors.
    pub fn set_label(&self, name: &str, value: &str) -> Result<()> {
        if name.is_empty() || name.len() > MAX_LABEL_BYTES {
            return Err(Error::invalid(
                "label",
                format!("a name must be 1 to {MAX_LABEL_BYTES} bytes"),
            ));
        }
        if value.len() > MAX_LABEL_BYTES {
            return Err(Error::invalid(
                "label",
                format!("a value must be at most {MAX_LABEL_BYTES} bytes"),
            ));
        }
        self.check_poisoned()?;
        crate::guard::guard(|| {
            let txn = self.begin_write()?;
            txn.open_table(LABELS)?.insert(name, value)?;
            Ok(txn.commit()?)
        })
        .map_err(|e| self.poison(e))
    }

    /// The value of the label `name`, or `None` when it was never set
    /// (also in a file written before labels existed).
    ///
    /// # Errors
    /// Storage errors.
    pub fn label(&self, name: &str) -> Result<Option<String>> {
        crate::guard::guard(|| {
            let txn = self.store().begin_read()?;
            let table = match txn.open_table(LABELS) {
                Ok(table) => table,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(err) => return Err(err.into()),
            };
            let value = table.get(name)?.map(|v| v.value().to_owned());
            Ok(value)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Database, Error};

    #[test]
    fn labels_are_stored_durably_and_absent_until_set() {
        let (_dir, path, db) = crate::testing::new_db("l.lshdb");
        // A new file has no labels table; reading does not create it.
        assert_eq!(db.label("scan.root").unwrap(), None);
        db.set_label("scan.root", "/some/where").unwrap();
        db.set_label("other", "").unwrap();
        drop(db);
        let db = Database::open(&path).unwrap();
        assert_eq!(
            db.label("scan.root").unwrap().as_deref(),
            Some("/some/where")
        );
        assert_eq!(db.label("other").unwrap().as_deref(), Some(""));
        assert_eq!(db.label("missing").unwrap(), None);
        db.set_label("scan.root", "/elsewhere").unwrap();
        assert_eq!(
            db.label("scan.root").unwrap().as_deref(),
            Some("/elsewhere")
        );
        assert!(matches!(
            db.set_label("", "x"),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(db.check().unwrap().is_clean());
    }
}
