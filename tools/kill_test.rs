//! Process-kill test: lshdb never loses an acknowledged write and never
//! leaves half a transaction when the writing process is killed.
//!
//! ```text
//! cargo run --release --example kill_test -- [--kills N] [--seed S] [--path FILE] [--merges]
//! ```
//!
//! The parent creates a database (with maintained clusters), then `--kills`
//! times (default 200): runs this program again as a child that inserts
//! documents in a loop — one durable `insert` at a time, and every eighth
//! operation a `Batch` of three; every third, also a scratch document
//! inserted and removed again, so that kills land in removals and their
//! cluster upkeep too — printing each key on stdout once the call has
//! returned `Ok`; kills the
//! child with SIGKILL after a random delay of 10–300 ms (seeded
//! `SplitMix64`); and reopens the same file to verify it:
//!
//! - every acknowledged key is present, with its text;
//! - every present key is acknowledged, or belongs to the one operation the
//!   child had in flight when it died (it may have committed without being
//!   reported); once seen, such a key stays;
//! - a batch is all there or not at all;
//! - `check()` is clean (which compares the clusters with `groups()`), and
//!   `len()` agrees with the keys found. Scratch keys may be present or
//!   not (a kill between their insert and their removal leaves one).
//!
//! Documents come in a few families of near-duplicates, so clusters form,
//! merge and split.
//!
//! With `--merges` the file has 256 bands of one row, so that its posting
//! runs grow fast enough for background merges (`store/runs/background.rs`)
//! from about 4,000 documents on (a few hundred kills; 40 kills made 654
//! documents and none landed mid-merge): kills land mid-merge too, and the
//! summary says how many did (the file had a merge under way when
//! reopened).
//!
//! It prints one summary line and exits non-zero on any failure. Unix only
//! (it needs SIGKILL). The child mode, `kill_test child FILE ROUND`, is for
//! the parent's use.

use lshdb::hash::{murmur3_32, SplitMix64};
use lshdb::{Batch, Config, Database};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

/// Every `BATCH_EVERY`th operation of a child is a batch of `BATCH_SIZE`.
const BATCH_EVERY: u64 = 8;
const BATCH_SIZE: u64 = 3;
/// A child that was never killed stops by itself after this long.
const CHILD_LIMIT: Duration = Duration::from_secs(30);

const WORDS: &[&str] = &[
    "river", "stone", "lamp", "orbit", "cedar", "quartz", "meadow", "signal", "harbor", "ember",
    "violet", "summit", "canyon", "glacier", "thistle", "lantern", "falcon", "copper", "willow",
    "basalt", "prairie", "comet", "marble", "tundra", "juniper", "beacon", "saffron", "delta",
];

/// The text stored under `key`, a function of the key, so the parent can
/// check what it reads back: one of six families' 30 words, a few of them
/// replaced, and the key (so family members are near-duplicates or not).
fn text_for(key: &str) -> String {
    let mut rng = SplitMix64::new(u64::from(murmur3_32(key.as_bytes(), 7)));
    let mut family = SplitMix64::new(rng.next_u64() % 6);
    let mut words: Vec<&str> = (0..30)
        .map(|_| WORDS[(family.next_u64() % WORDS.len() as u64) as usize])
        .collect();
    for _ in 0..rng.next_u64() % 4 {
        let at = (rng.next_u64() % 30) as usize;
        words[at] = WORDS[(rng.next_u64() % WORDS.len() as u64) as usize];
    }
    words.push(key);
    words.join(" ")
}

/// Every `SCRATCH_EVERY`th operation also inserts and removes a scratch
/// document (key `t…`), unreported.
const SCRATCH_EVERY: u64 = 3;

/// The keys of operation `op` of `round`.
fn op_keys(round: u64, op: u64) -> Vec<String> {
    if op % BATCH_EVERY == BATCH_EVERY - 1 {
        (0..BATCH_SIZE)
            .map(|j| format!("r{round:04}-{op:06}-b{j}"))
            .collect()
    } else {
        vec![format!("r{round:04}-{op:06}")]
    }
}

/// (round, op, whether it is a batch) of a key made by `op_keys`.
fn parse_key(key: &str) -> Option<(u64, u64, bool)> {
    let rest = key.strip_prefix('r')?;
    let (round, rest) = rest.split_once('-')?;
    let (op, batch) = match rest.split_once('-') {
        Some((op, _)) => (op, true),
        None => (rest, false),
    };
    Some((round.parse().ok()?, op.parse().ok()?, batch))
}

fn config() -> Config {
    Config::jaccard(0.7)
        .simhash(3)
        .store_text(true)
        .clusters(true)
}

