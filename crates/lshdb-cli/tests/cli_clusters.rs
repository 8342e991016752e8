//! Maintained clusters from the command line: `create --clusters`,
//! `clusters [--min-size N] [--json]`, `get` showing the cluster, `check`,
//! `rebuild --clusters` / `--no-clusters`, and `dedup --db` naming the
//! cluster a dropped record's kept duplicate is in, across runs. The
//! library's side is tests/clusters.rs.

mod cli_support;

use cli_support::{jsonl, Cli};

const A: &str = "The quick brown fox jumps over the lazy dog near the river bank today";
const A2: &str = "The quick brown fox jumps over the lazy dog near the river bank today!";
const C: &str = "An entirely different sentence about databases and their many indexes";

fn docs(list: &[(&str, &str)]) -> String {
    let owned: Vec<(String, String)> = list
        .iter()
        .map(|(k, t)| (k.to_string(), t.to_string()))
        .collect();
    jsonl(&owned)
}

#[test]
fn clusters_from_the_command_line() {
    let cli = Cli::new();
    let out = cli.run(&["create", "c.lshdb", "--clusters", "--json"]).ok();
    assert_eq!(out.json()["settings"]["clusters"], "first");
    cli.write("docs.jsonl", docs(&[("a", A), ("b", A2), ("c", C)]));
    cli.run(&["add", "c.lshdb", "--jsonl", "docs.jsonl"]).ok();
    let lines = cli
        .run(&["clusters", "c.lshdb", "--json"])
        .ok()
        .json_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["representative"], "a");
    assert_eq!(lines[0]["size"], 2);
    assert_eq!(lines[0]["members"], serde_json::json!(["a", "b"]));
    let id = lines[0]["id"].clone();
    let all = cli
        .run(&["clusters", "c.lshdb", "--min-size", "1", "--json"])
        .ok()
        .json_lines();
    assert_eq!(all.len(), 2);
    let text = cli.run(&["clusters", "c.lshdb"]).ok();
    text.stdout_has("2 members\trepresentative a");
    let got = cli.run(&["get", "c.lshdb", "b", "--json"]).ok().json();
    assert_eq!(got["cluster"]["id"], id);
    assert_eq!(got["cluster"]["representative"], "a");
    cli.run(&["get", "c.lshdb", "b"])
        .ok()
        .stdout_has("cluster   ");
    cli.run(&["check", "c.lshdb"]).ok();
    // Removing the representative: the cluster keeps its id.
    cli.run(&["remove", "c.lshdb", "a"]).ok();
    let got = cli.run(&["get", "c.lshdb", "b", "--json"]).ok().json();
    assert_eq!(got["cluster"]["id"], id);
    assert_eq!(got["cluster"]["representative"], "b");
    // Dropped, then built again for the file as it is.
    let out = cli
        .run(&["rebuild", "c.lshdb", "--no-clusters", "--json"])
        .ok();
    assert_eq!(out.json()["clusters"], serde_json::Value::Null);
    let err = cli.run(&["clusters", "c.lshdb"]).expect(1).error_line();
    assert!(err.contains("rebuild"), "{err}");
    let out = cli
        .run(&[
            "rebuild",
            "c.lshdb",
            "--clusters",
            "--representative",
            "smallest-key",
            "--json",
        ])
        .ok();
    assert_eq!(out.json()["clusters"], "smallest-key");
    let all = cli
        .run(&["clusters", "c.lshdb", "--min-size", "1", "--json"])
        .ok()
        .json_lines();
    assert_eq!(all.len(), 2);
    cli.run(&["check", "c.lshdb"]).ok();
    // A policy needs clusters; an unknown one is a usage error.
    cli.run(&["create", "d.lshdb", "--representative", "longest"])
        .expect(2);
    cli.run(&["create", "d.lshdb", "--clusters", "--representative", "x"])
        .expect(2);
}

#[test]
fn dedup_with_clusters_names_the_kept_duplicates_cluster_across_runs() {
    let cli = Cli::new();
    cli.run(&["create", "seen.lshdb", "--clusters"]).ok();
    cli.write("day1.jsonl", docs(&[("a", A), ("c", C)]));
    cli.run(&[
        "dedup",
        "day1.jsonl",
        "--id-field",
        "id",
        "--db",
        "seen.lshdb",
        "--out",
        "k1.jsonl",
    ])
    .ok();
    let cluster =
        cli.run(&["get", "seen.lshdb", "a", "--json"]).ok().json()["cluster"]["id"].clone();
    cli.write("day2.jsonl", docs(&[("a2", A2)]));
    cli.run(&[
        "dedup",
        "day2.jsonl",
        "--id-field",
        "id",
        "--db",
        "seen.lshdb",
        "--out",
        "k2.jsonl",
        "--dropped",
        "d2.jsonl",
    ])
    .ok();
    let dropped: serde_json::Value = serde_json::from_str(cli.read("d2.jsonl").trim()).unwrap();
    assert_eq!(dropped["duplicate_of"], "a");
    assert_eq!(dropped["cluster"], cluster);
    cli.run(&["check", "seen.lshdb"]).ok();
}
