//! Resuming `lshdb dedup --db`: a day-2 run stopped (SIGKILL, Ctrl-C) or
//! failed, then run again, writes exactly the outputs of an uninterrupted
//! day-2 run — records stored by day 1 stay day 1's, and the unfinished
//! run's are not taken for kept.
#![cfg(unix)]

mod cli_support;

use cli_support::process::{send, wait_ended};
use cli_support::records::text;
use cli_support::Cli;
use std::time::Duration;

fn near(seed: u64, variant: u64) -> String {
    let mut t = text(seed);
    t.replace_range(0..4, &format!("{:04}", variant % 10_000));
    t
}

fn line(id: &str, text: &str) -> String {
    format!("{}\n", serde_json::json!({"id": id, "text": text}))
}

/// Day 1: 40 distinct records.
fn day1() -> String {
    (0..40)
        .map(|i| line(&format!("d1-{i}"), &text(i)))
        .collect()
}

/// Day 2: day-1 records seen again, near-duplicates of day 1's, new
/// records and near-duplicates of new records, interleaved.
fn day2() -> String {
    let mut out = String::new();
    for i in 0..30u64 {
        out += &line(&format!("d2-{i}"), &text(1000 + i));
        if i < 10 {
            out += &line(&format!("d1-{i}"), &text(i)); // seen on day 1
        }
        if i % 3 == 0 {
            out += &line(&format!("near1-{i}"), &near(10 + i, i));
        }
        if i >= 2 && i % 2 == 0 {
            out += &line(&format!("near2-{i}"), &near(1000 + i - 2, i));
            out += &line(&format!("near2b-{i}"), &near(1000 + i - 1, i + 7));
        }
    }
    out
}

/// The outputs of day 2 (kept, dropped) run on `db` with `input` on
/// standard input.
fn outputs(cli: &Cli, db: &str, input: &str, extra: &[&str]) -> (String, String) {
    let mut args = dedup_args("-", db, &DAY_TWO_OUTPUTS);
    args.extend_from_slice(extra);
    cli.run_stdin(&args, input).ok();
    (cli.read("k.jsonl"), cli.read("d.jsonl"))
}

/// The outputs of a day-2 run, one record a commit.
const DAY_TWO_OUTPUTS: [&str; 6] = ["--out", "k.jsonl", "--dropped", "d.jsonl", "--batch", "1"];

/// `dedup INPUT --db DB --id-field id EXTRA…`.
fn dedup_args<'a>(input: &'a str, db: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["dedup", input, "--db", db, "--id-field", "id"];
    args.extend_from_slice(extra);
    args
}

/// Day 1 run into `db`.
fn day_one(cli: &Cli, db: &str) {
    cli.run_stdin(&dedup_args("-", db, &[]), &day1()).ok();
}

/// Starts day 2 on standard input, feeds the first `n` lines, waits, and
/// sends `signal`; returns whether the run was stopped after storing some
/// day-2 records (false: too early, the handler was not installed yet).
fn stopped_day_two(cli: &Cli, db: &str, n: usize, signal: &str, pause: u64) -> bool {
    let _ = std::fs::remove_file(cli.path("k.jsonl"));
    let head: String = day2().lines().take(n).map(|l| format!("{l}\n")).collect();
    let (mut child, stdin) = cli.spawn_fed(&dedup_args("-", db, &DAY_TWO_OUTPUTS), &head);
    std::thread::sleep(Duration::from_millis(pause));
    send(&child, signal);
    wait_ended(&mut child, Duration::from_secs(20), "still running");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    if signal == "-INT" {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(130) {
            return false;
        }
        assert!(
            stderr.contains("interrupted: no output was written"),
            "{stderr}"
        );
    }
    assert!(!cli.path("k.jsonl").exists(), "no output after a stop");
    // Opened for writing: a killed writer's file is repaired.
    let stored = lshdb::Database::open(cli.path(db)).unwrap().len().unwrap();
    stored > 40
}

