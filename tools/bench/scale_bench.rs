//! The scale benchmark of issue 11: does the cost per document stay flat
//! as the file grows to millions of documents?
//!
//! ```text
//! cargo run --release --example scale_bench -- \
//!     --corpus tools/data/scale-10m.jsonl --db /tmp/scale.lshdb \
//!     [--step 1000000] [--first 100000] [--limit N] [--threshold 0.8] [--queries 1000] [--singles 50]
//!     [--singles-only [--cache-mb MB]]   (only: N single inserts and removes on the existing --db)
//!     [--ab-filters]
//! ```
//!
//! Loads the corpus (JSON Lines `{"id", "text"}`, e.g. from
//! `tools/scale_corpus.py`) into one new database with `insert_bulk` and
//! the default options: `--first` documents, then `--step` documents at a
//! time. After each step it waits for the background merges it left
//! (`merge_wait_s`; the load rate does not include it), so that the
//! single inserts measure the file, not a merge under way; then it
//! prints one JSON line: the step's load rate, the process's bytes written
//! per document of the step (`/proc/self/io`), the file's bytes per
//! document, the time of single durable inserts and removes, the
//! latency of verified queries (p50/p99 over `--queries` texts of the step,
//! one thread), reopen + first query, and the peak and current RSS. With
//! `--ab-filters`, it ends with the same queries on the final file and on
//! a copy without run filters, alternating, as one more JSON line. The
//! last line is a summary: the slowest and the median load rate of the
//! full `--step` steps and their ratio (bar: ≥ 0.6), and the single
//! durable insert p50 after the first step and after the last, and their
//! ratio (bar: ≤ 1.05).

use lshdb::{BulkOptions, Config, Database};
use serde_json::json;
use std::io::BufRead;
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

/// The command line (see the module comment).
struct Options {
    corpus: String,
    db_path: String,
    step: usize,
    first: usize,
    limit: usize,
    threshold: f64,
    queries: usize,
    singles: usize,
    ab_filters: bool,
    singles_only: bool,
    /// `--cache-mb`: the storage engine's page cache of the `--singles-only`
    /// handle (default: the library's).
    cache_mb: Option<usize>,
}

fn options() -> Result<Options, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    Ok(Options {
        corpus: flag("--corpus").ok_or("missing --corpus")?,
        db_path: flag("--db").ok_or("missing --db")?,
        step: flag("--step").map_or(Ok(1_000_000), |s| s.parse())?,
        first: flag("--first").map_or(Ok(100_000), |s| s.parse())?,
        limit: flag("--limit").map_or(Ok(usize::MAX), |s| s.parse())?,
        threshold: flag("--threshold").map_or(Ok(0.8), |s| s.parse())?,
        queries: flag("--queries").map_or(Ok(1000), |s| s.parse())?,
        singles: flag("--singles").map_or(Ok(50), |s| s.parse())?,
        ab_filters: args.iter().any(|a| a == "--ab-filters"),
        singles_only: args.iter().any(|a| a == "--singles-only"),
        cache_mb: flag("--cache-mb").map(|s| s.parse()).transpose()?,
    })
}

