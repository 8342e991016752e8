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

/// `--clusters` within `--memory`: with `--memory 64M` its drops pass
/// their budget (a 32nd, 2 MiB) and go through temporary files. The file
/// still holds, line by line, exactly the `--dropped` lines grouped by the
/// kept record they duplicate: in the order of each group's first drop,
/// the drops in the order they came (here 12,000 groups of copies, and
/// one group of 20,000).
#[test]
fn the_clusters_file_past_its_memory_is_the_dropped_lines_grouped() {
    let cli = Cli::new();
    let copy = "one text copied many times over, as scraped pages often are, word for word";
    let mut text = input("a different record about sailing boats and tides", copy);
    for i in 0..36_000 {
        let seed = i % 12_000;
        let words: Vec<String> = (0..12)
            .map(|w| format!("s{seed}w{w}x{}", seed * 31 + w))
            .collect();
        text += &format!(
            "{}\n",
            serde_json::json!({"id": format!("f{i}"), "text": words.join(" ")})
        );
    }
    cli.write("in.jsonl", text);
    let args = [
        "--memory",
        "64M",
        "--dropped",
        "d.jsonl",
        "--clusters",
        "c.jsonl",
        "--out",
        "k.jsonl",
    ];
    let summary = dedup_keep(&cli, "first", &args).expect(0).json();
    assert!(summary["dropped"].as_u64() >= Some(43_000), "{summary}");
    // The dropped lines, grouped by the record they duplicate.
    let mut groups: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
    let mut at = std::collections::HashMap::new();
    for line in cli.read("d.jsonl").lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let of = v["duplicate_of"].as_str().unwrap().to_owned();
        let i = *at.entry(of.clone()).or_insert_with(|| {
            groups.push((of, Vec::new()));
            groups.len() - 1
        });
        let member = serde_json::json!({"id": v["id"], "similarity": v["similarity"]});
        groups[i].1.push(member);
    }
    let lines: Vec<serde_json::Value> = cli
        .read("c.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(groups.len() > 10_000, "{}", groups.len());
    assert_eq!(lines.len(), groups.len());
    for (line, (kept, members)) in lines.iter().zip(&groups) {
        assert_eq!(line["kept"], kept.as_str());
        assert_eq!(line["dropped"].as_array().unwrap(), members, "{kept}");
    }
}
