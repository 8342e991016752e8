//! [`Merger`]: a writable handle's background merger thread, which makes
//! the run merges too large for a write (`store/runs/background.rs`) in
//! transactions of its own, so that no write pays for them.
//!
//! **Life.** The handle starts it when it opens a file for writing (never
//! for a read-only handle) and stops it when dropped or closed, and
//! around what needs the storage engine alone (compaction, the page
//! check, a change of settings). Stopping waits for the transaction in
//! progress at most: the next merger goes on with a merge cut off (see
//! `background.rs`). The thread looks for
//! due merges every [`POLL`] and when [`Merger::wait_idle`] asks.
//!
//! **Turns.** A load holds the write lock from one of its commits to the
//! next, and takes it again at once: the merger, waiting on the lock,
//! would hardly ever get it while the load lasts, and runs would pile up
//! for the load's own look-ups to probe. So the merger says when it waits
//! for a transaction, and a load that reads its own runs lets it have one
//! between two of its commits ([`Merger::give_turns`]), for as long as
//! the load itself held the lock since the last turns: a turn apiece
//! let runs pile up to `MAX_RUNS` in a 10 M dedup (a commit writes about
//! a million postings, a merge step 65 thousand), and every look-up
//! probed them all. A turn holds the lock only to write a step: the next
//! step is read meanwhile, on a thread of its own ([`build`]), so that a
//! load or a single write waiting for the lock waits for a write, not for
//! a read and a write (a 2 M-record dedup ran 7 % faster).
//!
//! **Failure.** A storage error ends the thread and is kept: writes then
//! make every merge inline past `MAX_RUNS` runs, and [`Merger::wait_idle`]
//! returns the error.
//!
//! **fork().** A child made by `fork()` has no merger thread, and the
//! merger's lock may have been held by the parent's thread at that
//! moment: the child's drop touches neither (it leaks them), as the
//! handle leaks its engine there (`store.rs`).

use crate::store::runs::background::{self, Job};
use crate::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often an idle merger looks for due merges.
pub const POLL: Duration = Duration::from_millis(200);

/// A handle's merger thread, or none (read-only handles).
pub(crate) struct Merger {
    running: Option<Running>,
    opened_in: u32,
}

struct Running {
    shared: Arc<Shared>,
    thread: JoinHandle<()>,
}

/// What the handle and its merger thread share.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    state: Mutex<State>,
    /// Wakes the thread: a request or a stop.
    wake: Condvar,
    /// Wakes those waiting for a pass to end.
    idle: Condvar,
    /// The merger waits for the write lock, or holds it.
    wants: AtomicBool,
    /// Transactions the merger has ended.
    turns: Mutex<u64>,
    /// Wakes those waiting for a turn to end.
    turned: Condvar,
}

impl Shared {
    /// Runs `step` (one write transaction of the merger) as a turn.
    fn turn<T>(&self, step: impl FnOnce() -> T) -> T {
        self.wants.store(true, Ordering::SeqCst);
        let out = step();
        self.wants.store(false, Ordering::SeqCst);
        *self.turns.lock() += 1;
        self.turned.notify_all();
        out
    }
}

/// The longest a load waits for the merger's turn.
const TURN_WAIT: Duration = Duration::from_secs(5);

#[derive(Default)]
struct State {
    /// Passes requested by [`Merger::wait_idle`].
    requested: u64,
    /// The last request a finished pass covered.
    done: u64,
    /// The error that ended the thread.
    failed: Option<String>,
    /// The thread has ended.
    ended: bool,
}

impl Merger {
    /// No merger.
    pub(crate) fn none() -> Self {
        Self {
            running: None,
            opened_in: std::process::id(),
        }
    }

    /// Starts a merger thread on `db`. When the thread cannot be made, the
    /// handle goes on without one: writes merge inline past `MAX_RUNS`.
    ///
    /// Whether there is work now is looked up here, on the opening thread:
    /// a thread that finds none begins by waiting for [`POLL`] instead of
    /// taking a read snapshot while the handle's first writes commit (a
    /// snapshot live at a commit holds back the pages it frees, so the
    /// same writes would leave a file laid out differently from run to
    /// run). A failed look-up leaves the thread its first pass, which
    /// reports the error.
    pub(crate) fn start(db: Arc<redb::Database>) -> Self {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let work = background::has_work(&db).unwrap_or(true);
        let thread = std::thread::Builder::new()
            .name("lshdb-merger".to_owned())
            .spawn(move || run(&db, &theirs, work));
        Self {
            running: thread.ok().map(|thread| Running { shared, thread }),
            opened_in: std::process::id(),
        }
    }

