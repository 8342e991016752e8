//! `lshdb dedup --keep longest|max:F|min:F` on many identical texts:
//! 20,000 copies of one text take seconds (not a quadratic number of pairs
//! or bucket walks), with the decisions of grouping every record. With
//! `--db` identical texts are collapsed before grouping; without, a copy
//! joins its twin's cluster in the temporary database without a walk of
//! its buckets (`db/clusters/run.rs`).

mod cli_support;

use cli_support::{Cli, Run};

const COPIES: usize = 20_000;

fn input(other: &str, copy: &str) -> String {
    let mut out = String::new();
    out += &format!(
        "{}\n",
        serde_json::json!({"id": "other", "text": other, "n": 0})
    );
    for i in 0..COPIES {
        // The largest n is in the middle.
        let n = if i == COPIES / 2 { 1_000_000 } else { i };
        out += &format!(
            "{}\n",
            serde_json::json!({"id": format!("c{i}"), "text": copy, "n": n})
        );
    }
    out
}

/// Runs `lshdb dedup in.jsonl --id-field id --keep KEEP EXTRA… --json`,
/// failing the test when it takes over 120 s.
fn dedup_keep(cli: &Cli, keep: &str, extra: &[&str]) -> Run {
    let mut args = vec!["dedup", "in.jsonl", "--id-field", "id", "--keep", keep];
    args.extend_from_slice(extra);
    args.push("--json");
    cli.run_within(120, &args)
}

#[test]
fn many_identical_copies_are_grouped_at_once_with_the_same_decisions() {
    let cli = Cli::new();
    let copy = "one text copied many times over, as scraped pages often are, word for word";
    let other = "a different record about sailing boats, harbours, tides and the weather at sea";
    cli.write("in.jsonl", input(other, copy));
    let run = dedup_keep(
        &cli,
        "longest",
        &[
            "--out",
            "k.jsonl",
            "--dropped",
            "d.jsonl",
            "--clusters",
            "c.jsonl",
        ],
    );
    let summary = run.expect(0).json();
    assert_eq!(summary["kept"], 2, "{summary}");
    assert_eq!(summary["dropped"], COPIES - 1, "{summary}");
    // All copies tie on length: the first (c0) is kept, every other copy
    // is dropped as its duplicate with similarity 1.
    let kept = cli.read("k.jsonl");
    let ids: Vec<String> = kept
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect();
    assert_eq!(ids, ["\"other\"", "\"c0\""]);
    let dropped = cli.read("d.jsonl");
    for line in dropped.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["duplicate_of"], "c0", "{line}");
        assert_eq!(v["similarity"], 1.0, "{line}");
    }
    let clusters = cli.read("c.jsonl");
    let cluster: serde_json::Value =
        serde_json::from_str(clusters.lines().next().unwrap()).unwrap();
    assert_eq!(cluster["kept"], "c0");
    assert_eq!(cluster["dropped"].as_array().unwrap().len(), COPIES - 1);

    // max:n keeps the copy with the largest n, which is not the first: a
    // --db then stores that copy, and only the kept records.
    let run = dedup_keep(&cli, "max:n", &["--db", "s.lshdb", "--out", "k2.jsonl"]);
    assert_eq!(run.expect(0).json()["kept"], 2);
    let kept = cli.read("k2.jsonl");
    let middle = format!("\"c{}\"", COPIES / 2);
    assert!(kept.contains(&middle.to_string()), "{kept}");
    let db = lshdb::Database::open(cli.path("s.lshdb")).unwrap();
    assert_eq!(db.len().unwrap(), 2);
    assert!(db.contains(&format!("c{}", COPIES / 2)).unwrap());
    assert!(db.contains("other").unwrap());
    assert!(!db.contains("c0").unwrap());
}