#[test]
fn a_day_two_run_killed_or_interrupted_resumes_to_an_uninterrupted_runs_outputs() {
    let cli = Cli::new();
    day_one(&cli, "ref.lshdb");
    let (kept, dropped) = outputs(&cli, "ref.lshdb", &day2(), &[]);
    assert!(kept.lines().count() >= 30 && dropped.lines().count() >= 20);
    for signal in ["-KILL", "-INT"] {
        let mut stopped = false;
        for pause in [1500, 4000, 8000] {
            let db = format!("db{signal}{pause}.lshdb");
            day_one(&cli, &db);
            if stopped_day_two(&cli, &db, 40, signal, pause) {
                let (k, d) = outputs(&cli, &db, &day2(), &["--json"]);
                assert_eq!(k, kept, "{signal}: the kept records");
                assert_eq!(d, dropped, "{signal}: the dropped records");
                let stats = cli.run(&["stats", &db, "--json"]).ok().json();
                let reference = cli.run(&["stats", "ref.lshdb", "--json"]).ok().json();
                assert_eq!(stats["documents"], reference["documents"]);
                stopped = true;
                break;
            }
        }
        assert!(stopped, "{signal}: the run was never stopped mid-way");
    }
}

#[test]
fn a_failed_day_two_run_resumes_to_an_uninterrupted_runs_outputs() {
    let cli = Cli::new();
    day_one(&cli, "ref.lshdb");
    let bad = format!("{}not json\n", day2());
    let with_rejected = ["--rejected", "r.jsonl"];
    let (kept, dropped) = outputs(&cli, "ref.lshdb", &bad, &with_rejected);
    day_one(&cli, "db.lshdb");
    // Without --rejected the run fails at the end, with day 2's records
    // stored; the same command with --rejected resumes.
    let args = dedup_args("-", "db.lshdb", &["--out", "k.jsonl"]);
    std::fs::remove_file(cli.path("k.jsonl")).unwrap();
    let run = cli.run_stdin(&args, &bad).expect(1);
    run.stderr_has("(the rerun resumes)");
    assert!(!cli.path("k.jsonl").exists());
    let (k, d) = outputs(&cli, "db.lshdb", &bad, &with_rejected);
    assert_eq!(k, kept);
    assert_eq!(d, dropped);
    // A finished run clears the label: the same command again is a new
    // run, whose records are all stored already.
    let run = cli
        .run_stdin(
            &dedup_args("-", "db.lshdb", &["--json", "--rejected", "r2.jsonl"]),
            &bad,
        )
        .ok();
    let last = run.stderr.lines().last().unwrap();
    let summary: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(summary["kept"], 0);
    assert_eq!(summary["resumed"], false);
}

#[test]
fn ctrl_c_says_how_many_kept_records_went_to_standard_output() {
    for pause in [1500, 4000, 8000] {
        let cli = Cli::new();
        let (mut child, stdin) = cli.spawn_fed(&["dedup", "-", "--id-field", "id"], &day1());
        std::thread::sleep(Duration::from_millis(pause));
        send(&child, "-INT");
        wait_ended(&mut child, Duration::from_secs(20), "still running");
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        if out.status.code() != Some(130) {
            continue; // before the handler was installed
        }
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        let written = stdout.lines().count();
        assert!(written > 0, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "interrupted: {written} kept record(s) went to standard output before the stop (an incomplete output)"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("no output was written"), "{stderr}");
        return;
    }
    panic!("lshdb never installed its Ctrl-C handler");
}

#[test]
fn a_failed_keep_longest_run_resumes_to_an_uninterrupted_runs_outputs() {
    let cli = Cli::new();
    cli.write("d1.jsonl", day1());
    cli.write("d2.jsonl", format!("{}{{oops\n", day2()));
    let run = |db: &str, rejected: bool| {
        let outputs = ["--out", "k.jsonl", "--dropped", "d.jsonl"];
        let mut args = dedup_args("d2.jsonl", db, &["--keep", "longest"]);
        args.extend(outputs);
        if rejected {
            args.extend(["--rejected", "r.jsonl"]);
        }
        cli.run(&args)
    };
    for db in ["ref.lshdb", "db.lshdb"] {
        let args = dedup_args("d1.jsonl", db, &["--keep", "longest", "--out", "k1.jsonl"]);
        cli.run(&args).ok();
    }
    run("ref.lshdb", true).ok();
    let (kept, dropped) = (cli.read("k.jsonl"), cli.read("d.jsonl"));
    std::fs::remove_file(cli.path("k.jsonl")).unwrap();
    let failed = run("db.lshdb", false).expect(1);
    failed.stderr_has("(the rerun resumes)");
    assert!(!cli.path("k.jsonl").exists());
    let resumed = run("db.lshdb", true).ok();
    resumed.stdout_has("(resumed)");
    assert_eq!(cli.read("k.jsonl"), kept);
    assert_eq!(cli.read("d.jsonl"), dropped);
    let len = |db: &str| lshdb::Database::open(cli.path(db)).unwrap().len().unwrap();
    assert_eq!(len("db.lshdb"), len("ref.lshdb"));
}