/// Child: inserts until killed, printing each key once its write returned.
fn child(path: &Path, round: u64) -> Result<(), Error> {
    let db = Database::open(path)?;
    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    let mut op = 0;
    while start.elapsed() < CHILD_LIMIT {
        let keys = op_keys(round, op);
        if keys.len() == 1 {
            db.insert(&keys[0], text_for(&keys[0]).as_str())?;
        } else {
            let mut batch: Batch<'_> = db.batch()?;
            for key in &keys {
                batch.insert(key, text_for(key).as_str())?;
            }
            batch.commit()?;
        }
        if op % SCRATCH_EVERY == SCRATCH_EVERY - 1 {
            let scratch = format!("t{round:04}-{op:06}");
            db.insert(&scratch, text_for(&scratch).as_str())?;
            db.remove(&scratch)?;
        }
        // One write per operation (and a pipe write this small is atomic).
        let lines: String = keys.iter().map(|k| format!("{k}\n")).collect();
        out.write_all(lines.as_bytes())?;
        out.flush()?;
        op += 1;
    }
    Err("the child was not killed".into())
}

/// What the parent knows about the keys so far.
#[derive(Default)]
struct Ledger {
    /// Acknowledged keys (each was printed by the child after `Ok`).
    acknowledged: u64,
    /// Every key that must be present from now on, with the round that
    /// wrote it: acknowledged ones, and unacknowledged ones seen after a
    /// recovery.
    required: HashMap<String, u64>,
    /// Keys that were present without having been acknowledged.
    unacknowledged_present: u64,
    /// Rounds in which the child acknowledged nothing before it died.
    silent_rounds: u64,
    /// Kills that left a background merge under way.
    merges_cut: u64,
    failures: Vec<String>,
}

/// Runs one child, kills it, records what it acknowledged, and verifies
/// the file.
#[cfg(unix)]
fn round(
    exe: &Path,
    path: &Path,
    round: u64,
    delay: Duration,
    ledger: &mut Ledger,
) -> Result<(), Error> {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(exe)
        .arg("child")
        .arg(path)
        .arg(round.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    std::thread::sleep(delay);
    // SIGKILL; an error means it had already exited, which the status shows.
    let _ = child.kill();
    let status = child.wait()?;
    let text = reader.join().map_err(|_| "stdout reader panicked")??;
    ledger.merges_cut += u64::from(merge_under_way(path)?);
    if status.signal() != Some(9) {
        let mut err = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            stderr.read_to_string(&mut err)?;
        }
        ledger.failures.push(format!(
            "round {round}: the child ended by itself ({status}): {}",
            err.trim()
        ));
    }
    // Only whole lines: a line cut by the kill was not acknowledged. A
    // batch is acknowledged by its commit, before any of its keys is
    // printed, so one printed key acknowledges the whole batch.
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    let mut acked_ops = BTreeSet::new();
    for key in complete.lines() {
        match parse_key(key).filter(|k| k.0 == round) {
            Some((_, op, _)) => {
                acked_ops.insert(op);
            }
            None => ledger
                .failures
                .push(format!("round {round}: the child printed {key:?}")),
        }
    }
    // The child works in order: its acknowledged operations are 0..=last.
    let in_flight = acked_ops.last().map_or(0, |op| op + 1);
    if acked_ops.len() as u64 != in_flight {
        ledger.failures.push(format!(
            "round {round}: acknowledged operations are not contiguous"
        ));
    }
    if acked_ops.is_empty() {
        ledger.silent_rounds += 1;
    }
    for op in acked_ops {
        for key in op_keys(round, op) {
            ledger.acknowledged += 1;
            ledger.required.insert(key, round);
        }
    }
    verify(path, round, in_flight, ledger)
}

/// Whether the file has a background merge under way (opened with redb
/// alone, which repairs it after the kill).
fn merge_under_way(path: &Path) -> Result<bool, Error> {
    use redb::{ReadableDatabase, ReadableTableMetadata};
    let raw = redb::Database::open(path)?;
    let txn = raw.begin_read()?;
    Ok(match txn.open_table(lshdb::store::runs::RUN_MERGES) {
        Ok(merges) => !merges.is_empty()?,
        Err(_) => false,
    })
}

/// Reopens the file and checks it against the ledger.
fn verify(path: &Path, round: u64, in_flight: u64, ledger: &mut Ledger) -> Result<(), Error> {
    let mut problems = Vec::new();
    let result = verify_into(path, round, in_flight, ledger, &mut problems);
    ledger
        .failures
        .extend(problems.into_iter().map(|p| format!("round {round}: {p}")));
    result
}

