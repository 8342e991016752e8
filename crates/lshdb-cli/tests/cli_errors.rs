//! End-to-end tests of messages a user can act on: a load that adds
//! nothing fails, repeated errors are counted instead of repeated, I/O
//! errors name the path and the operation, hints are commands that work
//! when pasted, long keys are shortened, settings print as typed, and
//! `stats` and `check` count postings alike.

mod cli_support;

use cli_support::{corpus, jsonl, Cli};

#[test]
fn a_load_that_adds_nothing_fails_with_its_summary() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    // A thousand bad lines: five described, the rest counted.
    cli.write("bad.jsonl", "{not json\n".repeat(1000));
    let out = cli
        .run(&["add", "db.lshdb", "--jsonl", "bad.jsonl"])
        .expect(1);
    assert_eq!(
        out.stdout,
        "added 0 document(s) (0 replaced) in 0 commit(s); 0 rejected; 1000 bad record(s) skipped\n"
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 7, "{}", out.stderr);
    for (i, line) in lines[..5].iter().enumerate() {
        assert!(
            line.starts_with(&format!("lshdb: skipped line {}: malformed JSON", i + 1)),
            "{line}"
        );
    }
    assert_eq!(
        lines[5],
        "lshdb: … and 995 more bad record(s) with the same error (malformed JSON); 1000 in all"
    );
    assert_eq!(
        lines[6],
        "lshdb: nothing was added: every record was skipped or rejected (see above)"
    );
    // The same through import, and with empty input.
    let out = cli
        .run(&["import", "db.lshdb", "--in", "bad.jsonl"])
        .expect(1);
    assert_eq!(out.stderr.lines().count(), 7, "{}", out.stderr);
    let out = cli
        .run_stdin(&["add", "db.lshdb", "--jsonl", "-"], "")
        .expect(1);
    assert_eq!(
        out.stderr,
        "lshdb: nothing was added: the input holds no records\n"
    );
    // Files: every one bad.
    cli.write("a.bin", b"\x00\x01");
    let out = cli.run(&["add", "db.lshdb", "a.bin"]).expect(1);
    out.stdout_has("1 bad record(s) skipped");
    // But a load where every document was a known near-duplicate did its job.
    let docs = corpus();
    cli.write("one.jsonl", jsonl(&docs[..1]));
    cli.run(&["add", "db.lshdb", "--jsonl", "one.jsonl"]).ok();
    cli.run(&["add", "db.lshdb", "--jsonl", "one.jsonl", "--unique", "0.9"])
        .ok();
}

#[test]
fn io_errors_name_the_operation_and_the_path() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    let enoent = "No such file or directory (os error 2)";
    for (args, expected) in [
        (
            vec!["add", "db.lshdb", "--jsonl", "absent.jsonl"],
            "cannot open input absent.jsonl",
        ),
        (
            vec!["import", "db.lshdb", "--in", "absent.jsonl"],
            "cannot open input absent.jsonl",
        ),
        (
            vec!["query", "db.lshdb", "--jsonl", "absent.jsonl"],
            "cannot open input absent.jsonl",
        ),
        (
            vec!["query", "db.lshdb", "--file", "absent.txt"],
            "cannot read query file absent.txt",
        ),
        (
            vec!["export", "db.lshdb", "--out", "no-folder/x.jsonl"],
            "cannot create no-folder/x.jsonl",
        ),
    ] {
        let line = cli.run(&args).error_line();
        assert_eq!(line, format!("lshdb: {expected}: {enoent}"), "{args:?}");
    }
}

/// The command between the first pair of backticks in `line`, run (without
/// its leading `lshdb`) in `cli`'s folder.
fn paste(cli: &Cli, line: &str) -> cli_support::Run {
    let command = line
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in {line:?}"));
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "lshdb", "{line}");
    cli.run(&words[1..])
}

#[test]
fn hints_are_commands_that_work_when_pasted() {
    let cli = Cli::new();
    // A missing database is most often a mistyped path: no hint to create one.
    let line = cli.run(&["stats", "fresh.lshdb"]).error_line();
    assert_eq!(line, "lshdb: fresh.lshdb does not exist; check the path");

    // A threshold below the index threshold.
    let db = cli.corpus_db("db.lshdb", &[]);
    let out = cli.run(&["pairs", &db, "--threshold", "0.5"]).ok();
    let note = out.stderr.lines().next().expect("a note");
    assert!(
        note.contains("`lshdb rebuild db.lshdb --threshold 0.5`"),
        "{note}"
    );
    paste(&cli, note).ok();
    let out = cli.run(&["pairs", &db, "--threshold", "0.5"]).ok();
    assert!(out.stderr.is_empty(), "{}", out.stderr);

    // Buckets cut at the cap: the flag to pass, on `query`.
    let text = "the very same text stored under many keys, for one huge bucket";
    let many: Vec<(String, String)> = (0..1001)
        .map(|i| (format!("k{i}"), text.to_owned()))
        .collect();
    cli.run(&["create", "big.lshdb"]).ok();
    cli.write("many.jsonl", jsonl(&many));
    cli.run(&["add", "big.lshdb", "--jsonl", "many.jsonl"]).ok();
    let query = ["query", "big.lshdb", "--text", text, "--limit", "1"];
    let out = cli.run_with(&query, &[]).ok();
    let note = out.stderr.lines().next().expect("a note");
    assert!(note.contains("`--max-bucket 10000`"), "{note}");
    assert!(!note.contains("max_bucket"), "{note}");
    let out = cli.run_with(&query, &["--max-bucket", "10000"]).ok();
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let v = cli.run_with(&query, &["--json"]).ok().json();
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("`--max-bucket 10000`"),
        "{v}"
    );
}

