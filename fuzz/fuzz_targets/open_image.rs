//! Arbitrary bytes as a database image, through an in-memory storage
//! backend: `Builder::open_with_backend`, and when that succeeds `check`,
//! `len`, `get`, a query, a query by key and `for_each`. Errors are fine;
//! a panic or a hang is not. Seed the corpus with real images
//! (fuzz/make_seeds.sh), or the fuzzer rarely gets past redb's header.
//!
//! Known redb issue (tests/damaged_files.rs, docs/reliability.md): redb
//! 4.5 trusts the pages of a cleanly closed file and may panic *inside
//! redb* on a damaged B-tree page; lshdb's entry points catch such a panic
//! (src/guard.rs) and return `Error::Corrupted`. libFuzzer's own panic hook
//! aborts before any unwinding, so this target chains a hook in front of
//! it: a panic located in redb's sources is counted and left to unwind into
//! lshdb's guard (exercising it); any other panic — lshdb's own included,
//! which the guard would otherwise hide — aborts and is a crash. Set
//! `LSHDB_FUZZ_STRICT=1` to make redb's panics crashes too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lshdb::Database;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Once;

/// Whether a panic in redb's sources happened during this input (on any
/// thread: rayon workers propagate their panics to the caller).
static REDB_PANIC: AtomicBool = AtomicBool::new(false);
static REDB_PANICS: AtomicU64 = AtomicU64::new(0);

/// Chains a hook in front of libFuzzer's (which aborts): a panic located
/// in redb is counted and left to unwind to the `catch_unwind` below.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("LSHDB_FUZZ_STRICT").is_some() {
            return;
        }
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_redb = info.location().is_some_and(|l| l.file().contains("/redb-"));
            if in_redb {
                REDB_PANIC.store(true, Ordering::SeqCst);
                let n = REDB_PANICS.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    eprintln!("known redb issue: panic #{n} inside redb: {info}");
                }
            } else {
                fuzzer_hook(info);
            }
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    install_hook();
    REDB_PANIC.store(false, Ordering::SeqCst);
    let result = catch_unwind(AssertUnwindSafe(|| exercise(data)));
    if result.is_err() && !REDB_PANIC.load(Ordering::SeqCst) {
        // Not redb's: libFuzzer's hook has already aborted; be sure.
        std::process::abort();
    }
});

fn exercise(image: &[u8]) {
    let Ok(mut db) = Database::builder()
        .cache_bytes(1 << 20)
        .open_with_backend(MemBackend::new(image.to_vec()))
    else {
        return;
    };
    let _ = db.check_pages();
    let _ = db.len();
    let _ = db.get("a");
    let _ = db
        .query("the quick brown fox jumps over the lazy dog")
        .run();
    let _ = db.query_key("a").run();
    let mut budget = 10_000;
    let _ = db.for_each(|_| {
        budget -= 1;
        budget > 0
    });
}

#[path = "common/mem_backend.rs"]
mod mem_backend;
use mem_backend::MemBackend;
