//! What maintained clusters cost (issue 24, `docs/clusters.md`): a single
//! durable insert, and a bulk load, with and without clusters.
//!
//! ```text
//! cargo run --release --example clusters_bench -- [--docs 100000] [--singles 200]
//!     [--corpus FILE.jsonl] [--dir /tmp] [--threshold 0.8] [--repeat 3] [--keep]
//!     [--reuse] [--progress N]
//! ```
//!
//! `--reuse` opens the two files a `--keep` run left in `--dir` instead of
//! loading them (bulk figures are then absent), to time single inserts
//! again. Before the singles, both files' background merges are waited
//! for. `--progress N` prints to standard error, at the first commit past
//! every `N` documents, the rate of the documents since the last line: how
//! the cost per document moves as the file grows.
//!
//! For each mode (without clusters, then with), it bulk loads `--docs`
//! documents into a new database (`insert_bulk`, default options) — from
//! `--corpus` (JSON Lines `{"id", "text"}`, e.g. `tools/scale_corpus.py`'s,
//! read twice, streamed) or else synthetic texts of 40 words (of 4,600), one in ten a
//! near-duplicate of the one before; the loads alternate between the
//! modes `--repeat` times, and each mode's best rate counts. Then it times `--singles` single
//! durable inserts into each, alternating between the two files so that
//! both see the same disk and machine load, half of them near-duplicates
//! of stored documents (they join clusters; with `--corpus`, of synthetic
//! texts the file does not hold), half new texts. Prints one
//! JSON line per mode and one with the ratios the issue's bars are about:
//! the median single insert with / without (bar ≤ 1.3) and the bulk rate
//! with / without (bar ≥ 0.7).

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

/// Word `n` of a vocabulary of 4,600 (a stem and a number), so that
/// unrelated documents share few shingles, as in real text.
fn word(n: u64) -> String {
    let stem = WORDS[(n % WORDS.len() as u64) as usize];
    format!("{stem}{}", (n / WORDS.len() as u64) % 100)
}

