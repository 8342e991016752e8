//! Streams: `pairs()`, `keys()`, `documents()` and the cluster streams
//! (`members()`, `clusters()`, `document_clusters()`) of the Python
//! `Database` run on a background thread that holds the read lock and
//! sends chunks through a bounded channel; the Python iterator
//! ([`Stream`]) receives them with the GIL released. Dropping the iterator
//! or closing the database stops the thread at its next chunk.

use crate::database::{Pair3, Shared};
use crate::errors::{run, Fail};
use lshdb::Database as Db;
use parking_lot::Mutex;
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::sync::Arc;
use std::time::Duration;

/// Starts a producer on a thread of its own, reading `shared`'s database.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    produce: impl FnOnce(&Db, &mut dyn FnMut(Item) -> bool) -> Result<(), Fail> + Send + 'static,
) -> Stream {
    let (tx, rx) = sync_channel::<Chunk>(4);
    std::thread::spawn(move || {
        // A full queue means a slow consumer: wait with a growing pause
        // (1 to 16 ms), looking at the closing flag between tries.
        let send = |msg: Chunk| -> bool {
            let (mut msg, mut pause) = (msg, 1);
            loop {
                match tx.try_send(msg) {
                    Ok(()) => return true,
                    Err(TrySendError::Disconnected(_)) => return false,
                    Err(TrySendError::Full(back)) => {
                        if shared.closing.load(Ordering::Relaxed) {
                            return false;
                        }
                        msg = back;
                        std::thread::sleep(Duration::from_millis(pause));
                        pause = (pause * 2).min(16);
                    }
                }
            }
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shared.read(|db| {
                let mut chunk = Vec::with_capacity(STREAM_CHUNK);
                let mut open = true;
                let mut emit = |item: Item| {
                    chunk.push(item);
                    if chunk.len() >= STREAM_CHUNK {
                        open = send(Ok(Some(std::mem::take(&mut chunk))));
                    }
                    open
                };
                produce(db, &mut emit)?;
                if open && (chunk.is_empty() || send(Ok(Some(chunk)))) {
                    send(Ok(None));
                }
                Ok(())
            })
        }));
        match result {
            Ok(Ok(())) => {}
            Ok(Err(fail)) => {
                send(Err(fail));
            }
            Err(payload) => {
                send(Err(Fail::Panic(crate::errors::panic_text(payload))));
            }
        }
    });
    Stream {
        rx: Mutex::new(Some(rx)),
        buf: Mutex::new(VecDeque::new()),
    }
}

/// Items per chunk of a stream.
const STREAM_CHUNK: usize = 1024;

/// What a stream's producer sends: a chunk of items (`None` once it has
/// sent everything), or why it stopped.
type Chunk = Result<Option<Vec<Item>>, Fail>;

/// What a stream yields.
pub enum Item {
    Key(String),
    Pair(Pair3),
    /// (key, text, shingle hashes) of `documents()`.
    Document(Document3),
    /// (id, representative, size) of `clusters()`.
    Cluster((u64, String, u64)),
    /// (key, cluster id, representative, size, similarity) of
    /// `document_clusters()`.
    DocumentCluster(DocumentCluster5),
}

/// A document with its cluster as `document_clusters()` yields it.
pub type DocumentCluster5 = (String, u64, String, u64, f64);

/// A stored document as `documents()` yields it.
pub type Document3 = (String, Option<String>, Vec<u32>);

/// An iterator fed by a background thread.
#[pyclass(module = "lshdb._lshdb", name = "Stream", frozen)]
pub struct Stream {
    rx: Mutex<Option<Receiver<Chunk>>>,
    buf: Mutex<VecDeque<Item>>,
}

#[pymethods]
impl Stream {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let item = run(py, || {
            let mut buf = self.buf.lock();
            let mut rx = self.rx.lock();
            while buf.is_empty() {
                let Some(receiver) = rx.as_ref() else { break };
                match receiver.recv() {
                    Ok(Ok(Some(chunk))) => buf.extend(chunk),
                    Ok(Ok(None)) => *rx = None,
                    Ok(Err(fail)) => {
                        *rx = None;
                        return Err(fail);
                    }
                    // The producer stopped without saying it was done: the
                    // database was closed under it.
                    Err(_) => {
                        *rx = None;
                        return Err(Fail::Closed);
                    }
                }
            }
            Ok(buf.pop_front())
        })?;
        Ok(match item {
            None => None,
            Some(Item::Key(key)) => Some(key.into_pyobject(py)?.into_any().unbind()),
            Some(Item::Pair(pair)) => Some(pair.into_pyobject(py)?.into_any().unbind()),
            Some(Item::Document(doc)) => Some(doc.into_pyobject(py)?.into_any().unbind()),
            Some(Item::Cluster(c)) => Some(c.into_pyobject(py)?.into_any().unbind()),
            Some(Item::DocumentCluster(d)) => Some(d.into_pyobject(py)?.into_any().unbind()),
        })
    }

    /// Stops the producer (it ends at its next chunk).
    fn close(&self) {
        *self.rx.lock() = None;
        self.buf.lock().clear();
    }
}
