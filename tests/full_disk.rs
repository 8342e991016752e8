//! A full disk: the repair of a file whose writer crashed is saved when
//! the repairing handle closes. `Database::close` reports a failure there
//! (a drop cannot), with the operating system's "No space left on device",
//! and the file then still needs a repair — nothing claims otherwise.

use lshdb::{Builder, Config, Database, Error, StorageBackend};
use std::io;
use std::sync::{Arc, Mutex};

/// An in-memory file on a disk that can fill up. Once full, every write
/// and every growth of the file fails with "No space left on device", as
/// on a copy-on-write file system (btrfs, ZFS), where even a rewrite takes
/// new space; reads work.
#[derive(Clone, Debug, Default)]
struct Disk {
    state: Arc<Mutex<(Vec<u8>, bool)>>,
}

impl Disk {
    /// A disk holding a copy of `other`'s file, with space.
    fn copy_of(other: &Disk) -> Self {
        Self::holding(other.state.lock().unwrap().0.clone())
    }
    fn holding(bytes: Vec<u8>) -> Self {
        Self {
            state: Arc::new(Mutex::new((bytes, false))),
        }
    }
    fn fill(&self) {
        self.state.lock().unwrap().1 = true;
    }
}

fn no_space() -> io::Error {
    io::Error::new(io::ErrorKind::StorageFull, "No space left on device")
}

impl StorageBackend for Disk {
    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().unwrap().0.len() as u64)
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let state = self.state.lock().unwrap();
        let start = offset as usize;
        let bytes = state
            .0
            .get(start..start + out.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(bytes);
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock().unwrap();
        if state.1 && len as usize > state.0.len() {
            return Err(no_space());
        }
        state.0.resize(len as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock().unwrap();
        if state.1 {
            return Err(no_space());
        }
        let (start, end) = (offset as usize, offset as usize + data.len());
        if end > state.0.len() {
            state.0.resize(end, 0);
        }
        state.0[start..end].copy_from_slice(data);
        Ok(())
    }
    fn close(&self) -> io::Result<()> {
        Ok(())
    }
}

const DOCS: u64 = 20;

/// A database of [`DOCS`] documents whose writer never closed it (it
/// crashed): a read-only open refuses it until a writer repairs it.
fn crashed() -> Disk {
    let disk = Disk::default();
    let db = Builder::default()
        .create_with_backend(disk.clone(), Config::jaccard(0.8))
        .unwrap();
    for i in 0..DOCS {
        let text = format!("document number {i} says something of its own, at length");
        db.insert(&format!("k{i}"), text.as_str()).unwrap();
    }
    std::mem::forget(db);
    let refused = read_only(&disk).err();
    assert!(
        matches!(refused, Some(Error::NeedsRepair { .. })),
        "{refused:?}"
    );
    disk
}

/// A read-only open of a copy of the disk's file.
fn read_only(disk: &Disk) -> lshdb::Result<Database> {
    Builder::default()
        .read_only(true)
        .open_with_backend(Disk::copy_of(disk))
}

#[test]
fn a_repair_is_saved_when_the_handle_closes() {
    let disk = crashed();
    let mut db = Builder::default().open_with_backend(disk.clone()).unwrap();
    let report = db.check_pages().unwrap();
    assert!(report.is_clean() && report.documents == DOCS, "{report:?}");
    db.close().unwrap();
    assert_eq!(read_only(&disk).unwrap().len().unwrap(), DOCS);
}

/// The error of a full disk: an I/O error whose source says so.
fn assert_full_disk(err: &Error, op: &str) {
    let Error::Io { source, .. } = err else {
        panic!("not an I/O error: {err:?}");
    };
    assert_eq!(source.kind(), io::ErrorKind::StorageFull, "{err:?}");
    assert_eq!(err.to_string(), format!("cannot {op} <backend>"));
    assert!(
        source.to_string().contains("No space left on device"),
        "{source}"
    );
}

/// After a failed repair the file still needs one, and gets it once there
/// is space.
fn assert_repaired_with_space(disk: &Disk) {
    assert!(matches!(read_only(disk), Err(Error::NeedsRepair { .. })));
    let disk = Disk::copy_of(disk);
    let mut db = Builder::default().open_with_backend(disk.clone()).unwrap();
    assert!(db.check_pages().unwrap().is_clean());
    db.close().unwrap();
    assert_eq!(read_only(&disk).unwrap().len().unwrap(), DOCS);
}

#[test]
fn a_repair_that_cannot_be_saved_on_a_full_disk_is_an_error_saying_so() {
    let disk = crashed();
    // The open repairs; the disk fills before the repair is saved.
    let mut db = Builder::default().open_with_backend(disk.clone()).unwrap();
    disk.fill();
    // The page check writes what it rebuilt: it fails, and says why (it
    // is not reported as damaged pages).
    let err = db.check_pages().unwrap_err();
    assert_full_disk(&err, "check the pages of");
    drop(db);
    assert_repaired_with_space(&disk);

    // The disk fills after the check: closing fails, and says why.
    let disk = crashed();
    let mut db = Builder::default().open_with_backend(disk.clone()).unwrap();
    assert!(db.check_pages().unwrap().is_clean());
    disk.fill();
    let err = db.close().unwrap_err();
    assert_full_disk(&err, "close");
    assert_repaired_with_space(&disk);
}
