//! Ctrl-C (SIGINT): every command ends promptly, keeps what it committed,
//! says so, and leaves the database closed cleanly; a second Ctrl-C ends
//! the program at once.
//!
//! Why "closed cleanly" matters: a database is opened for writing in a mode
//! that lets other processes read it meanwhile, and a writer that ends
//! without closing (killed, or `exit` while the file is open) leaves the
//! file needing a repair that only a writer can make — read-only commands
//! refuse it until then. Committed data is never lost either way.
//!
//! The design:
//!
//! - The run's [`Interrupt`] (owned by its context, never a global) is
//!   shared with the handler, which [`Interrupt::install`] sets once, at
//!   the start of `main`. It runs on a thread of its own (the `ctrlc`
//!   crate), so it runs even while the main thread is blocked.
//! - A command that opens the database for writing says so
//!   ([`Interrupt::writing`], called by `args::open_waiting`). The first
//!   Ctrl-C then never ends the program: the command notices it
//!   ([`Interrupt::interrupted`]) between units of work (commits,
//!   documents), finishes the current one, prints what is committed,
//!   returns — which closes the database — and exits with 130. A write
//!   command that is one indivisible step (`compact`, `rebuild`, `check
//!   --pages`) finishes that step. Input that could block (standard input,
//!   a pipe) is read on a thread of its own ([`Interrupt::interruptible`],
//!   [`Interrupt::unless_interrupted`]), so the main thread never waits
//!   where it cannot look. A named input is opened before the database:
//!   opening a FIFO waits for its writer, which Ctrl-C then ends at once,
//!   with nothing held.
//! - A command that only reads (its handle is read-only; nothing needs
//!   closing) and checks [`Interrupt::interrupted`] in its loops
//!   ([`Interrupt::catch_interrupt`]) gets a grace period of [`GRACE`] to
//!   notice; a read command that never checks is ended at once. Either way
//!   it prints the last progress note ([`Interrupt::note_progress`]) and
//!   exits with 130.
//! - The second Ctrl-C exits with 130 at once, whatever is going on. If a
//!   database was open for writing, the message says how to repair it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The exit code of an interrupted command (128 + SIGINT, as shells do).
pub const EXIT_CODE: u8 = 130;

/// How long a checking command may take to notice Ctrl-C before the
/// program exits by itself.
pub const GRACE: Duration = Duration::from_secs(2);

/// The Ctrl-C state of one run, shared (cheaply cloned) between the
/// command and the handler.
#[derive(Clone, Default)]
pub struct Interrupt(Arc<State>);

#[derive(Default)]
struct State {
    /// Ctrl-C presses so far.
    presses: AtomicU32,
    /// Whether the running command checks [`Interrupt::interrupted`].
    checking: AtomicBool,
    /// Whether the running command has a database open for writing.
    writing: AtomicBool,
    /// Whether the command has seen the interruption (and will end by
    /// itself).
    noticed: AtomicBool,
    /// What the command has done and committed so far, for the message of
    /// an exit it did not see coming.
    progress: Mutex<Option<String>>,
}

impl Interrupt {
    /// Installs the handler; call once, first thing. `opened` is the
    /// database file the command opens (the run's context), named in the
    /// message of a second Ctrl-C.
    pub fn install(&self, opened: Arc<OnceLock<PathBuf>>) {
        let state = self.clone();
        let _ = ctrlc::set_handler(move || state.on_signal(opened.get().map(PathBuf::as_path)));
    }

    /// Declares that the running command checks [`Interrupt::interrupted`]
    /// in its loops, so the first Ctrl-C lets it finish its current unit of
    /// work.
    pub fn catch_interrupt(&self) {
        self.0.checking.store(true, Ordering::SeqCst);
    }

    /// Declares that the running command has a database open for writing:
    /// the first Ctrl-C must then let it close the database (see the module
    /// comment).
    pub fn writing(&self) {
        self.0.writing.store(true, Ordering::SeqCst);
    }

