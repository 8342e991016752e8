//! The CLI after a writer crash and on files that are not what they should
//! be: read commands repair a file whose writer was killed and answer at
//! once with only what was committed (and say so, as before, when they
//! may not write it); a cut file is damage (`check` exits 3 and says
//! "truncated"); a FIFO, a folder, a missing path, a missing folder and a
//! busy writer each get a message that says what is wrong and what to do.

mod cli_support;

use cli_support::Cli;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

/// JSON Lines of documents `doc-0`, `doc-1`, ... (distinct texts).
fn documents(from: usize, to: usize) -> String {
    (from..to)
        .map(|i| {
            let text = format!(
                "document {i} on topic {} in its own words {}",
                i % 97,
                i * 7919
            );
            format!(
                "{}\n",
                serde_json::json!({"id": format!("doc-{i}"), "text": text})
            )
        })
        .collect()
}

fn stored(cli: &Cli, db: &str) -> u64 {
    let stats = cli.run(&["stats", db, "--json"]).ok().json();
    stats["documents"].as_u64().expect("a document count")
}

/// `lshdb add` with batches of 500, killed (SIGKILL) in the middle of a
/// load once it has committed something; returns the database's name.
fn killed_writer(cli: &Cli) -> &'static str {
    cli.run(&["create", "db.lshdb"]).ok();
    // Its output is piped and never read: it writes next to nothing.
    let args = ["add", "db.lshdb", "--jsonl", "-", "--batch", "500"];
    let (mut child, mut stdin) = cli.spawn_fed(&args, "");
    let feeder = std::thread::spawn(move || {
        for block in 0..1000 {
            if stdin
                .write_all(documents(block * 1000, block * 1000 + 1000).as_bytes())
                .is_err()
            {
                break;
            }
        }
    });
    let start = Instant::now();
    while stored(cli, "db.lshdb") == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "nothing committed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    feeder.join().expect("feeder");
    "db.lshdb"
}

#[test]
fn read_commands_repair_after_a_killed_writer() {
    let cli = Cli::new();
    let db = killed_writer(&cli);
    // The file needs a repair: in a read-only folder, the message stays.
    std::fs::create_dir(cli.path("locked")).unwrap();
    std::fs::copy(cli.path(db), cli.path("locked/my db.lshdb")).unwrap();
    let locked = cli.path("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let line = cli.run(&["stats", "locked/my db.lshdb"]).error_line();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(line.contains("not closed cleanly"), "{line}");
    assert!(
        line.contains("lshdb check --pages 'locked/my db.lshdb'"),
        "{line}"
    );

    // Where it may write, each read command repairs it and goes on.
    let started = Instant::now();
    let documents = stored(&cli, db);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(documents % 500, 0, "only whole batches are committed");
    let last = format!("doc-{}", documents - 1);
    let text = "document 0 on topic 0 in its own words 0";
    let found = cli.run(&["query", db, "--text", text]).ok();
    found.stdout_has("doc-0");
    cli.run(&["get", db, &last]).ok();
    assert_eq!(cli.run(&["get", db, &format!("doc-{documents}")]).code, 1);
    let check = cli.run(&["check", db]).ok();
    check.stdout_starts("clean");
}

#[test]
fn cut_files_are_damage_with_exit_code_3() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    cli.run_stdin(&["add", "db.lshdb", "--jsonl", "-"], &documents(0, 3000))
        .ok();
    let whole = std::fs::read(cli.path("db.lshdb")).unwrap();
    for tenth in 0..10 {
        // From just after the magic number to 95 % of the file.
        let len = (whole.len() * (2 * tenth + 1) / 20).max(12);
        cli.write("cut.lshdb", &whole[..len]);
        let run = cli.run(&["check", "cut.lshdb"]);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(run.code, 3, "cut at {len} of {}: {said}", whole.len());
        assert!(said.contains("truncated"), "cut at {len}: {said}");
        assert!(!said.contains("run `lshdb check"), "{said}");
    }
}

#[test]
fn files_that_are_not_databases_are_refused_at_once() {
    let cli = Cli::new();
    let fifo = cli.path("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let line = cli.run_within(10, &["stats", "fifo"]).error_line();
    assert!(
        line.contains("fifo is not an lshdb database (it is a FIFO"),
        "{line}"
    );
    std::fs::create_dir(cli.path("folder")).unwrap();
    let line = cli.run_within(10, &["check", "folder"]).error_line();
    assert!(line.contains("it is a folder"), "{line}");

    let line = cli.run(&["stats", "mistyped.lshdb"]).error_line();
    assert_eq!(line, "lshdb: mistyped.lshdb does not exist; check the path");

    let line = cli.run(&["create", "no/such/folder/db.lshdb"]).error_line();
    assert!(
        line.contains("cannot create no/such/folder/db.lshdb"),
        "{line}"
    );
    assert!(line.contains("No such file or directory"), "{line}");
}

#[test]
fn a_busy_writer_is_worded_by_whether_the_cli_waited() {
    let cli = Cli::new();
    cli.run(&["create", "db.lshdb"]).ok();
    let writer = lshdb::Database::open(cli.path("db.lshdb")).unwrap();
    let library = lshdb::Database::open(cli.path("db.lshdb"))
        .unwrap_err()
        .to_string();
    assert!(!library.contains("--wait"), "{library}");
    let line = cli.run(&["remove", "db.lshdb", "k"]).error_line();
    assert!(line.contains("wait for it with `--wait SECONDS`"), "{line}");
    let line = cli
        .run(&["remove", "db.lshdb", "k", "--wait", "0.3"])
        .error_line();
    assert!(line.contains("after waiting 0.3 seconds"), "{line}");
    assert!(!line.contains("--wait"), "{line}");
    drop(writer);
}