#[test]
fn long_keys_are_echoed_shortened() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    let too_long = "k".repeat(5000);
    let long = "e".repeat(4000);
    cli.write(
        "keys.jsonl",
        format!(
            "{}\n{}\n{}\n",
            serde_json::json!({"id": too_long, "text": "hello world"}),
            serde_json::json!({"id": long, "shingles": []}),
            serde_json::json!({"id": "fine", "text": "hello world again"}),
        ),
    );
    for extra in [&[][..], &["--unique", "0.9"][..]] {
        let mut args = vec!["add", "db.lshdb", "--jsonl", "keys.jsonl"];
        args.extend_from_slice(extra);
        let out = cli.run(&args).ok();
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{}", out.stderr);
        assert!(
            lines[0].starts_with(&format!(
                "lshdb: rejected `{}… (5000 bytes)`: key of 5000 bytes",
                "k".repeat(60)
            )),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            format!(
                "lshdb: rejected `{}… (4000 bytes)`: empty after normalisation; there is nothing to index",
                "e".repeat(60)
            )
        );
    }
    let line = cli.run(&["query", "db.lshdb", "--key", &long]).error_line();
    assert_eq!(
        line,
        format!(
            "lshdb: no document with key `{}… (4000 bytes)`",
            "e".repeat(60)
        )
    );
}

#[test]
fn settings_print_as_typed_and_stats_and_check_agree_on_postings() {
    let cli = Cli::new();
    let out = cli
        .run(&["create", "db.lshdb", "--shingle", "word:2", "--simhash"])
        .ok();
    out.stdout_has(": word:2, 128 one-permutation values,");
    cli.write("corpus.jsonl", jsonl(&corpus()));
    cli.run(&["add", "db.lshdb", "--jsonl", "corpus.jsonl"])
        .ok();
    let stats = cli
        .run(&["stats", "db.lshdb", "--json", "--deep"])
        .ok()
        .json();
    assert_eq!(stats["settings"]["shingle"], "word:2");
    assert_eq!(stats["settings"]["scheme"], "one-permutation");
    let check = cli.run(&["check", "db.lshdb", "--json"]).ok().json();
    let docs = corpus().len() as u64;
    let bands = stats["settings"]["bands"].as_u64().unwrap();
    for v in [&stats, &check] {
        assert_eq!(v["postings"], docs * bands, "{v}");
        assert_eq!(v["simhash_postings"], docs * 4, "{v}");
    }
    let text = cli.run(&["stats", "db.lshdb", "--deep"]).ok().stdout;
    assert!(
        text.contains("config      word:2, 128 one-permutation values"),
        "{text}"
    );
    let postings = format!("{} postings, {} SimHash postings", docs * bands, docs * 4);
    assert!(text.contains(&postings), "{text}");
    let text = cli.run(&["check", "db.lshdb"]).ok().stdout;
    assert!(text.contains(&postings), "{text}");
    for (typed, shown) in [
        ("char:7", "char:7"),
        ("stopword", "stopword:3"),
        ("words:3", "word:3"),
    ] {
        let name = format!("{}.lshdb", typed.replace(':', "-"));
        let out = cli.run(&["create", &name, "--shingle", typed]).ok();
        out.stdout_has(&format!(": {shown}, "));
    }
}

/// A full disk during `add`: the summary of what is committed comes before
/// the error, and that is what the file holds. Needs a 2 MiB tmpfs, so
/// root: run with `cargo test --test cli_errors -- --ignored` as root (CI
/// has no guarantee of mount rights; without them the test says so and
/// passes).
#[cfg(target_os = "linux")]
#[test]
#[ignore = "mounts a tmpfs: needs root"]
fn a_full_disk_during_add_reports_what_is_committed() {
    let cli = Cli::new();
    let disk = cli.path("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&disk)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a tmpfs here (not root?); skipped");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(disk.clone());
    let docs: Vec<(String, String)> = (0..3000)
        .map(|i| {
            let text = format!("word{i} lorem ipsum dolor sit amet ").repeat(20);
            (format!("doc-{i}"), text)
        })
        .collect();
    cli.write("big.jsonl", jsonl(&docs));
    cli.run(&["create", "disk/db.lshdb", "--store-text"]).ok();
    let out = cli
        .run(&[
            "add",
            "disk/db.lshdb",
            "--jsonl",
            "big.jsonl",
            "--batch",
            "200",
        ])
        .expect(1);
    let summary = out.stdout.trim_end();
    assert!(summary.ends_with("; stopped by an error"), "{summary}");
    let added: u64 = summary
        .strip_prefix("added ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(added < 3000, "the disk did not fill up: {summary}");
    let line = out.stderr.lines().last().unwrap_or_default();
    assert!(line.contains("No space left on device"), "{line}");
    assert!(
        line.ends_with(&format!(
            "; the {added} document(s) reported above are committed and kept"
        )),
        "{line}"
    );
    let v = cli.run(&["stats", "disk/db.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], added);
    cli.run(&["check", "disk/db.lshdb"]).ok();
}
