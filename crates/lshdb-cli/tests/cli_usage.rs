//! End-to-end tests of how `lshdb` talks to its caller: exit codes (0 ok,
//! 1 error with one `lshdb: ` line on stderr, 2 usage), every subcommand's
//! help with an example, and the output of `tune` and `inspect`.

mod cli_support;

use cli_support::Cli;

#[test]
fn exit_codes_and_error_lines() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    // Usage errors: exit 2, clap's message.
    for args in [
        vec!["query", "db.lshdb"],
        vec!["query", "db.lshdb", "--key", "k", "--threshold", "1.5"],
        vec!["query", "db.lshdb", "--key", "k", "--threshold", "abc"],
        vec!["create", "x.lshdb", "--shingle", "foo:3"],
        vec!["create", "x.lshdb", "--shingle", "char:x"],
        vec!["create", "x.lshdb", "--bands", "4"],
        vec!["add"],
        vec!["add", "db.lshdb"],
        vec!["add", "db.lshdb", "notes.txt", "--jsonl", "x.jsonl"],
        vec!["remove", "db.lshdb"],
        vec!["rebuild", "db.lshdb"],
        vec!["tune"],
        vec!["bogus"],
        vec![],
    ] {
        let out = cli.run(&args).expect(2);
        assert!(
            out.stderr.contains("Usage") || out.stderr.contains("error:"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = cli
        .run(&["create", "x.lshdb", "--threshold", "1.5"])
        .expect(2);
    assert!(out
        .stderr
        .contains("threshold must be strictly between 0 and 1, got 1.5"));
    let out = cli
        .run(&["create", "x.lshdb", "--shingle", "foo:3"])
        .expect(2);
    out.stderr_has("unknown shingle kind `foo`");
    assert!(
        !cli.path("x.lshdb").exists(),
        "nothing created on a usage error"
    );

    // Errors: exit 1, one line.
    let line = cli.run(&["stats", "missing.lshdb"]).error_line();
    assert!(
        line.starts_with("lshdb: missing.lshdb does not exist"),
        "{line}"
    );
    cli.write("notes.txt", "just some text, not a database");
    let line = cli.run(&["query", "notes.txt", "--key", "k"]).error_line();
    assert!(line.contains("is not an lshdb database"), "{line}");
    cli.write("empty", "");
    let line = cli.run(&["check", "empty"]).error_line();
    assert!(line.contains("is not an lshdb database"), "{line}");
    let line = cli.run(&["get", "db.lshdb", "nope"]).error_line();
    assert_eq!(line, "lshdb: no document with key `nope`");
    let line = cli
        .run(&["query", "db.lshdb", "--key", "nope"])
        .error_line();
    assert_eq!(line, "lshdb: no document with key `nope`");
    let line = cli.run(&["create", "db.lshdb"]).error_line();
    assert!(line.contains("already exists"), "{line}");
    let line = cli
        .run(&["add", "db.lshdb", "--jsonl", "absent.jsonl"])
        .error_line();
    assert_eq!(
        line,
        "lshdb: cannot open input absent.jsonl: No such file or directory (os error 2)"
    );
    let line = cli.run(&["scan", "no-such-folder"]).error_line();
    assert_eq!(line, "lshdb: no-such-folder does not exist");
    cli.write("a-file.txt", "text");
    let line = cli.run(&["scan", "a-file.txt"]).error_line();
    assert_eq!(line, "lshdb: a-file.txt is not a folder");
}

/// Every subcommand.
const COMMANDS: [&str; 16] = [
    "scan", "create", "add", "query", "pairs", "groups", "get", "remove", "stats", "check",
    "compact", "rebuild", "export", "import", "tune", "inspect",
];

#[test]
fn every_help_has_an_example() {
    let cli = Cli::new();
    let out = cli.run(&["--help"]).ok();
    out.stdout_has("Example");
    assert!(out.stdout.contains(
        "Exit codes: 0 ok, 1 error, 2 usage, 3 damage found by `check`, 130 interrupted"
    ));
    for command in COMMANDS {
        assert!(
            out.stdout.contains(&format!("  {command} ")),
            "{command} not listed"
        );
        let help = cli.run(&[command, "--help"]).ok();
        assert!(
            help.stdout.contains("Example"),
            "{command} --help:\n{}",
            help.stdout
        );
        assert!(help.stdout.contains("Usage: lshdb "), "{command}");
        cli.run(&["help", command]).ok();
    }
    let out = cli.run(&["--version"]).ok();
    out.stdout_starts("lshdb ");
}

#[test]
fn tune_and_inspect() {
    let cli = Cli::new();
    let out = cli.run(&["tune", "--threshold", "0.8"]).ok();
    let first = out.stdout.lines().next().unwrap();
    assert!(first.starts_with("bands 16 × rows 8"), "{first}");
    assert!(out.stdout.contains("false-positive area"));
    assert!(out.stdout.contains("1.0 |") && out.stdout.contains("0.5 |"));
    assert!(out.stdout.contains('#') && out.stdout.contains("+----"));
    out.stdout_ends("similarity (: marks 0.8)\n");
    // The same banding as `create` picks.
    let created = cli.run(&["create", "db.lshdb"]).ok();
    created.stdout_has("16 bands × 8 rows");

    let out = cli
        .run(&[
            "inspect",
            "--text",
            "The quick brown fox",
            "--shingle",
            "word:2",
        ])
        .ok();
    out.stdout_starts("normalised: \"the quick brown fox\"\n");
    out.stdout_has("shingles: 3 (3 distinct)");
    for shingle in ["\"the quick\"", "\"quick brown\"", "\"brown fox\""] {
        assert!(out.stdout.contains(shingle), "{shingle}:\n{}", out.stdout);
    }
    assert!(out
        .stdout
        .contains("signature (one-permutation, 128 values):"));
    assert!(out.stdout.contains("band keys (16 bands × 8 rows):"));
    assert!(out.stdout.contains("simhash: "));
}
