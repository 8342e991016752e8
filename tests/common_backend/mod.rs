//! A redb storage backend for fault-injection tests: the file lives in
//! memory as two images, and a chosen call can fail.
//!
//! * The **live** image is what has been written: every `write` and
//!   `set_len` lands there at once, as in the OS page cache.
//! * The **durable** image is what survives a power cut: the live image as
//!   it was at the last `sync_data` that returned `Ok`. A write is durable
//!   only after the next successful sync.
//!
//! A [`Fault`] makes the n-th call of one kind fail: either as a power cut
//! (that call and every later call of any kind fail, so the database stops
//! and only the durable image survives; the failed write is lost) or as a
//! transient error (only that call fails; the storage works before and
//! after).
#![allow(dead_code)]

pub mod workload;

use lshdb::StorageBackend;
use std::io;
use std::sync::{Arc, Mutex};

/// The kinds of call a fault can hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `StorageBackend::write`.
    Write,
    /// `StorageBackend::set_len`.
    SetLen,
    /// `StorageBackend::sync_data`.
    Sync,
}

impl Call {
    /// Every kind, in a fixed order.
    pub const ALL: [Call; 3] = [Call::Write, Call::SetLen, Call::Sync];

    /// The kind's position in [`Call::ALL`].
    pub fn index(self) -> usize {
        match self {
            Call::Write => 0,
            Call::SetLen => 1,
            Call::Sync => 2,
        }
    }
}

/// Which call fails, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Power cut at the n-th call (1-based) of this kind: it and every later
    /// call of any kind (reads, `len` and `close` included) return an error.
    CutAt(Call, u64),
    /// Only the n-th call (1-based) of this kind returns an error, without
    /// any effect; every other call works.
    FailOnce(Call, u64),
}

/// Bytes at the start of the file that hold redb's header (its god byte and
/// both commit slots); writes that start below this are header writes.
const HEADER_BYTES: u64 = 512;

#[derive(Debug, Default)]
struct Disk {
    live: Vec<u8>,
    durable: Vec<u8>,
    /// Header writes since the last successful sync, in order.
    pending_header: Vec<(usize, Vec<u8>)>,
    /// Calls made so far, by [`Call::index`] (the failing ones included).
    calls: [u64; 3],
    fault: Option<Fault>,
    /// Set by a power cut: every call fails from then on.
    dead: bool,
    /// Errors returned because of the fault.
    injected: u64,
}

impl Disk {
    /// Counts a call of `kind` and says whether it must fail.
    fn fails(&mut self, kind: Call) -> bool {
        self.calls[kind.index()] += 1;
        let n = self.calls[kind.index()];
        let fail = match self.fault {
            _ if self.dead => true,
            Some(Fault::CutAt(k, at)) if k == kind && at == n => {
                self.dead = true;
                true
            }
            Some(Fault::FailOnce(k, at)) => k == kind && at == n,
            _ => false,
        };
        if fail {
            self.injected += 1;
        }
        fail
    }

    /// Whether every call fails (a power cut happened).
    fn refuse(&mut self) -> io::Result<()> {
        if self.dead {
            self.injected += 1;
            return Err(injected_error());
        }
        Ok(())
    }
}

fn injected_error() -> io::Error {
    io::Error::other("injected I/O failure")
}

/// The fault-injecting backend. Clones share the same disk, so a test keeps
/// one to inspect the images after the database took the other.
#[derive(Clone, Debug, Default)]
pub struct FaultyBackend {
    disk: Arc<Mutex<Disk>>,
}

impl FaultyBackend {
    /// An empty disk that never fails.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty disk with a fault.
    pub fn with_fault(fault: Fault) -> Self {
        let backend = Self::new();
        backend.disk.lock().unwrap().fault = Some(fault);
        backend
    }

    /// A disk that holds `image`, durably, and never fails.
    pub fn from_image(image: &[u8]) -> Self {
        let backend = Self::new();
        {
            let mut disk = backend.disk.lock().unwrap();
            disk.live = image.to_vec();
            disk.durable = image.to_vec();
        }
        backend
    }

    /// How many calls of `kind` were made (the failing ones included).
    pub fn calls(&self, kind: Call) -> u64 {
        self.disk.lock().unwrap().calls[kind.index()]
    }

    /// How many errors the fault returned.
    pub fn injected(&self) -> u64 {
        self.disk.lock().unwrap().injected
    }

    /// What has been written: survives a crash of the process (the OS
    /// writes its page cache back), not a power cut.
    pub fn live_image(&self) -> Vec<u8> {
        self.disk.lock().unwrap().live.clone()
    }

    /// What survives a power cut: the live image at the last successful
    /// sync.
    pub fn durable_image(&self) -> Vec<u8> {
        self.disk.lock().unwrap().durable.clone()
    }

    /// A power cut in which the disk reordered writes: the header writes
    /// made since the last sync reached the platter, none of the data pages
    /// they point at did (nor the file's new length). redb's checksums must
    /// catch the torn commit.
    pub fn torn_header_image(&self) -> Vec<u8> {
        let disk = self.disk.lock().unwrap();
        let mut image = disk.durable.clone();
        for (offset, data) in &disk.pending_header {
            let end = (offset + data.len()).min(image.len());
            if *offset < end {
                image[*offset..end].copy_from_slice(&data[..end - offset]);
            }
        }
        image
    }
}

fn to_usize(value: u64) -> io::Result<usize> {
    usize::try_from(value).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too large"))
}

impl StorageBackend for FaultyBackend {
    fn len(&self) -> io::Result<u64> {
        let mut disk = self.disk.lock().unwrap();
        disk.refuse()?;
        Ok(disk.live.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let mut disk = self.disk.lock().unwrap();
        disk.refuse()?;
        let start = to_usize(offset)?;
        let end = start + out.len();
        if end > disk.live.len() {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        out.copy_from_slice(&disk.live[start..end]);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut disk = self.disk.lock().unwrap();
        if disk.fails(Call::SetLen) {
            return Err(injected_error());
        }
        let len = to_usize(len)?;
        disk.live.resize(len, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut disk = self.disk.lock().unwrap();
        if disk.fails(Call::Sync) {
            return Err(injected_error());
        }
        disk.durable = disk.live.clone();
        disk.pending_header.clear();
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut disk = self.disk.lock().unwrap();
        if disk.fails(Call::Write) {
            return Err(injected_error());
        }
        let start = to_usize(offset)?;
        let end = start + data.len();
        if end > disk.live.len() {
            disk.live.resize(end, 0);
        }
        disk.live[start..end].copy_from_slice(data);
        if offset < HEADER_BYTES {
            disk.pending_header.push((start, data.to_vec()));
        }
        Ok(())
    }

    fn close(&self) -> io::Result<()> {
        self.disk.lock().unwrap().refuse()
    }
}
