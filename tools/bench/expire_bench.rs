//! Expiry against bulk loading (issue 24): loads a JSON Lines corpus into
//! a file with the time index (document i stamped T0 + i, in input
//! order), then expires the oldest 10%, and prints one JSON line with both
//! rates and their ratio (the bar: expire ≥ 50% of the load's docs/s).
//! `--plain` also loads the same documents into a file without the index,
//! for the time index's cost on a bulk load.
//!
//! ```sh
//! cargo run --release --example expire_bench -- --corpus tools/data/heavy-1m.jsonl \
//!     --db /tmp/expire.lshdb --limit 200000 --plain
//! ```

use lshdb::{BulkOptions, Config, Database, Timestamped};
use std::io::BufRead;
use std::time::Instant;

type BoxError = Box<dyn std::error::Error>;

const T0: u64 = 1_700_000_000;

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let usage = "usage: expire_bench --corpus FILE --db PATH [--limit N] [--fraction F] [--plain]";
    let corpus = flag("--corpus").ok_or(usage)?;
    let db_path = std::path::PathBuf::from(flag("--db").ok_or(usage)?);
    let limit: usize = flag("--limit").map_or(Ok(usize::MAX), |s| s.parse())?;
    let fraction: f64 = flag("--fraction").map_or(Ok(0.1), |s| s.parse())?;
    let docs = read_corpus(&corpus, limit)?;
    let n = docs.len() as u64;

    let plain_rate = if args.iter().any(|a| a == "--plain") {
        let path = db_path.with_extension("plain.lshdb");
        let (rate, _) = load(&docs, &path, false)?;
        std::fs::remove_file(&path)?;
        Some(rate)
    } else {
        None
    };
    let (load_rate, db) = load(&docs, &db_path, true)?;
    drop(docs);
    let expire = (n as f64 * fraction).round() as u64;
    let start = Instant::now();
    let report = db.expire(T0 + expire)?;
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(
        report.removed, expire,
        "every stamp before the cut is removed"
    );
    let expire_rate = expire as f64 / seconds;
    let line = serde_json::json!({
        "docs": n,
        "expired": expire,
        "expire_commits": report.commits,
        "expire_seconds": seconds,
        "expire_docs_per_s": expire_rate,
        "load_docs_per_s": load_rate,
        "plain_load_docs_per_s": plain_rate,
        "expire_vs_load": expire_rate / load_rate,
        "file_bytes": std::fs::metadata(&db_path)?.len(),
    });
    println!("{line}");
    Ok(())
}

/// The (id, text) records of a JSON Lines corpus, at most `limit`.
fn read_corpus(corpus: &str, limit: usize) -> Result<Vec<(String, String)>, BoxError> {
    let mut docs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(corpus)?).lines() {
        if docs.len() == limit {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let (Some(id), Some(text)) = (v["id"].as_str(), v["text"].as_str()) {
            docs.push((id.to_owned(), text.to_owned()));
        }
    }
    Ok(docs)
}

/// Bulk-loads `docs` into a new file at `path` (document i stamped
/// T0 + i when `timestamps`); returns the load's docs/s and the database.
fn load(
    docs: &[(String, String)],
    path: &std::path::Path,
    timestamps: bool,
) -> Result<(f64, Database), BoxError> {
    let _ = std::fs::remove_file(path);
    let db = Database::create(path, Config::jaccard(0.8).timestamps(timestamps))?;
    let start = Instant::now();
    let stamped = docs
        .iter()
        .enumerate()
        .map(|(i, (k, v))| (k.as_str(), Timestamped::new(v.as_str(), T0 + i as u64)));
    let report = db.insert_bulk(stamped, &BulkOptions::default(), |_| true)?;
    let rate = report.inserted as f64 / start.elapsed().as_secs_f64();
    Ok((rate, db))
}
