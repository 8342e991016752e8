//! [`Gate`]: how many queries of one handle run at once.
//!
//! Queries are CPU work. Eight Python threads querying at once on two
//! cores keep eight threads runnable, and a writer thread that sleeps in
//! every commit's `fsync` then waits behind all of them for a core each
//! time it wakes, and again for the GIL: measured, it kept a quarter of its
//! solo insert rate (`tools/bench/python_threads.py`). So a single query
//! first takes one of as many places as there are cores; the callers
//! beyond wait asleep, without the GIL, in arrival order. The cores stay
//! as busy as before (the readers' throughput did not fall), and the
//! writer, which takes no place, finds a core and the GIL free. Only
//! serial work runs under a place: `query_many` runs on the rayon pool,
//! which has one thread per core already, so it takes none (a place held
//! while waiting for the pool could deadlock against the pool's queries).

use parking_lot::{Condvar, Mutex};

/// Places for running queries: at most `limit` at once.
pub(crate) struct Gate {
    /// (running, waiting).
    state: Mutex<(usize, usize)>,
    freed: Condvar,
    limit: usize,
}

/// A place taken; given back when dropped.
pub(crate) struct Place<'a>(&'a Gate);

impl Gate {
    /// A gate with one place per core this process may use.
    pub(crate) fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::new(cores)
    }

    /// A gate with `limit` places (at least 1).
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            state: Mutex::new((0, 0)),
            freed: Condvar::new(),
            limit: limit.max(1),
        }
    }

    /// Waits for a place. A caller that finds others waiting queues behind
    /// them even when a place is free, so that none waits forever.
    pub(crate) fn enter(&self) -> Place<'_> {
        let mut state = self.state.lock();
        if state.0 < self.limit && state.1 == 0 {
            state.0 += 1;
            return Place(self);
        }
        state.1 += 1;
        while state.0 >= self.limit {
            self.freed.wait(&mut state);
        }
        state.1 -= 1;
        state.0 += 1;
        if state.0 < self.limit && state.1 > 0 {
            // Places freed together: wake the next waiter too.
            self.freed.notify_one();
        }
        Place(self)
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.0 -= 1;
        if state.1 > 0 {
            self.0.freed.notify_one();
        }
    }
}
