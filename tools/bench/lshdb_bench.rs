//! The lshdb side of the benchmark harness (`tools/bench/run.py` drives it).
//!
//! Each subcommand runs in its own process and prints one JSON object, so
//! peak RSS and timings belong to one measured activity:
//!
//! ```text
//! lshdb_bench signatures --corpus C.jsonl
//! lshdb_bench load       --corpus C.jsonl --db F --threshold T
//! lshdb_bench query      --corpus C.jsonl --db F --sample N [--record-cache-mb M] [--page-cache-mb M]
//! lshdb_bench reopen     --corpus C.jsonl --db F
//! lshdb_bench pairs      --db F --threshold T --out pairs.tsv
//! lshdb_bench truth      --corpus C.jsonl --threshold T --out truth.tsv
//! ```
//!
//! The corpus is JSON Lines `{"id", "text"}`. The query sample is every k-th
//! document in key order, the same documents the peers query.

use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::minhash::{MinHashConfig, MinHasher};
use lshdb::{BulkOptions, Config, Database};
use serde_json::json;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Instant;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| -> Option<String> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let need = |name: &str| flag(name).ok_or_else(|| format!("missing {name}"));
    let result = match args.first().map(String::as_str) {
        Some("signatures") => signatures(&need("--corpus")?)?,
        Some("load") => load(
            &need("--corpus")?,
            &need("--db")?,
            need("--threshold")?.parse()?,
            flag("--batch").map_or(Ok(BulkOptions::default().batch), |s| s.parse())?,
            flag("--repeat").map_or(Ok(1), |s| s.parse())?,
        )?,
        Some("query") => query(
            &need("--corpus")?,
            &need("--db")?,
            flag("--sample").map_or(Ok(2000), |s| s.parse())?,
            flag("--record-cache-mb").map(|s| s.parse()).transpose()?,
            flag("--page-cache-mb").map(|s| s.parse()).transpose()?,
        )?,
        Some("reopen") => reopen(&need("--corpus")?, &need("--db")?)?,
        Some("pairs") => pairs(
            &need("--db")?,
            need("--threshold")?.parse()?,
            &need("--out")?,
        )?,
        Some("truth") => truth(
            &need("--corpus")?,
            need("--threshold")?.parse()?,
            &need("--out")?,
        )?,
        _ => return Err("usage: lshdb_bench signatures|load|query|reopen|pairs|truth ...".into()),
    };
    println!("{result}");
    Ok(())
}

/// (id, text) in file order, first occurrence of an id wins.
fn read_corpus(path: &str) -> Result<Vec<(String, String)>, Error> {
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut seen = std::collections::HashSet::new();
    let mut docs = Vec::new();
    for line in file.lines() {
        let value: serde_json::Value = serde_json::from_str(&line?)?;
        let id = value["id"].as_str().ok_or("id")?.to_owned();
        let text = value["text"].as_str().ok_or("text")?.to_owned();
        if seen.insert(id.clone()) {
            docs.push((id, text));
        }
    }
    Ok(docs)
}

/// Peak resident set size of this process, from /proc (VmHWM), in MiB.
fn peak_rss_mb() -> f64 {
    proc_status_kb("VmHWM:") / 1024.0
}

/// Current resident set size of this process (VmRSS), in MiB.
fn rss_mb() -> f64 {
    proc_status_kb("VmRSS:") / 1024.0
}

fn proc_status_kb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
}

/// Text → signature (normalise, shingle, hash, sign), one thread, and the
/// same from pre-hashed shingles.
fn signatures(corpus: &str) -> Result<serde_json::Value, Error> {
    let docs = read_corpus(corpus)?;
    let shingler = Shingler::new(ShingleConfig::default())?;
    let hasher = MinHasher::new(MinHashConfig::default())?;
    let mut out = Vec::new();
    let (mut checksum, mut prehashed_checksum) = (0u64, 0u64);
    let mut signer = lshdb::sketch::signer::TextSigner::new(&shingler, &hasher);
    let start = Instant::now();
    for (_, text) in &docs {
        checksum = fold(checksum, signer.sign(text));
    }
    let text_secs = start.elapsed().as_secs_f64();
    let sets: Vec<Vec<u32>> = docs
        .iter()
        .map(|(_, t)| shingler.set(t).into_vec())
        .collect();
    let start = Instant::now();
    for set in &sets {
        hasher.signature_into(set, &mut out);
        prehashed_checksum = fold(prehashed_checksum, &out);
    }
    let hashed_secs = start.elapsed().as_secs_f64();
    if checksum != prehashed_checksum {
        return Err("text and pre-hashed signatures differ".into());
    }
    Ok(json!({
        "docs": docs.len(),
        "text_to_signature_docs_per_s": docs.len() as f64 / text_secs,
        "prehashed_signature_docs_per_s": docs.len() as f64 / hashed_secs,
        "checksum": checksum,
    }))
}

