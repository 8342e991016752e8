//! Containment search from the command line (`lshdb create --containment`,
//! `query --containment`, `rebuild --no-containment`): hits, `--json
//! --explain`, exit codes, usage errors, and the scan with a note once the
//! index is dropped. The library's side is tests/containment.rs.

mod cli_support;

use cli_support::{jsonl, Cli};

#[test]
fn query_containment_from_the_command_line() {
    let cli = Cli::new();
    let out = cli.run(&["create", "c.lshdb", "--containment"]).ok();
    assert!(
        out.stdout.contains("containment index (32 trees × 4)"),
        "{}",
        out.stdout
    );
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
    let out = cli
        .run(&[
            "query",
            "c.lshdb",
            "--text",
            passage,
            "--containment",
            "0.8",
        ])
        .ok();
    let line = out.stdout.lines().next().unwrap().to_owned();
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!((fields[0], fields[2]), ("1.000", "manual"), "{line}");
    let out = cli
        .run(&[
            "query",
            "c.lshdb",
            "--text",
            passage,
            "--containment",
            "0.8",
            "--json",
            "--explain",
        ])
        .ok();
    let v = out.json();
    assert_eq!(v["containment"], 0.8);
    assert_eq!(v["hits"][0]["key"], "manual");
    assert_eq!(v["hits"][0]["containment"], 1.0);
    assert!(v["hits"][0]["jaccard"].as_f64().unwrap() < 0.6);
    assert_eq!(v["explain"]["scanned"], false);
    assert!(!v["explain"]["classes"].as_array().unwrap().is_empty());
    // Nothing found: exit code 1, as grep.
    cli.run(&[
        "query",
        "c.lshdb",
        "--text",
        "zzz qqq",
        "--containment",
        "0.5",
    ])
    .expect(1);
    // Bad thresholds and conflicting flags are usage errors.
    cli.run(&["query", "c.lshdb", "--text", "x", "--containment", "1.5"])
        .expect(2);
    cli.run(&[
        "query",
        "c.lshdb",
        "--text",
        "x",
        "--containment",
        "0.5",
        "--top",
        "3",
    ])
    .expect(2);
    // Dropping the index: the same answer, by a scan, with a note.
    let out = cli
        .run(&["rebuild", "c.lshdb", "--no-containment", "--json"])
        .ok();
    assert_eq!(out.json()["containment"], false);
    let out = cli
        .run(&[
            "query",
            "c.lshdb",
            "--text",
            passage,
            "--containment",
            "0.8",
        ])
        .ok();
    assert!(out.stdout.contains("manual"));
    assert!(
        out.stderr.contains("lshdb rebuild FILE --containment"),
        "{}",
        out.stderr
    );
    let out = cli.run(&["rebuild", "c.lshdb", "--containment"]).ok();
    assert!(out.stdout.contains("containment index"), "{}", out.stdout);
    let out = cli.run(&["stats", "c.lshdb", "--json"]).ok();
    assert_eq!(out.json()["containment_postings"], 64);
    assert_eq!(out.json()["settings"]["containment"]["trees"], 32);
}