fn main() -> Result<(), Error> {
    let o = options()?;
    if o.singles_only {
        return singles_only(&o.db_path, o.singles, o.cache_mb);
    }

    let _ = std::fs::remove_file(&o.db_path);
    let mut db = Database::create(&o.db_path, Config::jaccard(o.threshold))?;
    let mut lines = std::io::BufReader::new(std::fs::File::open(&o.corpus)?).lines();
    let mut loaded = 0usize;
    let mut last_sample = Vec::new();
    let started = Instant::now();
    let mut summary = Summary::default();
    while loaded < o.limit {
        let size = if loaded == 0 { o.first.max(1) } else { o.step };
        let docs = read_step(&mut lines, size.min(o.limit - loaded))?;
        if docs.is_empty() {
            break;
        }
        // Queries: every k-th text of this step.
        let every = (docs.len() / o.queries.max(1)).max(1);
        let sample: Vec<String> = docs.iter().step_by(every).map(|d| d.1.clone()).collect();
        let written_before = written_bytes();
        let t = Instant::now();
        let report = db.insert_bulk(docs, &BulkOptions::default(), |_| true)?;
        let load = t.elapsed();
        let written = written_bytes().saturating_sub(written_before);
        loaded += report.inserted as usize;
        let t = Instant::now();
        db.wait_for_merges()?;
        let merge_wait = t.elapsed();

        let (query_times, hits) = time_queries(&db, &sample);

        let (inserts, removes) = time_singles(&db, o.singles, &loaded.to_string())?;

        drop(db);
        let t = Instant::now();
        db = Database::open(&o.db_path)?;
        let _ = db.query(&sample[0]).run()?;
        let reopen = t.elapsed();

        last_sample = sample;
        let (file_bytes, allocated_bytes) = file_sizes(&o.db_path)?;
        let documents = db.len()?;
        let rate = report.inserted as f64 / load.as_secs_f64();
        summary.step(
            docs_full(report.inserted, o.step),
            rate,
            pct(&inserts, 0.5),
            documents,
        );
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{}",
            json!({
                "documents": documents,
                "step_documents": report.inserted,
                "step_docs_per_s": (report.inserted as f64 / load.as_secs_f64()).round(),
                "step_seconds": load.as_secs_f64(),
                "merge_wait_s": merge_wait.as_secs_f64(),
                "runs": db.stats()?.runs,
                "commits": report.commits,
                "ms_per_commit": ms(load) / report.commits.max(1) as f64,
                "written_bytes_per_doc": (written as f64 / report.inserted.max(1) as f64).round(),
                "file_bytes": file_bytes,
                "file_bytes_per_doc": (file_bytes as f64 / documents.max(1) as f64).round(),
                "allocated_bytes": allocated_bytes,
                "allocated_bytes_per_doc": (allocated_bytes as f64 / documents.max(1) as f64).round(),
                "query_p50_ms": pct(&query_times, 0.5),
                "query_p99_ms": pct(&query_times, 0.99),
                "queries": query_times.len(),
                "hits_per_query": hits as f64 / query_times.len().max(1) as f64,
                "single_insert_p50_ms": pct(&inserts, 0.5),
                "single_remove_p50_ms": pct(&removes, 0.5),
                "reopen_first_query_ms": ms(reopen),
                "peak_rss_mb": status_kb("VmHWM") / 1024,
                "rss_mb": status_kb("VmRSS") / 1024,
                "elapsed_s": started.elapsed().as_secs_f64().round(),
            })
        );
    }
    if o.ab_filters {
        drop(db);
        ab(&o.db_path, &last_sample)?;
    }
    summary.print();
    Ok(())
}

/// Whether a step of `inserted` documents was a full `--step`.
fn docs_full(inserted: u64, step: usize) -> bool {
    inserted as usize >= step
}

/// What the last line reports: the load rates of the full steps, and the
/// single insert p50 after the first and the last step.
#[derive(Default)]
struct Summary {
    rates: Vec<f64>,
    /// (documents, single insert p50 ms) after the first and last step.
    first: Option<(u64, f64)>,
    last: Option<(u64, f64)>,
}

impl Summary {
    fn step(&mut self, full: bool, rate: f64, single_p50: f64, documents: u64) {
        if full {
            self.rates.push(rate);
        }
        self.first.get_or_insert((documents, single_p50));
        self.last = Some((documents, single_p50));
    }

    fn print(&self) {
        let mut rates = self.rates.clone();
        rates.sort_by(f64::total_cmp);
        let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
        let slowest = rates.first().copied().unwrap_or(0.0);
        let (first, last) = (
            self.first.unwrap_or_default(),
            self.last.unwrap_or_default(),
        );
        println!(
            "{}",
            json!({
                "summary": "scale_bench",
                "full_steps": rates.len(),
                "slowest_step_docs_per_s": slowest.round(),
                "median_step_docs_per_s": median.round(),
                "slowest_over_median": slowest / median.max(f64::MIN_POSITIVE),
                "single_insert_p50_ms_first": [first.0, first.1],
                "single_insert_p50_ms_last": [last.0, last.1],
                "single_insert_last_over_first": last.1 / first.1.max(f64::MIN_POSITIVE),
            })
        );
    }
}

/// The next `take` (id, text) records of the corpus.
fn read_step(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    take: usize,
) -> Result<Vec<(String, String)>, Error> {
    let mut docs = Vec::with_capacity(take);
    for line in lines.by_ref().take(take) {
        let value: serde_json::Value = serde_json::from_str(&line?)?;
        if let (Some(id), Some(text)) = (value["id"].as_str(), value["text"].as_str()) {
            docs.push((id.to_owned(), text.to_owned()));
        }
    }
    Ok(docs)
}

/// Each query's time, sorted, and the hits they found in all.
fn time_queries(db: &Database, sample: &[String]) -> (Vec<Duration>, usize) {
    let mut query_times = Vec::with_capacity(sample.len());
    let mut hits = 0usize;
    for text in sample {
        let t = Instant::now();
        if let Ok(result) = db.query(text).run() {
            hits += result.hits.len();
        }
        query_times.push(t.elapsed());
    }
    query_times.sort();
    (query_times, hits)
}