    /// Runs `input` on a thread of its own and yields its items here,
    /// ending early (as if the input ended) once Ctrl-C is pressed: a
    /// command waiting for input that does not come (a pipe nobody writes
    /// to) then still notices Ctrl-C, commits what it has and closes the
    /// database.
    pub fn interruptible<T: Send + 'static>(
        &self,
        input: impl Iterator<Item = T> + Send + 'static,
    ) -> impl Iterator<Item = T> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1024);
        std::thread::spawn(move || {
            for item in input {
                if sender.send(item).is_err() {
                    break;
                }
            }
        });
        let state = self.clone();
        std::iter::from_fn(move || loop {
            if state.interrupted() {
                return None;
            }
            match receiver.recv_timeout(Duration::from_millis(50)) {
                Ok(item) => return Some(item),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        })
    }

    /// Runs `work` on a thread of its own and waits for it here, looking
    /// for Ctrl-C meanwhile: `None` when Ctrl-C came first. For one step
    /// that may wait without end while a database is open for writing
    /// (reading the first bytes of standard input, or of a FIFO whose
    /// writer says nothing): the command then still ends promptly and
    /// closes the database. The thread is left waiting; the program ends
    /// soon after.
    pub fn unless_interrupted<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let worker = std::thread::spawn(move || {
            let _ = sender.send(work());
        });
        loop {
            if self.interrupted() {
                return None;
            }
            match receiver.recv_timeout(Duration::from_millis(50)) {
                Ok(done) => return Some(done),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                // The work panicked: so does the caller.
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
                    Err(panic) => std::panic::resume_unwind(panic),
                    Ok(()) => unreachable!("the worker sends before it ends"),
                },
            }
        }
    }

    /// Whether Ctrl-C was pressed. A true answer counts as noticing it:
    /// the caller must then stop without waiting for input.
    pub fn interrupted(&self) -> bool {
        let pressed = self.0.presses.load(Ordering::SeqCst) > 0;
        if pressed {
            self.0.noticed.store(true, Ordering::SeqCst);
        }
        pressed
    }

    /// Records what the command has committed so far, printed if the
    /// program has to exit before the command notices Ctrl-C. A phrase
    /// such as `added 10 document(s) (0 replaced) in 2 commit(s)`.
    pub fn note_progress(&self, note: impl Into<String>) {
        if let Ok(mut slot) = self.0.progress.lock() {
            *slot = Some(note.into());
        }
    }

    /// The line printed when the program exits without the command's own
    /// summary.
    fn exit_message(&self) -> String {
        let note = self.0.progress.lock().ok().and_then(|slot| slot.clone());
        match note {
            Some(note) => {
                format!("lshdb: interrupted: stopping now; {note}, committed and kept")
            }
            None => "lshdb: interrupted: stopping now; the file keeps its last committed state"
                .to_owned(),
        }
    }

    fn on_signal(&self, opened: Option<&Path>) {
        let presses = self.0.presses.fetch_add(1, Ordering::SeqCst) + 1;
        let writing = self.0.writing.load(Ordering::SeqCst);
        if presses > 1 {
            match (writing, opened) {
                (true, Some(path)) => eprintln!(
                    "lshdb: interrupted again: stopping now; committed data is safe, but the \
                     database was not closed: the next command that may write it repairs it, \
                     for example `lshdb check --pages {}`",
                    crate::output::shell_arg(&path.to_string_lossy())
                ),
                _ => eprintln!("lshdb: interrupted again: stopping now; committed data is safe"),
            }
            std::process::exit(EXIT_CODE.into());
        }
        let checking = self.0.checking.load(Ordering::SeqCst);
        if writing {
            // The command ends by itself once its current step is done.
            if !checking {
                eprintln!(
                    "lshdb: interrupted: finishing the current step so that the database is \
                     closed cleanly; press Ctrl-C again to stop at once"
                );
            }
            return;
        }
        if !checking {
            eprintln!("{}", self.exit_message());
            std::process::exit(EXIT_CODE.into());
        }
        // The handler thread must stay free for a second Ctrl-C.
        let state = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            if !state.0.noticed.load(Ordering::SeqCst) {
                eprintln!("{}", state.exit_message());
                std::process::exit(EXIT_CODE.into());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state is the run's, not the process's: a press seen by one
    /// `Interrupt` (and its clones, such as the handler's) is not seen by
    /// another, and stops only its readers.
    #[test]
    fn each_run_has_its_own_state() {
        let pressed = Interrupt::default();
        let handler = pressed.clone();
        let other = Interrupt::default();
        handler.0.presses.fetch_add(1, Ordering::SeqCst);
        assert!(pressed.interrupted());
        assert!(handler.0.noticed.load(Ordering::SeqCst));
        assert!(!other.interrupted());
        assert_eq!(pressed.interruptible(0..3).count(), 0);
        assert_eq!(other.interruptible(0..3).count(), 3);
        assert_eq!(pressed.unless_interrupted(|| 1), None);
        assert_eq!(other.unless_interrupted(|| 1), Some(1));
    }
}
