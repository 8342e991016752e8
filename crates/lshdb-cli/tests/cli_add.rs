//! End-to-end tests of `lshdb add`: bad records in JSON Lines are reported
//! by line number and skipped (or, with `--strict`, stop the load after
//! committing what came before), files are added by path, `--unique`
//! keeps near-duplicates out, and Ctrl-C stops `add` and `import` after a
//! commit with exit code 130.

mod cli_support;

use cli_support::{corpus, jsonl, similarity, text_of, Cli};

/// The bad-record input used by the loading tests: good records on lines 1,
/// 2, 3 and 8, one kind of bad record on each of lines 4 to 7.
fn messy_input() -> String {
    let docs = corpus();
    let good = |i: usize| serde_json::json!({"id": docs[i].0, "text": docs[i].1}).to_string();
    [
        good(0),
        good(3),
        good(6),
        "{not json".to_owned(),
        r#"{"id": "no-text"}"#.to_owned(),
        r#"{"id": "wrong-type", "text": 42}"#.to_owned(),
        r#"{"id": "empty", "text": "   "}"#.to_owned(),
        good(8),
    ]
    .join("\n")
}

#[test]
fn bad_records_are_reported_by_line_and_skipped() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.write("in.jsonl", messy_input());
    let out = cli.run(&["add", "db.lshdb", "--jsonl", "in.jsonl"]).ok();
    assert_eq!(
        out.stdout.trim(),
        "added 4 document(s) (0 replaced) in 1 commit(s); 0 rejected; 4 bad record(s) skipped"
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stderr);
    assert!(lines[0].starts_with("lshdb: skipped line 4: malformed JSON"));
    assert_eq!(lines[1], "lshdb: skipped line 5: missing field `text`");
    assert_eq!(
        lines[2],
        "lshdb: skipped line 6: field `text` is not a string"
    );
    assert_eq!(lines[3], "lshdb: skipped line 7: field `text` is empty");
    // No progress-bar garbage when stderr is not a terminal.
    assert!(!out.stderr.contains('\r') && !out.stderr.contains('\x1b'));
    let v = cli.run(&["stats", "db.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 4);

    // Other field names.
    cli.write(
        "other.jsonl",
        r#"{"url": "u1", "body": "some body text here"}"#,
    );
    let out = cli
        .run(&[
            "add",
            "db.lshdb",
            "--jsonl",
            "other.jsonl",
            "--key-field",
            "url",
            "--text-field",
            "body",
        ])
        .ok();
    out.stdout_starts("added 1 document(s)");
    cli.run(&["get", "db.lshdb", "u1"]).ok();
}

#[test]
fn strict_stops_at_the_first_bad_record_keeping_what_came_before() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.write("in.jsonl", messy_input());
    let out = cli.run(&[
        "add", "db.lshdb", "--jsonl", "in.jsonl", "--strict", "--batch", "1",
    ]);
    assert_eq!(
        out.stdout.trim(),
        "added 3 document(s) (0 replaced) in 3 commit(s); 0 rejected; 0 bad record(s) skipped"
    );
    let line = out.error_line();
    assert!(
        line.starts_with("lshdb: stopped at line 4: malformed JSON"),
        "{line}"
    );
    assert!(line.contains("(--strict)"), "{line}");
    let v = cli.run(&["stats", "db.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 3, "the three records before line 4 stay");
    cli.run(&["get", "db.lshdb", "f3-a"]).ok();
    cli.run(&["get", "db.lshdb", "solo-1"]).expect(1);

    // With the default batch the records before the bad one are committed
    // too: the input simply ends there.
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.write("in.jsonl", messy_input());
    let out = cli.run(&["add", "db.lshdb", "--jsonl", "in.jsonl", "--strict"]);
    assert!(out
        .stdout
        .starts_with("added 3 document(s) (0 replaced) in 1 commit(s)"));
    out.error_line();
    let v = cli.run(&["stats", "db.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 3);
}

#[test]
fn add_files_and_unique() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb", "--store-text"]).ok();
    cli.write("docs/a.txt", text_of("f1-a"));
    cli.write("docs/bin", b"\xff\xfe not utf-8");
    let out = cli.run(&["add", "db.lshdb", "docs/a.txt", "docs/bin"]).ok();
    out.stdout_starts("added 1 document(s)");
    out.stdout_ends("; 1 bad record(s) skipped\n");
    assert_eq!(out.stderr, "lshdb: skipped file: docs/bin: binary file\n");
    let v = cli
        .run(&["get", "db.lshdb", "docs/a.txt", "--json"])
        .ok()
        .json();
    assert_eq!(v["text"], text_of("f1-a").as_str());

    // f1-b is a near-duplicate (above 0.9) of the stored docs/a.txt.
    let s = similarity(&text_of("f1-a"), &text_of("f1-b"));
    assert!(s >= 0.9, "{s}");
    let docs = corpus();
    cli.write("more.jsonl", jsonl(&[docs[1].clone(), docs[9].clone()]));
    let out = cli
        .run(&[
            "add",
            "db.lshdb",
            "--jsonl",
            "more.jsonl",
            "--unique",
            "0.9",
        ])
        .ok();
    assert_eq!(
        out.stdout,
        format!(
            "duplicate: `f1-b` is a near-duplicate of `docs/a.txt` ({s:.3}); not added\n\
             added 1 document(s); 1 near-duplicate(s) not added; 0 rejected; 0 bad record(s) skipped\n"
        )
    );
    cli.run(&["get", "db.lshdb", "f1-b"]).expect(1);
    cli.run(&["get", "db.lshdb", "solo-2"]).ok();
    // Within one load, a later record is checked against earlier ones.
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    let out = cli.run_stdin(
        &["add", "db.lshdb", "--jsonl", "-", "--unique", "0.9"],
        &jsonl(&docs[..3]),
    );
    let out = out.ok();
    out.stdout_has("added 1 document(s); 2 near-duplicate(s) not added");
}

/// `add --json` is the library's bulk report as it serialises (refused
/// documents as `[key, reason]` pairs), with the CLI's counts, for both
/// a bulk and a `--unique` load.
#[test]
fn add_json_is_the_bulk_report() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    let docs = corpus();
    let mut input = jsonl(&docs[..3]);
    // A key over the 4,096-byte limit is refused; a record without text is bad.
    let long = "k".repeat(5000);
    input.push_str(&format!(
        "{{\"id\": \"{long}\", \"text\": \"some text\"}}\n{{\"id\": 7}}\n"
    ));
    cli.write("in.jsonl", &input);
    let v = cli
        .run(&["add", "db.lshdb", "--jsonl", "in.jsonl", "--json"])
        .ok()
        .json();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "bad",
            "commits",
            "complete",
            "duplicates",
            "inserted",
            "rejected",
            "rejected_count",
            "replaced",
            "stopped"
        ]
    );
    assert_eq!(
        (v["inserted"].as_u64(), v["bad"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(v["rejected"][0][0], long.as_str(), "{v}");
    assert!(v["rejected"][0][1].as_str().unwrap().contains("key"), "{v}");
    assert_eq!(
        (v["complete"].as_bool(), v["stopped"].as_bool()),
        (Some(true), Some(false))
    );

    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.write("in.jsonl", &input);
    let args = [
        "add", "db.lshdb", "--jsonl", "in.jsonl", "--unique", "0.9", "--json",
    ];
    let out = cli.run(&args).ok();
    let v: serde_json::Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        (v["inserted"].as_u64(), v["duplicates"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(
        (v["commits"].as_u64(), v["replaced"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(v["rejected"][0][0], long.as_str(), "{v}");
}

/// However many documents are refused, `add --json` lists the first 1,000
/// and counts all, in a bulk and in a `--unique` load; standard error shows
/// a few messages and counts the rest.
#[test]
fn add_json_lists_the_first_thousand_refused_and_counts_all() {
    let docs = corpus();
    let mut input = jsonl(&docs[..2]);
    // Keys over the 4,096-byte limit are refused.
    let long = "k".repeat(4096);
    for i in 0..2500 {
        input.push_str(&format!(
            "{{\"id\": \"r{i}{long}\", \"text\": \"text {i}\"}}\n"
        ));
    }
    for unique in [false, true] {
        let cli = Cli::new();
        cli.run(&["create", "db.lshdb"]).ok();
        cli.write("in.jsonl", &input);
        let mut args = vec![
            "add", "db.lshdb", "--jsonl", "in.jsonl", "--batch", "300", "--json",
        ];
        if unique {
            args.extend(["--unique", "0.9"]);
        }
        let out = cli.run(&args).ok();
        let v: serde_json::Value =
            serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
        assert_eq!(v["rejected_count"], 2500, "{unique}");
        let listed = v["rejected"].as_array().unwrap();
        assert_eq!(listed.len(), 1000, "{unique}");
        let key = |i: usize| serde_json::Value::from(format!("r{i}{long}"));
        assert_eq!((&listed[0][0], &listed[999][0]), (&key(0), &key(999)));
        assert!(out.stderr.lines().count() < 20, "{}", out.stderr);
        assert!(out.stderr.contains("2500"), "{}", out.stderr);
    }
}

/// Starts `lshdb ARGS` reading JSON Lines from standard input, feeds it
/// `first`, sends SIGINT (as Ctrl-C does), then feeds `rest` and closes the
/// input. Retries with longer pauses when the signal came before the
/// program had installed its handler (it then dies by the signal).
#[cfg(unix)]
fn interrupt_midway(cli: &Cli, args: &[&str], first: &str, rest: &str) -> cli_support::Run {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;
    for pause in [200, 800, 3200] {
        let pause = Duration::from_millis(pause);
        let (child, mut stdin) = cli.spawn_fed(args, first);
        std::thread::sleep(pause);
        cli_support::process::send(&child, "-INT");
        std::thread::sleep(pause);
        // The program may have stopped reading: ignore a closed pipe.
        let _ = stdin.write_all(rest.as_bytes());
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        if out.status.signal().is_some() {
            continue; // killed before the handler was installed
        }
        return cli_support::Run {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        };
    }
    panic!("lshdb {args:?} never installed its Ctrl-C handler");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_after_the_current_commit_and_says_so() {
    let docs = corpus();
    let (first, rest) = (jsonl(&docs[..3]), jsonl(&docs[3..]));
    for command in ["add", "import"] {
        let cli = Cli::new();
        cli.run(&["create", "db.lshdb"]).ok();
        let args: &[&str] = if command == "add" {
            &["add", "db.lshdb", "--jsonl", "-", "--batch", "1"]
        } else {
            &["import", "db.lshdb", "--batch", "1"]
        };
        let out = interrupt_midway(&cli, args, &first, &rest).expect(130);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert_eq!(
            out.stderr.lines().last(),
            Some(
                "lshdb: interrupted: everything reported above is committed; \
                 run the command again to continue"
            ),
            "{command}: {}",
            out.stderr
        );
        // What the summary reports is what is stored, and the load stopped
        // before the end of the input.
        let added: u64 = out
            .stdout
            .strip_prefix("added ")
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{command}: {}", out.stdout));
        assert!(added < docs.len() as u64, "{command}: {}", out.stdout);
        let v = cli.run(&["stats", "db.lshdb", "--json"]).ok().json();
        assert_eq!(v["documents"], added, "{command}");
        cli.run(&["check", "db.lshdb"]).ok();
    }
}

/// Files whose size the file system does not tell (`/dev/zero` never ends,
/// `/proc` files claim 0 bytes) are read only up to the document limit.
#[test]
fn endless_files_are_read_only_up_to_the_document_limit() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb", "--store-text"]).ok();
    let out = cli
        .run_within(60, &["add", "db.lshdb", "/dev/zero"])
        .expect(1);
    assert_eq!(
        out.stderr,
        "lshdb: skipped file: /dev/zero: larger than the document limit of 67108864 bytes\n\
         lshdb: nothing was added: every record was skipped or rejected (see above)\n"
    );
    out.stdout_starts("added 0 document(s)");
    let line = cli
        .run_within(60, &["query", "db.lshdb", "--file", "/dev/zero"])
        .error_line();
    assert!(line.contains("too large for a document"), "{line}");
    // A /proc file claims 0 bytes but has text: it is read.
    if std::path::Path::new("/proc/self/status").exists() {
        let out = cli
            .run_within(60, &["add", "db.lshdb", "/proc/self/status"])
            .ok();
        out.stdout_starts("added 1 document(s)");
    }
}
