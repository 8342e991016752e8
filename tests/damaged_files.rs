//! Damage done to a closed database file behind lshdb's back — one flipped
//! bit, 16 zeroed bytes, a truncation — at offsets across the whole file.
//! Each damaged copy must end one of these ways:
//!
//! - `Database::open` returns an error (any variant; the summary counts
//!   them by variant);
//! - `check()` fails or reports the damage (`problems`, `storage_ok`);
//! - `check()` is clean and every answer equals the undamaged file's (the
//!   damage hit unused space), or a read refuses with `Error::Corrupted`.
//!
//! Never a hang (each case runs in its own thread under a time limit), never
//! a silently wrong answer from a file `check()` calls clean, and never a
//! panic from lshdb's code (each case runs under `catch_unwind`; the panic
//! hook records where it happened).
//!
//! Known redb issue: redb 4.5's plain `open` trusts a file that was shut
//! down cleanly and reads its pages without verifying their checksums, so a
//! read that meets a damaged B-tree page can panic *inside redb* ("Invalid
//! page type byte", `unreachable!` in the B-tree code). redb documents this
//! (`Database::open`: "may panic if it was corrupted outside redb") and
//! offers `Builder::set_check_integrity_on_open` instead. Those panics are
//! counted and listed as "redb panic (known issue)" and do not fail the test
//! unless `LSHDB_DAMAGE_STRICT=1`; any other panic fails it. See
//! docs/reliability.md. `LSHDB_DAMAGE_VERIFY_ON_OPEN=1` opens each copy
//! with redb's integrity check first, to measure what that option would do.
//!
//! An allocation sized by damaged data would abort the whole process (Rust
//! does not unwind on allocation failure), so a completed run is also the
//! evidence that no case asked for one; the peak resident memory is printed
//! with the summary.
//!
//! The summary is printed with `--nocapture`. Debug builds damage every
//! byte of redb's 320-byte header and one random byte in every 1,024 after
//! it (under a minute on two cores); release builds every byte of the first
//! 4 KiB page and one in every 64:
//! `cargo test --release --test damaged_files -- --nocapture`.
//! `LSHDB_DAMAGE_HEADER` and `LSHDB_DAMAGE_STRIDE` (bytes) override both.

mod common;

use lshdb::hash::SplitMix64;
use lshdb::store::schema::REDB_MAGIC;
use lshdb::{Config, Database, Error, StoredDocument};
use redb::TableDefinition;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Every byte of the first `HEADER` bytes is damaged: redb's header with
/// both commit slots is 320 bytes; the rest of the first page is padding.
const HEADER: usize = if cfg!(debug_assertions) { 320 } else { 4096 };
/// After that, one random byte in every `STRIDE`.
const STRIDE: usize = if cfg!(debug_assertions) { 1024 } else { 64 };
/// A case that takes longer than this is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(10);
/// Every `QUERY_EVERY`th document's text is run as a query.
const QUERY_EVERY: usize = 6;

const FAMILIES: usize = 20;
const MEMBERS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Damage {
    /// Flip one bit (bit `offset % 8` of the byte at `offset`).
    FlipBit,
    /// Overwrite 16 bytes with zeros (fewer at the end of the file).
    Zero16,
    /// Cut the file at `offset`.
    Truncate,
}

impl Damage {
    const ALL: [Damage; 3] = [Damage::FlipBit, Damage::Zero16, Damage::Truncate];

    fn apply(self, original: &[u8], offset: usize) -> Vec<u8> {
        let mut bytes = original.to_vec();
        match self {
            Damage::FlipBit => bytes[offset] ^= 1 << (offset % 8),
            Damage::Zero16 => {
                let end = (offset + 16).min(bytes.len());
                bytes[offset..end].fill(0);
            }
            Damage::Truncate => bytes.truncate(offset),
        }
        bytes
    }
}

