//! The in-memory redb storage backend the fuzz targets open databases on
//! (from tests/common_backend, without the fault injection). Clones share
//! the bytes. Shared by the targets through `#[path]`.

use lshdb::StorageBackend;
use std::io;
use std::sync::{Arc, Mutex};

/// A minimal in-memory redb storage backend (from tests/common_backend,
/// without the fault injection).
#[derive(Clone, Debug, Default)]
pub struct MemBackend(Arc<Mutex<Vec<u8>>>);

#[allow(dead_code)] // each target uses a different part
impl MemBackend {
    pub fn new(image: Vec<u8>) -> Self {
        Self(Arc::new(Mutex::new(image)))
    }

    /// A copy of the bytes.
    pub fn image(&self) -> Vec<u8> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn to_usize(value: u64) -> io::Result<usize> {
    usize::try_from(value).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too large"))
}

/// Images may not grow beyond this: a damaged header can ask redb for any
/// length, which a real disk would refuse too.
const MAX_IMAGE: usize = 1 << 28;

impl StorageBackend for MemBackend {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let start = to_usize(offset)?;
        let src = start
            .checked_add(out.len())
            .and_then(|end| bytes.get(start..end))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(src);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = to_usize(len)?;
        if len > MAX_IMAGE {
            return Err(io::Error::other("image too large"));
        }
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resize(len, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let start = to_usize(offset)?;
        let end = start
            .checked_add(data.len())
            .filter(|&end| end <= MAX_IMAGE)
            .ok_or_else(|| io::Error::other("image too large"))?;
        if end > bytes.len() {
            bytes.resize(end, 0);
        }
        bytes[start..end].copy_from_slice(data);
        Ok(())
    }
}
