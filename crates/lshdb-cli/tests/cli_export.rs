//! End-to-end tests of `lshdb export` and `lshdb import` that guard
//! against losing data (issue 10): an export never overwrites the database
//! it reads, never leaves a partial output file, carries the settings its
//! shingle sets were made with (which `import` checks), and `--salvage`
//! gets every readable document out of a damaged file.

mod cli_support;

use cli_support::{corpus, Cli};

/// `export DB --out X` where X is the database itself, under another name:
/// refused, and the database file is byte for byte what it was.
fn refuse_export_onto_db(cli: &Cli, db: &str, out: &str) {
    let before = std::fs::read(cli.path(db)).unwrap();
    let line = cli.run(&["export", db, "--out", out]).error_line();
    assert!(line.contains("is the database file itself"), "{line}");
    assert!(line.contains(out), "{line}");
    let after = std::fs::read(cli.path(db)).unwrap();
    assert!(after == before, "the database file changed ({out})");
    let v = cli.run(&["stats", db, "--json"]).ok().json();
    assert_eq!(v["documents"], 11, "{v}");
    cli.run(&["check", db]).ok();
}

#[test]
fn export_refuses_to_overwrite_the_database() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &["--store-text"]);
    refuse_export_onto_db(&cli, &db, &db);
    refuse_export_onto_db(&cli, &db, "./db.lshdb");
    std::os::unix::fs::symlink("db.lshdb", cli.path("link.lshdb")).unwrap();
    refuse_export_onto_db(&cli, &db, "link.lshdb");
    std::fs::hard_link(cli.path("db.lshdb"), cli.path("hard.lshdb")).unwrap();
    refuse_export_onto_db(&cli, &db, "hard.lshdb");
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(cli.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with(".tmp")),
        "leftover temporary file: {names:?}"
    );
    // An output that is not a regular file is written as it is.
    let out = cli.run(&["export", &db, "--out", "/dev/null"]).ok();
    assert_eq!(out.stdout, "exported 11 document(s)\n");
}

#[test]
fn a_failed_export_leaves_an_existing_output_untouched() {
    let cli = Cli::new();
    let db = cli.corpus_db("db.lshdb", &["--store-text"]);
    cli.write("old.jsonl", "the previous backup\n");
    // Damage one document record so that the export fails midway.
    damage(&cli, &db, "docs", "f2-b");
    let line = cli.run(&["export", &db, "--out", "old.jsonl"]).error_line();
    assert!(line.contains("damaged"), "{line}");
    assert_eq!(
        std::fs::read_to_string(cli.path("old.jsonl")).unwrap(),
        "the previous backup\n",
        "a failed export must not clobber the old file with a partial one"
    );
    // A fresh output name: nothing is left behind at all.
    cli.run(&["export", &db, "--out", "new.jsonl"]).error_line();
    assert!(!cli.path("new.jsonl").exists());
    let leftovers: Vec<_> = std::fs::read_dir(cli.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Flips one byte in the middle of the `table` record (`docs` or `sets`)
/// of `key`, writing the table with redb behind lshdb's back.
fn damage(cli: &Cli, db: &str, table: &str, key: &str) -> u64 {
    use redb::{ReadableTable, TableDefinition};
    let docs: TableDefinition<u64, &[u8]> = TableDefinition::new("docs");
    let records: TableDefinition<u64, &[u8]> = TableDefinition::new(table);
    let file = redb::Database::open(cli.path(db)).unwrap();
    let txn = file.begin_write().unwrap();
    // The id whose document record holds `key`.
    let id = txn
        .open_table(docs)
        .unwrap()
        .iter()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|(_, v)| lshdb::store::codec::decode_doc(v.value()).unwrap().key == key)
        .unwrap()
        .0
        .value();
    {
        let mut table = txn.open_table(records).unwrap();
        let mut bytes = table.get(id).unwrap().unwrap().value().to_vec();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x10;
        table.insert(id, bytes.as_slice()).unwrap();
    }
    txn.commit().unwrap();
    id
}

/// Export lines that are documents (the header left out).
fn documents(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("id").is_some())
        .collect()
}