/// What one damaged file did.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// `Database::open` returned this error variant.
    OpenError(String),
    /// `check()` itself returned this error variant.
    CheckError(String),
    /// `check()` reported problems or a failed storage check.
    CaughtByCheck,
    /// `check()` was clean and every answer equals the undamaged file's.
    Harmless,
    /// `check()` was clean, no answer differed, but some reads failed with
    /// `Error::Corrupted` (allowed: they refuse rather than guess).
    CleanButReadsCorrupted,
    /// `check()` was clean but an answer differed from the undamaged
    /// file's, or a read failed with something other than `Corrupted`.
    SilentlyWrong(String),
    /// A panic escaped lshdb's API: where it happened and its message.
    Panic { location: String, message: String },
    /// The case did not finish within `CASE_LIMIT`.
    Hang,
}

impl Outcome {
    fn is_redb_panic(&self) -> bool {
        matches!(self, Outcome::Panic { location, .. } if location.contains("/redb-"))
    }

    fn class(&self) -> String {
        match self {
            Outcome::OpenError(v) => format!("open failed: {v}"),
            Outcome::CheckError(v) => format!("check failed: {v}"),
            Outcome::CaughtByCheck => "caught by check".to_owned(),
            Outcome::Harmless => "harmless (clean, same answers)".to_owned(),
            Outcome::CleanButReadsCorrupted => "clean, some reads Corrupted".to_owned(),
            Outcome::SilentlyWrong(_) => "SILENTLY WRONG".to_owned(),
            Outcome::Panic { .. } if self.is_redb_panic() => {
                "redb panic (known redb issue)".to_owned()
            }
            Outcome::Panic { .. } => "PANIC".to_owned(),
            Outcome::Hang => "HANG".to_owned(),
        }
    }
}

/// The variant's name, with redb's own error kind for `Storage`.
fn variant(err: &Error) -> String {
    let name_of = |debug: String| {
        let end = debug
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(debug.len());
        debug[..end].to_owned()
    };
    let name = name_of(format!("{err:?}"));
    match err {
        Error::Storage(inner) => format!("{name}({})", name_of(format!("{inner:?}"))),
        _ => name,
    }
}

/// One read's result, reduced to what must equal the undamaged file's.
type Answer = std::result::Result<String, String>;

fn answer<T: std::fmt::Debug>(result: lshdb::Result<T>) -> Answer {
    result.map(|v| format!("{v:?}")).map_err(|e| variant(&e))
}

/// What the tests read: the length, every key's `contains` and `get`, some
/// text queries, a key query, a SimHash query and the full export. (The
/// posting tables are also walked entirely by `check`.)
fn answers(db: &Database, texts: &[(String, String)]) -> Vec<(String, Answer)> {
    let mut out = Vec::new();
    out.push(("len".to_owned(), answer(db.len())));
    for (key, _) in texts {
        out.push((format!("contains {key}"), answer(db.contains(key))));
        let doc = db
            .get(key)
            .map(|d| d.map(|d: StoredDocument| (d.text, d.shingles, d.simhash)));
        out.push((format!("get {key}"), answer(doc)));
    }
    for (key, text) in texts.iter().step_by(QUERY_EVERY) {
        let hits = db.query(text).threshold(0.5).run().map(|r| {
            r.hits
                .into_iter()
                .map(|h| (h.key, h.similarity.to_bits()))
                .collect::<Vec<_>>()
        });
        out.push((format!("query {key}"), answer(hits)));
    }
    let first = &texts[0].0;
    let hits = db
        .query_key(first)
        .threshold(0.5)
        .run()
        .map(|r| r.hits.into_iter().map(|h| h.key).collect::<Vec<_>>());
    out.push(("query_key".to_owned(), answer(hits)));
    let near = db.query_key(first).near_simhash(3).map(|(hits, _)| hits);
    out.push(("near_simhash".to_owned(), answer(near)));
    let mut exported = Vec::new();
    let walked = db.for_each(|d| {
        exported.push(d);
        true
    });
    out.push(("for_each".to_owned(), answer(walked.map(|()| exported))));
    out
}

