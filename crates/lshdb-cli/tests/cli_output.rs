//! End-to-end tests of what the text outputs print: keys holding line
//! breaks, tabs or escapes are quoted, so they cannot forge a line or a
//! column (`--json` stays as it was); and `pairs` streams, so the first
//! pair of a hot bucket comes at once and a closed pipe ends it quietly.

mod cli_support;

use cli_support::{jsonl, Cli};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TEXT: &str = "the quick brown fox jumps over the lazy dog near the river bank today";
const NEAR: &str = "the quick brown fox jumps over the lazy dog near the river bank to-day";
const FORGED: &str = "evil\n0.999\tforged-key";

/// Asserts that every line has `fields` tab-separated fields, the first
/// a number, and that no line is the forged one.
fn assert_lines(stdout: &str, fields: usize) {
    for line in stdout.lines() {
        assert_eq!(line.split('\t').count(), fields, "{line:?} in {stdout:?}");
        let first = line.split('\t').next().unwrap().trim();
        assert!(first.parse::<f64>().is_ok(), "{line:?} in {stdout:?}");
        assert!(!line.contains("forged-key") || line.contains("\"evil\\n0.999\\tforged-key\""));
    }
}

/// Asserts that a group listing (`groups`, `scan`) has `count` member
/// lines (the indented ones), each a similarity and a key, none forged.
fn assert_members(stdout: &str, count: usize) {
    let members: Vec<&str> = stdout.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(members.len(), count, "{stdout}");
    assert_lines(&members.join("\n"), 2);
}

fn forged_db(cli: &Cli) {
    cli.run(&["create", "k.lshdb", "--threshold", "0.5"]).ok();
    let records = [
        (FORGED.to_owned(), TEXT.to_owned()),
        ("plain".to_owned(), NEAR.to_owned()),
        ("\"quoted\"".to_owned(), NEAR.to_owned() + " again"),
    ];
    cli.write("k.jsonl", jsonl(&records));
    cli.run(&["add", "k.lshdb", "--jsonl", "k.jsonl"]).ok();
}

#[test]
fn a_key_with_a_line_break_cannot_forge_tab_separated_output() {
    let cli = Cli::new();
    forged_db(&cli);
    let shown = r#""evil\n0.999\tforged-key""#;

    let query = cli.run(&["query", "k.lshdb", "--text", TEXT]).ok();
    assert_eq!(query.stdout.lines().count(), 3, "{}", query.stdout);
    assert_lines(&query.stdout, 2);
    query.stdout_has(&format!("\t{shown}\n"));
    query.stdout_has("\t\"\\\"quoted\\\"\"\n");
    query.stdout_has("\tplain\n");

    let contained = cli
        .run(&["query", "k.lshdb", "--text", TEXT, "--containment", "0.5"])
        .ok();
    assert_lines(&contained.stdout, 3);
    contained.stdout_has(shown);

    let pairs = cli.run(&["pairs", "k.lshdb"]).ok();
    assert_eq!(pairs.stdout.lines().count(), 3, "{}", pairs.stdout);
    assert_lines(&pairs.stdout, 3);
    pairs.stdout_has(shown);

    let groups = cli.run(&["groups", "k.lshdb"]).ok();
    assert_members(&groups.stdout, 3);
    assert!(groups.stdout.contains(&format!("\t{shown}\n")));

    let get = cli.run(&["get", "k.lshdb", FORGED]).ok();
    get.stdout_starts(&format!("key       {shown}\n"));

    let missing = cli.run(&["get", "k.lshdb", "no\nsuch"]).error_line();
    assert!(missing.contains(r#"`"no\nsuch"`"#), "{missing}");

    let remove = cli.run(&["remove", "k.lshdb", "no\nsuch"]).ok();
    assert_eq!(remove.stderr.lines().count(), 1, "{}", remove.stderr);
    remove.stderr_has(r#"`"no\nsuch"`"#);

    // JSON outputs carry the key itself.
    let json = cli
        .run(&["query", "k.lshdb", "--text", TEXT, "--json"])
        .ok();
    let hits = json.json()["hits"].as_array().unwrap().clone();
    assert!(hits.iter().any(|h| h["key"] == FORGED), "{}", json.stdout);
    let pairs = cli.run(&["pairs", "k.lshdb", "--json"]).ok();
    let lines = pairs.json_lines();
    assert!(lines.iter().any(|p| p["a"] == FORGED || p["b"] == FORGED));
}

#[test]
fn a_file_name_with_a_line_break_cannot_add_a_scan_group_member() {
    let cli = Cli::new();
    cli.write("tree/a.txt", TEXT);
    cli.write("tree/b\nfake.txt", NEAR);
    let scan = cli.run(&["scan", "tree"]).ok();
    assert_members(&scan.stdout, 2);
    scan.stdout_has("\t\"b\\nfake.txt\"\n");
    assert!(!scan.stdout.lines().any(|l| l.starts_with("fake.txt")));
}

/// Peak resident memory of a running process, in kB (Linux).
fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn pairs_of_copies_stream_and_end_quietly_on_a_closed_pipe() {
    const COPIES: usize = 20_000;
    let cli = Cli::new();
    cli.run(&["create", "c.lshdb", "--threshold", "0.8"]).ok();
    let records: Vec<(String, String)> = (0..COPIES)
        .map(|i| (format!("copy-{i}"), TEXT.to_owned()))
        .collect();
    cli.write("c.jsonl", jsonl(&records));
    cli.run(&["add", "c.lshdb", "--jsonl", "c.jsonl"]).ok();

    let start = Instant::now();
    let mut child = cli
        .command(&["pairs", "c.lshdb"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lshdb");
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    // A reader that stops after 10,000 lines, like `head`; the old code
    // printed nothing for minutes.
    let (send, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().take(10_000) {
            if send.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let first = lines.recv_timeout(Duration::from_secs(60));
    let peak = peak_kb(pid);
    if first.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no pair within 60 s");
    }
    // The first copy stored pairs with each other copy first.
    let mut seen = std::collections::HashSet::new();
    for line in std::iter::once(first.unwrap()).chain(lines.iter()) {
        assert!(line.starts_with("1.000\tcopy-0\tcopy-"), "{line:?}");
        assert!(seen.insert(line));
    }
    assert_eq!(seen.len(), 10_000);
    let peak_after = peak_kb(pid);
    reader.join().unwrap(); // closes the pipe
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lshdb pairs did not end on a closed pipe");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "a closed pipe ends quietly: {stderr}");
    // About 200 million pairs: memory must not follow them.
    for kb in [peak, peak_after].into_iter().flatten() {
        assert!(kb < 500_000, "peak memory {kb} kB");
    }
}
