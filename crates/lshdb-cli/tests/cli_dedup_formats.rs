//! `lshdb dedup` per format: a byte-order mark before JSON Lines, a
//! dictionary-encoded (pandas `category`) Parquet text column, and empty,
//! null and unreadable records of CSV and Parquet kept or rejected as JSON
//! Lines' are.

mod cli_support;

use cli_support::records::{
    dedup_ids, dedup_text, lines_of, rec, text, write_parquet, SIDE_OUTPUTS,
};
use cli_support::Cli;

#[test]
fn a_byte_order_mark_does_not_cost_the_first_record() {
    let cli = Cli::new();
    let input = format!(
        "\u{feff}{}{}",
        rec("a", text(1).into()),
        rec("b", text(2).into())
    );
    cli.write("in.jsonl", &input);
    dedup_ids(&cli, "in.jsonl", &["--out", "k.jsonl"]).ok();
    let kept = lines_of(&cli, "k.jsonl");
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept[0].starts_with('{'),
        "the mark is not written: {:?}",
        kept[0]
    );
    // `add --jsonl` too.
    cli.run(&["create", "db.lshdb"]).ok();
    let run = cli.run(&["add", "db.lshdb", "--jsonl", "in.jsonl"]).ok();
    run.stdout_has("added 2 document(s)");
}

#[test]
fn a_dictionary_encoded_parquet_text_column_is_read_as_strings() {
    use arrow_array::types::Int32Type;
    use arrow_array::{Array, DictionaryArray, RecordBatch, StringArray};
    use std::sync::Arc;
    let cli = Cli::new();
    // A pandas `category`: rows point into a dictionary of texts.
    let texts = StringArray::from(vec![text(1), text(2), String::new()]);
    let keys = arrow_array::Int32Array::from(vec![0, 1, 0, 2, 1, 0]);
    let column = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(texts)).unwrap();
    let ids = StringArray::from(vec!["a", "b", "c", "d", "e", "f"]);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as Arc<dyn Array>),
        ("text", Arc::new(column) as Arc<dyn Array>),
    ])
    .unwrap();
    write_parquet(&cli, "in.parquet", &batch);
    let run = dedup_ids(
        &cli,
        "in.parquet",
        &["--out", "k.parquet", "--dropped", "d.jsonl", "--json"],
    )
    .ok();
    let summary = run.json();
    // a, b and the empty d are kept; c, e and f are copies.
    assert_eq!(summary["kept"], 3, "{summary}");
    assert_eq!(summary["dropped"], 3, "{summary}");
    assert_eq!(summary["rejected"], 0, "{summary}");
}

#[test]
fn csv_and_parquet_keep_empty_and_null_texts_and_reject_the_rest_into_rejected() {
    use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let cli = Cli::new();
    let csv = format!(
        "id,body\na,{}\nempty,\nbad,x,y\nb,{}\ncopy,{}\n",
        text(1),
        text(2),
        text(1)
    );
    cli.write("in.csv", &csv);
    let run = dedup_ids(
        &cli,
        "in.csv",
        &[
            &["--text-field", "body", "--out", "k.csv"][..],
            &SIDE_OUTPUTS,
        ]
        .concat(),
    )
    .ok();
    let summary = run.json();
    assert_eq!(
        (&summary["kept"], &summary["dropped"], &summary["rejected"]),
        (&3.into(), &1.into(), &1.into()),
        "{summary}"
    );
    assert!(cli.read("k.csv").contains("\nempty,\n"));
    assert_eq!(lines_of(&cli, "r.jsonl").len(), 1);

    // Parquet: a null and an empty text are kept; a non-string text column
    // rejects its rows, each into --rejected as a JSON object.
    let texts = StringArray::from(vec![
        Some(text(1)),
        None,
        Some(String::new()),
        Some(text(1)),
    ]);
    let ids = StringArray::from(vec!["a", "null", "empty", "copy"]);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as Arc<dyn Array>),
        ("text", Arc::new(texts) as Arc<dyn Array>),
        (
            "n",
            Arc::new(Int64Array::from(vec![1, 2, 3, 4])) as Arc<dyn Array>,
        ),
    ])
    .unwrap();
    write_parquet(&cli, "in.parquet", &batch);
    let run = dedup_ids(&cli, "in.parquet", &["--out", "k.parquet", "--json"]).ok();
    let summary = run.json();
    assert_eq!(
        (&summary["kept"], &summary["dropped"]),
        (&3.into(), &1.into()),
        "{summary}"
    );
    let err = dedup_text(&cli, "in.parquet", "n", &["--out", "k2.parquet"]).expect(1);
    err.stderr_has("field `n` is not a string");
    dedup_text(
        &cli,
        "in.parquet",
        "n",
        &["--out", "k2.parquet", "--rejected", "r.jsonl"],
    )
    .ok();
    let rejected = lines_of(&cli, "r.jsonl");
    assert_eq!(rejected.len(), 4);
    let first: serde_json::Value = serde_json::from_str(&rejected[0]).unwrap();
    assert_eq!(first["record"]["id"], "a");
    assert_eq!(first["record"]["n"], 1);
    assert_eq!(first["line"], 1);
}
