//! Ctrl-C (SIGINT): every command ends promptly, keeps what it committed,
//! and says so; a second Ctrl-C ends the program at once.
//!
//! The design, chosen for being simple and correct:
//!
//! - [`install`] sets the handler once, at the start of `main`, for every
//!   command. It is a thread of its own (the `ctrlc` crate), so it runs even
//!   while the main thread is blocked, for example reading standard input.
//! - A command that checks for Ctrl-C in its loops calls
//!   [`catch_interrupt`] first, and then [`interrupted`] between units of
//!   work (commits, queries, pairs). On Ctrl-C it finishes the current unit,
//!   prints what was done and committed, and exits with 130.
//! - A command that never checks (it is short, or one indivisible step such
//!   as `compact` or `rebuild`) is ended by the first Ctrl-C at once. redb
//!   commits are atomic, so its file keeps its last committed state.
//! - A checking command may be blocked where it cannot check (waiting for
//!   input on a pipe nobody writes to, or walking a large folder). So the
//!   first Ctrl-C also starts a grace period of [`GRACE`]: when the command
//!   has not noticed the interruption by then ([`interrupted`] returned
//!   true), the program exits with 130 by itself, after printing the last
//!   progress note the command left with [`note_progress`] (for example how
//!   many documents are committed). Data read but not committed is not
//!   stored, which is what "committed" means.
//! - The second Ctrl-C exits with 130 at once, whatever is going on.
//!
//! Exiting in the middle of a write transaction is safe: redb discards an
//! uncommitted transaction, and the file keeps its last committed state.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The exit code of an interrupted command (128 + SIGINT, as shells do).
pub const EXIT_CODE: u8 = 130;

/// How long a checking command may take to notice Ctrl-C before the
/// program exits by itself.
pub const GRACE: Duration = Duration::from_secs(2);

/// Ctrl-C presses so far.
static PRESSES: AtomicU32 = AtomicU32::new(0);
/// Whether the running command checks [`interrupted`].
static CHECKING: AtomicBool = AtomicBool::new(false);
/// Whether the command has seen the interruption (and will end by itself).
static NOTICED: AtomicBool = AtomicBool::new(false);
/// What the command has done and committed so far, for the message of an
/// exit it did not see coming.
static PROGRESS: Mutex<Option<String>> = Mutex::new(None);

/// Installs the handler; call once, first thing.
pub fn install() {
    let _ = ctrlc::set_handler(on_signal);
}

/// Declares that the running command checks [`interrupted`] in its loops,
/// so the first Ctrl-C lets it finish its current unit of work.
pub fn catch_interrupt() {
    CHECKING.store(true, Ordering::SeqCst);
}

/// Whether Ctrl-C was pressed. A true answer counts as noticing it: the
/// caller must then stop without waiting for input.
pub fn interrupted() -> bool {
    let pressed = PRESSES.load(Ordering::SeqCst) > 0;
    if pressed {
        NOTICED.store(true, Ordering::SeqCst);
    }
    pressed
}

/// Records what the command has committed so far, printed if the program
/// has to exit before the command notices Ctrl-C. A phrase such as
/// `added 10 document(s) (0 replaced) in 2 commit(s)`.
pub fn note_progress(note: impl Into<String>) {
    if let Ok(mut slot) = PROGRESS.lock() {
        *slot = Some(note.into());
    }
}

/// The line printed when the program exits without the command's own
/// summary.
fn exit_message() -> String {
    let note = PROGRESS.lock().ok().and_then(|slot| slot.clone());
    match note {
        Some(note) => {
            format!("lshdb: interrupted: stopping now; {note}, committed and kept")
        }
        None => {
            "lshdb: interrupted: stopping now; the file keeps its last committed state".to_owned()
        }
    }
}

fn on_signal() {
    let presses = PRESSES.fetch_add(1, Ordering::SeqCst) + 1;
    if presses > 1 {
        eprintln!("lshdb: interrupted again: stopping now; committed data is safe");
        std::process::exit(EXIT_CODE.into());
    }
    if !CHECKING.load(Ordering::SeqCst) {
        eprintln!("{}", exit_message());
        std::process::exit(EXIT_CODE.into());
    }
    // The handler thread must stay free for a second Ctrl-C.
    std::thread::spawn(|| {
        std::thread::sleep(GRACE);
        if !NOTICED.load(Ordering::SeqCst) {
            eprintln!("{}", exit_message());
            std::process::exit(EXIT_CODE.into());
        }
    });
}
