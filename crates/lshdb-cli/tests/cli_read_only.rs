//! The CLI's read commands open read-only: they leave the file's bytes as
//! they were, work on a file the user may only read, and work while
//! another process writes the database. Write commands meet a writer with
//! a clear error, or wait for it with `--wait`.

mod cli_support;

use cli_support::Cli;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// Every command that only reads, on the corpus database.
fn read_commands(db: &str) -> Vec<Vec<String>> {
    let key = cli_support::corpus()[0].0.clone();
    let text = cli_support::text_of(&key);
    [
        vec!["query", db, "--text", &text],
        vec!["query", db, "--key", &key, "--json"],
        vec!["get", db, &key],
        vec!["stats", db, "--json"],
        vec!["check", db],
        vec!["export", db],
        vec!["pairs", db],
        vec!["groups", db, "--json"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(str::to_owned).collect())
    .collect()
}

fn run(cli: &Cli, args: &[String]) -> cli_support::Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cli.run(&args)
}

#[test]
fn read_commands_leave_a_read_only_file_unchanged() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let path = cli.path(&db);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&path).unwrap();
    for args in read_commands(&db) {
        let out = run(&cli, &args).ok();
        assert!(!out.stdout.is_empty(), "{args:?} printed nothing");
    }
    assert!(
        std::fs::read(&path).unwrap() == before,
        "a read command changed the file"
    );
}

/// As root, permission bits do not stop a write: run the commands as the
/// unprivileged user `nobody`, who may only read the file.
#[test]
fn read_commands_work_for_a_user_who_may_only_read() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let path = cli.path(&db);
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(cli.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = std::fs::read(&path).unwrap();
    for args in read_commands(&db) {
        let mut cmd = if root {
            let mut cmd = std::process::Command::new("setpriv");
            cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_lshdb"));
            cmd
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_lshdb"))
        };
        let out = cmd
            .args(&args)
            .current_dir(cli.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed for a reading user: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(std::fs::read(&path).unwrap() == before);
}

#[test]
fn read_commands_work_while_a_writer_holds_the_file() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &[]);
    let writer = lshdb::Database::open(cli.path(&db)).unwrap();
    writer
        .insert("late", "a document the writer added after the load")
        .unwrap();
    for args in read_commands(&db) {
        run(&cli, &args).ok();
    }
    let got = cli.run(&["get", &db, "late", "--json"]).ok().json();
    assert_eq!(got["key"], "late", "the reader sees the writer's commit");

    // A second writer is refused with a message that says what to do...
    let line = cli.run(&["remove", &db, "late"]).error_line();
    assert!(line.contains("open for writing in another"), "{line}");
    assert!(line.contains("--wait"), "{line}");
    // ...or waits for the first to close.
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        drop(writer);
    });
    cli.run(&["remove", &db, "late", "--wait", "20"]).ok();
    closer.join().unwrap();
    assert!(cli.run(&["get", &db, "late"]).code == 1);
}
