//! End-to-end tests of the whole-database commands of `lshdb`: `pairs` and
//! `groups` against hand-checked families and brute-force similarities,
//! `check` on a healthy and on a damaged file (exit code 3), `compact`,
//! `rebuild`, `export`/`import` round trips, and output that ends quietly
//! when the reading end of a pipe closes early.

mod cli_support;

use cli_support::{
    brute_pairs, corpus, jsonl, keys, keys_of, raw_numbers, similarity, text_of, Cli,
};
use lshdb::store::runs::{decode_block, encode_block, RUN_BLOCKS};
use redb::ReadableTable;
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::process::Stdio;

/// `pairs --json` output as (a, b) → similarity, checking the line shape.
fn pairs_of(cli: &Cli, db: &str, extra: &[&str]) -> BTreeMap<(String, String), f64> {
    let mut args = vec!["pairs", db, "--json"];
    args.extend_from_slice(extra);
    let out = cli.run(&args).ok();
    let mut pairs = BTreeMap::new();
    for (line, v) in out.stdout.lines().zip(out.json_lines()) {
        let object = v.as_object().unwrap();
        assert_eq!(object.len(), 3, "{v}");
        let key = |f: &str| v[f].as_str().unwrap().to_owned();
        let exact = raw_numbers(line, "similarity");
        let previous = pairs.insert((key("a"), key("b")), exact[0]);
        assert!(previous.is_none(), "pair reported twice: {v}");
    }
    pairs
}

/// The expected groups of the corpus, as sets of keys.
fn family_groups() -> BTreeSet<BTreeSet<String>> {
    [
        keys(&["f1-a", "f1-b", "f1-c"]),
        keys(&["f2-a", "f2-b", "f2-c"]),
        keys(&["f3-a", "f3-b"]),
    ]
    .into_iter()
    .collect()
}

/// `groups --json` output as sets of keys, checking the shape and each
/// member's similarity (its best to another member, by brute force).
fn groups_of(cli: &Cli, db: &str, threshold: f64) -> BTreeSet<BTreeSet<String>> {
    let t = threshold.to_string();
    let out = cli.run(&["groups", db, "--threshold", &t, "--json"]).ok();
    let brute = brute_pairs(&corpus(), threshold);
    let mut groups = BTreeSet::new();
    for (i, (line, v)) in out.stdout.lines().zip(out.json_lines()).enumerate() {
        assert_eq!(v["group"], i + 1, "groups are numbered from 1: {v}");
        assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
        let members = v["members"].as_array().unwrap();
        let mut last = f64::INFINITY;
        for (m, s) in members.iter().zip(raw_numbers(line, "similarity")) {
            let key = m["key"].as_str().unwrap();
            let best = brute
                .iter()
                .filter(|((a, b), _)| a == key || b == key)
                .map(|(_, s)| *s)
                .fold(0.0, f64::max);
            assert_eq!(s, best, "{key}: best similarity to another member");
            assert!(s <= last, "members best first: {v}");
            last = s;
        }
        groups.insert(keys_of(&v["members"]).into_iter().collect());
    }
    groups
}