    /// Stops the thread and waits for it; a merge it was building is
    /// abandoned (the next merger deletes it).
    pub(crate) fn stop(&mut self) {
        if std::process::id() != self.opened_in {
            // A forked child: no thread to join, a lock maybe held forever.
            std::mem::forget(self.running.take());
            return;
        }
        if let Some(running) = self.running.take() {
            running.shared.stop.store(true, Ordering::SeqCst);
            {
                let _state = running.shared.state.lock();
                running.shared.wake.notify_all();
            }
            let _ = running.thread.join();
        }
    }

    /// Lets the merger have write transactions, one after another, while
    /// it wants them and for about `budget` (at least one when it waits
    /// for one, at most [`TURN_WAIT`]): called by a load between its
    /// commit and its next transaction. A load that writes a run per
    /// commit gives its merger time in proportion to its own, or runs pile
    /// up faster than they merge and every look-up probes them all.
    pub(crate) fn give_turns(&self, budget: Duration) {
        let Some(running) = &self.running else {
            return;
        };
        let shared = &running.shared;
        if std::process::id() != self.opened_in {
            return;
        }
        let begin = std::time::Instant::now();
        let deadline = begin + TURN_WAIT;
        let mut turns = shared.turns.lock();
        let mut given = false;
        loop {
            if !shared.wants.load(Ordering::SeqCst) {
                // Between two steps of a merge the merger asks again at
                // once; a short wait tells that from an idle merger. A
                // merger that wanted nothing to begin with is idle.
                let wants = || shared.wants.load(Ordering::SeqCst);
                if !given || !wait_briefly(wants, &mut turns) {
                    return;
                }
            }
            given = true;
            let start = *turns;
            while *turns == start && shared.wants.load(Ordering::SeqCst) {
                if shared.turned.wait_until(&mut turns, deadline).timed_out() {
                    return;
                }
            }
            if begin.elapsed() >= budget {
                return;
            }
        }
    }

    /// Whether a merger thread was started (it may have ended since).
    pub(crate) fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Waits until the merger has made every merge due now, and deleted
    /// the runs it retired. Without a merger (read-only), at once.
    ///
    /// # Errors
    /// The storage error that ended the merger.
    pub(crate) fn wait_idle(&self) -> Result<()> {
        let Some(running) = &self.running else {
            return Ok(());
        };
        let shared = &running.shared;
        let mut state = shared.state.lock();
        state.requested += 1;
        let target = state.requested;
        shared.wake.notify_all();
        while state.done < target && !state.ended {
            shared.idle.wait(&mut state);
        }
        match &state.failed {
            Some(reason) => Err(Error::Poisoned(format!(
                "the background merger failed: {reason}"
            ))),
            None => Ok(()),
        }
    }
}

/// Whether `asked` becomes true within a few hundred microseconds, with
/// `lock` released meanwhile.
fn wait_briefly(asked: impl Fn() -> bool, lock: &mut parking_lot::MutexGuard<'_, u64>) -> bool {
    let until = std::time::Instant::now() + Duration::from_micros(500);
    parking_lot::MutexGuard::unlocked(lock, || {
        while std::time::Instant::now() < until {
            if asked() {
                return true;
            }
            std::thread::yield_now();
        }
        asked()
    })
}

