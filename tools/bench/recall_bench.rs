//! Top-k and containment recall against exact answers (issue 22), as one
//! JSON line per run:
//!
//! ```sh
//! cargo run --release --example recall_bench -- \
//!     --corpus tools/data/debian-desc-long.jsonl --db /tmp/recall.lshdb [--items] \
//!     [--queries 200] [--k 10] [--containment 0.8] [--limit N] [--reuse] [--max-bucket N]
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
    max_bucket: usize,
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
        max_bucket: flag("--max-bucket").map_or(Ok(lshdb::DEFAULT_MAX_BUCKET), |s| s.parse())?,
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

/// Totals over the queries.
#[derive(Default)]
struct Tally {
    top_found: usize,
    top_truth: usize,
    top_ms: Vec<f64>,
    estimates: f64,
    warned: usize,
    probes: usize,
    candidates: usize,
    verified: usize,
    c_found: usize,
    c_truth: usize,
    c_ms: Vec<f64>,
}

/// (document, Jaccard) of every document sharing a shingle with `q`.
type Scored = Vec<(u32, f64)>;

impl Tally {
    /// Top-k of stored document `key` against `exact`, its neighbours.
    fn top(
        &mut self,
        db: &Database,
        truth: &Truth,
        key: &str,
        exact: &Scored,
        (k, max_bucket): (usize, usize),
    ) -> Result<(), Error> {
        let mut by_sim: Vec<f64> = exact.iter().map(|&(_, j)| j).collect();
        by_sim.sort_by(|a, b| b.total_cmp(a));
        let want = k.min(by_sim.len());
        let timer = Instant::now();
        let result = db.query_key(key).top(k).max_bucket(max_bucket).run()?;
        self.warned += usize::from(!result.explain.warnings.is_empty());
        self.top_ms.push(timer.elapsed().as_secs_f64() * 1e3);
        let e = &result.explain;
        self.estimates += e.recall_estimate.unwrap_or(0.0);
        self.probes += e.buckets_probed;
        self.candidates += e.candidates;
        self.verified += e.verified;
        if std::env::var("RECALL_DEBUG").is_ok() {
            let kth = by_sim.get(k - 1).copied().unwrap_or(0.0);
            let last = result.hits.last().map(|h| h.similarity);
            let (sizes, estimate) = (&e.posting_sizes, e.recall_estimate);
            eprintln!(
                "{sizes:?} cand {} est {estimate:?} want-kth {kth:.3} got-kth {last:?}",
                e.candidates
            );
        }
        if want > 0 {
            let kth = by_sim[want - 1];
            let exact: HashMap<u32, f64> = exact.iter().copied().collect();
            let correct = result
                .hits
                .iter()
                .filter(|h| {
                    exact
                        .get(&truth.position[&h.key])
                        .is_some_and(|&j| j >= kth - 1e-12)
                })
                .count();
            self.top_found += correct.min(want);
            self.top_truth += want;
        }
        Ok(())
    }

    /// Containment search of stored document `key` against `contained`,
    /// the documents holding a fraction `t` of it.
    fn containment(
        &mut self,
        db: &Database,
        truth: &Truth,
        key: &str,
        contained: &[u32],
        t: f64,
    ) -> Result<(), Error> {
        let timer = Instant::now();
        let result = db.query_key(key).containment(t).run()?;
        self.c_ms.push(timer.elapsed().as_secs_f64() * 1e3);
        let got: std::collections::HashSet<u32> =
            result.hits.iter().map(|h| truth.position[&h.key]).collect();
        let found = contained.iter().filter(|d| got.contains(d)).count();
        if std::env::var("RECALL_DEBUG").is_ok() && found < contained.len() {
            let e = &result.explain;
            let classes: Vec<_> = e
                .classes
                .iter()
                .map(|c| (c.class, c.trees, c.depth, c.whole, c.postings, c.truncated))
                .collect();
            eprintln!(
                "containment truth {} found {found} cand {} est {:.3} warn {:?} classes {classes:?}",
                contained.len(), e.candidates, e.recall_estimate, e.warnings
            );
        }
        self.c_found += found;
        self.c_truth += contained.len();
        Ok(())
    }
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
    let mut tally = Tally::default();
    for &q in &sample {
        let (key, set) = (&truth.keys[q], truth.set(q));
        let mut shared = truth.shared(set, &mut counts);
        shared.retain(|&(d, _)| d as usize != q);
        let q_len = set.len() as u32;
        let exact: Scored = shared
            .iter()
            .map(|&(d, c)| {
                (
                    d,
                    f64::from(c) / f64::from(q_len + truth.sizes[d as usize] - c),
                )
            })
            .collect();
        tally.top(&db, &truth, key, &exact, (args.k, args.max_bucket))?;
        let need = common_needed(args.t, set.len()) as u32;
        let contained: Vec<u32> = shared
            .iter()
            .filter(|&&(_, c)| c >= need)
            .map(|&(d, _)| d)
            .collect();
        tally.containment(&db, &truth, key, &contained, args.t)?;
    }
    let stats = db.stats()?;
    let queries = sample.len() as f64;
    let t = &tally;
    println!(
        "{}",
        json!({
            "corpus": args.corpus,
            "input": if args.items { "items" } else { "text" },
            "documents": n,
            "load_s": load_secs,
            "bytes_per_doc": stats.file_bytes as f64 / n as f64,
            "allocated_bytes_per_doc": stats.allocated_bytes as f64 / n as f64,
            "queries": sample.len(),
            "top": {
                "k": args.k,
                "recall": t.top_found as f64 / t.top_truth.max(1) as f64,
                "recall_estimate_mean": t.estimates / queries,
                "warned": t.warned,
                "max_bucket": args.max_bucket,
                "probes_mean": t.probes as f64 / queries,
                "candidates_mean": t.candidates as f64 / queries,
                "verified_mean": t.verified as f64 / queries,
                "ms": latency(tally.top_ms.clone()),
            },
            "containment": {
                "t": args.t,
                "recall": t.c_found as f64 / t.c_truth.max(1) as f64,
                "truth": t.c_truth,
                "ms": latency(tally.c_ms.clone()),
            },
        })
    );
    Ok(())
}
