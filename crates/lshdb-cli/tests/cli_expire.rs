//! `lshdb expire`, the time index at `create` and `rebuild`, and `dedup
//! --window`: a record is a duplicate only of records kept within the
//! window.

mod cli_support;

use cli_support::{corpus, jsonl, Cli};

#[test]
fn expire_removes_the_older_documents_and_check_agrees() {
    let cli = Cli::new();
    let db = cli.corpus_db("t.lshdb", &["--timestamps"]);
    let n = corpus().len() as u64;
    let stats = cli.run(&["stats", &db, "--json"]).ok().json();
    assert_eq!(stats["settings"]["timestamps"], true);
    // Everything was stamped just now: nothing is older than an hour.
    let v = cli
        .run(&["expire", &db, "--older-than", "1h", "--json"])
        .ok()
        .json();
    assert_eq!(
        (v["removed"].as_u64(), v["commits"].as_u64()),
        (Some(0), Some(0))
    );
    // Everything is older than a time in the future, 3 per commit.
    let out = cli
        .run(&["expire", &db, "--older-than", "4102444800", "--batch", "3"])
        .ok();
    let commits = n.div_ceil(3);
    out.stdout_has(&format!(
        "expired {n} document(s) older than 2100-01-01T00:00:00Z in {commits} commit(s)"
    ));
    let stats = cli.run(&["stats", &db, "--json"]).ok().json();
    assert_eq!(stats["documents"], 0);
    cli.run(&["check", &db]).ok();
    // RFC 3339 times parse; bad ones are usage errors.
    cli.run(&["expire", &db, "--older-than", "2026-01-01T00:00:00Z"])
        .ok();
    cli.run(&["expire", &db, "--older-than", "yesterday"])
        .expect(2)
        .stderr_has("RFC 3339");
}

#[test]
fn a_file_without_the_time_index_names_the_rebuild() {
    let cli = Cli::new();
    let db = cli.corpus_db("p.lshdb", &[]);
    let line = cli
        .run(&["expire", &db, "--older-than", "30d"])
        .error_line();
    assert!(
        line.contains("`lshdb rebuild p.lshdb --timestamps`"),
        "{line}"
    );
    let v = cli
        .run(&["rebuild", &db, "--timestamps", "--json"])
        .ok()
        .json();
    assert_eq!(v["timestamps"], true);
    cli.run(&["check", &db]).ok();
    let v = cli
        .run(&["expire", &db, "--older-than", "4102444800", "--json"])
        .ok()
        .json();
    assert_eq!(v["removed"].as_u64(), Some(corpus().len() as u64));
    cli.run(&["rebuild", &db, "--no-timestamps"])
        .ok()
        .stdout_has("rebuilt: ");
    cli.run(&["expire", &db, "--older-than", "30d"])
        .error_line();
}

/// Day-1 records, then day 2 with a copy of each: a wide window finds the
/// copies; a window the day-1 records have fallen out of keeps them.
#[test]
fn dedup_window_forgets_what_fell_out_of_it() {
    let cli = Cli::new();
    let docs = corpus();
    let day1: Vec<(String, String)> = docs.iter().take(4).cloned().collect();
    let day2: Vec<(String, String)> = day1
        .iter()
        .map(|(k, t)| (format!("{k}-again"), t.clone()))
        .collect();
    cli.write("day1.jsonl", jsonl(&day1));
    cli.write("day2.jsonl", jsonl(&day2));
    let dedup = |db: &str, input: &str, window: &str| {
        cli.run(&[
            "dedup",
            input,
            "--db",
            db,
            "--id-field",
            "id",
            "--window",
            window,
            "--out",
            "kept.jsonl",
            "--json",
        ])
        .ok()
        .json()
    };
    // A window of 30 days: day 2's copies are dropped.
    let first = dedup("wide.lshdb", "day1.jsonl", "30d");
    let kept1 = first["kept"].as_u64().unwrap();
    assert!(kept1 >= 1 && first["expired"] == 0, "{first}");
    let second = dedup("wide.lshdb", "day2.jsonl", "30d");
    assert_eq!(second["kept"], 0, "{second}");
    assert_eq!(second["expired"], 0);
    // A window of 1 second, and day 2 comes 2 seconds later: day 1 fell
    // out, so its copies are kept, and day 1's documents are gone.
    let first = dedup("narrow.lshdb", "day1.jsonl", "1s");
    assert_eq!(first["kept"].as_u64(), Some(kept1));
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let second = dedup("narrow.lshdb", "day2.jsonl", "1s");
    assert_eq!(second["kept"].as_u64(), Some(kept1), "{second}");
    assert_eq!(second["expired"].as_u64(), Some(kept1), "{second}");
    let stats = cli.run(&["stats", "narrow.lshdb", "--json"]).ok().json();
    assert_eq!(stats["documents"].as_u64(), Some(kept1));
    cli.run(&["check", "narrow.lshdb"]).ok();
    // An existing --db without the time index: the error names the rebuild.
    cli.run(&["create", "plain.lshdb"]).ok();
    let line = cli
        .run(&[
            "dedup",
            "day1.jsonl",
            "--db",
            "plain.lshdb",
            "--window",
            "30d",
            "--out",
            "kept.jsonl",
        ])
        .error_line();
    assert!(
        line.contains("`lshdb rebuild plain.lshdb --timestamps`"),
        "{line}"
    );
    // --window needs --db.
    cli.run(&["dedup", "day1.jsonl", "--window", "30d"])
        .expect(2);
}

