//! Containment search from the command line (`lshdb create --containment`,
//! `query --containment`, `rebuild --no-containment`): hits, `--json
//! --explain`, exit codes, usage errors, and the scan with a note once the
//! index is dropped. The library's side is tests/containment.rs.

mod cli_support;

use cli_support::{jsonl, Cli, Run};

/// Runs `lshdb query c.lshdb --text TEXT --containment AT EXTRA…`.
fn contained(cli: &Cli, text: &str, at: &str, extra: &[&str]) -> Run {
    let mut args = vec!["query", "c.lshdb", "--text", text, "--containment", at];
    args.extend_from_slice(extra);
    cli.run(&args)
}

#[test]
fn query_containment_from_the_command_line() {
    let cli = Cli::new();
    let out = cli.run(&["create", "c.lshdb", "--containment"]).ok();
    out.stdout_has("containment index (32 trees × 4)");
    let docs = vec![
        (
            "manual".to_owned(),
            "To install the package, run the installer and follow the instructions \
             on screen. Then restart the computer and log in again."
                .to_owned(),
        ),
        (
            "other".to_owned(),
            "Nothing to see here at all, really.".to_owned(),
        ),
    ];
    cli.write("docs.jsonl", jsonl(&docs));
    cli.run(&["add", "c.lshdb", "--jsonl", "docs.jsonl"]).ok();
    let passage = "run the installer and follow the instructions on screen";
    let out = contained(&cli, passage, "0.8", &[]).ok();
    let line = out.stdout.lines().next().unwrap().to_owned();
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!((fields[0], fields[2]), ("1.000", "manual"), "{line}");
    let out = contained(&cli, passage, "0.8", &["--json", "--explain"]).ok();
    let v = out.json();
    assert_eq!(v["containment"], 0.8);
    assert_eq!(v["hits"][0]["key"], "manual");
    assert_eq!(v["hits"][0]["containment"], 1.0);
    assert!(v["hits"][0]["jaccard"].as_f64().unwrap() < 0.6);
    assert_eq!(v["explain"]["scanned"], false);
    assert!(!v["explain"]["classes"].as_array().unwrap().is_empty());
    // Nothing found: exit code 1, as grep.
    contained(&cli, "zzz qqq", "0.5", &[]).expect(1);
    // Bad thresholds and conflicting flags are usage errors.
    contained(&cli, "x", "1.5", &[]).expect(2);
    contained(&cli, "x", "0.5", &["--top", "3"]).expect(2);
    // Dropping the index: the same answer, by a scan, with a note.
    let out = cli
        .run(&["rebuild", "c.lshdb", "--no-containment", "--json"])
        .ok();
    assert_eq!(out.json()["containment"], false);
    let out = contained(&cli, passage, "0.8", &[]).ok();
    assert!(out.stdout.contains("manual"));
    out.stderr_has("lshdb rebuild FILE --containment");
    let out = cli.run(&["rebuild", "c.lshdb", "--containment"]).ok();
    out.stdout_has("containment index");
    let out = cli.run(&["stats", "c.lshdb", "--json"]).ok();
    assert_eq!(out.json()["containment_postings"], 64);
    assert_eq!(out.json()["settings"]["containment"]["trees"], 32);
}
