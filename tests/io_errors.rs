//! I/O errors: a failing `write`, `set_len` or `sync_data` makes the
//! operation that hit it return an error — never a panic — poisons the
//! handle, and leaves a file that reopens consistent.
//!
//! The scripted workload of `crash_consistency.rs` (create, about ten
//! transactions, the close) runs on [`FaultyBackend`] with one transient
//! fault: the n-th call of one kind returns an `io::Error` and changes
//! nothing, every other call works. Every n over the calls the workload
//! makes is tested, for each of the three kinds. For each run:
//!
//! * nothing panics (every step runs under `catch_unwind`);
//! * the operation during which the fault fired returns an error, and
//!   every operation before it returned `Ok`;
//! * every later write on the same handle — the rest of the script,
//!   `compact`, `batch` — is refused. lshdb refuses them itself with
//!   [`Error::Poisoned`]: the failed write poisoned the handle, and every
//!   write path checks the poison before it reaches redb. redb's own
//!   refusal (`PreviousIo`, as [`Error::Storage`]) would also be an
//!   acceptable error; the test counts which one was seen;
//! * reads on the poisoned handle (`get`, `contains`, `len`, `for_each`, a
//!   query, `stats`, `check`) return `Ok` or `Err`, never panic;
//! * after the handle is dropped, the live image — the bytes on "disk" as
//!   they are, since nothing cut the power — reopens on a healthy backend,
//!   passes `check`, holds the state after every acknowledged operation and
//!   possibly the failed one (a commit whose data and header were all
//!   written before its sync failed is on disk: a failed fsync leaves the
//!   outcome unknown, never half-applied), and takes a new write.
//!
//! A fault in `create` makes it fail; the image then reopens empty or is
//! refused as [`Error::NotADatabase`]. A fault in the close (the drop)
//! can only be seen in the image, which must hold the whole script.
//!
//! A second test checks the errors of `Builder::create_with_backend` and
//! `Builder::open_with_backend`.

mod common_backend;

use common_backend::workload::{self, reference, script, verify_image, Observed, Recovered};
use common_backend::{Call, Fault, FaultyBackend};
use lshdb::{Database, Error};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Where the fault fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    /// In `create`, which failed.
    Create,
    /// In the script's operation at this index, which failed.
    Op(usize),
    /// In the close, after every operation was acknowledged.
    Close,
}

/// What one fault run saw.
#[derive(Debug)]
struct Run {
    hit: Hit,
    /// Later writes refused as `Poisoned`.
    poisoned: u64,
    /// Later writes refused by redb (`PreviousIo`).
    previous_io: u64,
    /// Reads on the poisoned handle that returned an error.
    read_errors: u64,
}

/// Every write the handle offers, after the failure: the rest of the
/// script and the writes outside it. Each must fail.
fn later_writes(db: &mut Database, after: usize, run: &mut Run) -> Result<(), String> {
    let mut results: Vec<(String, lshdb::Result<()>)> = script()
        .iter()
        .skip(after + 1)
        .map(|op| (format!("{op:?}"), workload::apply(db, op)))
        .collect();
    results.push(("insert".into(), db.insert("later", workload::TEXTS[2])));
    results.push(("remove".into(), db.remove("a").map(|_| ())));
    results.push(("batch".into(), db.batch().map(|_| ())));
    results.push(("compact".into(), db.compact().map(|_| ())));
    results.push(("reband".into(), db.reband(0.7, None)));
    for (what, result) in results {
        match result {
            Err(Error::Poisoned(_)) => run.poisoned += 1,
            Err(Error::Storage(redb::Error::PreviousIo)) => run.previous_io += 1,
            Err(e) => return Err(format!("{what} after the failure: unexpected error {e}")),
            Ok(()) => return Err(format!("{what} after the failure was accepted")),
        }
    }
    Ok(())
}

/// Reads on the poisoned handle: any result but a panic; and what they
/// show, when they work, is the state before or after the failed
/// operation (`states[failed..=failed + 1]`), never part of it.
fn reads(
    db: &mut Database,
    failed: usize,
    states: &[Observed],
    run: &mut Run,
) -> Result<(), String> {
    match workload::observe(db) {
        Ok(seen) if states[failed..=failed + 1].contains(&seen) => {}
        Ok(seen) => return Err(format!("the poisoned handle shows neither state: {seen:?}")),
        Err(_) => run.read_errors += 1,
    }
    let results = [
        db.get("a").err(),
        db.contains("b").err(),
        db.len().err(),
        db.for_each(|_| true).err(),
        db.query(workload::QUERY).run().err(),
        db.stats().err(),
        db.check_pages().err(),
    ];
    run.read_errors += results.iter().filter(|e| e.is_some()).count() as u64;
    Ok(())
}

/// Runs the workload with `fault`; Err describes a broken promise.
fn fault_run(fault: Fault, backend: &FaultyBackend, states: &[Observed]) -> Result<Run, String> {
    let mut run = Run {
        hit: Hit::Close,
        poisoned: 0,
        previous_io: 0,
        read_errors: 0,
    };
    let mut db = match Database::builder().create_with_backend(backend.clone(), workload::config())
    {
        Ok(db) => db,
        Err(_) if backend.injected() > 0 => {
            run.hit = Hit::Create;
            return Ok(run);
        }
        Err(e) => return Err(format!("create failed without a fault: {e}")),
    };
    if backend.injected() > 0 {
        return Err("create returned Ok though a call failed".into());
    }
    for (i, op) in script().iter().enumerate() {
        let result = workload::apply(&mut db, op);
        match (result, backend.injected() > 0) {
            (Ok(()), false) => {}
            (Ok(()), true) => return Err(format!("{op:?} returned Ok though a call failed")),
            (Err(e), false) => return Err(format!("{op:?} failed without a fault: {e}")),
            (Err(_), true) => {
                run.hit = Hit::Op(i);
                later_writes(&mut db, i, &mut run)?;
                reads(&mut db, i, states, &mut run)?;
                break;
            }
        }
    }
    drop(db);
    if run.hit == Hit::Close && backend.injected() == 0 {
        return Err(format!("{fault:?} was never reached"));
    }
    Ok(run)
}

