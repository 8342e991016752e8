//! End-to-end tests of the `lshdb` binary: every step a separate process on
//! a database in a temporary folder. This file covers the document life
//! cycle (create, add, query, remove across processes), the query inputs
//! and options, `get` and `stats`. The other `cli_*.rs` files cover
//! loading (`cli_add.rs`), `scan` (`cli_scan.rs`), the whole-database
//! commands and pipes (`cli_admin.rs`), and exit codes and help texts
//! (`cli_usage.rs`).

mod cli_support;

use cli_support::{
    brute_pairs, corpus, jsonl, keys_of, raw_numbers, shingle_count, similarity, text_of, Cli,
};

#[test]
fn create_add_query_remove_across_processes() {
    let cli = Cli::new();
    let out = cli.run(&["create", "db.lshdb", "--store-text"]).ok();
    out.stdout_starts("created db.lshdb");
    out.stdout_has("text stored");
    cli.write("corpus.jsonl", jsonl(&corpus()));
    let out = cli
        .run(&["add", "db.lshdb", "--jsonl", "corpus.jsonl"])
        .ok();
    assert_eq!(
        out.stdout.trim(),
        "added 11 document(s) (0 replaced) in 1 commit(s); 0 rejected; 0 bad record(s) skipped"
    );

    let out = cli
        .run(&["query", "db.lshdb", "--key", "f1-a", "--json"])
        .ok();
    let v = out.json();
    assert_eq!(v["query"], "f1-a");
    let hits = v["hits"].as_array().unwrap();
    let exact = raw_numbers(&out.stdout, "similarity");
    assert_eq!(
        keys_of(&v["hits"]),
        ["f1-b", "f1-c"],
        "best first; not the key itself"
    );
    for (hit, exact) in hits.iter().zip(exact) {
        let key = hit["key"].as_str().unwrap();
        let expected = similarity(&text_of("f1-a"), &text_of(key));
        assert_eq!(exact, expected);
        assert_eq!(hit.as_object().unwrap().len(), 2, "only key and similarity");
    }

    let out = cli.run(&["remove", "db.lshdb", "f1-b", "nope"]).ok();
    assert_eq!(out.stdout.trim(), "removed 1 document(s)");
    assert_eq!(
        out.stderr.trim(),
        "lshdb: note: no document with key `nope`"
    );

    let v = cli
        .run(&["query", "db.lshdb", "--key", "f1-a", "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&v["hits"]), ["f1-c"]);
    // Text output: one `similarity<TAB>key` line per hit.
    let out = cli.run(&["query", "db.lshdb", "--key", "f1-a"]).ok();
    let expected = similarity(&text_of("f1-a"), &text_of("f1-c"));
    assert_eq!(out.stdout, format!("{expected:.3}\tf1-c\n"));
    // Nothing found: exit code 1 (as grep), a note on standard error and
    // nothing on standard output; --allow-empty makes it a success.
    let out = cli.run(&["query", "db.lshdb", "--key", "solo-1"]).expect(1);
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "lshdb: no near-duplicates found\n");
    let out = cli
        .run(&[
            "query",
            "db.lshdb",
            "--key",
            "solo-1",
            "--allow-empty",
            "--json",
        ])
        .ok();
    assert_eq!(out.json()["hits"], serde_json::json!([]));
    let line = cli.run(&["get", "db.lshdb", "f1-b"]).error_line();
    assert_eq!(line, "lshdb: no document with key `f1-b`");
}

#[test]
fn query_by_text_file_and_jsonl() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &["--store-text"]);

    // --text: the stored copy itself is a hit with similarity 1.
    let v = cli
        .run(&["query", &db, "--text", &text_of("f2-b"), "--json"])
        .ok()
        .json();
    assert_eq!(v["query"], serde_json::Value::Null);
    assert_eq!(v["hits"][0]["key"], "f2-b");
    assert_eq!(v["hits"][0]["similarity"], 1.0);
    let mut found = keys_of(&v["hits"]);
    found.sort();
    assert_eq!(found, ["f2-a", "f2-b", "f2-c"]);

    // --file: the label is the path.
    cli.write("q.txt", text_of("f3-a"));
    let v = cli
        .run(&["query", &db, "--file", "q.txt", "--json"])
        .ok()
        .json();
    assert_eq!(v["query"], "q.txt");
    assert_eq!(keys_of(&v["hits"]), ["f3-a", "f3-b"]);
    cli.write("bin.txt", b"abc\0def");
    let line = cli.run(&["query", &db, "--file", "bin.txt"]).error_line();
    assert_eq!(line, "lshdb: bin.txt is not a text file");

    // --jsonl: one JSON line per good query, labelled with its id; bad
    // lines are reported by number on stderr and skipped.
    let queries = format!(
        "{}\nnot json\n{}\n",
        serde_json::json!({"id": "q-one", "text": text_of("f1-c")}),
        serde_json::json!({"id": "q-two", "text": "nothing like any stored document at all"}),
    );
    cli.write("queries.jsonl", &queries);
    let out = cli.run(&["query", &db, "--jsonl", "queries.jsonl"]).ok();
    let lines = out.json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["query"], "q-one");
    assert_eq!(keys_of(&lines[0]["hits"])[0], "f1-c");
    assert_eq!(lines[0]["hits"].as_array().unwrap().len(), 3);
    assert_eq!(lines[1]["query"], "q-two");
    assert_eq!(lines[1]["hits"], serde_json::json!([]));
    out.stderr_starts("lshdb: skipped line 2: malformed JSON");
    // The same from standard input.
    let piped = cli
        .run_stdin(&["query", &db, "--jsonl", "-"], &queries)
        .ok();
    assert_eq!(piped.stdout, out.stdout);
}

