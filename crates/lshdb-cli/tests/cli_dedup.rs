//! `lshdb dedup`: records in, kept records out, for JSON Lines (plain,
//! gzip, zstd), CSV and Parquet; the truth is computed here by exact
//! Jaccard over every earlier record.

mod cli_support;

use cli_support::records::{dedup_ids, dedup_text, write_parquet};
use cli_support::{corpus, similarity, Cli};
use std::collections::BTreeSet;
use std::io::Write;

const THRESHOLD: f64 = 0.8;

/// Records (id, text): the test corpus, then planted copies of some
/// records with one character changed, interleaved, then an exact copy.
fn records() -> Vec<(String, String)> {
    let mut docs = corpus();
    let planted = [
        ("dup-1", "f1-a", 10),
        ("dup-2", "solo-2", 30),
        ("dup-3", "f3-a", 70),
    ];
    for (id, of, at) in planted {
        let mut changed = text_in(&docs, of);
        changed.replace_range(at..at + 1, "#");
        docs.push((id.to_owned(), changed));
    }
    let solo = text_in(&docs, "solo-1");
    docs.push(("dup-4".to_owned(), solo));
    docs
}

/// The ids `first` keeps, by exact Jaccard: a record is dropped when a
/// kept earlier record has similarity ≥ the threshold.
fn truth_first(docs: &[(String, String)]) -> BTreeSet<String> {
    let mut kept: Vec<&(String, String)> = Vec::new();
    for doc in docs {
        if kept.iter().all(|k| similarity(&k.1, &doc.1) < THRESHOLD) {
            kept.push(doc);
        }
    }
    kept.iter().map(|(k, _)| k.clone()).collect()
}

fn jsonl_lines(docs: &[(String, String)]) -> Vec<String> {
    // Field order and spacing a serializer would not produce, to see that
    // the lines are copied, not re-encoded.
    docs.iter()
        .enumerate()
        .map(|(i, (k, t))| {
            format!(
                "{{ \"text\": {},  \"id\": \"{k}\", \"n\": {i} }}",
                serde_json::to_string(t).unwrap()
            )
        })
        .collect()
}

fn ids_of_lines(lines: &str) -> BTreeSet<String> {
    lines
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// A working folder holding [`records`] as the JSON Lines file `name`,
/// and the records.
fn written_records(name: &str) -> (Cli, Vec<(String, String)>) {
    let cli = Cli::new();
    let docs = records();
    cli.write(name, jsonl_text(&docs));
    (cli, docs)
}

/// The records as one JSON Lines text (the lines of [`jsonl_lines`]).
fn jsonl_text(docs: &[(String, String)]) -> String {
    jsonl_lines(docs).iter().map(|l| format!("{l}\n")).collect()
}

/// The ids of the JSON Lines of the file `name`.
fn ids_in(cli: &Cli, name: &str) -> BTreeSet<String> {
    ids_of_lines(&cli.read(name))
}

/// The text of the record `key`.
fn text_in(docs: &[(String, String)], key: &str) -> String {
    docs.iter()
        .find(|(k, _)| k == key)
        .expect("a record key")
        .1
        .clone()
}

/// Runs dedup on `input` and checks the kept lines are exactly the
/// expected input lines, byte for byte, in input order.
fn check_jsonl(cli: &Cli, input: &str) {
    let docs = records();
    let lines = jsonl_lines(&docs);
    let kept = truth_first(&docs);
    assert!(
        kept.len() < docs.len() - 3,
        "the planted copies are dropped"
    );
    let run = dedup_ids(
        cli,
        input,
        &[
            "--out",
            "kept.jsonl",
            "--dropped",
            "dropped.jsonl",
            "--json",
        ],
    )
    .ok();
    let summary = run.json();
    assert_eq!(summary["read"], docs.len());
    assert_eq!(summary["kept"], kept.len());
    assert_eq!(summary["dropped"], docs.len() - kept.len());
    let out = cli.read("kept.jsonl");
    let expected: String = docs
        .iter()
        .zip(&lines)
        .filter(|((k, _), _)| kept.contains(k))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    assert_eq!(out, expected, "kept lines are the input lines, unchanged");
    let dropped = cli.read("dropped.jsonl");
    for line in dropped.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (id, of) = (
            v["id"].as_str().unwrap(),
            v["duplicate_of"].as_str().unwrap(),
        );
        assert!(kept.contains(of) && !kept.contains(id), "{line}");
        let exact = similarity(&text_in(&docs, id), &text_in(&docs, of));
        // serde_json's float parsing may be one unit in the last place off.
        assert!(
            (v["similarity"].as_f64().unwrap() - exact).abs() < 1e-12,
            "{line}"
        );
        assert!(exact >= THRESHOLD);
    }
    assert_eq!(dropped.lines().count(), docs.len() - kept.len());
}