fn verify_into(
    path: &Path,
    round: u64,
    in_flight: u64,
    ledger: &mut Ledger,
    problems: &mut Vec<String>,
) -> Result<(), Error> {
    let mut db = Database::open(path).map_err(|e| format!("reopening failed: {e}"))?;
    // Every required key is there, with its text.
    let mut missing = 0;
    for key in ledger.required.keys() {
        match db.get(key) {
            Ok(Some(doc)) if doc.text.as_deref() == Some(text_for(key).as_str()) => {}
            Ok(Some(_)) => problems.push(format!("{key} has the wrong text")),
            Ok(None) => missing += 1,
            Err(e) => problems.push(format!("get {key}: {e}")),
        }
    }
    if missing > 0 {
        problems.push(format!("{missing} acknowledged keys are missing"));
    }
    // Every present key is accounted for; batches are whole.
    let mut present = Vec::new();
    db.for_each(|doc| {
        present.push(doc.key);
        true
    })?;
    let mut batches: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for key in &present {
        if key.starts_with('t') {
            continue; // a scratch document whose removal a kill cut off
        }
        let Some((r, op, batch)) = parse_key(key) else {
            problems.push(format!("unexpected key {key:?}"));
            continue;
        };
        if batch {
            *batches.entry((r, op)).or_default() += 1;
        }
        if ledger.required.contains_key(key) {
            continue;
        }
        if r == round && op == in_flight {
            // Committed, killed before it said so: it must stay now.
            ledger.unacknowledged_present += 1;
            ledger.required.insert(key.clone(), round);
        } else {
            problems.push(format!(
                "{key} is present but was neither acknowledged nor in flight"
            ));
        }
    }
    for ((r, op), n) in batches {
        if n != BATCH_SIZE {
            problems.push(format!(
                "batch {op} of round {r} has {n} of {BATCH_SIZE} keys"
            ));
        }
    }
    let len = db.len()?;
    if len != present.len() as u64 {
        problems.push(format!("len() is {len}, {} keys found", present.len()));
    }
    let report = db.check_pages()?;
    if !report.is_clean() {
        problems.push(format!(
            "check: storage_ok {}, {} problems: {:?}",
            report
                .storage_ok
                .map_or("not run".into(), |ok| ok.to_string()),
            report.problem_count,
            report.problems.iter().take(5).collect::<Vec<_>>()
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn parent(args: &[String]) -> Result<bool, Error> {
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let kills: u64 = flag("--kills").map_or(Ok(200), |s| s.parse())?;
    let seed: u64 = flag("--seed").map_or(Ok(1), |s| s.parse())?;
    let dir = tempfile::tempdir()?;
    let path = flag("--path").map_or_else(|| dir.path().join("kill.lshdb"), PathBuf::from);
    if path.exists() {
        return Err(format!("{} exists; give a new path", path.display()).into());
    }
    // Created here, so that no kill lands inside `create`.
    let config = if args.iter().any(|a| a == "--merges") {
        config().num_perm(256).bands(256, 1)
    } else {
        config()
    };
    drop(Database::create(&path, config)?);
    let exe = std::env::current_exe()?;
    let mut rng = SplitMix64::new(seed);
    let mut ledger = Ledger::default();
    let start = Instant::now();
    for r in 0..kills {
        let delay = Duration::from_millis(10 + rng.next_u64() % 291);
        if let Err(e) = round(&exe, &path, r, delay, &mut ledger) {
            ledger.failures.push(format!("round {r}: {e}"));
            break;
        }
        if (r + 1) % 25 == 0 {
            eprintln!(
                "{} kills, {} keys acknowledged, {} failures",
                r + 1,
                ledger.acknowledged,
                ledger.failures.len()
            );
        }
    }
    for failure in ledger.failures.iter().take(20) {
        eprintln!("FAILURE {failure}");
    }
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "kill_test: {kills} kills (seed {seed}), {} keys acknowledged, {} more present \
         (committed but killed before acknowledging), {} documents, {} rounds killed before \
         the first acknowledgement, {} kills mid-merge, file {size} bytes, {:.1?}; failures: {}",
        ledger.acknowledged,
        ledger.unacknowledged_present,
        ledger.required.len(),
        ledger.silent_rounds,
        ledger.merges_cut,
        start.elapsed(),
        ledger.failures.len()
    );
    Ok(ledger.failures.is_empty())
}

#[cfg(not(unix))]
fn parent(_: &[String]) -> Result<bool, Error> {
    Err("kill_test needs Unix signals".into())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("child") => match (args.get(1), args.get(2).map(|r| r.parse::<u64>())) {
            (Some(path), Some(Ok(round))) => child(Path::new(path), round).map(|()| true),
            _ => Err("usage: kill_test child FILE ROUND".into()),
        },
        _ => parent(&args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("kill_test: {e}");
            ExitCode::from(2)
        }
    }
}