/// `lshdb expire` killed (SIGKILL) between or inside its commits leaves a
/// clean file holding whole commits' worth of removals, oldest first; a
/// second run removes the rest.
#[test]
fn a_killed_expire_leaves_whole_commits() {
    use std::time::{Duration, Instant};
    const N: u64 = 10_000;
    const BATCH: u64 = 100;
    let cli = Cli::new();
    cli.run(&["create", "k.lshdb", "--timestamps"]).ok();
    let docs: String = (0..N)
        .map(|i| {
            let text = format!(
                "document {i} on topic {} in its own words {}",
                i % 97,
                i * 7919
            );
            format!(
                "{}\n",
                serde_json::json!({"id": format!("doc-{i:05}"), "text": text})
            )
        })
        .collect();
    cli.write("docs.jsonl", docs);
    cli.run(&["add", "k.lshdb", "--jsonl", "docs.jsonl"]).ok();
    let stored = || {
        let stats = cli.run(&["stats", "k.lshdb", "--json"]).ok().json();
        stats["documents"].as_u64().expect("a document count")
    };
    let batch = BATCH.to_string();
    let args = [
        "expire",
        "k.lshdb",
        "--older-than",
        "4102444800",
        "--batch",
        &batch,
    ];
    let mut child = cli.command(&args).spawn().expect("spawn lshdb");
    let start = Instant::now();
    while stored() == N {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "nothing committed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait");
    let left = stored();
    assert!(left < N, "{status:?}");
    assert_eq!((N - left) % BATCH, 0, "{left} left: a part of a commit");
    cli.run(&["check", "k.lshdb"]).ok();
    // The oldest went first: ids were stamped in one second, so in id
    // (here key) order.
    if left > 0 {
        let first = format!("doc-{:05}", N - left);
        cli.run(&["get", "k.lshdb", &first]).ok();
    }
    let gone = format!("doc-{:05}", N - left - 1);
    cli.run(&["get", "k.lshdb", &gone]).expect(1);
    let v = cli
        .run(&["expire", "k.lshdb", "--older-than", "4102444800", "--json"])
        .ok()
        .json();
    assert_eq!(v["removed"].as_u64(), Some(left));
    cli.run(&["check", "k.lshdb"]).ok();
}

/// Records with their own timestamps (`--time-field`): whole seconds or
/// RFC 3339, in JSON Lines and CSV, through `add`, `import` and `dedup
/// --db`; `expire` then removes by those times.
#[test]
fn records_carry_their_timestamps_with_time_field() {
    let cli = Cli::new();
    cli.run(&["create", "t.lshdb", "--timestamps"]).ok();
    let lines = [
        r#"{"id": "old", "text": "a story about the harbour from long ago", "seen": 1000000000}"#,
        r#"{"id": "rfc", "text": "a story about the market from last year", "seen": "2001-09-09T01:46:41Z"}"#,
        r#"{"id": "new", "text": "a story about the weather this morning", "seen": "4000000000"}"#,
    ];
    cli.write("docs.jsonl", lines.join("\n") + "\n");
    cli.run(&[
        "add",
        "t.lshdb",
        "--jsonl",
        "docs.jsonl",
        "--time-field",
        "seen",
    ])
    .ok();
    cli.write(
        "more.csv",
        "id,text,seen\ncsv-old,an old record read from a table of values,999999999\n\
         csv-new,a new record read from a table of values,2100-01-01T00:00:00+00:00\n",
    );
    cli.run(&[
        "add",
        "t.lshdb",
        "--jsonl",
        "more.csv",
        "--time-field",
        "seen",
    ])
    .ok();
    cli.write(
        "export.jsonl",
        r#"{"id": "imported", "text": "an imported record about rivers and stones", "at": 5}"#,
    );
    cli.run(&[
        "import",
        "t.lshdb",
        "--in",
        "export.jsonl",
        "--time-field",
        "at",
    ])
    .ok();
    // 1,000,000,001 is 2001-09-09T01:46:41Z: `rfc` is not older than it.
    let v = cli
        .run(&["expire", "t.lshdb", "--older-than", "1000000001", "--json"])
        .ok()
        .json();
    assert_eq!(v["removed"].as_u64(), Some(3), "old, csv-old, imported");
    for (key, code) in [
        ("old", 1),
        ("csv-old", 1),
        ("imported", 1),
        ("rfc", 0),
        ("new", 0),
    ] {
        cli.run(&["get", "t.lshdb", key]).expect(code);
    }
    cli.run(&["check", "t.lshdb"]).ok();
}