/// Opens, reads everything, checks, and compares.
fn run_case(path: &Path, texts: &[(String, String)], baseline: &[(String, Answer)]) -> Outcome {
    let phase = |name| PHASE.with(|p| p.set(name));
    phase("open");
    if verify_on_open() {
        // What lshdb would do if it opened with redb's integrity check.
        let verified = redb::Database::builder()
            .set_check_integrity_on_open(true)
            .open(path);
        if let Err(e) = verified {
            return Outcome::OpenError(format!("verify: {}", variant(&Error::from(e))));
        }
    }
    let mut db = match Database::open(path) {
        Ok(db) => db,
        Err(e) => return Outcome::OpenError(variant(&e)),
    };
    phase("reads");
    let before = answers(&db, texts);
    // The read-only walk must contain every failure too (a panic of the
    // storage engine becomes a problem in its report); its verdict is
    // judged with the page check below.
    phase("read-only check");
    let _ = db.check();
    phase("check");
    let report = match db.check_pages() {
        Ok(report) => report,
        Err(e) => {
            phase("reads after check");
            answers(&db, texts);
            return Outcome::CheckError(variant(&e));
        }
    };
    if !report.is_clean() {
        // `check` may have repaired the file (redb rolls back to the last
        // intact commit): reading the result must not panic either.
        phase("reads after check");
        answers(&db, texts);
        return Outcome::CaughtByCheck;
    }
    let mut corrupted_reads = false;
    for ((what, got), (_, expected)) in before.iter().zip(baseline) {
        match got {
            _ if got == expected => {}
            Err(variant) if variant == "Corrupted" => corrupted_reads = true,
            Ok(_) => return Outcome::SilentlyWrong(format!("{what} answered differently")),
            Err(variant) => return Outcome::SilentlyWrong(format!("{what} failed with {variant}")),
        }
    }
    if corrupted_reads {
        Outcome::CleanButReadsCorrupted
    } else {
        Outcome::Harmless
    }
}

thread_local! {
    /// Where the last panic on this thread happened (set by the hook).
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// The step of the case this thread is in, for the panic report.
    static PHASE: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
    /// Whether this thread runs a damaged case, whose panics are recorded
    /// rather than printed.
    static IN_CASE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_CASE.with(|c| c.get()) {
            return default(info);
        }
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_else(|| "unknown".to_owned());
        let phase = PHASE.with(|p| p.get());
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{location} (in {phase})")));
    }));
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(not a string)".to_owned()
    }
}

/// Runs one damaged copy in its own thread, under `catch_unwind` and
/// `CASE_LIMIT`, and removes the copy.
fn run_guarded(
    path: PathBuf,
    texts: Arc<Vec<(String, String)>>,
    baseline: Arc<Vec<(String, Answer)>>,
) -> Outcome {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        IN_CASE.with(|c| c.set(true));
        let result = catch_unwind(AssertUnwindSafe(|| run_case(&path, &texts, &baseline)));
        let outcome = result.unwrap_or_else(|payload| Outcome::Panic {
            location: LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "unknown".to_owned()),
            message: panic_message(&*payload),
        });
        let _ = std::fs::remove_file(&path);
        let _ = tx.send(outcome);
    });
    // A hung case keeps its thread (and its file); the test fails.
    rx.recv_timeout(CASE_LIMIT).unwrap_or(Outcome::Hang)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn verify_on_open() -> bool {
    env_flag("LSHDB_DAMAGE_VERIFY_ON_OPEN")
}

/// Peak resident memory of this process, from /proc (Linux only).
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_owned())
}

/// A directory for the damaged copies: in memory where there is one (every
/// case opens and closes a file, and redb syncs on both), else the system's
/// temporary directory.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(dir) = tempfile::tempdir_in(shm) {
            return dir;
        }
    }
    tempfile::tempdir().unwrap()
}