impl Drop for Merger {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: a pass (when `work` says there is any now), then wait for
/// [`POLL`] or a request, until stopped.
fn run(db: &redb::Database, shared: &Shared, work: bool) {
    let mut first = work;
    loop {
        let target = {
            let mut state = shared.state.lock();
            if state.done == state.requested && !shared.stop.load(Ordering::SeqCst) && !first {
                shared.wake.wait_for(&mut state, POLL);
            }
            state.requested
        };
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let result = crate::guard::guard(|| pass(db, shared, first));
        first = false;
        let mut state = shared.state.lock();
        match result {
            Ok(true) => state.done = target,
            Ok(false) => {} // stopped mid-pass
            Err(err) => {
                // The engine's own words too: "storage engine error" alone
                // says too little.
                let detail = std::error::Error::source(&err).map(|s| format!(": {s}"));
                state.failed = Some(format!("{err}{}", detail.unwrap_or_default()));
                break;
            }
        }
        shared.idle.notify_all();
    }
    shared.state.lock().ended = true;
    shared.idle.notify_all();
}

/// Goes on with a merge left unfinished (on the first pass), deletes
/// retired runs, and makes every due merge; false when stopped before the
/// end.
fn pass(db: &redb::Database, shared: &Shared, first: bool) -> Result<bool> {
    let stopped = || shared.stop.load(Ordering::SeqCst);
    let mut resumed = if first {
        shared.turn(|| background::resume(db))?
    } else {
        None
    };
    loop {
        if resumed.is_none() {
            while shared.turn(|| background::collect_garbage(db))? {
                if stopped() {
                    return Ok(false);
                }
            }
        }
        let next = match resumed.take() {
            Some(job) => Some(job),
            None => shared.turn(|| background::begin(db))?,
        };
        let Some(mut job) = next else {
            return Ok(true);
        };
        if !build(db, shared, &mut job, &stopped)? {
            return Ok(false);
        }
        shared.turn(|| job.publish(db))?;
    }
}

/// Writes every slice of `job`'s run; false when stopped first. The next
/// step is read on a thread of its own while the merger waits for its turn
/// and writes this one, so that a turn holds the write lock only to write:
/// a load waits on the turns it gives (see the module comment).
fn build(
    db: &redb::Database,
    shared: &Shared,
    job: &mut Job,
    stopped: &dyn Fn() -> bool,
) -> Result<bool> {
    let mut reader = job.reader();
    std::thread::scope(|scope| {
        // One step ahead at most: its memory is one step's.
        let (send, steps) = std::sync::mpsc::sync_channel(1);
        let read_ahead = std::thread::Builder::new()
            .name("lshdb-merge-reader".to_owned())
            .spawn_scoped(scope, move || {
                while !reader.is_done() {
                    let step = crate::guard::guard(|| reader.read(db));
                    let failed = step.is_err();
                    if send.send(step).is_err() || failed {
                        return;
                    }
                }
            });
        if read_ahead.is_err() {
            // No thread for it: read and write in the turn.
            return build_in_turns(db, shared, job, stopped);
        }
        for step in steps {
            if stopped() {
                return Ok(false); // `steps` dropped: the reader ends
            }
            let step = step?;
            if shared.turn(|| job.write(db, step))? {
                return Ok(true);
            }
        }
        // The reader ended at the last step, which was written.
        Ok(job.is_built())
    })
}

/// [`build`] without a reader thread: each turn reads and writes a step.
fn build_in_turns(
    db: &redb::Database,
    shared: &Shared,
    job: &mut Job,
    stopped: &dyn Fn() -> bool,
) -> Result<bool> {
    loop {
        if stopped() {
            return Ok(false);
        }
        if shared.turn(|| job.step(db))? {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A merger of `steps` turns of `each`, started: its first turn under
    /// way.
    fn merger_taking(steps: u32, each: Duration) -> (Merger, Arc<Shared>) {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let (started, in_turn) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            for step in 0..steps {
                theirs.turn(|| {
                    if step == 0 {
                        started.send(()).unwrap();
                    }
                    std::thread::sleep(each);
                });
            }
        });
        in_turn.recv().unwrap();
        let merger = Merger {
            running: Some(Running {
                shared: Arc::clone(&shared),
                thread,
            }),
            opened_in: std::process::id(),
        };
        (merger, shared)
    }

    /// A merger making a merge of many steps gets turn after turn for
    /// the budget a load gives it, not one per commit.
    #[test]
    fn a_load_gives_turns_for_its_budget() {
        let (merger, shared) = merger_taking(40, Duration::from_millis(20));
        let start = Instant::now();
        merger.give_turns(Duration::from_millis(200));
        let (waited, turns) = (start.elapsed(), *shared.turns.lock());
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!((8..40).contains(&turns), "{turns} turns in {waited:?}");
    }

    /// A load gives the merger the turn it waits for, and does not wait
    /// when the merger wants none.
    #[test]
    fn a_load_waits_for_the_turn_the_merger_asked_for() {
        let (merger, shared) = merger_taking(1, Duration::from_millis(300));
        let start = Instant::now();
        merger.give_turns(Duration::ZERO);
        assert!(
            start.elapsed() >= Duration::from_millis(200),
            "waited for the turn"
        );
        assert_eq!(*shared.turns.lock(), 1);
        let start = Instant::now();
        merger.give_turns(Duration::ZERO);
        assert!(
            start.elapsed() < Duration::from_millis(200),
            "no turn wanted: no wait"
        );
    }
}
