//! Top-k and containment recall against exact answers (issue 22), as one
//! JSON line per run:
//!
//! ```sh
//! cargo run --release --example recall_bench -- \
//!     --corpus tools/data/debian-desc-long.jsonl --db /tmp/recall.lshdb [--items] \
//!     [--queries 200] [--k 10] [--containment 0.8] [--limit N] [--reuse]
//! ```
//!
//! The corpus (JSON Lines `{"id", "text"}`) is loaded into a new file with
//! `Config::jaccard(0.8).containment(true)`: as texts (character
//! 5-shingles), or with `--items` as item sets (the lower-cased words of
//! each text, as datasketch users index them). A fixed sample of stored
//! documents (seeded) is queried by key, so each query leaves itself out.
//! The truth comes from the database's own shingle sets, by brute force
//! over an inverted index: the exact top-k by Jaccard and every document
//! holding at least a fraction t of the query's set. A returned top-k hit
//! counts as correct when its Jaccard is at least the exact k-th best, and
//! a query's recall is correct / min(k, documents sharing a shingle).
//! Containment recall is over all (query, containing document) pairs.
//! `--reuse` queries an existing file instead of loading; `RECALL_DEBUG=1`
//! prints each top-k query's explain figures and each containment miss.

use lshdb::hash::SplitMix64;
use lshdb::sketch::ensemble::common_needed;
use lshdb::{BulkOptions, Config, Database, Document};
use serde_json::json;
use std::collections::HashMap;
use std::io::BufRead;
use std::time::Instant;

type Error = Box<dyn std::error::Error>;

/// The stored sets, by position, and an inverted index over them.
struct Truth {
    keys: Vec<String>,
    sizes: Vec<u32>,
    /// Every stored set, flat: document d's is `sets[set_starts[d]..set_starts[d + 1]]`.
    sets: Vec<u32>,
    set_starts: Vec<u64>,
    position: HashMap<String, u32>,
    /// Distinct shingles, ascending, and where each one's documents start
    /// in `docs`.
    shingles: Vec<u32>,
    starts: Vec<u64>,
    docs: Vec<u32>,
}

impl Truth {
    fn read(db: &Database) -> Result<Self, Error> {
        let (mut keys, mut sizes, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
        let (mut sets, mut set_starts) = (Vec::new(), vec![0u64]);
        db.for_each(|doc| {
            let at = keys.len() as u64;
            sets.extend_from_slice(&doc.shingles);
            set_starts.push(sets.len() as u64);
            pairs.extend(doc.shingles.iter().map(|&s| u64::from(s) << 32 | at));
            sizes.push(doc.shingles.len() as u32);
            keys.push(doc.key);
            true
        })?;
        pairs.sort_unstable();
        let (mut shingles, mut starts) = (Vec::new(), Vec::new());
        let docs = pairs.iter().map(|&p| p as u32).collect();
        for (i, &p) in pairs.iter().enumerate() {
            let s = (p >> 32) as u32;
            if shingles.last() != Some(&s) {
                shingles.push(s);
                starts.push(i as u64);
            }
        }
        starts.push(pairs.len() as u64);
        let position = keys.iter().enumerate().map(|(i, k)| (k.clone(), i as u32));
        Ok(Self {
            position: position.collect(),
            keys,
            sizes,
            sets,
            set_starts,
            shingles,
            starts,
            docs,
        })
    }

    /// Document `d`'s set.
    fn set(&self, d: usize) -> &[u32] {
        &self.sets[self.set_starts[d] as usize..self.set_starts[d + 1] as usize]
    }

    /// Shingles shared with the set `set`, for every document sharing one
    /// (`counts` is all zeros on entry and left so for the next query).
    fn shared(&self, set: &[u32], counts: &mut [u32]) -> Vec<(u32, u32)> {
        let mut touched = Vec::new();
        for s in set {
            let Ok(i) = self.shingles.binary_search(s) else {
                continue;
            };
            for &d in &self.docs[self.starts[i] as usize..self.starts[i + 1] as usize] {
                if counts[d as usize] == 0 {
                    touched.push(d);
                }
                counts[d as usize] += 1;
            }
        }
        touched
            .into_iter()
            .map(|d| (d, std::mem::take(&mut counts[d as usize])))
            .collect()
    }
}

/// Percentile `p` of `ms` (sorted).
fn percentile(ms: &[f64], p: f64) -> f64 {
    ms[((ms.len() - 1) as f64 * p).round() as usize]
}

fn latency(mut ms: Vec<f64>) -> serde_json::Value {
    ms.sort_by(f64::total_cmp);
    let mean = ms.iter().sum::<f64>() / ms.len().max(1) as f64;
    json!({"mean": mean, "p50": percentile(&ms, 0.5), "p99": percentile(&ms, 0.99)})
}

struct Args {
    corpus: String,
    db: String,
    items: bool,
    queries: usize,
    k: usize,
    t: f64,
    limit: usize,
    reuse: bool,
}

fn args() -> Result<Args, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    Ok(Args {
        corpus: flag("--corpus").ok_or("missing --corpus")?,
        db: flag("--db").ok_or("missing --db")?,
        items: args.iter().any(|a| a == "--items"),
        reuse: args.iter().any(|a| a == "--reuse"),
        queries: flag("--queries").map_or(Ok(200), |s| s.parse())?,
        k: flag("--k").map_or(Ok(10), |s| s.parse())?,
        t: flag("--containment").map_or(Ok(0.8), |s| s.parse())?,
        limit: flag("--limit").map_or(Ok(usize::MAX), |s| s.parse())?,
    })
}

