//! Reading what users have: folders walked with ripgrep's rules (`scan`,
//! `add DIR`), gzip and zstd inputs found by their magic bytes and bounded
//! after decompression, and plain text on standard input (`add -`).

mod cli_support;

use cli_support::{corpus, jsonl, text_of, Cli};
use std::collections::BTreeSet;
use std::io::Write;

/// The keys stored in a database, from `export`.
fn stored(cli: &Cli, db: &str) -> BTreeSet<String> {
    cli.run(&["export", db])
        .ok()
        .json_lines()
        .iter()
        .skip(1)
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

fn set(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| (*k).to_owned()).collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn tree(cli: &Cli) {
    cli.write("tree/a.txt", text_of("f1-a"));
    cli.write("tree/b.md", text_of("f2-a"));
    cli.write("tree/ignored.log", text_of("f3-a"));
    cli.write("tree/.gitignore", "*.log\nbuild/\n");
    cli.write("tree/.hidden/x.txt", text_of("solo-1"));
    cli.write("tree/sub/c.txt", text_of("solo-2"));
    cli.write("tree/build/d.txt", text_of("solo-3"));
}

#[test]
fn scan_walks_with_ripgreps_rules_and_their_flags() {
    let cli = Cli::new();
    tree(&cli);
    let cases: [(&[&str], &[&str]); 7] = [
        (&[], &["a.txt", "b.md", "sub/c.txt"]),
        (
            &["--no-ignore"],
            &["a.txt", "b.md", "build/d.txt", "ignored.log", "sub/c.txt"],
        ),
        (
            &["--hidden"],
            &[".gitignore", ".hidden/x.txt", "a.txt", "b.md", "sub/c.txt"],
        ),
        (&["--glob", "*.txt"], &["a.txt", "sub/c.txt"]),
        (&["--glob", "!*.md"], &["a.txt", "sub/c.txt"]),
        (&["--exclude", "sub/**"], &["a.txt", "b.md"]),
        (&["--type", "markdown"], &["b.md"]),
    ];
    for (i, (flags, expected)) in cases.iter().enumerate() {
        let db = format!("t{i}.lshdb");
        let mut args = vec!["scan", "tree", "--db", db.as_str(), "--json"];
        args.extend_from_slice(flags);
        let summary = cli.run(&args).ok().json();
        assert_eq!(stored(&cli, &db), set(expected), "{flags:?}");
        assert_eq!(summary["files"], expected.len(), "{flags:?}");
    }
    let err = cli
        .run(&["scan", "tree", "--db", "x.lshdb", "--type", "nosuchtype"])
        .error_line();
    assert!(err.contains("unknown file type `nosuchtype`"), "{err}");
    // The default database inside the folder is never read, even with
    // --hidden.
    cli.run(&["scan", "tree", "--hidden"]).ok();
    cli.run(&["scan", "tree", "--hidden"]).ok();
    assert!(!stored(&cli, "tree/.lshdb").contains(".lshdb"));
}

#[test]
fn scan_reads_gzip_and_zstd_files_and_bounds_them_after_decompression() {
    let cli = Cli::new();
    cli.write("tree/plain.txt", text_of("f1-a"));
    cli.write("tree/packed.txt.gz", gzip(text_of("f1-b").as_bytes()));
    // A misleading name: the bytes decide.
    cli.write(
        "tree/packed.dat",
        zstd::encode_all(text_of("f2-a").as_bytes(), 3).unwrap(),
    );
    // A bomb: 70 MiB of text in a few kilobytes. It must count as too
    // large, reading at most one byte past the limit.
    let mut bomb = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
    let block = vec![b'a'; 1 << 20];
    for _ in 0..70 {
        bomb.write_all(&block).unwrap();
    }
    let bomb = bomb.finish().unwrap();
    assert!(bomb.len() < 1 << 20);
    cli.write("tree/bomb.txt.zst", bomb);
    let summary = cli
        .run(&["scan", "tree", "--db", "t.lshdb", "--json"])
        .ok()
        .json();
    assert_eq!(summary["skipped"]["too_large"], 1, "{summary}");
    assert_eq!(
        stored(&cli, "t.lshdb"),
        set(&["packed.dat", "packed.txt.gz", "plain.txt"])
    );
    let got = cli
        .run(&["get", "t.lshdb", "packed.txt.gz", "--json"])
        .ok()
        .json();
    assert_eq!(got["text"], text_of("f1-b"));
    // The decompressed texts are compared: plain.txt and packed.txt.gz are
    // one near-duplicate group.
    assert_eq!(summary["groups"][0]["members"].as_array().unwrap().len(), 2);
}

#[test]
fn add_walks_folders_reads_compressed_jsonl_and_plain_text_on_stdin() {
    let cli = Cli::new();
    tree(&cli);
    cli.run(&["create", "db.lshdb", "--store-text"]).ok();
    let summary = cli
        .run(&["add", "db.lshdb", "tree", "--exclude", "*.md", "--json"])
        .ok()
        .json();
    assert_eq!(summary["inserted"], 2);
    assert_eq!(
        stored(&cli, "db.lshdb"),
        set(&["tree/a.txt", "tree/sub/c.txt"])
    );

    // JSON Lines, gzipped and zstd-compressed.
    cli.run(&["create", "j.lshdb"]).ok();
    let text = jsonl(&corpus());
    cli.write("corpus.jsonl.gz", gzip(text.as_bytes()));
    let summary = cli
        .run(&["add", "j.lshdb", "--jsonl", "corpus.jsonl.gz", "--json"])
        .ok()
        .json();
    assert_eq!(summary["inserted"], corpus().len());
    cli.write(
        "corpus.jsonl.zst",
        zstd::encode_all(text.as_bytes(), 3).unwrap(),
    );
    let summary = cli
        .run(&["add", "j.lshdb", "--jsonl", "corpus.jsonl.zst", "--json"])
        .ok()
        .json();
    assert_eq!(summary["replaced"], corpus().len());

    // Plain text on standard input: `-` with --key, or --text-stdin KEY.
    cli.run(&["create", "s.lshdb", "--store-text"]).ok();
    cli.run_stdin(
        &["add", "s.lshdb", "-", "--key", "from-stdin"],
        &text_of("f3-a"),
    )
    .ok();
    cli.run_stdin(
        &["add", "s.lshdb", "--text-stdin", "second"],
        &text_of("solo-1"),
    )
    .ok();
    let got = cli
        .run(&["get", "s.lshdb", "from-stdin", "--json"])
        .ok()
        .json();
    assert_eq!(got["text"], text_of("f3-a"));
    assert_eq!(stored(&cli, "s.lshdb"), set(&["from-stdin", "second"]));
    let err = cli.run_stdin(&["add", "s.lshdb", "-"], "text").error_line();
    assert!(err.contains("needs its key: --key KEY"), "{err}");
    // Compressed text on standard input is decompressed too.
    let mut child = cli
        .command(&["add", "s.lshdb", "--text-stdin", "packed"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&gzip(text_of("solo-2").as_bytes()))
        .unwrap();
    assert!(child.wait().unwrap().success());
    let got = cli.run(&["get", "s.lshdb", "packed", "--json"]).ok().json();
    assert_eq!(got["text"], text_of("solo-2"));
}