/// The file's length and what it occupies: redb grows a file by doubling
/// (and then by whole regions) with set_len, which leaves the unwritten
/// tail sparse, so its length overstates its size on disk.
fn file_sizes(path: &str) -> Result<(u64, u64), Error> {
    let metadata = std::fs::metadata(path)?;
    let allocated = std::os::unix::fs::MetadataExt::blocks(&metadata) * 512;
    Ok((metadata.len(), allocated))
}

/// The run filters' effect on queries, measured on the final file and on
/// a copy of it without filter tables (as a file of format 2 written
/// before filters): the same query texts, alternating between the two.
fn ab(db_path: &str, sample: &[String]) -> Result<(), Error> {
    use lshdb::store::runs::{RUN_FILTERS, RUN_FILTER_LINES};
    let bare = format!("{db_path}.no-filters");
    std::fs::copy(db_path, &bare)?;
    {
        let file = redb::Database::open(&bare)?;
        let txn = file.begin_write()?;
        txn.delete_table(RUN_FILTERS)?;
        txn.delete_table(RUN_FILTER_LINES)?;
        txn.commit()?;
    }
    let with = Database::builder().read_only(true).open(db_path)?;
    let without = Database::builder().read_only(true).open(&bare)?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut hits_a, mut hits_b) = (0usize, 0usize);
    for round in 0..2 {
        for text in sample {
            let t = Instant::now();
            hits_a += with.query(text).run()?.hits.len();
            let ta = t.elapsed();
            let t = Instant::now();
            hits_b += without.query(text).run()?.hits.len();
            let tb = t.elapsed();
            // The first round warms both files' caches alike.
            if round == 1 {
                a.push(ta);
                b.push(tb);
            }
        }
    }
    assert_eq!(hits_a, hits_b, "filters changed the answers");
    a.sort();
    b.sort();
    let ms = |v: &[Duration], p: f64| {
        v.get(((v.len() as f64 - 1.0) * p).round() as usize)
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{}",
        json!({
            "ab": "run filters",
            "queries": a.len(),
            "with_filters_p50_ms": ms(&a, 0.5),
            "with_filters_p99_ms": ms(&a, 0.99),
            "without_filters_p50_ms": ms(&b, 0.5),
            "without_filters_p99_ms": ms(&b, 0.99),
        })
    );
    drop((with, without));
    std::fs::remove_file(&bare)?;
    Ok(())
}

/// Bytes this process has caused to be written to storage so far.
fn written_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("write_bytes: ")?.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// A `/proc/self/status` field in kB.
fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix(field)?
                    .trim_start_matches(':')
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// `singles` durable single inserts and removes of fresh keys (tagged
/// `tag`) on `db`, each removed right after; their times, sorted.
fn time_singles(
    db: &Database,
    singles: usize,
    tag: &str,
) -> lshdb::Result<(Vec<Duration>, Vec<Duration>)> {
    let (mut inserts, mut removes) = (Vec::new(), Vec::new());
    for i in 0..singles {
        let key = format!("single-{tag}-{i}");
        let text = format!("a single document number {i} written at {tag}");
        let t = Instant::now();
        db.insert(&key, text.as_str())?;
        inserts.push(t.elapsed());
        let t = Instant::now();
        db.remove(&key)?;
        removes.push(t.elapsed());
    }
    inserts.sort();
    removes.sort();
    Ok((inserts, removes))
}

/// The `p` quantile of sorted times, in ms (0 when there are none).
fn pct(v: &[Duration], p: f64) -> f64 {
    v.get(((v.len() as f64 - 1.0) * p).round() as usize)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// `--singles-only`: `singles` durable single inserts and removes on the
/// existing database at `--db` (left as it was), as p50 / p90 / p99 ms.
fn singles_only(
    db_path: &str,
    singles: usize,
    cache_mb: Option<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut builder = Database::builder();
    if let Some(mb) = cache_mb {
        builder = builder.cache_bytes(mb << 20);
    }
    let db = builder.open(db_path)?;
    let (inserts, removes) = time_singles(&db, singles, "only")?;
    println!(
        "{}",
        json!({
            "documents": db.len()?,
            "singles": singles,
            "single_insert_ms": [pct(&inserts, 0.5), pct(&inserts, 0.9), pct(&inserts, 0.99)],
            "single_remove_ms": [pct(&removes, 0.5), pct(&removes, 0.9), pct(&removes, 0.99)],
        })
    );
    Ok(())
}