#[test]
fn jsonl_kept_lines_are_unchanged_and_exactly_the_planted_copies_drop() {
    let (cli, _) = written_records("in.jsonl");
    check_jsonl(&cli, "in.jsonl");
    // Without --out the kept lines go to standard output, the summary to
    // standard error.
    let run = dedup_ids(&cli, "in.jsonl", &[]).ok();
    assert_eq!(run.stdout, cli.read("kept.jsonl"));
    run.stderr_starts("lshdb: read 15 record(s): ");
}

#[test]
fn gzip_and_zstd_inputs_are_found_by_their_magic_bytes() {
    let cli = Cli::new();
    let text: String = jsonl_text(&records());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    // A misleading name: the bytes decide.
    cli.write("in.data", gz.finish().unwrap());
    check_jsonl(&cli, "in.data");
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    cli.write("in.jsonl.zst", zst);
    check_jsonl(&cli, "in.jsonl.zst");
    // Standard input too.
    let run = cli
        .run_stdin(&["dedup", "-", "--id-field", "id"], &text)
        .ok();
    assert_eq!(ids_of_lines(&run.stdout), truth_first(&records()));
}

#[test]
fn csv_records_keep_their_bytes_and_the_header() {
    let cli = Cli::new();
    let docs = records();
    let mut csv = String::from("id,body,score\n");
    let mut raw = Vec::new();
    for (i, (k, t)) in docs.iter().enumerate() {
        // Quotes, an embedded newline and a doubled quote in some texts.
        let record = if i % 3 == 0 {
            format!("{k},\"{}\n\"\"quoted\"\"\",{i}\n", t.replace('"', "\"\""))
        } else {
            format!("{k},\"{}\",{i}\n", t.replace('"', "\"\""))
        };
        raw.push(record.clone());
        csv.push_str(&record);
    }
    cli.write("in.csv", &csv);
    let run = dedup_ids(
        &cli,
        "in.csv",
        &["--text-field", "body", "--out", "kept.csv", "--json"],
    )
    .ok();
    let with_suffix: Vec<(String, String)> = docs
        .iter()
        .enumerate()
        .map(|(i, (k, t))| {
            let text = if i % 3 == 0 {
                format!("{t}\n\"quoted\"")
            } else {
                t.clone()
            };
            (k.clone(), text)
        })
        .collect();
    let kept = truth_first(&with_suffix);
    assert_eq!(run.json()["kept"], kept.len());
    let expected: String = std::iter::once("id,body,score\n".to_owned())
        .chain(
            docs.iter()
                .zip(&raw)
                .filter(|((k, _), _)| kept.contains(k))
                .map(|(_, r)| r.clone()),
        )
        .collect();
    assert_eq!(cli.read("kept.csv"), expected);
    // A header without records gives the header alone.
    cli.write("empty.csv", "id,body,score\r\n");
    dedup_text(&cli, "empty.csv", "body", &["--out", "e.csv"]).ok();
    assert_eq!(cli.read("e.csv"), "id,body,score\r\n");
    // Windows line endings stay as they are.
    let crlf = "id,body\r\na,some text long enough to be a record here\r\n\
                b,\"another, quite different text\r\non two lines\"\r\n";
    cli.write("crlf.csv", crlf);
    dedup_text(&cli, "crlf.csv", "body", &["--out", "c.csv"]).ok();
    assert_eq!(cli.read("c.csv"), crlf);
    // A bad record (wrong field count) is reported with its line number.
    cli.write(
        "bad.csv",
        "id,body\na,some text here for the record\nb,x,y\n",
    );
    let run = dedup_text(
        &cli,
        "bad.csv",
        "body",
        &["--out", "k2.csv", "--rejected", "r.jsonl"],
    )
    .ok();
    run.stderr_has("lshdb: skipped line 3: 3 field(s), the header has 2");
    // The rejected record is in --rejected, unchanged.
    let rejected: serde_json::Value = serde_json::from_str(cli.read("r.jsonl").trim()).unwrap();
    assert_eq!(rejected["record"], "b,x,y");
    assert_eq!(rejected["line"], 3);
    assert_eq!(rejected["source"], "bad.csv");
}

