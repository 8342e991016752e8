//! Pins the `--json` shapes of the reports the CLI renders from the
//! library's typed values (issue 21): the explain objects of both query
//! kinds, `stats` (plain and `--deep`), `check`, and the warnings worded
//! for the CLI from `lshdb::Warning`'s numbers. A field renamed, dropped or
//! added in the library's serde form fails here.

mod cli_support;

use cli_support::{corpus, jsonl, Cli};
use serde_json::Value;

/// The object's keys, in the (sorted) order the CLI prints them.
fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// A database holding the corpus and 12 copies of one text (a hot bucket).
fn database(cli: &Cli) -> String {
    cli.run(&["create", "db.lshdb", "--containment", "--simhash"])
        .ok();
    let mut docs = corpus();
    for i in 0..12 {
        docs.push((
            format!("same{i:02}"),
            "one and the same sentence, stored twelve times over".to_owned(),
        ));
    }
    cli.write("docs.jsonl", jsonl(&docs));
    cli.run(&["add", "db.lshdb", "--jsonl", "docs.jsonl"]).ok();
    "db.lshdb".to_owned()
}

#[test]
fn explain_objects_keep_their_fields_and_warnings_their_cli_words() {
    let cli = Cli::new();
    let db = database(&cli);
    let args = ["query", &db, "--key", "same00", "--max-bucket", "5"];
    let v = cli
        .run(&[&args[..], &["--explain", "--json"]].concat())
        .ok()
        .json();
    assert_eq!(keys(&v), ["explain", "hits", "query", "warnings"]);
    let e = &v["explain"];
    assert_eq!(
        keys(e),
        [
            "buckets_probed",
            "candidate_probability_at_threshold",
            "candidates",
            "forest",
            "micros",
            "posting_sizes",
            "pruned_by_length",
            "pruned_by_signature",
            "recall_estimate",
            "returned",
            "truncated_buckets",
            "verified",
            "warnings"
        ]
    );
    assert_eq!(keys(&e["micros"]), ["lookup", "sketch", "verify"]);
    assert_eq!(keys(&e["truncated_buckets"][0]), ["band", "read"]);
    let cut = e["truncated_buckets"].as_array().unwrap().len();
    let words = format!(
        "{cut} bucket(s) held more than 5 documents and were cut there; for an exhaustive \
         answer run the query again with `--max-bucket 50`"
    );
    assert_eq!(v["warnings"], serde_json::json!([words]));
    assert_eq!(e["warnings"], v["warnings"]);
    // Text mode: the same words as a note.
    let out = cli.run(&args).ok();
    out.stderr_has(&format!("lshdb: note: {words}"));

    let contained: [&str; 6] = ["query", &db, "--key", "f1-a", "--containment", "0.8"];
    let c = cli
        .run_with(&contained, &["--explain", "--json"])
        .ok()
        .json();
    assert_eq!(
        keys(&c),
        ["containment", "explain", "hits", "query", "warnings"]
    );
    assert_eq!(
        keys(&c["explain"]),
        [
            "candidates",
            "classes",
            "micros",
            "pruned_by_length",
            "recall_estimate",
            "returned",
            "scanned",
            "verified",
            "warnings"
        ]
    );
    assert_eq!(
        keys(&c["explain"]["classes"][0]),
        [
            "candidate_probability",
            "class",
            "depth",
            "index_probability",
            "jaccard_bound",
            "max_size",
            "min_size",
            "postings",
            "trees",
            "truncated",
            "whole"
        ]
    );
}

#[test]
fn a_scan_without_the_index_names_the_command_that_builds_it() {
    let cli = Cli::new();
    let db = cli.corpus_db("plain.lshdb", &[]);
    let contained: [&str; 6] = ["query", &db, "--key", "f1-a", "--containment", "0.8"];
    let v = cli.run_with(&contained, &["--json"]).ok().json();
    assert_eq!(
        v["warnings"],
        serde_json::json!([
            "this database has no containment index, so every stored set was \
             compared with the query (exact, but linear in the database); build the index with \
             `lshdb rebuild FILE --containment`"
        ])
    );
}

#[test]
fn stats_and_check_keep_their_fields() {
    let cli = Cli::new();
    let db = database(&cli);
    let plain = [
        "allocated_bytes",
        "bytes_per_document",
        "containment_postings",
        "documents",
        "file_bytes",
        "fresh_postings",
        "run_postings",
        "runs",
        "settings",
        "simhash_postings",
    ];
    let v = cli.run(&["stats", &db, "--json"]).ok().json();
    assert_eq!(keys(&v), plain);
    assert_eq!(
        keys(&v["settings"]),
        [
            "bands",
            "clusters",
            "containment",
            "minhash_seed",
            "num_perm",
            "rows",
            "scheme",
            "shingle",
            "shingle_seed",
            "simhash_max_distance",
            "store_text",
            "threshold",
            "timestamps",
            "whitespace"
        ]
    );
    assert_eq!(
        keys(&v["settings"]["containment"]),
        ["classes_per_octave", "depth", "trees"]
    );
    let created = cli
        .run(&[
            "create",
            "other.lshdb",
            "--containment",
            "--simhash",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(created["settings"], v["settings"]);

    let deep = cli.run(&["stats", &db, "--deep", "--json"]).ok().json();
    let mut all: Vec<&str> = plain.to_vec();
    all.extend([
        "bucket_size_histogram",
        "buckets",
        "largest_buckets",
        "mean_shingles",
        "postings",
    ]);
    all.sort_unstable();
    assert_eq!(keys(&deep), all);
    assert_eq!(
        keys(&deep["bucket_size_histogram"][0]),
        ["buckets", "max_size", "min_size"]
    );
    let largest = &deep["largest_buckets"][0];
    assert_eq!(keys(largest), ["band", "documents", "key"]);
    assert_eq!(largest["documents"], 12);
    assert_eq!(largest["key"].as_str().unwrap().len(), 16);

    let check = cli.run(&["check", &db, "--json"]).ok();
    assert_eq!(
        keys(&check.json()),
        [
            "clean",
            "containment_postings",
            "documents",
            "postings",
            "problem_count",
            "problems",
            "simhash_postings",
            "storage_ok"
        ]
    );
    check.stdout_starts("{\"clean\":true,");
}