#[test]
fn pairs_and_groups_match_brute_force() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let docs = corpus();
    let brute = brute_pairs(&docs, 0.8);
    // By hand: every pair inside a family, nothing across.
    let expected: BTreeSet<(String, String)> = [
        ("f1-a", "f1-b"),
        ("f1-a", "f1-c"),
        ("f1-b", "f1-c"),
        ("f2-a", "f2-b"),
        ("f2-a", "f2-c"),
        ("f2-b", "f2-c"),
        ("f3-a", "f3-b"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(brute.keys().cloned().collect::<BTreeSet<_>>(), expected);

    // `a` was stored before `b`; the corpus is loaded in key order.
    let found = pairs_of(&cli, &db, &[]);
    assert_eq!(found, brute, "exact Jaccard, as computed by the library");
    for ((a, b), s) in &found {
        assert_eq!(*s, similarity(&text_of(a), &text_of(b)));
    }

    // A higher threshold keeps only the closest pairs.
    let near = pairs_of(&cli, &db, &["--threshold", "0.95"]);
    assert_eq!(near, brute_pairs(&docs, 0.95));
    assert!(!near.is_empty() && near.len() < brute.len(), "{near:?}");

    // Text output: `similarity<TAB>a<TAB>b` (keys may hold spaces).
    let out = cli.run(&["pairs", &db]).ok();
    let lines: BTreeSet<String> = out.stdout.lines().map(str::to_owned).collect();
    let expected_lines: BTreeSet<String> = brute
        .iter()
        .map(|((a, b), s)| format!("{s:.3}\t{a}\t{b}"))
        .collect();
    assert_eq!(lines, expected_lines);

    assert_eq!(groups_of(&cli, &db, 0.8), family_groups());
    // Groups are ordered largest first; the two-member family comes last.
    let v = cli.run(&["groups", &db, "--json"]).ok().json_lines();
    assert_eq!(keys_of(&v[2]["members"]).len(), 2);
    let out = cli.run(&["groups", &db]).ok();
    out.stdout_starts("3 near-duplicate group(s) at similarity ≥ 0.8 (7 verified pairs)\n");
    out.stdout_has("\ngroup 3 (2 documents)\n");

    // Below the index threshold: a note on stderr.
    let out = cli.run(&["groups", &db, "--threshold", "0.5"]).ok();
    out.stderr_starts("lshdb: note: threshold 0.5 is below the index threshold 0.8");
}

#[test]
fn check_finds_damage_with_exit_code_3() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let out = cli.run(&["check", &db]).ok();
    out.stdout_starts("clean: 11 documents, ");
    assert!(out
        .stdout
        .ends_with(", pages not verified (--pages), 0 problem(s)\n"));
    let pages = cli.run(&["check", "--pages", &db]).ok();
    pages.stdout_ends(", pages ok, 0 problem(s)\n");
    let v = cli.run(&["check", &db, "--json"]).ok().json();
    let bands = cli.run(&["stats", &db, "--json"]).ok().json()["settings"]["bands"]
        .as_u64()
        .unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "clean": true, "documents": 11, "postings": 11 * bands,
            "simhash_postings": 0, "containment_postings": 0, "storage_ok": null,
            "problem_count": 0, "problems": [],
        })
    );

    // Delete one posting (the last of a run's first block) behind lshdb's
    // back, after the CLI has exited.
    {
        let file = redb::Database::open(cli.path(&db)).unwrap();
        let txn = file.begin_write().unwrap();
        {
            let mut blocks = txn.open_table(RUN_BLOCKS).unwrap();
            let (key, mut entries) = {
                let (key, bytes) = blocks.iter().unwrap().next().unwrap().unwrap();
                let mut entries = Vec::new();
                decode_block(bytes.value(), &mut entries).unwrap();
                (key.value(), entries)
            };
            entries.pop();
            blocks
                .insert(key, encode_block(&entries).as_slice())
                .unwrap();
        }
        txn.commit().unwrap();
    }
    let out = cli.run(&["check", &db]).expect(3);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[0].starts_with("problem: "), "{}", lines[0]);
    assert!(lines[0].contains("missing from its bucket"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("DAMAGED: 11 documents, "),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].ends_with(", pages not verified (--pages), 1 problem(s)"),
        "{}",
        lines[1]
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let v = cli.run(&["check", &db, "--json"]).expect(3).json();
    assert_eq!(v["clean"], false);
    assert_eq!(v["storage_ok"], serde_json::Value::Null);
    assert_eq!(v["problem_count"], 1);
    assert_eq!(v["problems"].as_array().unwrap().len(), 1);
    assert_eq!(v["postings"], 11 * bands - 1);

    // Rebuilding the index from the stored signatures repairs it.
    cli.run(&["rebuild", &db, "--threshold", "0.8"]).ok();
    cli.run(&["check", &db]).ok();
}

