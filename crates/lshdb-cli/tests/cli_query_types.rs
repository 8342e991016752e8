//! `query --top K`, `query --threshold 1`, `query --simhash D`, the
//! script-friendly text output, and `--json` on every command that writes.

mod cli_support;

use cli_support::{keys_of, similarity, text_of, Cli};

#[test]
fn top_k_returns_the_k_most_similar_with_a_recall_estimate() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let f1a = text_of("f1-a");
    let query: [&str; 4] = ["query", &db, "--text", &f1a];
    let v = cli
        .run_with(&query, &["--top", "2", "--json", "--explain"])
        .ok()
        .json();
    let hits = keys_of(&v["hits"]);
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0], "f1-a");
    assert_eq!(v["hits"][0]["similarity"], 1.0);
    let second = v["hits"][1]["similarity"].as_f64().unwrap();
    let expected = similarity(&text_of("f1-a"), &text_of(&hits[1]));
    assert!((second - expected).abs() < 1e-12);
    let recall = v["explain"]["recall_estimate"].as_f64().unwrap();
    assert!(recall > 0.9 && recall <= 1.0, "{recall}");
    // Text: the recall estimate closes the plan.
    let out = cli
        .run(&["query", &db, "--key", "f2-a", "--top", "1", "--explain"])
        .ok();
    out.stdout_starts("0.970\tf2-b\n");
    out.stdout_has("recall estimate: ");
    // --top with --threshold is a usage error.
    cli.run(&[
        "query",
        &db,
        "--key",
        "f2-a",
        "--top",
        "1",
        "--threshold",
        "0.5",
    ])
    .expect(2);
}

#[test]
fn threshold_one_finds_exact_duplicates() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    // The same text up to case and white space is the same shingle set.
    let copy = format!("  {}  ", text_of("f3-a").to_uppercase());
    cli.run_stdin(&["add", &db, "-", "--key", "copy"], &copy)
        .ok();
    let out = cli
        .run(&[
            "query",
            &db,
            "--key",
            "copy",
            "--threshold",
            "1",
            "--explain",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(keys_of(&out["hits"]), ["f3-a"]);
    assert_eq!(out["explain"]["buckets_probed"], 1);
    // f3-b is a near-duplicate, not an exact one.
    let out = cli
        .run(&["query", &db, "--key", "f3-b", "--threshold", "1"])
        .expect(1);
    assert_eq!(out.stdout, "");
    let err = cli
        .run(&["query", &db, "--key", "f3-b", "--threshold", "1.5"])
        .expect(2);
    err.stderr_has("above 0 and at most 1");
}

#[test]
fn simhash_search_from_the_cli() {
    let cli = Cli::new();
    let db = cli.corpus_db("sim.lshdb", &["--simhash"]);
    let f1a = text_of("f1-a");
    let query: [&str; 4] = ["query", &db, "--text", &f1a];
    let v = cli
        .run_with(&query, &["--simhash", "3", "--json"])
        .ok()
        .json();
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits[0]["key"], "f1-a");
    assert_eq!(hits[0]["distance"], 0);
    assert_eq!(hits[0]["fingerprint"].as_str().unwrap().len(), 16);
    assert!(hits.iter().all(|h| h["distance"].as_u64().unwrap() <= 3));
    let out = cli
        .run(&["query", &db, "--key", "f1-a", "--simhash", "3"])
        .ok();
    assert!(
        out.stdout.lines().all(|l| l.split('\t').count() == 2),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("\tf1-a\n"));
    // A distance above the index's is an error; so is a database without one.
    let err = cli
        .run(&["query", &db, "--key", "f1-a", "--simhash", "9"])
        .error_line();
    assert!(err.contains("up to 3"), "{err}");
    let plain = cli.corpus_db("plain.lshdb", &[]);
    let err = cli
        .run(&["query", &plain, "--key", "f1-a", "--simhash", "2"])
        .error_line();
    assert!(
        err.contains(
            "has no SimHash index; create the database with `lshdb create FILE --simhash`"
        ),
        "{err}"
    );
}

#[test]
fn text_output_separates_fields_with_tabs_and_keys_keep_spaces() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    let text = text_of("f1-a");
    let records = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "my first doc", "text": text}),
        serde_json::json!({"id": "my second doc", "text": format!("{text}.")}),
    );
    cli.write("in.jsonl", records);
    cli.run(&["add", "db.lshdb", "--jsonl", "in.jsonl"]).ok();
    let out = cli
        .run(&["query", "db.lshdb", "--key", "my first doc"])
        .ok();
    let fields: Vec<&str> = out.stdout.trim_end().split('\t').collect();
    assert_eq!(fields[1], "my second doc");
    let out = cli.run(&["pairs", "db.lshdb"]).ok();
    let fields: Vec<&str> = out.stdout.trim_end().split('\t').collect();
    assert_eq!(&fields[1..], ["my first doc", "my second doc"]);
    let out = cli.run(&["groups", "db.lshdb"]).ok();
    out.stdout_has("\tmy first doc\n");
    // --jsonl: exit code 1 only when no query found anything.
    cli.write(
        "q.jsonl",
        format!(
            "{}\n",
            serde_json::json!({"id": "q", "text": "nothing like it at all, really"})
        ),
    );
    cli.run(&["query", "db.lshdb", "--jsonl", "q.jsonl"])
        .expect(1);
    cli.run(&["query", "db.lshdb", "--jsonl", "q.jsonl", "--allow-empty"])
        .ok();
}

#[test]
fn every_command_that_writes_has_json() {
    let cli = Cli::new();
    let v = cli
        .run(&["create", "db.lshdb", "--store-text", "--json"])
        .ok()
        .json();
    assert_eq!(v["created"], "db.lshdb");
    assert_eq!(v["settings"]["store_text"], true);
    assert_eq!(v["settings"]["bands"], 16);
    cli.write("corpus.jsonl", cli_support::jsonl(&cli_support::corpus()));
    let v = cli
        .run(&["add", "db.lshdb", "--jsonl", "corpus.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(v["inserted"], 11);
    assert_eq!(v["complete"], true);
    let v = cli
        .run(&["remove", "db.lshdb", "f1-a", "nope", "--json"])
        .ok()
        .json();
    assert_eq!(v["removed"], 1);
    assert_eq!(v["missing"], serde_json::json!(["nope"]));
    let v = cli.run(&["compact", "db.lshdb", "--json"]).ok().json();
    assert!(v["bytes_after"].as_u64().unwrap() > 0);
    let v = cli
        .run(&["rebuild", "db.lshdb", "--threshold", "0.6", "--json"])
        .ok()
        .json();
    assert_eq!(v["threshold"], 0.6);
    cli.run(&["export", "db.lshdb", "--out", "backup.jsonl"])
        .ok();
    cli.run(&["create", "copy.lshdb"]).ok();
    let v = cli
        .run(&["import", "copy.lshdb", "--in", "backup.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(v["inserted"], 10);
}