#[test]
fn export_salvage_gets_every_readable_document_out() {
    let cli = Cli::new();
    // Without stored text the export needs the shingle sets.
    let db = cli.corpus_db("db.lshdb", &[]);
    let id = damage(&cli, &db, "sets", "f2-b");

    // A plain export stops at the damage, with the damage message.
    let line = cli
        .run(&["export", &db, "--out", "plain.jsonl"])
        .error_line();
    assert!(line.contains("the database is damaged"), "{line}");
    assert!(line.contains(&format!("document {id}")), "{line}");
    // The hint names the file the command opened (the run's context).
    assert!(line.contains(&format!("run `lshdb check {db}`")), "{line}");
    assert!(!cli.path("plain.jsonl").exists());

    let out = cli
        .run(&["export", &db, "--out", "saved.jsonl", "--salvage"])
        .expect(3);
    let saved = documents(&std::fs::read_to_string(cli.path("saved.jsonl")).unwrap());
    let want: Vec<String> = corpus()
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| k != "f2-b")
        .collect();
    let got: Vec<&str> = saved.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(got, want, "every other document, in key order");
    assert_eq!(
        out.stdout,
        "exported 10 document(s); 1 skipped as unreadable\n"
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with("lshdb: skipped `f2-b` (document ")
            && lines[0].contains("checksum mismatch"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("1 document(s) could not be read"),
        "{}",
        lines[1]
    );

    // To standard output: the same records, the same exit code.
    let out = cli.run(&["export", &db, "--salvage"]).expect(3);
    assert_eq!(documents(&out.stdout), saved);

    // The salvaged export loads into a fresh database.
    cli.run(&["create", "copy.lshdb"]).ok();
    cli.run(&["import", "copy.lshdb", "--in", "saved.jsonl"])
        .ok();
    cli.run(&["check", "copy.lshdb"]).ok();
    let v = cli.run(&["stats", "copy.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 10);

    // On an undamaged database --salvage is a plain export.
    let out = cli
        .run(&["export", "copy.lshdb", "--salvage", "--out", "copy.jsonl"])
        .ok();
    assert_eq!(
        out.stdout,
        "exported 10 document(s); 0 skipped as unreadable\n"
    );
}

#[test]
fn import_checks_the_shingling_of_shingle_sets() {
    let cli = Cli::new();
    // char:5 shingles without text: the export holds shingle sets.
    let db = cli.corpus_db("db.lshdb", &[]);
    cli.run(&["export", &db, "--out", "sets.jsonl"]).ok();
    let export = std::fs::read_to_string(cli.path("sets.jsonl")).unwrap();
    let header: serde_json::Value = serde_json::from_str(export.lines().next().unwrap()).unwrap();
    assert_eq!(header["lshdb_export"], 1, "{header}");
    assert_eq!(header["format"], lshdb::FORMAT_VERSION, "{header}");
    assert_eq!(header["settings"]["shingle"], "char:5", "{header}");
    assert_eq!(header["settings"]["hash"], "murmur3_x86_32", "{header}");
    assert_eq!(header["settings"]["seed"], 0, "{header}");
    assert_eq!(header["settings"]["whitespace"], "collapse", "{header}");
    assert_eq!(documents(&export).len(), 11);

    // Into a database with other shingling: refused, nothing stored.
    cli.run(&["create", "words.lshdb", "--shingle", "word:2"])
        .ok();
    let line = cli
        .run(&["import", "words.lshdb", "--in", "sets.jsonl"])
        .error_line();
    assert!(line.contains("shingle"), "{line}");
    assert!(line.contains("stored word:2"), "{line}");
    assert!(line.contains("file char:5"), "{line}");
    let v = cli.run(&["stats", "words.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 0);

    // Into a database with the same shingling: accepted, same pairs.
    cli.run(&["create", "same.lshdb"]).ok();
    let out = cli
        .run(&["import", "same.lshdb", "--in", "sets.jsonl"])
        .ok();
    out.stdout_starts("added 11 document(s)");
    assert_eq!(
        cli.run(&["pairs", "same.lshdb", "--json"]).ok().stdout,
        cli.run(&["pairs", &db, "--json"]).ok().stdout
    );

    // Shingle sets without the header cannot be checked: refused unless
    // --unchecked-shingles says they fit.
    let bare: String = export.lines().skip(1).map(|l| format!("{l}\n")).collect();
    cli.write("bare.jsonl", &bare);
    cli.run(&["create", "bare.lshdb"]).ok();
    let line = cli
        .run(&["import", "bare.lshdb", "--in", "bare.jsonl"])
        .error_line();
    assert!(line.contains("--unchecked-shingles"), "{line}");
    let v = cli.run(&["stats", "bare.lshdb", "--json"]).ok().json();
    assert_eq!(v["documents"], 0);
    let out = cli
        .run(&[
            "import",
            "bare.lshdb",
            "--in",
            "bare.jsonl",
            "--unchecked-shingles",
        ])
        .ok();
    out.stdout_starts("added 11 document(s)");

    // Text lines are re-shingled, so they need no header and fit any
    // database; a text export's header does not stop them either.
    cli.write("texts.jsonl", cli_support::jsonl(&corpus()));
    let out = cli
        .run(&["import", "words.lshdb", "--in", "texts.jsonl"])
        .ok();
    out.stdout_starts("added 11 document(s)");
    cli.run(&["create", "t.lshdb", "--store-text"]).ok();
    cli.run(&["import", "t.lshdb", "--in", "texts.jsonl"]).ok();
    cli.run(&["export", "t.lshdb", "--out", "t.jsonl"]).ok();
    let out = cli.run(&["import", "words.lshdb", "--in", "t.jsonl"]).ok();
    out.stdout_starts("added 11 document(s) (11 replaced)");
    assert!(
        out.stdout.ends_with("; 0 bad record(s) skipped\n"),
        "the header is not a bad record: {}",
        out.stdout
    );
}