/// Folds every value of a signature into a checksum, so the two timed
/// paths are seen to agree on whole signatures (and none is optimised away).
fn fold(checksum: u64, signature: &[u32]) -> u64 {
    signature.iter().fold(checksum, |c, &v| {
        c.wrapping_mul(31).wrapping_add(u64::from(v))
    })
}

/// Bulk load into a new durable file.
fn load(
    corpus: &str,
    db_path: &str,
    threshold: f64,
    batch: usize,
    repeat: usize,
) -> Result<serde_json::Value, Error> {
    let docs = read_corpus(corpus)?;
    let _ = std::fs::remove_file(db_path);
    let db = Database::create(db_path, Config::jaccard(threshold))?;
    // `--repeat R` loads the corpus R times under suffixed keys, to show that
    // memory does not grow with the number of documents.
    let n = docs.len() * repeat.max(1);
    let input = (0..repeat.max(1)).flat_map(|r| {
        docs.iter().map(move |(id, text)| {
            let key = if r == 0 {
                id.clone()
            } else {
                format!("{id}#{r}")
            };
            (key, text.as_str())
        })
    });
    let rss_before = rss_mb();
    let start = Instant::now();
    let report = db.insert_bulk(input, &BulkOptions::default().batch(batch), |_| true)?;
    let secs = start.elapsed().as_secs_f64();
    let rss_after = rss_mb();
    let settings = db.settings().clone();
    drop(db);
    let bytes = std::fs::metadata(db_path)?.len();
    Ok(json!({
        "docs": n,
        "inserted": report.inserted,
        "commits": report.commits,
        "batch": batch,
        "repeat": repeat,
        "load_seconds": secs,
        "load_docs_per_s": n as f64 / secs,
        "peak_rss_mb": peak_rss_mb(),
        "index_rss_mb": rss_after - rss_before,
        "index_bytes": bytes,
        "bytes_per_doc": bytes as f64 / n as f64,
        "bands": settings.bands,
        "rows": settings.rows,
    }))
}

