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
