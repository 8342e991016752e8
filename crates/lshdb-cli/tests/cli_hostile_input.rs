//! Hostile input through the CLI (the library's side is
//! tests/hostile_input.rs): NUL bytes in JSON Lines keys and texts.

mod cli_support;

/// The CLI's JSON Lines path: `\u0000` in a JSON string is a NUL byte in
/// the document, accepted and found.
#[test]
fn nul_bytes_through_the_cli_jsonl_reader() {
    let cli = cli_support::Cli::new();
    cli.run(&["create", "db.lshdb", "--store-text"]).ok();
    cli.write(
        "in.jsonl",
        "{\"id\":\"n\\u0000k\",\"text\":\"left\\u0000right and more text\\u0000\"}\n",
    );
    let out = cli.run(&["add", "db.lshdb", "--jsonl", "in.jsonl"]).ok();
    out.stdout_starts("added 1 document(s)");
    // Queried with the same record: the query's text has the NUL too.
    let lines = cli
        .run(&["query", "db.lshdb", "--jsonl", "in.jsonl"])
        .ok()
        .json_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0]["hits"],
        serde_json::json!([{"key": "n\u{0}k", "similarity": 1.0}])
    );
}
