//! End-to-end tests of `lshdb scan DIR`: the first run indexes every text
//! file, a second run picks up exactly the added, changed and deleted ones;
//! binary, empty and hidden files are skipped, and the database (default
//! `DIR/.lshdb`) never indexes itself.

mod cli_support;

use cli_support::{keys, keys_of, raw_numbers, similarity, text_of, Cli};
use std::collections::BTreeSet;

/// A folder `tree/` with a near-duplicate pair (`a.txt`, `sub/b.txt`),
/// other text files, two binary files, an empty file and hidden entries.
fn tree(cli: &Cli) {
    cli.write("tree/a.txt", text_of("f1-a"));
    cli.write("tree/sub/b.txt", text_of("f1-b"));
    cli.write("tree/sub/deeper/c.md", text_of("f2-a"));
    cli.write("tree/d.txt", text_of("solo-1"));
    cli.write("tree/e.txt", text_of("solo-2"));
    cli.write("tree/nul.bin", b"some text\0with a NUL byte");
    cli.write("tree/latin1.txt", b"caf\xe9 cr\xe8me br\xfbl\xe9e");
    cli.write("tree/empty.txt", "  \n");
    cli.write("tree/.hidden.txt", text_of("f1-c"));
    cli.write("tree/.git/config.txt", text_of("f1-c"));
}

/// The keys stored in a database, via `export`.
fn stored_keys(cli: &Cli, db: &str) -> BTreeSet<String> {
    cli.run(&["export", db])
        .ok()
        .json_lines()
        .iter()
        .skip(1) // the header
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn scan_twice_sees_exactly_what_changed() {
    let cli = Cli::new();
    tree(&cli);
    let first = cli.run(&["scan", "tree", "--json"]).ok();
    assert!(first.stderr.is_empty(), "{}", first.stderr);
    let v = first.json();
    let exact = raw_numbers(&first.stdout, "similarity");
    assert_eq!(v["db"], "tree/.lshdb");
    assert_eq!(v["files"], 8, "hidden entries are not walked: {v}");
    assert_eq!(v["added"], 5);
    assert_eq!(v["changed"], 0);
    assert_eq!(v["removed"], 0);
    assert_eq!(v["unchanged"], 0);
    assert_eq!(
        v["skipped"],
        serde_json::json!({"binary": 2, "empty": 1, "too_large": 0, "unreadable": 0})
    );
    assert_eq!(v["documents"], 5);
    assert_eq!(v["threshold"], 0.8);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v}");
    assert_eq!(groups[0]["group"], 1);
    assert_eq!(keys_of(&groups[0]["members"]), ["a.txt", "sub/b.txt"]);
    let s = similarity(&text_of("f1-a"), &text_of("f1-b"));
    assert_eq!(
        exact,
        [s, s],
        "both members' best similarity is their pair's"
    );

    // The default database location, not indexed itself.
    assert!(cli.path("tree/.lshdb").is_file());
    assert_eq!(
        stored_keys(&cli, "tree/.lshdb"),
        keys(&["a.txt", "d.txt", "e.txt", "sub/b.txt", "sub/deeper/c.md"])
    );

    // Change one, add one, delete one.
    cli.write("tree/d.txt", text_of("solo-3"));
    cli.write("tree/sub/new.txt", text_of("f3-a"));
    std::fs::remove_file(cli.path("tree/e.txt")).unwrap();
    let second = cli.run(&["scan", "tree"]).ok();
    let lines: Vec<&str> = second.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "scanned 8 file(s) under tree into tree/.lshdb: 1 added, 1 changed, 1 removed, 3 unchanged"
    );
    assert_eq!(
        lines[1],
        "skipped 2 binary, 1 empty, 0 too large, 0 unreadable file(s); 5 document(s) indexed"
    );
    second.stdout_has("1 near-duplicate group(s) at similarity ≥ 0.8");
    assert_eq!(
        stored_keys(&cli, "tree/.lshdb"),
        keys(&[
            "a.txt",
            "d.txt",
            "sub/b.txt",
            "sub/deeper/c.md",
            "sub/new.txt"
        ])
    );
    let v = cli
        .run(&["get", "tree/.lshdb", "d.txt", "--json"])
        .ok()
        .json();
    assert_eq!(
        v["text"],
        text_of("solo-3").as_str(),
        "the changed text is stored"
    );

    // Nothing changed: a third run only reads.
    let v = cli.run(&["scan", "tree", "--json"]).ok().json();
    assert_eq!(
        (&v["added"], &v["changed"], &v["removed"], &v["unchanged"]),
        (
            &serde_json::json!(0),
            &serde_json::json!(0),
            &serde_json::json!(0),
            &serde_json::json!(5)
        )
    );
    cli.run(&["check", "tree/.lshdb"]).ok();
}