#[test]
fn remove_compact_and_rebuild() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &["--store-text"]);
    let all: Vec<String> = corpus().into_iter().map(|(k, _)| k).collect();
    let mut args = vec!["remove", db.as_str()];
    args.extend(
        all.iter()
            .filter(|k| k.as_str() != "f2-a" && k.as_str() != "f2-b")
            .map(String::as_str),
    );
    let out = cli.run(&args).ok();
    assert_eq!(out.stdout, "removed 9 document(s)\n");
    let out = cli.run(&["compact", &db]).ok();
    out.stdout_starts("compacted: ");
    assert!(out.stdout.trim_end().ends_with(" bytes"), "{}", out.stdout);
    cli.run(&["check", &db]).ok();
    let v = cli
        .run(&["query", &db, "--key", "f2-a", "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&v["hits"]), ["f2-b"]);

    // Re-band for a lower threshold: the index follows, queries still work.
    cli.run(&["import", &db, "--in", "corpus.jsonl"]).ok();
    let out = cli.run(&["rebuild", &db, "--threshold", "0.6"]).ok();
    out.stdout_starts("rebuilt: threshold 0.6, ");
    let v = cli.run(&["stats", &db, "--json"]).ok().json();
    assert_eq!(v["settings"]["threshold"], 0.6);
    assert_eq!(v["documents"], 11);
    let v = cli
        .run(&["query", &db, "--key", "f1-a", "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&v["hits"]), ["f1-b", "f1-c"]);
    let v = cli
        .run(&["query", &db, "--text", &text_of("solo-3"), "--json"])
        .ok()
        .json();
    assert_eq!(keys_of(&v["hits"]), ["solo-3"]);
    assert_eq!(groups_of(&cli, &db, 0.6), family_groups());
    // Explicit bands and rows.
    let out = cli
        .run(&[
            "rebuild",
            &db,
            "--threshold",
            "0.7",
            "--bands",
            "16",
            "--rows",
            "8",
        ])
        .ok();
    assert_eq!(out.stdout, "rebuilt: threshold 0.7, 16 bands × 8 rows\n");
    cli.run(&["check", &db]).ok();
}

#[test]
fn export_import_round_trip_with_and_without_text() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &["--store-text"]);
    let out = cli.run(&["export", &db, "--out", "backup.jsonl"]).ok();
    assert_eq!(out.stdout, "exported 11 document(s)\n");
    let backup = std::fs::read_to_string(cli.path("backup.jsonl")).unwrap();
    // A header line with the settings, then the documents.
    let (header, records) = backup.split_once('\n').unwrap();
    let header: serde_json::Value = serde_json::from_str(header).unwrap();
    assert_eq!(header["lshdb_export"], 1, "{header}");
    assert_eq!(
        records,
        jsonl(&corpus()),
        "{{\"id\", \"text\"}} lines in key order"
    );
    // Without --out: the same lines on standard output, nothing else.
    assert_eq!(cli.run(&["export", &db]).ok().stdout, backup);

    cli.run(&["create", "copy.lshdb", "--store-text"]).ok();
    let out = cli
        .run(&["import", "copy.lshdb", "--in", "backup.jsonl"])
        .ok();
    out.stdout_starts("added 11 document(s)");
    let original = cli.run(&["pairs", &db, "--json"]).ok().stdout;
    assert!(!original.is_empty());
    assert_eq!(
        cli.run(&["pairs", "copy.lshdb", "--json"]).ok().stdout,
        original
    );

    // Without stored text the export holds the shingle sets, and importing
    // them gives the same pairs.
    let cli2 = Cli::new();
    let plain = cli2.corpus_db("plain.lshdb", &[]);
    cli2.run(&["export", &plain, "--out", "sets.jsonl"]).ok();
    let sets = std::fs::read_to_string(cli2.path("sets.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(sets.lines().nth(1).unwrap()).unwrap();
    assert_eq!(first["id"], "f1-a");
    assert!(first.get("text").is_none(), "{first}");
    let shingles = first["shingles"].as_array().unwrap();
    assert_eq!(shingles.len(), cli_support::shingle_count(&text_of("f1-a")));
    cli2.run(&["create", "copy.lshdb"]).ok();
    // From standard input this time.
    let out = cli2.run_stdin(&["import", "copy.lshdb"], &sets).ok();
    out.stdout_starts("added 11 document(s)");
    assert_eq!(
        cli2.run(&["pairs", "copy.lshdb", "--json"]).ok().stdout,
        cli2.run(&["pairs", &plain, "--json"]).ok().stdout
    );
    assert_eq!(cli2.run(&["pairs", &plain, "--json"]).ok().stdout, original);
    // Bad lines in an import are skipped and counted.
    let out = cli2
        .run_stdin(
            &["import", "copy.lshdb"],
            "{\"id\": \"x\", \"shingles\": [-1]}\n{\"id\": \"y\", \"text\": \"a good line of text\"}\n",
        )
        .ok();
    out.stdout_ends("; 1 bad record(s) skipped\n");
    out.stderr_starts("lshdb: skipped line 1: ");
}

/// Spawns `lshdb ARGS` with standard output piped, reads one line, closes
/// the pipe, and checks that the program ends with success and no panic.
fn close_early(cli: &Cli, args: &[&str]) -> String {
    let mut child = cli
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    first
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    let cli = Cli::new();
    // Far more output than a pipe buffers (64 KiB), so the writer meets the
    // closed pipe: 300 copies of one text give 44,850 pairs.
    let text = text_of("f1-a");
    let records: Vec<(String, String)> = (0..300)
        .map(|i| {
            (
                format!("a-rather-long-key-to-make-lines-longer-{i:04}"),
                text.clone(),
            )
        })
        .collect();
    cli.run(&["create", "big.lshdb", "--store-text"]).ok();
    cli.write("big.jsonl", jsonl(&records));
    cli.run(&["add", "big.lshdb", "--jsonl", "big.jsonl"]).ok();

    let first = close_early(&cli, &["pairs", "big.lshdb", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["similarity"], 1.0);
    close_early(&cli, &["pairs", "big.lshdb"]);
    close_early(&cli, &["export", "big.lshdb"]);
    let queries: String = (0..400)
        .map(|i| format!("{}\n", serde_json::json!({"id": i, "text": text})))
        .collect();
    cli.write("queries.jsonl", queries);
    close_early(&cli, &["query", "big.lshdb", "--jsonl", "queries.jsonl"]);
    // inspect prints one line per shingle.
    let long: String = (0..4000).map(|i| format!("word{i} ")).collect();
    let first = close_early(&cli, &["inspect", "--text", &long]);
    assert!(first.starts_with("normalised: "), "{first}");
    close_early(&cli, &["tune", "--threshold", "0.5"]);
}