/// Loads the corpus into a new file at `args.db`; the load's seconds.
fn load(args: &Args) -> Result<(Database, f64), Error> {
    let mut docs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(&args.corpus)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let (Some(id), Some(text)) = (v["id"].as_str(), v["text"].as_str()) {
            docs.push((id.to_owned(), text.to_owned()));
        }
        if docs.len() == args.limit {
            break;
        }
    }
    if args.reuse && std::path::Path::new(&args.db).exists() {
        return Ok((Database::open(&args.db)?, 0.0));
    }
    let _ = std::fs::remove_file(&args.db);
    let db = Database::create(&args.db, Config::jaccard(0.8).containment(true))?;
    let start = Instant::now();
    let options = BulkOptions::default();
    if args.items {
        let sketcher = db.sketcher();
        let sets = docs.into_iter().map(|(key, text)| {
            let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
            let items: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
            (key, sketcher.shingle_set(Document::Items(&items)))
        });
        db.insert_bulk(sets, &options, |_| true)?;
    } else {
        db.insert_bulk(docs, &options, |_| true)?;
    }
    Ok((db, start.elapsed().as_secs_f64()))
}

fn main() -> Result<(), Error> {
    let args = args()?;
    let (db, load_secs) = load(&args)?;
    let truth = Truth::read(&db)?;
    let n = truth.keys.len();
    let mut rng = SplitMix64::new(22);
    let mut sample: Vec<usize> = (0..args.queries.min(n))
        .map(|_| (rng.next_u64() % n as u64) as usize)
        .collect();
    sample.sort_unstable();
    sample.dedup();

    let mut counts = vec![0u32; n];
    let (mut top_found, mut top_truth, mut top_ms, mut estimates) = (0, 0, Vec::new(), 0.0);
    let (mut c_found, mut c_truth, mut c_ms) = (0, 0, Vec::new());
    let (mut probes, mut candidates, mut verified) = (0, 0, 0);
    for &q in &sample {
        let key = &truth.keys[q];
        let set = truth.set(q);
        let mut shared = truth.shared(set, &mut counts);
        shared.retain(|&(d, _)| d as usize != q);
        let q_len = set.len() as u32;
        let jaccard =
            |d: u32, c: u32| f64::from(c) / f64::from(q_len + truth.sizes[d as usize] - c);
        let mut by_sim: Vec<f64> = shared.iter().map(|&(d, c)| jaccard(d, c)).collect();
        by_sim.sort_by(|a, b| b.total_cmp(a));
        let want = args.k.min(by_sim.len());
        let timer = Instant::now();
        let result = db.query_key(key).top(args.k).run()?;
        top_ms.push(timer.elapsed().as_secs_f64() * 1e3);
        estimates += result.explain.recall_estimate.unwrap_or(0.0);
        probes += result.explain.buckets_probed;
        if std::env::var("RECALL_DEBUG").is_ok() {
            eprintln!(
                "{:?} cand {} est {:?} want-kth {:.3} got-kth {:?}",
                result.explain.posting_sizes,
                result.explain.candidates,
                result.explain.recall_estimate,
                by_sim.get(args.k - 1).copied().unwrap_or(0.0),
                result.hits.last().map(|h| h.similarity)
            );
        }
        candidates += result.explain.candidates;
        verified += result.explain.verified;
        if want > 0 {
            let kth = by_sim[want - 1];
            let exact: HashMap<u32, f64> =
                shared.iter().map(|&(d, c)| (d, jaccard(d, c))).collect();
            let correct = result
                .hits
                .iter()
                .filter(|h| {
                    let d = truth.position[&h.key];
                    exact.get(&d).is_some_and(|&j| j >= kth - 1e-12)
                })
                .count();
            top_found += correct.min(want);
            top_truth += want;
        }
        let need = common_needed(args.t, set.len()) as u32;
        let contained: Vec<u32> = shared
            .iter()
            .filter(|&&(_, c)| c >= need)
            .map(|&(d, _)| d)
            .collect();
        let timer = Instant::now();
        let result = db.query_key(key).containment(args.t).run()?;
        c_ms.push(timer.elapsed().as_secs_f64() * 1e3);
        let got: std::collections::HashSet<u32> =
            result.hits.iter().map(|h| truth.position[&h.key]).collect();
        let found = contained.iter().filter(|d| got.contains(d)).count();
        if std::env::var("RECALL_DEBUG").is_ok() && found < contained.len() {
            let e = &result.explain;
            eprintln!(
                "containment q={} truth {} found {} cand {} est {:.3} warn {:?} classes {:?}",
                set.len(),
                contained.len(),
                found,
                e.candidates,
                e.recall_estimate,
                e.warnings,
                e.classes
                    .iter()
                    .map(|c| (c.class, c.trees, c.depth, c.whole, c.postings, c.truncated))
                    .collect::<Vec<_>>()
            );
        }
        c_found += found;
        c_truth += contained.len();
    }
    let stats = db.stats()?;
    let queries = sample.len();
    println!(
        "{}",
        json!({
            "corpus": args.corpus,
            "input": if args.items { "items" } else { "text" },
            "documents": n,
            "load_s": load_secs,
            "bytes_per_doc": stats.file_bytes as f64 / n as f64,
            "allocated_bytes_per_doc": stats.allocated_bytes as f64 / n as f64,
            "queries": queries,
            "top": {
                "k": args.k,
                "recall": top_found as f64 / top_truth.max(1) as f64,
                "recall_estimate_mean": estimates / queries as f64,
                "probes_mean": probes as f64 / queries as f64,
                "candidates_mean": candidates as f64 / queries as f64,
                "verified_mean": verified as f64 / queries as f64,
                "ms": latency(top_ms),
            },
            "containment": {
                "t": args.t,
                "recall": c_found as f64 / c_truth.max(1) as f64,
                "truth": c_truth,
                "ms": latency(c_ms),
            },
        })
    );
    Ok(())
}