#[test]
fn scan_with_db_inside_the_folder_skips_the_database_file() {
    let cli = Cli::new();
    tree(&cli);
    // A visible name: only the database check keeps it out.
    let v = cli
        .run(&["scan", "tree", "--db", "tree/index.lshdb", "--json"])
        .ok()
        .json();
    assert_eq!(v["db"], "tree/index.lshdb");
    assert_eq!(v["files"], 8, "{v}");
    assert_eq!(v["added"], 5);
    let v = cli
        .run(&["scan", "tree", "--db", "tree/index.lshdb", "--json"])
        .ok()
        .json();
    assert_eq!(
        (v["files"].as_u64(), v["unchanged"].as_u64()),
        (Some(8), Some(5))
    );
    assert!(
        !cli.path("tree/.lshdb").exists(),
        "--db replaces the default"
    );
    assert!(!stored_keys(&cli, "tree/index.lshdb").contains("index.lshdb"));
}

#[test]
fn scan_threshold_and_refusals() {
    let cli = Cli::new();
    tree(&cli);
    // A new database gets the scan's threshold as its index threshold.
    let scan = |threshold: &str| {
        let args = ["scan", "tree", "--db", "t.lshdb", "--threshold", threshold];
        cli.run_with(&args, &["--json"]).ok()
    };
    let v = scan("0.5").json();
    assert_eq!(v["threshold"], 0.5);
    let stats = cli.run(&["stats", "t.lshdb", "--json"]).ok().json();
    assert_eq!(stats["settings"]["threshold"], 0.5);
    assert_eq!(stats["settings"]["store_text"], true);

    // A threshold below the index threshold is noted on stderr.
    let out = scan("0.3");
    assert_eq!(
        out.stderr.lines().next().unwrap_or_default(),
        "lshdb: note: threshold 0.3 is below the index threshold 0.5; some pairs will be \
         missed (rebuild with `lshdb rebuild t.lshdb --threshold 0.3`)"
    );
    assert_eq!(out.json()["threshold"], 0.3);

    // A database without texts cannot be scanned into.
    cli.run(&["create", "plain.lshdb"]).ok();
    let line = cli
        .run(&["scan", "tree", "--db", "plain.lshdb"])
        .error_line();
    assert!(line.contains("does not store texts"), "{line}");
    // A file is not a folder.
    let line = cli.run(&["scan", "tree/a.txt"]).error_line();
    assert_eq!(line, "lshdb: tree/a.txt is not a folder");
}

/// The number of documents stored in a database.
fn documents(cli: &Cli, db: &str) -> u64 {
    let v = cli.run(&["stats", db, "--json"]).ok().json();
    v["documents"].as_u64().unwrap()
}

#[test]
fn scan_refuses_a_database_it_did_not_build() {
    let cli = Cli::new();
    tree(&cli);
    // A database loaded with `add`, not by scan.
    let db = cli.corpus_db("added.lshdb", &["--store-text"]);
    let line = cli.run(&["scan", "tree", "--db", &db]).error_line();
    assert!(line.contains("was not built by `lshdb scan`"), "{line}");
    assert!(line.contains("--adopt"), "{line}");
    assert_eq!(documents(&cli, &db), 11, "nothing removed");
    assert_eq!(stored_keys(&cli, &db).len(), 11);

    // A database scan built from another folder.
    cli.write("other/x.txt", text_of("solo-3"));
    cli.run(&["scan", "tree", "--db", "t.lshdb"]).ok();
    let line = cli.run(&["scan", "other", "--db", "t.lshdb"]).error_line();
    let tree = std::fs::canonicalize(cli.path("tree")).unwrap();
    let other = std::fs::canonicalize(cli.path("other")).unwrap();
    assert!(
        line.contains(&format!("built by a scan of {}", tree.display())),
        "{line}"
    );
    assert!(
        line.contains(&format!("not of {}", other.display())),
        "{line}"
    );
    assert_eq!(documents(&cli, "t.lshdb"), 5, "nothing removed");
    // The same folder by another path is the same root.
    let v = cli
        .run(&["scan", "./tree/sub/..", "--db", "t.lshdb", "--json"])
        .ok()
        .json();
    assert_eq!(v["unchanged"], 5, "{v}");
}

#[test]
fn adopt_claims_a_database_of_an_older_scan() {
    let cli = Cli::new();
    tree(&cli);
    cli.run(&["scan", "tree"]).ok();
    // As an older lshdb left it: no record of the folder.
    {
        let file = redb::Database::open(cli.path("tree/.lshdb")).unwrap();
        let txn = file.begin_write().unwrap();
        let labels: redb::TableDefinition<&str, &str> = redb::TableDefinition::new("labels");
        assert!(
            txn.delete_table(labels).unwrap(),
            "scan made the labels table"
        );
        txn.commit().unwrap();
    }
    let line = cli.run(&["scan", "tree"]).error_line();
    assert!(line.contains("was not built by `lshdb scan`"), "{line}");
    cli.write("tree/new.txt", text_of("f3-a"));
    let v = cli.run(&["scan", "tree", "--adopt", "--json"]).ok().json();
    assert_eq!(
        (v["added"].as_u64(), v["unchanged"].as_u64()),
        (Some(1), Some(5))
    );
    // Recorded: the next scan needs no flag.
    let v = cli.run(&["scan", "tree", "--json"]).ok().json();
    assert_eq!(v["unchanged"], 6, "{v}");

    // --adopt still stops a scan that would remove most documents.
    let cli = Cli::new();
    let db = cli.corpus_db("added.lshdb", &["--store-text"]);
    cli.write("tree/only.txt", text_of("solo-1"));
    let line = cli
        .run(&["scan", "tree", "--db", &db, "--adopt"])
        .error_line();
    assert!(line.contains("would remove 11 of the 11 stored"), "{line}");
    assert_eq!(documents(&cli, &db), 11);
}