#[test]
fn query_limit_threshold_and_explain() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let text = text_of("f1-a");
    let all = cli
        .run(&["query", &db, "--text", &text, "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&all["hits"]), ["f1-a", "f1-b", "f1-c"]);

    let v = cli
        .run(&["query", &db, "--text", &text, "--limit", "1", "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&v["hits"]), ["f1-a"]);

    // A threshold between the similarities of f1-b to its two relatives
    // (one changed character away from f1-a, two from f1-c) keeps only the
    // closer one.
    let (near, far) = (
        similarity(&text_of("f1-b"), &text_of("f1-a")),
        similarity(&text_of("f1-b"), &text_of("f1-c")),
    );
    assert!(near > far && far >= 0.8, "{near} {far}");
    let t = format!("{}", (near + far) / 2.0);
    let out = cli
        .run(&["query", &db, "--key", "f1-b", "--threshold", &t, "--json"])
        .ok();
    assert_eq!(keys_of(&out.json()["hits"]), ["f1-a"]);
    assert_eq!(raw_numbers(&out.stdout, "similarity"), [near]);
    let v = cli
        .run(&["query", &db, "--key", "f1-b", "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&v["hits"]), ["f1-a", "f1-c"]);

    let out = cli.run(&["query", &db, "--key", "f1-a", "--explain"]).ok();
    for word in [
        "plan:",
        "sketch",
        "lookup",
        "candidates",
        "prune",
        "verify",
        "P(candidate)",
    ] {
        assert!(out.stdout.contains(word), "{word} missing:\n{}", out.stdout);
    }
    let v = cli
        .run(&["query", &db, "--key", "f1-a", "--explain", "--json"])
        .ok()
        .json();
    let e = &v["explain"];
    assert!(e["candidates"].as_u64().unwrap() >= 2, "{e}");
    assert!(e["verified"].as_u64().unwrap() >= 2, "{e}");
    assert_eq!(e["returned"], 2);
    for step in ["sketch", "lookup", "verify"] {
        assert!(e["micros"][step].is_u64(), "micros.{step}: {e}");
    }
    let bands = cli.run(&["stats", &db, "--json"]).ok().json()["settings"]["bands"].clone();
    assert_eq!(e["buckets_probed"], bands);
    assert!(e["warnings"].is_array());
    // Without --explain there is no explain object.
    let v = cli
        .run(&["query", &db, "--key", "f1-a", "--json"])
        .ok()
        .json();
    assert!(v.get("explain").is_none());
}

#[test]
fn get_and_stats() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &["--store-text"]);
    get_shows_the_text_when_stored(&cli, &db);
    let deep = stats_deep_walks_everything(&cli, &db);
    stats_without_deep_walks_nothing(&cli, &db, &deep);
}

/// `get` of `f2-c` in `db` (made with `--store-text`), and in a database
/// made without.
fn get_shows_the_text_when_stored(cli: &Cli, db: &str) {
    let text = text_of("f2-c");
    let n = shingle_count(&text);
    let out = cli.run(&["get", db, "f2-c"]).ok();
    assert_eq!(
        out.stdout,
        format!("key       f2-c\nshingles  {n}\ntext\n{text}\n")
    );
    let v = cli.run(&["get", db, "f2-c", "--json"]).ok().json();
    assert_eq!(
        v,
        serde_json::json!({"key": "f2-c", "shingles": n, "simhash": null, "text": text})
    );

    // Without --store-text the text is not kept.
    let cli2 = Cli::new();
    let db2 = cli2.corpus_db("plain.lshdb", &["--simhash"]);
    let v = cli2.run(&["get", &db2, "f2-c", "--json"]).ok().json();
    assert_eq!(v["text"], serde_json::Value::Null);
    assert_eq!(v["simhash"].as_str().unwrap().len(), 16, "hex SimHash");
    let out = cli2.run(&["get", &db2, "f2-c"]).ok();
    assert!(out.stdout.contains("(not stored;"), "{}", out.stdout);
}

/// `stats --deep` of the corpus database `db`; returns its JSON.
fn stats_deep_walks_everything(cli: &Cli, db: &str) -> serde_json::Value {
    let v = cli.run(&["stats", db, "--json", "--deep"]).ok().json();
    let docs = corpus().len() as u64;
    assert_eq!(v["documents"], docs);
    let (length, allocated) = (
        v["file_bytes"].as_u64().unwrap(),
        v["allocated_bytes"].as_u64().unwrap(),
    );
    assert_eq!(length, std::fs::metadata(cli.path(db)).unwrap().len());
    assert!(allocated > 0 && allocated <= length + 4096, "{v}");
    let per_document = v["bytes_per_document"].as_f64().unwrap();
    assert!(
        (per_document - allocated as f64 / docs as f64).abs() < 1e-6,
        "{v}"
    );
    let s = &v["settings"];
    let (bands, rows) = (s["bands"].as_u64().unwrap(), s["rows"].as_u64().unwrap());
    assert!(bands * rows <= 128 && bands > 1, "{s}");
    assert_eq!(s["num_perm"], 128);
    assert_eq!(s["threshold"], 0.8);
    assert_eq!(s["shingle"], "char:5");
    assert_eq!(s["scheme"], "one-permutation");
    assert_eq!(s["store_text"], true);
    assert_eq!(s["simhash_max_distance"], serde_json::Value::Null);
    assert_eq!(
        v["postings"],
        docs * bands,
        "one posting per band per document"
    );
    let histogram: u64 = v["bucket_size_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["buckets"].as_u64().unwrap())
        .sum();
    assert_eq!(v["buckets"].as_u64().unwrap(), histogram);
    for key in ["bytes_per_document", "mean_shingles", "largest_buckets"] {
        assert!(v.get(key).is_some(), "{key} missing: {v}");
    }
    let out = cli.run(&["stats", db, "--deep"]).ok();
    assert!(
        out.stdout
            .starts_with("file        db.lshdb\ndocuments   11 ("),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(" shingles on average)\n"),
        "{}",
        out.stdout
    );
    out.stdout_has("\nlargest buckets");
    v
}

/// `stats` without `--deep` of `db`: the counts of `deep`, no bucket
/// figures.
fn stats_without_deep_walks_nothing(cli: &Cli, db: &str, v: &serde_json::Value) {
    // Without --deep, nothing that walks every signature or posting: the
    // same counts, and no bucket figures.
    let cheap = cli.run(&["stats", db, "--json"]).ok().json();
    for key in [
        "documents",
        "file_bytes",
        "allocated_bytes",
        "bytes_per_document",
        "settings",
        "runs",
        "run_postings",
        "fresh_postings",
        "simhash_postings",
        "containment_postings",
    ] {
        assert_eq!(cheap[key], v[key], "{key}: {cheap}");
    }
    for key in [
        "mean_shingles",
        "buckets",
        "postings",
        "bucket_size_histogram",
        "largest_buckets",
    ] {
        assert!(cheap.get(key).is_none(), "{key} without --deep: {cheap}");
    }
    let out = cli.run(&["stats", db]).ok();
    assert!(
        out.stdout
            .starts_with("file        db.lshdb\ndocuments   11 (")
            && out.stdout.contains(
                "\nbuckets     not counted (--deep reads every posting), 0 SimHash postings\n"
            )
            && !out.stdout.contains("shingles on average")
            && !out.stdout.contains("largest buckets"),
        "{}",
        out.stdout
    );
}

#[test]
fn brute_force_expectations_hold() {
    // The corpus is what the tests assume: the families are near-duplicates
    // above 0.9, and nothing else reaches 0.5.
    let pairs = brute_pairs(&corpus(), 0.5);
    assert_eq!(pairs.len(), 3 + 3 + 1, "{pairs:?}");
    for ((a, b), s) in &pairs {
        assert_eq!(a[..2], b[..2], "{a} {b}");
        assert!(*s > 0.9, "{a} {b} {s}");
    }
}