/// 60 documents (20 families of 3 near-duplicates) in one batch, then one
/// more inserted and removed, so the file holds freed pages too. Returns the
/// (key, text) pairs, sorted.
fn build(path: &Path) -> Vec<(String, String)> {
    let corpus = common::families(0xda4a, FAMILIES, MEMBERS, 30);
    let config = Config::jaccard(0.6).simhash(3).store_text(true);
    let db = Database::create(path, config).unwrap();
    let mut texts = Vec::new();
    let mut batch = db.batch().unwrap();
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            batch.insert(&common::key(f, m), text).unwrap();
            texts.push((common::key(f, m), text.clone()));
        }
    }
    batch.commit().unwrap();
    db.insert("scratch", "a document that is inserted and removed again")
        .unwrap();
    assert!(db.remove("scratch").unwrap());
    texts.sort();
    texts
}

/// The offsets damaged: every byte of the first `header`, then one random
/// byte (seeded) in every `stride`.
fn offsets(len: usize, header: usize, stride: usize) -> Vec<usize> {
    let mut rng = SplitMix64::new(0x0ff5e7);
    let mut offsets: Vec<usize> = (0..header.min(len)).collect();
    let mut window = header;
    while window < len {
        let width = stride.min(len - window);
        offsets.push(window + (rng.next_u64() % width as u64) as usize);
        window += stride;
    }
    offsets
}

#[test]
fn damaged_files_fail_cleanly() {
    install_panic_hook();
    let dir = scratch_dir();
    let original_path = dir.path().join("original.lshdb");
    let texts = Arc::new(build(&original_path));

    // The undamaged file: clean, and its answers are the reference.
    let baseline = {
        let mut db = Database::open(&original_path).unwrap();
        let baseline = answers(&db, &texts);
        assert!(baseline.iter().all(|(_, a)| a.is_ok()), "{baseline:?}");
        let report = db.check_pages().unwrap();
        assert!(report.is_clean(), "{:?}", report.problems);
        assert_eq!(report.documents, texts.len() as u64);
        baseline
    };
    let baseline = Arc::new(baseline);
    // Every case starts from the file as that open and close left it
    // (redb trims the file's unused tail when it closes).
    let original = std::fs::read(&original_path).unwrap();

    let header = env_usize("LSHDB_DAMAGE_HEADER", HEADER);
    let stride = env_usize("LSHDB_DAMAGE_STRIDE", STRIDE).max(1);
    let offsets = offsets(original.len(), header, stride);
    let cases: Vec<(Damage, usize)> = Damage::ALL
        .iter()
        .flat_map(|&damage| offsets.iter().map(move |&offset| (damage, offset)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(Damage, usize, Outcome)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let (cases, next, results) = (&cases, &next, &results);
            let (texts, baseline, original) = (&texts, &baseline, &original);
            let dir = dir.path();
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(damage, offset)) = cases.get(i) else {
                    break;
                };
                let path = dir.join(format!("case-{worker}-{i}.lshdb"));
                std::fs::write(&path, damage.apply(original, offset)).unwrap();
                let outcome = run_guarded(path, texts.clone(), baseline.clone());
                results.lock().unwrap().push((damage, offset, outcome));
            });
        }
    });
    let elapsed = start.elapsed();
    let mut results = results.into_inner().unwrap();
    results.sort();

    println!(
        "damaged files: {} bytes; {} offsets per damage kind (every byte of the first {}, then \
         one in every {stride}); {} cases in {:.1?} on {workers} threads{}",
        original.len(),
        offsets.len(),
        header.min(original.len()),
        results.len(),
        elapsed,
        if verify_on_open() {
            "; opened with redb's integrity check first"
        } else {
            ""
        }
    );
    let strict = env_flag("LSHDB_DAMAGE_STRICT");
    let mut failures = Vec::new();
    let mut redb_panics: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for damage in Damage::ALL {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for (_, offset, outcome) in results.iter().filter(|r| r.0 == damage) {
            *counts.entry(outcome.class()).or_default() += 1;
            if let Outcome::Panic { location, message } = outcome {
                if outcome.is_redb_panic() {
                    let entry = redb_panics.entry(location.clone()).or_default();
                    entry.0 += 1;
                    if entry.1.is_empty() {
                        entry.1 = format!("first: {damage:?} at {offset}: {message}");
                    }
                    if !strict {
                        continue;
                    }
                }
            }
            if matches!(
                outcome,
                Outcome::SilentlyWrong(_) | Outcome::Panic { .. } | Outcome::Hang
            ) {
                failures.push(format!("{damage:?} at {offset}: {outcome:?}"));
            }
        }
        println!("  {damage:?}:");
        for (class, n) in counts {
            println!("    {n:>6}  {class}");
        }
    }
    // Keyed by "file:line (in step)".
    for (location, (n, first)) in &redb_panics {
        let short = location.rsplit_once("/src/").map_or(&**location, |x| x.1);
        println!("  redb panics at {short}: {n} ({first})");
    }
    if let Some(rss) = peak_rss() {
        println!("  peak resident memory: {rss}");
    }
    for failure in failures.iter().take(50) {
        println!("FAILURE {failure}");
    }
    assert!(failures.is_empty(), "{} failing cases", failures.len());
}

