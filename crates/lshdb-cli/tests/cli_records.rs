//! End-to-end tests of the one record reader across commands: `add` and
//! `query --jsonl` read JSON Lines, CSV and Parquet (plain or compressed)
//! with the fields and errors `dedup` has.

mod cli_support;

use arrow_array::{Array, RecordBatch, StringArray};
use cli_support::records::write_parquet;
use cli_support::{corpus, Cli};
use std::sync::Arc;

/// The corpus as CSV with columns `url` and `body` (quoted, so texts may
/// hold commas).
fn corpus_csv() -> String {
    let mut out = String::from("url,body\n");
    for (key, text) in corpus() {
        out.push_str(&format!("{key},\"{}\"\n", text.replace('"', "\"\"")));
    }
    out
}

#[test]
fn add_and_query_read_csv_and_parquet_with_the_same_fields() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.write("rows.csv", corpus_csv());
    let fields = ["--key-field", "url", "--text-field", "body", "--json"];
    let v = cli
        .run_with(&["add", "db.lshdb", "--records", "rows.csv"], &fields)
        .ok()
        .json();
    assert_eq!(v["inserted"], corpus().len(), "{v}");

    // Parquet, told by its content (no name hint), into another database.
    let (keys, texts): (Vec<String>, Vec<String>) = corpus().into_iter().unzip();
    let batch = RecordBatch::try_from_iter([
        ("url", Arc::new(StringArray::from(keys)) as Arc<dyn Array>),
        ("body", Arc::new(StringArray::from(texts)) as Arc<dyn Array>),
    ])
    .unwrap();
    write_parquet(&cli, "rows.data", &batch);
    cli.run(&["create", "p.lshdb"]).ok();
    let v = cli
        .run_with(&["add", "p.lshdb", "--jsonl", "rows.data"], &fields)
        .ok()
        .json();
    assert_eq!(v["inserted"], corpus().len(), "{v}");

    // query --jsonl reads the CSV as queries: one JSON line per record.
    let out = cli
        .run_with(
            &["query", "p.lshdb", "--jsonl", "rows.csv", "--format", "csv"],
            &fields[..4],
        )
        .ok();
    let lines = out.json_lines();
    assert_eq!(lines.len(), corpus().len());
    assert_eq!(lines[0]["query"], corpus()[0].0.as_str());
    assert_eq!(lines[0]["hits"][0]["key"], corpus()[0].0.as_str());
}

#[test]
fn a_wrong_field_fails_before_anything_is_added_in_every_format() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.write("rows.csv", corpus_csv());
    let err = cli
        .run(&[
            "add",
            "db.lshdb",
            "--jsonl",
            "rows.csv",
            "--key-field",
            "url",
        ])
        .error_line();
    assert!(
        err.contains("has no column `text` (--text-field); its columns: `url`, `body`"),
        "{err}"
    );
    cli.write("in.jsonl", cli_support::jsonl(&corpus()));
    let err = cli
        .run(&[
            "add",
            "db.lshdb",
            "--jsonl",
            "in.jsonl",
            "--key-field",
            "url",
        ])
        .error_line();
    assert!(
        err.contains("has the field `url` (--key-field); they have the fields `id`, `text`"),
        "{err}"
    );
    let v = cli.run(&["stats", "db.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 0);
    // A nested key, as dedup reads it.
    cli.write(
        "nested.jsonl",
        "{\"meta\": {\"id\": 7}, \"text\": \"some text of a record\"}\n",
    );
    cli.run(&[
        "add",
        "db.lshdb",
        "--jsonl",
        "nested.jsonl",
        "--key-field",
        "meta.id",
    ])
    .ok();
    cli.run(&["get", "db.lshdb", "7"]).ok();
}
