//! The README's Rust example compiles and runs: the body of
//! [`readme_example`] is the README's ```rust block, line for line (the
//! first test checks that), in a temporary working directory.

use lshdb::{Config, Database, Unique};

/// The README's example, between the BEGIN and END lines (not formatted:
/// it is the README's text).
#[rustfmt::skip]
fn readme_example() -> lshdb::Result<()> {
    // BEGIN README
    let db = Database::create("pages.lshdb", Config::jaccard(0.8))?;
    db.insert("https://a.example/1", "…page text…")?;                 // durable on return
    let hits = db.query("…other text…").threshold(0.8).limit(10).run()?.hits; // verified Jaccard
    match db.insert_unique("https://b.example/2", "…", 0.9)? {       // dedup on write
        Unique::Inserted => {}
        Unique::Duplicate(hit) => println!("copy of {}", hit.key),
    }
    db.remove("https://a.example/1")?;
    // END README
    let _ = hits;
    Ok(())
}

/// The lines of `text` from the line after `start` up to the line `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| l.trim() != start);
    lines.next().unwrap_or_else(|| panic!("no line `{start}`"));
    lines.take_while(|l| l.trim() != end).collect()
}

#[test]
fn the_readme_block_is_this_example() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let block = between(&readme, "```rust", "```");
    let ours = between(
        include_str!("readme.rs"),
        "// BEGIN README",
        "// END README",
    );
    let ours: Vec<&str> = ours
        .iter()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    // The README's block starts with its `use` line, which is at the top here.
    assert_eq!(block[0], "use lshdb::{Config, Database, Unique};");
    assert_eq!(block[1], "");
    assert_eq!(
        &block[2..],
        &ours[..],
        "README.md's rust block differs from tests/readme.rs"
    );
}

#[test]
fn the_readme_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap(); // the only test that uses the cwd
    readme_example().unwrap();
    assert!(dir.path().join("pages.lshdb").exists());
}