#[test]
fn every_failing_call_is_an_error_and_leaves_a_consistent_file() {
    let start = Instant::now();
    let (states, counts) = reference();
    let ops = script().len();
    let (mut in_create, mut in_ops, mut in_close) = (0u64, 0u64, 0u64);
    let (mut poisoned, mut previous_io, mut read_errors) = (0u64, 0u64, 0u64);
    let mut recovered = [0u64; 3];
    let mut failures = Vec::new();
    for kind in Call::ALL {
        for n in 1..=counts[kind.index()] {
            let fault = Fault::FailOnce(kind, n);
            let backend = FaultyBackend::with_fault(fault);
            let run = match catch_unwind(AssertUnwindSafe(|| fault_run(fault, &backend, &states))) {
                Ok(Ok(run)) => run,
                Ok(Err(why)) => {
                    failures.push(format!("{fault:?}: {why}"));
                    continue;
                }
                Err(_) => {
                    failures.push(format!("{fault:?}: panicked"));
                    continue;
                }
            };
            assert_eq!(
                backend.injected(),
                1,
                "{fault:?}: a transient fault fires once"
            );
            poisoned += run.poisoned;
            previous_io += run.previous_io;
            read_errors += run.read_errors;
            let (created, lo, hi) = match run.hit {
                Hit::Create => {
                    in_create += 1;
                    (false, 0, 0)
                }
                Hit::Op(i) => {
                    in_ops += 1;
                    (true, i, i + 1)
                }
                Hit::Close => {
                    in_close += 1;
                    (true, ops, ops)
                }
            };
            match verify_image(&backend.live_image(), lo, hi, created, &states) {
                Ok(outcome) => {
                    recovered[match outcome {
                        Recovered::Acknowledged => 0,
                        Recovered::InFlight => 1,
                        Recovered::NotADatabase => 2,
                    }] += 1
                }
                Err(why) => failures.push(format!("{fault:?} ({:?}), reopened: {why}", run.hit)),
            }
        }
    }
    println!(
        "failing calls tested: {} writes, {} set_len, {} syncs in {:.1?}",
        counts[0],
        counts[1],
        counts[2],
        start.elapsed()
    );
    println!("fault in create: {in_create}, in an operation: {in_ops}, in the close: {in_close}");
    println!(
        "later writes refused: {poisoned} as Poisoned, {previous_io} as PreviousIo; \
         reads on a poisoned handle that erred: {read_errors}"
    );
    println!(
        "reopened: {} at the acknowledged state, {} with the failed operation applied, \
         {} not an lshdb database",
        recovered[0], recovered[1], recovered[2]
    );
    assert!(in_ops > 0);
    let runs = counts.iter().sum::<u64>();
    workload::assert_none_failed(&failures, runs, "fault runs broke a promise");
}

/// The errors of the backend constructors, which have no path to check.
#[test]
fn backend_constructors_refuse_what_they_cannot_use() {
    let not_db = |image: &[u8]| match Database::builder()
        .open_with_backend(FaultyBackend::from_image(image))
    {
        Err(Error::NotADatabase { path, reason }) => {
            assert_eq!(path, std::path::Path::new("<backend>"));
            reason
        }
        other => panic!("expected NotADatabase, got {other:?}"),
    };
    assert_eq!(not_db(b""), "the file is empty");
    match Database::builder().open_with_backend(FaultyBackend::from_image(b"redb")) {
        Err(Error::Corrupted(what)) => assert!(what.contains("truncated"), "{what}"),
        other => panic!("expected Corrupted, got {other:?}"),
    }
    assert_eq!(
        not_db(b"not a database at all"),
        "it does not start with a database header"
    );
    // A redb database without lshdb's metadata.
    let plain = FaultyBackend::new();
    drop(
        redb::Database::builder()
            .create_with_backend(plain.clone())
            .unwrap(),
    );
    assert!(not_db(&plain.live_image()).starts_with("a redb database without lshdb metadata"));

    // Create refuses a backend that holds anything.
    let backend = FaultyBackend::new();
    drop(
        Database::builder()
            .create_with_backend(backend.clone(), workload::config())
            .unwrap(),
    );
    let image = backend.live_image();
    assert!(matches!(
        Database::builder()
            .create_with_backend(FaultyBackend::from_image(&image), workload::config()),
        Err(Error::FileExists { .. })
    ));
    // Open checks the stored configuration like a file's.
    assert!(matches!(
        Database::builder()
            .expect(lshdb::Config::jaccard(0.8))
            .open_with_backend(FaultyBackend::from_image(&image)),
        Err(Error::ConfigMismatch { .. })
    ));
    let db = Database::builder()
        .expect(workload::config())
        .cache_bytes(1 << 20)
        .open_with_backend(FaultyBackend::from_image(&image))
        .unwrap();
    assert!(db.is_empty().unwrap());
    // A backend whose storage fails at once.
    let dead = FaultyBackend::with_fault(Fault::CutAt(Call::Write, 1));
    assert!(Database::builder()
        .create_with_backend(dead, workload::config())
        .is_err());
}
