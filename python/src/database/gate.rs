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
//! core and the GIL free; while a single write runs, the queries have one
//! place fewer (but at least one), so that the writer has a core of its
//! own when it wakes from its commit. Only the wrapper takes places, once
//! per call, after reading its arguments (which may run Python code), so
//! no thread ever waits for a second place while it holds one; and only
//! serial work runs in a place: `query_many` runs on the rayon pool, one
//! thread per core already, and takes none.

use super::{Database, Shared};
use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Places for running queries: at most `limit` at once, one fewer
/// (but at least one) while a single write runs and for [`LINGER`] after
/// it (a writer's next call comes that soon).
pub(crate) struct Gate {
    state: Mutex<State>,
    freed: Condvar,
    limit: usize,
    /// The process that made the gate. In a `fork()` child the places its
    /// parent's threads held stay taken by threads that do not exist there,
    /// so the child takes none and waits for none: its calls then reach the
    /// library, which refuses them (`WrongProcess`, Python's `DatabaseClosed`).
    owner: u32,
}

/// How long a writer keeps its core after a write.
const LINGER: Duration = Duration::from_millis(10);

struct State {
    running: usize,
    waiting: usize,
    writes: usize,
    /// When the last write ended.
    wrote: Option<Instant>,
}

/// A single write running; gives its core back when dropped. Counts
/// nothing in a `fork()` child (see [`Gate::owner`]).
pub(crate) struct Writing<'a>(Option<&'a Gate>);

impl Gate {
    /// A gate with one place per core this process may use.
    pub(crate) fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            state: Mutex::new(State {
                running: 0,
                waiting: 0,
                writes: 0,
                wrote: None,
            }),
            freed: Condvar::new(),
            limit: cores.max(1),
            owner: std::process::id(),
        }
    }

    /// Whether this is the process that made the gate (not a fork child).
    fn ours(&self) -> bool {
        std::process::id() == self.owner
    }

    /// The places now, and how long that holds: one fewer while a write
    /// runs or has just run, so that the writer finds a core when it wakes
    /// from its commit.
    fn places(&self, state: &State) -> (usize, Option<Duration>) {
        let fewer = (self.limit - 1).max(1);
        if state.writes > 0 {
            return (fewer, None);
        }
        match state.wrote.map(|at| LINGER.saturating_sub(at.elapsed())) {
            Some(left) if !left.is_zero() => (fewer, Some(left)),
            _ => (self.limit, None),
        }
    }

    /// Takes a free place if no one waits for one; false otherwise.
    fn try_take(&self) -> bool {
        let mut state = self.state.lock();
        let free = state.running < self.places(&state).0 && state.waiting == 0;
        if free {
            state.running += 1;
        }
        free
    }

    /// Waits for a place. A caller that finds others waiting queues behind
    /// them even when a place is free, so that none waits forever.
    fn take(&self) {
        if self.try_take() {
            return;
        }
        let mut state = self.state.lock();
        state.waiting += 1;
        loop {
            let (places, until) = self.places(&state);
            if state.running < places {
                break;
            }
            match until {
                Some(left) => {
                    self.freed.wait_for(&mut state, left);
                }
                None => self.freed.wait(&mut state),
            }
        }
        state.waiting -= 1;
        state.running += 1;
        if state.running < self.places(&state).0 && state.waiting > 0 {
            // Places freed together: wake the next waiter too.
            self.freed.notify_one();
        }
    }

    /// Marks a single write as running until the result is dropped.
    pub(crate) fn writing(&self) -> Writing<'_> {
        if !self.ours() {
            return Writing(None);
        }
        self.state.lock().writes += 1;
        Writing(Some(self))
    }

    /// Gives a place back.
    fn give(&self) {
        let mut state = self.state.lock();
        state.running -= 1;
        if state.waiting > 0 {
            self.freed.notify_one();
        }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        if let Some(gate) = self.0 {
            let mut state = gate.state.lock();
            state.writes -= 1;
            state.wrote = Some(Instant::now());
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
    /// Takes a free place at once, or waits for one without the GIL; in a
    /// `fork()` child takes none (see [`Gate::owner`]).
    fn __enter__(&self, py: Python<'_>) {
        if !self.shared.queries.ours() {
            return;
        }
        if !self.held.swap(true, Ordering::AcqRel) && !self.shared.queries.try_take() {
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