/// The query sample: every k-th document in key order.
fn sample(docs: &[(String, String)], n: usize) -> Vec<&(String, String)> {
    let mut sorted: Vec<&(String, String)> = docs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let step = (sorted.len() / n.max(1)).max(1);
    sorted.into_iter().step_by(step).take(n).collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// Single-thread verified query latency by text.
///
/// `--record-cache-mb M` sets the decoded-record cache (0 turns it off),
/// `--page-cache-mb M` redb's page cache.
fn query(
    corpus: &str,
    db_path: &str,
    n: usize,
    record_cache_mb: Option<usize>,
    page_cache_mb: Option<usize>,
) -> Result<serde_json::Value, Error> {
    let docs = read_corpus(corpus)?;
    let queries = sample(&docs, n);
    let mut builder = Database::builder().read_only(true);
    if let Some(mb) = record_cache_mb {
        builder = builder.record_cache_bytes(mb << 20);
    }
    if let Some(mb) = page_cache_mb {
        builder = builder.cache_bytes(mb << 20);
    }
    let db = builder.open(db_path)?;
    // Warm the page cache once, as a long-running service would be.
    for (_, text) in &queries {
        db.query(text).run()?;
    }
    let mut times = Vec::with_capacity(queries.len());
    let mut hits = 0usize;
    let mut stats: HashMap<&str, usize> = HashMap::new();
    let mut slowest = Vec::new();
    for (id, text) in &queries {
        let start = Instant::now();
        let result = db.query(text).run()?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        times.push(ms);
        slowest.push((
            ms,
            id.clone(),
            text.len(),
            result.explain.candidates,
            result.explain.verified,
            result.explain.lookup_time.as_secs_f64() * 1e3,
            result.explain.verify_time.as_secs_f64() * 1e3,
        ));
        hits += result.hits.len();
        *stats.entry("candidates").or_default() += result.explain.candidates;
        *stats.entry("verified").or_default() += result.explain.verified;
    }
    times.sort_by(f64::total_cmp);
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    slowest.truncate(5);
    Ok(json!({
        "slowest": slowest.iter().map(|(ms, id, len, c, v, l, vt)| json!({"ms": ms, "id": id, "text_bytes": len, "candidates": c, "verified": v, "lookup_ms": l, "verify_ms": vt})).collect::<Vec<_>>(),
        "queries": times.len(),
        "query_p50_ms": percentile(&times, 0.5),
        "query_p99_ms": percentile(&times, 0.99),
        "mean_hits": hits as f64 / times.len().max(1) as f64,
        "mean_candidates": stats["candidates"] as f64 / times.len().max(1) as f64,
        "mean_verified": stats["verified"] as f64 / times.len().max(1) as f64,
    }))
}

/// Open the file and answer a first query, cold in this process.
fn reopen(corpus: &str, db_path: &str) -> Result<serde_json::Value, Error> {
    let docs = read_corpus(corpus)?;
    let text = &sample(&docs, 1)[0].1;
    let start = Instant::now();
    let db = Database::open(db_path)?;
    let hits = db.query(text).run()?.hits.len();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(json!({"reopen_first_query_ms": ms, "hits": hits}))
}

/// Every verified pair at the threshold, written as `a\tb` (a < b).
fn pairs(db_path: &str, threshold: f64, out: &str) -> Result<serde_json::Value, Error> {
    let db = Database::open(db_path)?;
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut failure = None;
    let start = Instant::now();
    let count = db.pairs(threshold, |pair| {
        let (a, b) = if pair.a < pair.b {
            (pair.a, pair.b)
        } else {
            (pair.b, pair.a)
        };
        if let Err(e) = writeln!(file, "{a}\t{b}\t{}", pair.similarity) {
            failure = Some(e);
            return false;
        }
        true
    })?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(e) = failure {
        return Err(e.into());
    }
    file.flush()?;
    Ok(json!({"pairs_found": count, "pairs_seconds": secs, "peak_rss_mb": peak_rss_mb()}))
}

/// The exact ground truth: every pair with Jaccard ≥ t over the default
/// shingling, by prefix filtering, written as `a\tb\tJ` (a < b), and checked
/// against brute force on a sample of 400 documents.
fn truth(corpus: &str, threshold: f64, out: &str) -> Result<serde_json::Value, Error> {
    use lshdb::sketch::exact::all_pairs;
    use lshdb::sketch::measures::jaccard;
    let docs = read_corpus(corpus)?;
    let shingler = Shingler::new(ShingleConfig::default())?;
    let sets: Vec<Vec<u32>> = docs
        .iter()
        .map(|(_, t)| shingler.set(t).into_vec())
        .collect();
    let start = Instant::now();
    let pairs = all_pairs(&sets, threshold)?;
    let secs = start.elapsed().as_secs_f64();
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    for &(i, j, sim) in &pairs {
        let (a, b) = (&docs[i].0, &docs[j].0);
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        writeln!(file, "{a}\t{b}\t{sim}")?;
    }
    file.flush()?;
    // Brute force on a sample: every k-th document plus both documents of
    // every m-th truth pair (so the sample holds real near-duplicates), all
    // pairs among them.
    let mut sample: Vec<usize> = (0..docs.len()).step_by((docs.len() / 300).max(1)).collect();
    for &(i, j, _) in pairs.iter().step_by((pairs.len() / 150).max(1)) {
        sample.extend([i, j]);
    }
    sample.sort_unstable();
    sample.dedup();
    let in_sample: std::collections::HashSet<usize> = sample.iter().copied().collect();
    let mut brute = Vec::new();
    for (x, &i) in sample.iter().enumerate() {
        for &j in &sample[x + 1..] {
            let sim = jaccard(&sets[i], &sets[j]);
            if sim >= threshold && !sets[i].is_empty() {
                brute.push((i.min(j), i.max(j), sim));
            }
        }
    }
    brute.sort_by_key(|p| (p.0, p.1));
    let mut restricted: Vec<(usize, usize, f64)> = pairs
        .iter()
        .copied()
        .filter(|(i, j, _)| in_sample.contains(i) && in_sample.contains(j))
        .collect();
    restricted.sort_by_key(|p| (p.0, p.1));
    if restricted != brute {
        return Err(format!(
            "exact truth disagrees with brute force on the sample: {} vs {} pairs",
            restricted.len(),
            brute.len()
        )
        .into());
    }
    Ok(json!({
        "truth_pairs": pairs.len(),
        "truth_seconds": secs,
        "brute_force_sample_docs": sample.len(),
        "brute_force_sample_pairs": brute.len(),
    }))
}
