//! [`Gate`]: how many single queries of one handle run at once, and
//! [`QueryPlace`], the context manager the Python `query` holds one in.
//!
//! Queries are CPU work. Eight Python threads querying at once on two
//! cores keep eight threads runnable, and a writer thread that sleeps in
//! every commit's `fsync` then waits behind all of them for a core each
//! time it wakes, and again for the GIL: measured, it kept a quarter of its
//! solo insert rate (`tools/bench/python_threads.py`). So `Database.query`
//! (the Python wrapper) first takes one of as many places as there are
//! cores, for the whole call: its argument checks, the search and the
//! making of its hits. The callers beyond wait asleep, without the GIL, in
//! arrival order. The cores stay as busy as before (the readers'
//! throughput did not fall), and the writer, which takes no place, finds a
//! core and the GIL free. Only the wrapper takes places, once per call, so
//! no thread ever waits for a second place while it holds one; and only
//! serial work runs in a place: `query_many` runs on the rayon pool, one
//! thread per core already, and takes none.

use super::{Database, Shared};
use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Places for running queries: at most `limit` at once, one fewer
/// (but at least one) while a single write runs.
pub(crate) struct Gate {
    /// (running, waiting, writes running).
    state: Mutex<(usize, usize, usize)>,
    freed: Condvar,
    limit: usize,
}

/// A single write running; gives its core back when dropped.
pub(crate) struct Writing<'a>(&'a Gate);

impl Gate {
    /// A gate with one place per core this process may use.
    pub(crate) fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            state: Mutex::new((0, 0, 0)),
            freed: Condvar::new(),
            limit: cores.max(1),
        }
    }

    /// The places now: one fewer while a write runs, so that the writer
    /// finds a core when it wakes from its commit.
    fn places(&self, writes: usize) -> usize {
        if writes > 0 {
            (self.limit - 1).max(1)
        } else {
            self.limit
        }
    }

    /// Waits for a place. A caller that finds others waiting queues behind
    /// them even when a place is free, so that none waits forever.
    fn take(&self) {
        let mut state = self.state.lock();
        if state.0 < self.places(state.2) && state.1 == 0 {
            state.0 += 1;
            return;
        }
        state.1 += 1;
        while state.0 >= self.places(state.2) {
            self.freed.wait(&mut state);
        }
        state.1 -= 1;
        state.0 += 1;
        if state.0 < self.places(state.2) && state.1 > 0 {
            // Places freed together: wake the next waiter too.
            self.freed.notify_one();
        }
    }

    /// Marks a single write as running until the result is dropped.
    pub(crate) fn writing(&self) -> Writing<'_> {
        self.state.lock().2 += 1;
        Writing(self)
    }

    /// Gives a place back.
    fn give(&self) {
        let mut state = self.state.lock();
        state.0 -= 1;
        if state.1 > 0 {
            self.freed.notify_one();
        }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.2 -= 1;
        if state.2 == 0 && state.1 > 0 {
            self.0.freed.notify_one();
        }
    }
}

/// A place for one query call: `with native.query_place(): ...`.
#[pyclass(module = "lshdb._lshdb", name = "QueryPlace", frozen)]
pub struct QueryPlace {
    shared: Arc<Shared>,
    held: AtomicBool,
}

#[pymethods]
impl QueryPlace {
    /// Waits for a place, without the GIL.
    fn __enter__(&self, py: Python<'_>) {
        if !self.held.swap(true, Ordering::AcqRel) {
            py.detach(|| self.shared.queries.take());
        }
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        if self.held.swap(false, Ordering::AcqRel) {
            self.shared.queries.give();
        }
    }
}

impl Drop for QueryPlace {
    fn drop(&mut self) {
        if *self.held.get_mut() {
            self.shared.queries.give();
        }
    }
}

#[pymethods]
impl Database {
    /// A place among the handle's running queries, for one call.
    fn query_place(&self) -> QueryPlace {
        QueryPlace {
            shared: Arc::clone(&self.shared),
            held: AtomicBool::new(false),
        }
    }
}