#[test]
fn a_missing_or_bad_time_field_names_the_line() {
    let cli = Cli::new();
    cli.run(&["create", "t.lshdb", "--timestamps"]).ok();
    let lines = [
        r#"{"id": "a", "text": "the first record of the input file here", "seen": 1700000000}"#,
        r#"{"id": "b", "text": "the second record of the input, no time"}"#,
        r#"{"id": "c", "text": "the third record of the input, bad time", "seen": "last tuesday"}"#,
        r#"{"id": "d", "text": "the fourth record of the input, negative", "seen": -5}"#,
    ];
    cli.write("docs.jsonl", lines.join("\n") + "\n");
    let out = cli
        .run(&[
            "add",
            "t.lshdb",
            "--jsonl",
            "docs.jsonl",
            "--time-field",
            "seen",
        ])
        .ok();
    out.stderr_has("skipped line 2: missing field `seen` (--time-field)");
    out.stderr_has("skipped line 3: field `seen` (--time-field) is not a time");
    out.stderr_has("skipped line 4: field `seen` (--time-field) is not a time");
    cli.run(&["get", "t.lshdb", "b"]).expect(1);
    let line = cli
        .run(&[
            "add",
            "t.lshdb",
            "--jsonl",
            "docs.jsonl",
            "--time-field",
            "seen",
            "--strict",
        ])
        .error_line();
    assert!(
        line.contains("line 2: missing field `seen` (--time-field)"),
        "{line}"
    );
    // A file without the time index: the error names the rebuild.
    cli.run(&["create", "plain.lshdb"]).ok();
    let line = cli
        .run(&[
            "add",
            "plain.lshdb",
            "--jsonl",
            "docs.jsonl",
            "--time-field",
            "seen",
        ])
        .error_line();
    assert!(
        line.contains("`lshdb rebuild plain.lshdb --timestamps`"),
        "{line}"
    );
    cli.run(&[
        "import",
        "plain.lshdb",
        "--in",
        "docs.jsonl",
        "--time-field",
        "seen",
    ])
    .error_line();
    // Files added by path carry no fields.
    cli.write("note.txt", "a plain text file");
    let line = cli
        .run(&["add", "t.lshdb", "note.txt", "--time-field", "seen"])
        .error_line();
    assert!(line.contains("--jsonl"), "{line}");
}

#[test]
fn dedup_db_stores_the_records_times() {
    let cli = Cli::new();
    let lines = [
        r#"{"id": "a", "text": "the quick brown fox jumps over the lazy dog by the river", "seen": 100}"#,
        r#"{"id": "b", "text": "the quick brown fox jumps over the lazy dog by the river!", "seen": 200}"#,
        r#"{"id": "c", "text": "an unrelated record about databases and their indexes", "seen": 4000000000}"#,
    ];
    cli.write("day1.jsonl", lines.join("\n") + "\n");
    let dedup = |db: &str, extra: &[&str]| {
        let base = [
            "dedup",
            "day1.jsonl",
            "--db",
            db,
            "--id-field",
            "id",
            "--out",
            "kept.jsonl",
        ];
        cli.run_with(&base, extra)
    };
    // A --db this run creates keeps the time index.
    let v = dedup("d.lshdb", &["--time-field", "seen", "--json"])
        .ok()
        .json();
    assert_eq!(v["kept"], 2, "{v}");
    let v = cli
        .run(&["expire", "d.lshdb", "--older-than", "1000", "--json"])
        .ok()
        .json();
    assert_eq!(v["removed"].as_u64(), Some(1), "a (stamped 100) expired");
    cli.run(&["get", "d.lshdb", "c"]).ok();
    // An existing one without it: the error names the rebuild.
    cli.run(&["create", "plain.lshdb"]).ok();
    let line = dedup("plain.lshdb", &["--time-field", "seen"]).error_line();
    assert!(
        line.contains("`lshdb rebuild plain.lshdb --timestamps`"),
        "{line}"
    );
    // Without --db, or with another keep policy, it means nothing.
    let line = cli
        .run(&[
            "dedup",
            "day1.jsonl",
            "--time-field",
            "seen",
            "--out",
            "k.jsonl",
        ])
        .error_line();
    assert!(line.contains("--db"), "{line}");
    let line = dedup("e.lshdb", &["--time-field", "seen", "--keep", "longest"]).error_line();
    assert!(line.contains("--keep first"), "{line}");
}

/// `docs/expiry.md`'s command-line example runs as written, and does what
/// it says.
#[test]
fn the_docs_time_field_example_runs() {
    let cli = Cli::new();
    cli.run_doc_example("expiry.md", "Timestamps from records");
    cli.run(&["get", "news.lshdb", "storm"]).expect(1);
    cli.run(&["check", "news.lshdb"]).ok();
}