/// Synthetic document `i`: 40 words; one in ten is document `i - 1` with
/// two words changed.
fn synthetic(i: u64) -> String {
    let base = if i % 10 == 9 { i - 1 } else { i };
    let mut words: Vec<String> = (0..40).map(|j| word(mix(base * 64 + j))).collect();
    if base != i {
        for j in 0..2 {
            let at = (mix(i * 3 + j) % 40) as usize;
            words[at] = word(mix(i * 5 + j));
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
    repeat: usize,
    /// Keep the two files (`--keep`), e.g. to time `lshdb clusters` on them.
    keep: bool,
    /// Open the files of an earlier `--keep` run instead of loading.
    reuse: bool,
    /// Print the rate of every this many documents (`--progress N`).
    progress: Option<u64>,
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
        repeat: flag("--repeat").map_or(Ok(3), |v| v.parse())?,
        keep: args.iter().any(|a| a == "--keep"),
        reuse: args.iter().any(|a| a == "--reuse"),
        progress: flag("--progress").map(|v| v.parse()).transpose()?,
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

/// A loaded database of one mode: its path, handle, bulk rate and line.
struct Loaded {
    path: String,
    db: Database,
    rate: f64,
    stored: u64,
    clusters: bool,
    seconds: f64,
}

/// Bulk loads a new database of one mode.
fn load(options: &Options, clusters: bool) -> Result<Loaded, Error> {
    let mode = if clusters { "on" } else { "off" };
    let path = format!("{}/clusters-bench-{mode}.lshdb", options.dir);
    let _ = std::fs::remove_file(&path);
    let db = Database::create(&path, Config::jaccard(options.threshold).clusters(clusters))?;
    let start = Instant::now();
    let (mut mark, mut marked) = (start, 0u64);
    let report = db.insert_bulk(documents(options)?, &BulkOptions::default(), |report| {
        let Some(every) = options.progress else {
            return true;
        };
        if report.inserted >= marked + every {
            let seconds = mark.elapsed().as_secs_f64();
            let rate = (report.inserted - marked) as f64 / seconds;
            eprintln!("{mode} {} docs: {rate:.0} docs/s", report.inserted);
            (mark, marked) = (Instant::now(), report.inserted);
        }
        true
    })?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Loaded {
        path,
        db,
        rate: report.inserted as f64 / seconds,
        stored: report.inserted.max(1),
        clusters,
        seconds,
    })
}

/// Opens the file an earlier `--keep` run loaded for one mode.
fn reopen(options: &Options, clusters: bool) -> Result<Loaded, Error> {
    let mode = if clusters { "on" } else { "off" };
    let path = format!("{}/clusters-bench-{mode}.lshdb", options.dir);
    let db = Database::open(&path)?;
    let stored = db.len()?.max(1);
    Ok(Loaded {
        path,
        db,
        rate: f64::NAN,
        stored,
        clusters,
        seconds: f64::NAN,
    })
}

/// Single insert `i`: a near-duplicate of a stored document (even `i`,
/// it joins a cluster) or a new text (odd).
fn single_text(i: u64, stored: u64) -> String {
    if i % 2 == 0 {
        let mut t = synthetic(mix(i) % stored);
        t.push_str(" extra");
        t
    } else {
        synthetic(1 << 40 | i)
    }
}

/// Mean and median of `times` (sorted here), in milliseconds.
fn summary(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    (
        mean * 1e3,
        times.get(times.len() / 2).copied().unwrap_or(0.0) * 1e3,
    )
}

fn main() -> Result<(), Error> {
    let options = options()?;
    // Both loads first, then the singles alternate between the two files,
    // so that both see the same disk and machine load.
    // Loads alternate too, `--repeat` times each; the best rate counts.
    if options.reuse {
        let modes = [reopen(&options, false)?, reopen(&options, true)?];
        return singles(&options, modes);
    }
    let mut modes = [load(&options, false)?, load(&options, true)?];
    for _ in 1..options.repeat {
        for (m, clusters) in [false, true].into_iter().enumerate() {
            let best = modes[m].rate;
            // (The new file replaces the old one's path; the old handle
            // closes when replaced.)
            modes[m] = load(&options, clusters)?;
            modes[m].rate = modes[m].rate.max(best);
        }
    }
    singles(&options, modes)
}

/// Times the single inserts into both files, prints the lines, and removes
/// the files unless `--keep`.
fn singles(options: &Options, modes: [Loaded; 2]) -> Result<(), Error> {
    // The steady state a file is in between loads: no merge left to the
    // background merger (one would take the write lock between singles).
    for mode in &modes {
        mode.db.wait_for_merges()?;
    }
    let mut times = [Vec::new(), Vec::new()];
    for i in 0..options.singles {
        for (m, mode) in modes.iter().enumerate() {
            // A reused file holds the singles of earlier runs: new keys.
            let n = if options.reuse {
                i + (mode.stored << 20)
            } else {
                i
            };
            let text = single_text(n, mode.stored);
            let start = Instant::now();
            mode.db.insert(&format!("single-{n}"), text.as_str())?;
            times[m].push(start.elapsed().as_secs_f64());
        }
    }
    let mut medians = [0.0; 2];
    for (m, mode) in modes.iter().enumerate() {
        let (mean, median) = summary(&mut times[m]);
        medians[m] = median;
        let larger = if mode.clusters {
            let mut n = 0u64;
            for c in mode.db.clusters()? {
                n += u64::from(c?.size > 1);
            }
            Some(n)
        } else {
            None
        };
        println!(
            "{}",
            json!({
                "clusters": mode.clusters,
                "docs": mode.stored,
                "bulk_seconds": mode.seconds,
                "bulk_docs_per_s": mode.rate,
                "single_insert_mean_ms": mean,
                "single_insert_median_ms": median,
                "clusters_of_two_or_more": larger,
                "file_bytes": std::fs::metadata(&mode.path)?.len(),
            })
        );
    }
    println!(
        "{}",
        json!({
            "single_insert_ratio": medians[1] / medians[0],
            "single_insert_bar": 1.3,
            "bulk_rate_ratio": modes[1].rate / modes[0].rate,
            "bulk_rate_bar": 0.7,
        })
    );
    for mode in modes {
        let path = mode.path.clone();
        drop(mode);
        if !options.keep {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}
