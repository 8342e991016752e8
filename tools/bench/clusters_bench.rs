//! What maintained clusters cost (issue 24, `docs/clusters.md`): a single
//! durable insert, and a bulk load, with and without clusters.
//!
//! ```text
//! cargo run --release --example clusters_bench -- [--docs 100000] [--singles 200]
//!     [--corpus FILE.jsonl] [--dir /tmp] [--threshold 0.8]
//! ```
//!
//! For each mode (without clusters, then with), it bulk loads `--docs`
//! documents into a new database (`insert_bulk`, default options) — from
//! `--corpus` (JSON Lines `{"id", "text"}`, e.g. `tools/scale_corpus.py`'s,
//! read twice, streamed) or else synthetic texts of 40 words, one in ten a
//! near-duplicate of the one before — then times `--singles` single
//! durable inserts, half of them near-duplicates of stored documents (they
//! join clusters), half new texts. Prints one JSON line per mode and one
//! with the ratios the issue's bars are about: single insert with / without
//! (bar ≤ 1.3) and bulk rate with / without (bar ≥ 0.7).

use lshdb::{BulkOptions, Config, Database};
use serde_json::json;
use std::io::BufRead;
use std::time::Instant;

type Error = Box<dyn std::error::Error>;

const WORDS: &[&str] = &[
    "river", "stone", "lamp", "orbit", "cedar", "quartz", "meadow", "signal", "harbor", "ember",
    "violet", "summit", "canyon", "glacier", "thistle", "lantern", "falcon", "copper", "willow",
    "basalt", "prairie", "comet", "marble", "tundra", "juniper", "beacon", "saffron", "delta",
    "north", "paper", "market", "winter", "engine", "bridge", "cloud", "forest", "garden",
    "island", "jungle", "kettle", "ladder", "mirror", "needle", "ocean", "pepper", "rocket",
];

/// SplitMix64 step.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Synthetic document `i`: 40 words; one in ten is document `i - 1` with
/// two words changed.
fn synthetic(i: u64) -> String {
    let base = if i % 10 == 9 { i - 1 } else { i };
    let mut words: Vec<&str> = (0..40)
        .map(|j| WORDS[(mix(base * 64 + j) % WORDS.len() as u64) as usize])
        .collect();
    if base != i {
        for j in 0..2 {
            let at = (mix(i * 3 + j) % 40) as usize;
            words[at] = WORDS[(mix(i * 5 + j) % WORDS.len() as u64) as usize];
        }
    }
    words.join(" ")
}

/// The command line.
struct Options {
    docs: u64,
    singles: u64,
    corpus: Option<String>,
    dir: String,
    threshold: f64,
}

fn options() -> Result<Options, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    Ok(Options {
        docs: flag("--docs").map_or(Ok(100_000), |v| v.parse())?,
        singles: flag("--singles").map_or(Ok(200), |v| v.parse())?,
        corpus: flag("--corpus"),
        dir: flag("--dir").unwrap_or_else(|| std::env::temp_dir().display().to_string()),
        threshold: flag("--threshold").map_or(Ok(0.8), |v| v.parse())?,
    })
}

/// The documents to load: (key, text), streamed.
fn documents(options: &Options) -> Result<Box<dyn Iterator<Item = (String, String)>>, Error> {
    let n = options.docs;
    let Some(path) = &options.corpus else {
        return Ok(Box::new((0..n).map(|i| (format!("d{i}"), synthetic(i)))));
    };
    let lines = std::io::BufReader::new(std::fs::File::open(path)?).lines();
    Ok(Box::new(
        lines
            .map_while(|line| line.ok())
            .filter_map(|line| {
                let v: serde_json::Value = serde_json::from_str(&line).ok()?;
                let id = v
                    .get("id")?
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v["id"].to_string());
                Some((id, v.get("text")?.as_str()?.to_owned()))
            })
            .take(n as usize),
    ))
}

/// One mode's figures: bulk docs/s and seconds per single insert.
fn run(options: &Options, clusters: bool) -> Result<(f64, f64, serde_json::Value), Error> {
    let path = format!(
        "{}/clusters-bench-{}.lshdb",
        options.dir,
        if clusters { "on" } else { "off" }
    );
    let _ = std::fs::remove_file(&path);
    let db = Database::create(&path, Config::jaccard(options.threshold).clusters(clusters))?;
    let start = Instant::now();
    let report = db.insert_bulk(documents(options)?, &BulkOptions::default(), |_| true)?;
    let load = start.elapsed().as_secs_f64();
    let rate = report.inserted as f64 / load;
    // Singles: near-duplicates of stored documents (even) and new texts (odd).
    let stored = report.inserted.max(1);
    let mut times = Vec::new();
    for i in 0..options.singles {
        let text = if i % 2 == 0 {
            let of = mix(i) % stored;
            let mut t = synthetic(of);
            t.push_str(" extra");
            t
        } else {
            synthetic(1 << 40 | i)
        };
        let start = Instant::now();
        db.insert(&format!("single-{i}"), text.as_str())?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let clusters_found = if clusters {
        let mut larger = 0u64;
        for c in db.clusters()? {
            if c?.size > 1 {
                larger += 1;
            }
        }
        Some(larger)
    } else {
        None
    };
    let line = json!({
        "clusters": clusters,
        "docs": report.inserted,
        "bulk_seconds": load,
        "bulk_docs_per_s": rate,
        "single_insert_mean_ms": mean * 1e3,
        "single_insert_median_ms": median * 1e3,
        "clusters_of_two_or_more": clusters_found,
        "file_bytes": std::fs::metadata(&path)?.len(),
    });
    drop(db);
    std::fs::remove_file(&path)?;
    Ok((rate, mean, line))
}

fn main() -> Result<(), Error> {
    let options = options()?;
    let (rate_off, single_off, off) = run(&options, false)?;
    println!("{off}");
    let (rate_on, single_on, on) = run(&options, true)?;
    println!("{on}");
    println!(
        "{}",
        json!({
            "single_insert_ratio": single_on / single_off,
            "single_insert_bar": 1.3,
            "bulk_rate_ratio": rate_on / rate_off,
            "bulk_rate_bar": 0.7,
        })
    );
    Ok(())
}