#[test]
fn parquet_rows_are_filtered_with_the_same_schema() {
    use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let cli = Cli::new();
    let docs = records();
    let ids = StringArray::from(docs.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>());
    let texts = StringArray::from(docs.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>());
    let n = Int64Array::from((0..docs.len() as i64).collect::<Vec<_>>());
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as Arc<dyn Array>),
        ("text", Arc::new(texts) as Arc<dyn Array>),
        ("n", Arc::new(n) as Arc<dyn Array>),
    ])
    .unwrap();
    write_parquet(&cli, "in.parquet", &batch);
    dedup_ids(&cli, "in.parquet", &["--out", "kept.parquet"]).ok();
    let file = std::fs::File::open(cli.path("kept.parquet")).unwrap();
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(reader.schema().fields(), batch.schema().fields());
    let mut got = Vec::new();
    for b in reader.build().unwrap() {
        let b = b.unwrap();
        let ids = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let ns = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            got.push((ids.value(i).to_owned(), ns.value(i)));
        }
    }
    let kept = truth_first(&docs);
    let expected: Vec<(String, i64)> = docs
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| kept.contains(k))
        .map(|(i, (k, _))| (k.clone(), i as i64))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_second_run_with_db_drops_copies_of_what_the_first_kept() {
    let (cli, docs) = written_records("day1.jsonl");
    dedup_ids(
        &cli,
        "day1.jsonl",
        &["--db", "seen.lshdb", "--out", "k1.jsonl"],
    )
    .ok();
    let kept1 = truth_first(&docs);
    assert_eq!(ids_in(&cli, "k1.jsonl"), kept1);
    // Day 2: copies of day-1 records (kept and dropped ones) and new text.
    let f2 = docs
        .iter()
        .find(|(k, _)| k == "f2-a")
        .unwrap()
        .1
        .replace("light", "Light");
    let day2 = vec![
        ("new-1".to_owned(), f2),
        ("new-2".to_owned(), "An entirely new record about medieval castles, moats, drawbridges and the sieges they withstood.".to_owned()),
        ("new-3".to_owned(), docs.iter().find(|(k, _)| k == "dup-1").unwrap().1.clone()),
    ];
    cli.write("day2.jsonl", jsonl_text(&day2));
    let run = dedup_ids(
        &cli,
        "day2.jsonl",
        &["--db", "seen.lshdb", "--dropped", "d2.jsonl", "--json"],
    )
    .ok();
    let kept2 = ids_of_lines(
        &run.stdout
            .lines()
            .take_while(|l| !l.contains("\"read\""))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert_eq!(kept2, cli_support::keys(&["new-2"]));
    let dropped = cli.read("d2.jsonl");
    let of: BTreeSet<String> = dropped
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["duplicate_of"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(of.iter().all(|k| kept1.contains(k)), "{dropped}");
    // The database holds the kept records only.
    let stats = cli.run(&["stats", "seen.lshdb", "--json"]).ok().json();
    assert_eq!(stats["documents"], kept1.len() + 1);
}

#[test]
fn keep_longest_keeps_the_longest_of_each_group() {
    let cli = Cli::new();
    let base = "Our quarterly newsletter reports record attendance at the summer jazz festival and a successful auction";
    let docs = vec![
        ("a".to_owned(), base.to_owned()),
        ("b".to_owned(), format!("{base}!")),
        ("c".to_owned(), format!("{base}.")),
        ("d".to_owned(), "A different text about the recipe for plum dumplings with floury potatoes and semolina.".to_owned()),
    ];
    assert!(similarity(&docs[0].1, &docs[1].1) >= THRESHOLD);
    cli.write("in.jsonl", jsonl_text(&docs));
    let run = dedup_ids(
        &cli,
        "in.jsonl",
        &["--keep", "longest", "--clusters", "c.jsonl"],
    )
    .ok();
    // b and c tie on length: the first seen (b) wins.
    assert_eq!(ids_of_lines(&run.stdout), cli_support::keys(&["b", "d"]));
    let clusters = cli.read("c.jsonl");
    let cluster: serde_json::Value =
        serde_json::from_str(clusters.lines().next().unwrap()).unwrap();
    assert_eq!(cluster["kept"], "b");
    let members: BTreeSet<&str> = cluster["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(members, BTreeSet::from(["a", "c"]));
    // max:FIELD and min:FIELD on a numeric field.
    let with_n: String = docs
        .iter()
        .zip([3, 9, 1, 5])
        .map(|((k, t), n)| format!("{}\n", serde_json::json!({"id": k, "text": t, "n": n})))
        .collect();
    cli.write("n.jsonl", with_n);
    let run = dedup_ids(&cli, "n.jsonl", &["--keep", "max:n"]).ok();
    assert_eq!(ids_of_lines(&run.stdout), cli_support::keys(&["b", "d"]));
    let run = dedup_ids(&cli, "n.jsonl", &["--keep", "min:n"]).ok();
    assert_eq!(ids_of_lines(&run.stdout), cli_support::keys(&["c", "d"]));
}

#[test]
fn bad_records_are_reported_by_line_and_nested_fields_and_line_keys_work() {
    let cli = Cli::new();
    let long = "A record whose body lives in a nested object, long enough to shingle well.";
    let input = format!(
        "{}\n\nnot json\n{}\n{}\n{}\n",
        serde_json::json!({"meta": {"body": long}}),
        serde_json::json!({"meta": {"other": 1}}),
        serde_json::json!({"meta": {"body": format!("{long}!")}}),
        serde_json::json!({"meta": {"body": 5}}),
    );
    cli.write("in.jsonl", &input);
    let run = dedup_text(
        &cli,
        "in.jsonl",
        "meta.body",
        &[
            "--dropped",
            "d.jsonl",
            "--out",
            "k.jsonl",
            "--rejected",
            "r.jsonl",
        ],
    )
    .ok();
    run.stderr_has("lshdb: skipped line 3: malformed JSON");
    run.stderr_has("lshdb: skipped line 4: missing field `meta.body`");
    run.stderr_has("lshdb: skipped line 6: field `meta.body` is not a string");
    run.stdout_starts("read 5 record(s): 1 kept, 1 dropped as near-duplicates, 3 rejected");
    let dropped: serde_json::Value = serde_json::from_str(cli.read("d.jsonl").trim()).unwrap();
    assert_eq!(dropped["id"], "line:5");
    assert_eq!(dropped["duplicate_of"], "line:1");
    // Repeated errors are collapsed as `add` collapses them.
    let many: String = (0..20).map(|_| "{oops\n").collect::<String>()
        + &format!("{}\n", serde_json::json!({"text": long}));
    cli.write("many.jsonl", many);
    let run = cli
        .run(&[
            "dedup",
            "many.jsonl",
            "--out",
            "m.jsonl",
            "--rejected",
            "r.jsonl",
        ])
        .ok();
    run.stderr_has("… and 15 more bad record(s) with the same error (malformed JSON); 20 in all");
}

#[test]
fn outputs_onto_an_input_or_the_database_are_refused() {
    let cli = Cli::new();
    cli.write(
        "in.jsonl",
        "{\"text\": \"some text to deduplicate here\"}\n",
    );
    let refused = |args: &[&str]| {
        let run = cli.run(args).expect(2);
        run.stderr_starts("error: ");
        run.stderr
    };
    let err = refused(&["dedup", "in.jsonl", "--out", "in.jsonl"]);
    assert!(
        err.contains("--out in.jsonl is the input in.jsonl"),
        "{err}"
    );
    assert_eq!(
        cli.read("in.jsonl"),
        "{\"text\": \"some text to deduplicate here\"}\n"
    );
    cli.run(&["create", "db.lshdb"]).ok();
    let err = refused(&[
        "dedup",
        "in.jsonl",
        "--db",
        "db.lshdb",
        "--dropped",
        "db.lshdb",
    ]);
    assert!(err.contains("is the database file itself"), "{err}");
    std::os::unix::fs::symlink(cli.path("in.jsonl"), cli.path("link.jsonl")).unwrap();
    let err = refused(&["dedup", "in.jsonl", "--out", "link.jsonl"]);
    assert!(err.contains("is the input"), "{err}");
    // A policy that reads twice on standard input, Parquet on standard
    // input, and inputs of two formats are refused; an unknown policy is a
    // usage error.
    let err = cli.run(&["dedup", "-", "--keep", "longest"]).error_line();
    assert!(err.contains("reads the input twice"), "{err}");
    let err = cli.run(&["dedup", "-", "--format", "parquet"]).error_line();
    assert!(err.contains("Parquet input must be a file"), "{err}");
    cli.write("in.csv", "text\nsome text to deduplicate here\n");
    let err = cli.run(&["dedup", "in.jsonl", "in.csv"]).error_line();
    assert!(
        err.contains("in.csv is CSV but in.jsonl is JSON Lines"),
        "{err}"
    );
    let usage = cli
        .run(&["dedup", "in.jsonl", "--keep", "biggest"])
        .expect(2);
    usage.stderr_has("use first, longest, max:FIELD or min:FIELD");
}

#[test]
fn a_rerun_after_an_unfinished_run_resumes() {
    let (cli, docs) = written_records("in.jsonl");
    // An unfinished run: the kept records of the first half are committed,
    // and the run label is left (as Ctrl-C leaves it).
    let half: String = jsonl_text(&docs[..7]);
    cli.write("half.jsonl", &half);
    dedup_ids(&cli, "half.jsonl", &["--db", "r.lshdb", "--out", "h.jsonl"]).ok();
    {
        let db = lshdb::Database::open(cli.path("r.lshdb")).unwrap();
        let run_id =
            serde_json::json!({"inputs": ["in.jsonl"], "keep": "first", "start": 0}).to_string();
        db.set_label("dedup.unfinished", &run_id).unwrap();
    }
    let run = dedup_ids(&cli, "in.jsonl", &["--db", "r.lshdb", "--out", "k.jsonl"]).ok();
    run.stdout_has("(resumed)");
    assert_eq!(ids_in(&cli, "k.jsonl"), truth_first(&docs));
    // Not resuming: the same records again are duplicates of themselves.
    let run = dedup_ids(&cli, "in.jsonl", &["--db", "r.lshdb", "--json"]).ok();
    let summary: serde_json::Value = serde_json::from_str(run.stderr.trim()).unwrap();
    assert_eq!(summary["kept"], 0);
    assert_eq!(summary["resumed"], false);
}

#[test]
fn ctrl_c_stops_cleanly_writes_no_output_and_a_rerun_resumes() {
    use cli_support::process::{send, wait_ended};
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;
    let docs = records();
    let all: String = jsonl_text(&docs);
    let half: String = jsonl_text(&docs[..8]);
    for pause in [1500, 4000] {
        let cli = Cli::new();
        let args = ["dedup", "-", "--db", "r.lshdb", "--id-field", "id"];
        let args = [&args[..], &["--out", "k.jsonl"]].concat();
        // Standard input stays open: dedup ends up waiting for more.
        let (mut child, stdin) = cli.spawn_fed(&args, &half);
        std::thread::sleep(Duration::from_millis(pause));
        send(&child, "-INT");
        wait_ended(
            &mut child,
            Duration::from_secs(10),
            "still running after Ctrl-C",
        );
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        if out.status.signal().is_some() {
            continue; // before the handler was installed: try a longer pause
        }
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(130), "{stderr}");
        assert!(
            stderr.ends_with("lshdb: interrupted: no output was written; the records kept so far are committed to r.lshdb; run the same command again to finish (it resumes)\n"),
            "{stderr}"
        );
        assert!(!cli.path("k.jsonl").exists());
        // The database was closed cleanly and is consistent, and holds the
        // records kept from the first half (f1-a, f2-a, f3-a).
        cli.run(&["check", "r.lshdb"]).ok();
        let stats = cli.run(&["stats", "r.lshdb", "--json"]).ok().json();
        assert_eq!(stats["documents"], 3);
        // The same command again, with the whole input: it resumes, and the
        // output is an uninterrupted run's.
        let run = cli.run_stdin(&args, &all).ok();
        run.stdout_has("(resumed)");
        let kept = ids_in(&cli, "k.jsonl");
        assert_eq!(kept, truth_first(&docs));
        return;
    }
    panic!("lshdb never installed its Ctrl-C handler");
}

#[test]
fn keep_longest_with_db_keeps_earlier_runs_records_and_stores_only_the_kept() {
    let cli = Cli::new();
    let base =
        "Grandmother's recipe for plum dumplings calls for floury potatoes, semolina and plums";
    let other = "The spacecraft entered a highly elliptical orbit around Jupiter using its gravity";
    let day1 = vec![
        ("a".to_owned(), base.to_owned()),
        ("b".to_owned(), other.to_owned()),
    ];
    cli.write("d1.jsonl", jsonl_text(&day1));
    dedup_ids(&cli, "d1.jsonl", &["--db", "s.lshdb", "--keep", "longest"]).ok();
    // Day 2: a longer copy of a day-1 record (day 1's stays kept: it is in
    // the dataset already), and a group of two new records.
    let fresh = "An entirely new record about medieval castles, moats, drawbridges and sieges";
    let day2 = vec![
        ("a-long".to_owned(), format!("{base}!!")),
        ("c".to_owned(), fresh.to_owned()),
        ("c-long".to_owned(), format!("{fresh}, too")),
    ];
    assert!(similarity(&day2[1].1, &day2[2].1) >= THRESHOLD);
    cli.write("d2.jsonl", jsonl_text(&day2));
    let run = dedup_ids(
        &cli,
        "d2.jsonl",
        &[
            "--db",
            "s.lshdb",
            "--keep",
            "longest",
            "--dropped",
            "d.jsonl",
        ],
    )
    .ok();
    assert_eq!(ids_of_lines(&run.stdout), cli_support::keys(&["c-long"]));
    let dropped = cli.read("d.jsonl");
    assert!(
        dropped.contains(r#""duplicate_of":"a","id":"a-long""#),
        "{dropped}"
    );
    assert!(
        dropped.contains(r#""duplicate_of":"c-long","id":"c""#),
        "{dropped}"
    );
    // The database holds exactly the kept records of both days.
    let stats = cli.run(&["stats", "s.lshdb", "--json"]).ok().json();
    assert_eq!(stats["documents"], 3);
    cli.run(&["check", "s.lshdb"]).ok();
}

#[test]
fn bands_and_rows_set_the_banding_of_the_database_a_run_creates() {
    let cli = Cli::new();
    let text: String = jsonl_text(&records());
    cli.write("in.jsonl", &text);
    let expected = truth_first(&records());
    // A new --db gets the banding asked for, and drops what the truth drops.
    let banded = |bands: &str, rows: &str, out: &str| {
        let args = ["--db", "seen.lshdb", "--bands", bands, "--rows", rows];
        dedup_ids(&cli, "in.jsonl", &[&args[..], &["--out", out]].concat())
    };
    let run = banded("20", "6", "kept.jsonl").ok();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("read 15 record(s)"), "{said}");
    let kept = ids_in(&cli, "kept.jsonl");
    assert_eq!(kept, expected);
    let stats = cli.run(&["stats", "seen.lshdb", "--json"]).ok();
    let v = &stats.json_lines()[0];
    let s = &v["settings"];
    assert_eq!(
        (s["bands"].as_u64(), s["rows"].as_u64()),
        (Some(20), Some(6)),
        "{v}"
    );
    // An existing database of other banding: refused with the fix, and
    // nothing stored.
    let documents = |cli: &Cli| {
        cli.run(&["stats", "seen.lshdb", "--json"])
            .ok()
            .json_lines()[0]["documents"]
            .as_u64()
    };
    let before = documents(&cli);
    let run = banded("16", "8", "again.jsonl").expect(1);
    assert!(
        run.stderr.contains("has 20 bands × 6 rows") && run.stderr.contains("lshdb rebuild"),
        "{}",
        run.stderr
    );
    assert!(!cli.path("again.jsonl").exists());
    assert_eq!(documents(&cli), before);
    cli.run(&["check", "seen.lshdb"]).ok();
    // --bands without --rows is a usage error.
    cli.run(&["dedup", "in.jsonl", "--bands", "20"]).expect(2);
}