#[test]
fn scan_stops_before_removing_most_documents() {
    let cli = Cli::new();
    tree(&cli);
    cli.run(&["scan", "tree"]).ok();
    // The folder looks empty (unmounted, emptied, ...): nothing is removed.
    for name in ["a.txt", "d.txt", "e.txt", "sub/b.txt", "sub/deeper/c.md"] {
        std::fs::rename(
            cli.path(&format!("tree/{name}")),
            cli.path(&format!("away-{}", name.replace('/', "-"))),
        )
        .unwrap();
    }
    let line = cli.run(&["scan", "tree"]).error_line();
    assert!(
        line.contains("would remove 5 of the 5 stored document(s)"),
        "{line}"
    );
    assert!(line.contains("--allow-removals"), "{line}");
    assert_eq!(documents(&cli, "tree/.lshdb"), 5);

    // Three of five gone is more than half; two would not be.
    std::fs::rename(cli.path("away-a.txt"), cli.path("tree/a.txt")).unwrap();
    std::fs::rename(cli.path("away-d.txt"), cli.path("tree/d.txt")).unwrap();
    let line = cli.run(&["scan", "tree"]).error_line();
    assert!(line.contains("would remove 3 of the 5"), "{line}");
    assert_eq!(documents(&cli, "tree/.lshdb"), 5);
    // Files that became binary count too (found only once they are read).
    std::fs::rename(cli.path("away-e.txt"), cli.path("tree/e.txt")).unwrap();
    cli.write("tree/d.txt", b"now\0binary");
    let line = cli.run(&["scan", "tree"]).error_line();
    assert!(line.contains("would remove 3 of the 5"), "{line}");
    assert_eq!(documents(&cli, "tree/.lshdb"), 5);
    // Asked for explicitly, they go.
    let v = cli
        .run(&["scan", "tree", "--allow-removals", "--json"])
        .ok()
        .json();
    assert_eq!(v["removed"], 3, "{v}");
    assert_eq!(stored_keys(&cli, "tree/.lshdb"), keys(&["a.txt", "e.txt"]));
    // Removing one of two is not more than half.
    std::fs::remove_file(cli.path("tree/e.txt")).unwrap();
    let v = cli.run(&["scan", "tree", "--json"]).ok().json();
    assert_eq!(v["removed"], 1, "{v}");
}

#[test]
fn scan_skips_fifos_instead_of_waiting_on_them() {
    let cli = Cli::new();
    tree(&cli);
    let status = std::process::Command::new("mkfifo")
        .arg(cli.path("tree/pipe.txt"))
        .status()
        .unwrap();
    assert!(status.success());
    let out = cli.run_within(60, &["scan", "tree", "--json"]).ok();
    let v = out.json();
    assert_eq!(v["files"], 8, "the FIFO is not a file: {v}");
    assert_eq!(v["added"], 5);
    assert!(!stored_keys(&cli, "tree/.lshdb").contains("pipe.txt"));
}

#[test]
fn file_names_that_are_not_utf8_keep_distinct_keys() {
    use std::os::unix::ffi::OsStrExt;
    let cli = Cli::new();
    let name = |bytes: &[u8]| {
        let mut path = cli.path("tree").into_os_string();
        path.push("/");
        path.push(std::ffi::OsStr::from_bytes(bytes));
        std::path::PathBuf::from(path)
    };
    std::fs::create_dir_all(cli.path("tree")).unwrap();
    std::fs::write(name(b"caf\xe9.txt"), text_of("solo-1")).unwrap();
    std::fs::write(name(b"caf\xe8.txt"), text_of("solo-2")).unwrap();
    std::fs::write(name("café.txt".as_bytes()), text_of("solo-3")).unwrap();
    std::fs::write(name(b"back\\slash.txt"), text_of("f1-a")).unwrap();
    std::fs::write(name(b"back\\xe9.txt"), text_of("f2-a")).unwrap();
    let v = cli.run(&["scan", "tree", "--json"]).ok().json();
    assert_eq!(v["added"], 5, "{v}");
    assert_eq!(
        stored_keys(&cli, "tree/.lshdb"),
        keys(&[
            "back\\\\slash.txt",
            "back\\\\xe9.txt",
            "caf\\xe8.txt",
            "caf\\xe9.txt",
            "café.txt",
        ])
    );
    let v = cli
        .run(&["get", "tree/.lshdb", "caf\\xe9.txt", "--json"])
        .ok()
        .json();
    assert_eq!(v["text"], text_of("solo-1").as_str());
    // Stable: a second scan changes nothing.
    let v = cli.run(&["scan", "tree", "--json"]).ok().json();
    assert_eq!(v["unchanged"], 5, "{v}");
}