/// The three files that are not (this build's) databases each say so in
/// their own words.
#[test]
fn special_files_have_distinct_messages() {
    let dir = tempfile::tempdir().unwrap();
    let not_lshdb = dir.path().join("text.lshdb");
    std::fs::write(&not_lshdb, b"just some text, not a database\n").unwrap();
    let truncated = dir.path().join("truncated.lshdb");
    std::fs::write(&truncated, &REDB_MAGIC[..4]).unwrap();
    let newer = dir.path().join("newer.lshdb");
    drop(Database::create(&newer, Config::jaccard(0.6)).unwrap());
    {
        let db = redb::Database::open(&newer).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut meta = txn
                .open_table(TableDefinition::<&str, &[u8]>::new("meta"))
                .unwrap();
            let mut value = b"lshdb\0\0\0".to_vec();
            value.extend_from_slice(&(lshdb::FORMAT_VERSION + 1).to_le_bytes());
            meta.insert("format", value.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let message = |path: &Path| Database::open(path).unwrap_err().to_string();
    let (a, b, c) = (message(&not_lshdb), message(&newer), message(&truncated));
    assert!(a.contains("is not an lshdb database"), "{a}");
    let newer_version = format!("format version {}", lshdb::FORMAT_VERSION + 1);
    assert!(b.contains(&newer_version), "{b}");
    assert!(b.contains("upgrade lshdb"), "{b}");
    assert!(c.contains("truncated"), "{c}");
    // Different texts, not only different paths.
    let strip = |m: &str, p: &Path| m.replace(&p.display().to_string(), "");
    let (a, b, c) = (
        strip(&a, &not_lshdb),
        strip(&b, &newer),
        strip(&c, &truncated),
    );
    assert!(a != b && b != c && a != c, "{a} / {b} / {c}");
}

/// A file cut at any of ten lengths, from inside the header to near its
/// end, is damage that says "truncated": opening it (read-only or for
/// writing) fails with `Error::Corrupted`, or `check()` reports it.
#[test]
fn cut_files_say_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.lshdb");
    build(&original);
    let whole = std::fs::read(&original).unwrap();
    let cut = dir.path().join("cut.lshdb");
    for tenth in 0..10 {
        let len = (whole.len() * (2 * tenth + 1) / 20).max(REDB_MAGIC.len() + 1);
        for read_only in [true, false] {
            std::fs::write(&cut, &whole[..len]).unwrap();
            let said = match Database::builder().read_only(read_only).open(&cut) {
                Err(err) => {
                    assert!(matches!(err, Error::Corrupted(_)), "cut at {len}: {err:?}");
                    err.to_string()
                }
                Ok(db) => {
                    let report = db.check().unwrap();
                    assert!(!report.is_clean(), "cut at {len}: {report:?}");
                    report.problems.join("; ")
                }
            };
            assert!(said.contains("truncated"), "cut at {len}: {said}");
        }
    }
}
