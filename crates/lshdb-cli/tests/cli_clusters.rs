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

/// The priority policy from the command line: `create --representative
/// priority`, `add --priority-field` (JSON and CSV; a missing or bad value
/// names its line, `--default-priority` fills it in), `import` and `dedup
/// --db`; a file of another policy names the rebuild.
#[test]
fn priorities_from_the_command_line() {
    let cli = Cli::new();
    let out = cli
        .run(&[
            "create",
            "p.lshdb",
            "--clusters",
            "--representative",
            "priority",
            "--json",
        ])
        .ok();
    assert_eq!(out.json()["settings"]["clusters"], "priority");
    let lines = [
        format!(r#"{{"id": "mirror", "text": "{A}", "rank": 1}}"#),
        format!(r#"{{"id": "origin", "text": "{A2}", "rank": "9"}}"#),
        format!(r#"{{"id": "other", "text": "{C}"}}"#),
        format!(r#"{{"id": "bad", "text": "{C} again", "rank": 2.5}}"#),
    ];
    cli.write("docs.jsonl", lines.join("\n") + "\n");
    let out = cli
        .run(&[
            "add",
            "p.lshdb",
            "--jsonl",
            "docs.jsonl",
            "--priority-field",
            "rank",
        ])
        .ok();
    out.stderr_has("skipped line 3: missing field `rank` (--priority-field)");
    out.stderr_has("skipped line 4: field `rank` (--priority-field) is not an integer");
    let representative = |key: &str| {
        let got = cli.run(&["get", "p.lshdb", key, "--json"]).ok().json();
        got["cluster"]["representative"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(representative("mirror"), "origin");
    cli.run(&["get", "p.lshdb", "other"]).expect(1);
    // --default-priority for records without the field (negative too).
    cli.run(&[
        "add",
        "p.lshdb",
        "--jsonl",
        "docs.jsonl",
        "--priority-field",
        "rank",
        "--default-priority",
        "-1",
    ])
    .ok();
    cli.run(&["get", "p.lshdb", "other"]).ok();
    // CSV, and a replacement takes its new priority.
    cli.write("up.csv", format!("id,text,rank\nmirror,{A},20\n"));
    cli.run(&[
        "add",
        "p.lshdb",
        "--jsonl",
        "up.csv",
        "--priority-field",
        "rank",
    ])
    .ok();
    assert_eq!(representative("origin"), "mirror");
    cli.write(
        "imp.jsonl",
        format!(r#"{{"id": "copy", "text": "{A}.", "rank": 99}}"#),
    );
    cli.run(&[
        "import",
        "p.lshdb",
        "--in",
        "imp.jsonl",
        "--priority-field",
        "rank",
    ])
    .ok();
    assert_eq!(representative("origin"), "copy");
    cli.run(&["check", "p.lshdb"]).ok();
}

/// A file of another policy is refused, naming the rebuild; `dedup --db`
/// creates a file of the priority policy, and stores the priorities.
#[test]
fn priorities_need_the_policy_and_dedup_creates_it() {
    let cli = Cli::new();
    cli.write(
        "docs.jsonl",
        format!(r#"{{"id": "a", "text": "{A}", "rank": 1}}"#) + "\n",
    );
    cli.run(&["create", "f.lshdb", "--clusters"]).ok();
    let line = cli
        .run(&[
            "add",
            "f.lshdb",
            "--jsonl",
            "docs.jsonl",
            "--priority-field",
            "rank",
        ])
        .error_line();
    assert!(
        line.contains("`lshdb rebuild f.lshdb --clusters --representative priority`"),
        "{line}"
    );
    // dedup --db: a file it creates takes the priority policy.
    let day1 = [
        format!(r#"{{"id": "m", "text": "{A}", "rank": 1}}"#),
        format!(r#"{{"id": "c", "text": "{C}", "rank": 3}}"#),
        format!(r#"{{"id": "m2", "text": "{A2}", "rank": 7}}"#),
    ];
    cli.write("day1.jsonl", day1.join("\n") + "\n");
    cli.run(&[
        "dedup",
        "day1.jsonl",
        "--db",
        "d.lshdb",
        "--id-field",
        "id",
        "--priority-field",
        "rank",
        "--out",
        "kept.jsonl",
    ])
    .ok();
    let stats = cli.run(&["stats", "d.lshdb", "--json"]).ok().json();
    assert_eq!(stats["settings"]["clusters"], "priority");
    cli.run(&["check", "d.lshdb"]).ok();
    // Into a file of a lower index threshold, a run at 0.99 keeps both
    // copies, and the clusters rank them by their priorities.
    cli.run(&[
        "create",
        "e.lshdb",
        "--threshold",
        "0.7",
        "--clusters",
        "--representative",
        "priority",
    ])
    .ok();
    let base = [
        "dedup",
        "day1.jsonl",
        "--db",
        "e.lshdb",
        "--id-field",
        "id",
        "--out",
        "k.jsonl",
    ];
    cli.run_with(&base, &["--threshold", "0.99", "--priority-field", "rank"])
        .ok();
    let got = cli.run(&["get", "e.lshdb", "m", "--json"]).ok().json();
    assert_eq!(got["cluster"]["representative"], "m2");
    cli.run(&["check", "e.lshdb"]).ok();
}

/// `docs/clusters.md`'s command-line example of priorities runs as
/// written, and does what it says.
#[test]
fn the_docs_priority_example_runs() {
    let cli = Cli::new();
    cli.run_doc_example("clusters.md", "Priorities from the command line");
    let got = cli
        .run(&["get", "releases.lshdb", "mirror-2", "--json"])
        .ok()
        .json();
    assert_eq!(got["cluster"]["representative"], "origin");
    assert_eq!(got["cluster"]["size"], 3);
}

/// `clusters --documents` lists every document with its cluster and its
/// similarity to the representative (what `get` and `similarity` say of
/// it), and `similarity A B` prints the Jaccard similarity of two stored
/// documents; a missing key, or a file without clusters, is an error.
#[test]
fn documents_with_their_clusters_and_the_similarity_of_two() {
    let cli = Cli::new();
    cli.run(&["create", "c.lshdb", "--clusters"]).ok();
    cli.write("docs.jsonl", docs(&[("a", A), ("b", A2), ("c", C)]));
    cli.run(&["add", "c.lshdb", "--jsonl", "docs.jsonl"]).ok();
    let ab = cli
        .run(&["similarity", "c.lshdb", "a", "b", "--json"])
        .ok()
        .json();
    let s = ab["similarity"].as_f64().unwrap();
    assert!(s > 0.8 && s < 1.0, "{ab}");
    assert_eq!((ab["a"].as_str(), ab["b"].as_str()), (Some("a"), Some("b")));
    let text = cli.run(&["similarity", "c.lshdb", "a", "c"]).ok();
    let ac: f64 = text.stdout.trim().parse().unwrap();
    assert!(ac < 0.3, "{}", text.stdout);
    let missing = cli.run(&["similarity", "c.lshdb", "a", "nope"]);
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("`nope`"), "{}", missing.stderr);

    let all = cli
        .run(&[
            "clusters",
            "c.lshdb",
            "--documents",
            "--min-size",
            "1",
            "--json",
        ])
        .ok()
        .json_lines();
    let keys: Vec<&str> = all.iter().map(|d| d["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["a", "b", "c"], "in the order stored");
    let got = cli.run(&["get", "c.lshdb", "b", "--json"]).ok().json();
    assert_eq!(all[1]["cluster"], got["cluster"]["id"]);
    assert_eq!(all[1]["representative"], "a");
    assert_eq!(all[1]["size"], 2);
    assert_eq!(all[1]["similarity"].as_f64(), Some(s));
    assert_eq!(all[0]["similarity"].as_f64(), Some(1.0));
    assert_ne!(all[2]["cluster"], all[0]["cluster"]);
    // The default --min-size 2 leaves out the cluster of one.
    let text = cli.run(&["clusters", "c.lshdb", "--documents"]).ok();
    assert_eq!(text.stdout.lines().count(), 2, "{}", text.stdout);
    text.stdout_has("b\tcluster ");

    cli.run(&["create", "plain.lshdb"]).ok();
    let refused = cli.run(&["clusters", "plain.lshdb", "--documents"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("keeps no clusters"),
        "{}",
        refused.stderr
    );
}
