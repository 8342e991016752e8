//! Containment search on a JSON Lines corpus: recall against exact
//! containment (brute force over every stored set), candidates and time
//! per query, and bytes per document with and without the containment
//! index.
//!
//! ```sh
//! cargo run --release --example containment_bench -- \
//!     tools/data/debian-desc-long.jsonl /tmp/cbench 400 0.8
//! ```
//!
//! Queries are passages cut from stored documents (seeded): half of them
//! are the middle half of a document of 200 characters or more, half are
//! 200 characters from a document of 1,000 or more.

use lshdb::hash::SplitMix64;
use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::sketch::measures::intersection_size;
use lshdb::{BulkOptions, Config, Database};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::time::Instant;

type BoxError = Box<dyn std::error::Error>;

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    let corpus = args
        .get(1)
        .ok_or("usage: containment_bench CORPUS OUT_DIR [QUERIES] [T]")?;
    let out = std::path::PathBuf::from(args.get(2).ok_or("missing OUT_DIR")?);
    let queries: usize = args.get(3).map_or(Ok(400), |s| s.parse())?;
    let t: f64 = args.get(4).map_or(Ok(0.8), |s| s.parse())?;
    std::fs::create_dir_all(&out)?;
    let docs = read_corpus(corpus)?;
    println!("corpus: {} documents", docs.len());
    let mut dbs = Vec::new();
    for (name, containment) in [("plain", false), ("containment", true)] {
        dbs.push(load(&docs, &out, name, containment)?);
    }
    let db = &dbs[1];
    let mut sets = Vec::new();
    db.for_each(|doc| {
        sets.push((doc.key, doc.shingles));
        true
    })?;
    let long: Vec<&(String, String)> = docs.iter().filter(|d| d.1.len() >= 1000).collect();
    let medium: Vec<&(String, String)> = docs.iter().filter(|d| d.1.len() >= 200).collect();
    let mut rng = SplitMix64::new(2026);
    for (kind, pool) in [("middle half", &medium), ("200 chars", &long)] {
        measure(db, &sets, kind, pool, queries, t, &mut rng)?;
    }
    Ok(())
}

/// The (id, text) records of a JSON Lines corpus.
fn read_corpus(corpus: &str) -> Result<Vec<(String, String)>, BoxError> {
    let mut docs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(corpus)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let (Some(id), Some(text)) = (v["id"].as_str(), v["text"].as_str()) {
            docs.push((id.to_owned(), text.to_owned()));
        }
    }
    Ok(docs)
}

/// Loads `docs` into `OUT/NAME.lshdb` (with or without the containment
/// index), compacts it and prints its size.
fn load(
    docs: &[(String, String)],
    out: &std::path::Path,
    name: &str,
    containment: bool,
) -> Result<Database, BoxError> {
    let path = out.join(format!("{name}.lshdb"));
    let _ = std::fs::remove_file(&path);
    let start = Instant::now();
    let mut db = Database::create(&path, Config::jaccard(0.8).containment(containment))?;
    db.insert_bulk(
        docs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        &BulkOptions::default(),
        |_| true,
    )?;
    let loaded = std::fs::metadata(&path)?.len();
    let load_secs = start.elapsed().as_secs_f64();
    db.compact()?;
    let compacted = std::fs::metadata(&path)?.len();
    let stats = db.stats()?;
    let n = stats.documents as f64;
    println!(
        "{name}: load {load_secs:.1} s; {:.0} bytes/doc as loaded, {:.0} after compact; \
         {} containment postings",
        loaded as f64 / n,
        compacted as f64 / n,
        stats.containment_postings
    );
    Ok(db)
}

/// Runs `queries / 2` passages of `kind` from `pool` against `db`, with
/// and without the class scan, and prints recall against the exact
/// answer (from `sets`), candidates and time.
fn measure(
    db: &Database,
    sets: &[(String, Vec<u32>)],
    kind: &str,
    pool: &[&(String, String)],
    queries: usize,
    t: f64,
    rng: &mut SplitMix64,
) -> Result<(), BoxError> {
    let shingler = Shingler::new(ShingleConfig::default())?;
    let (mut found, mut truth, mut found_lsh) = (0usize, 0usize, 0usize);
    let (mut candidates, mut candidates_lsh, mut micros, mut micros_lsh) = (0, 0, 0.0, 0.0);
    let (mut source_found, mut source_found_lsh) = (0, 0);
    for _ in 0..queries / 2 {
        let (key, text) = pool[(rng.next_u64() % pool.len() as u64) as usize];
        let chars: Vec<char> = text.chars().collect();
        let (start, len) = if kind == "middle half" {
            (chars.len() / 4, chars.len() / 2)
        } else {
            let start = (rng.next_u64() % (chars.len() - 200) as u64) as usize;
            (start, 200)
        };
        let passage: String = chars[start..start + len].iter().collect();
        let q = shingler.set(&passage);
        if q.is_empty() {
            continue;
        }
        let need = t * q.len() as f64;
        let exact: BTreeSet<&str> = sets
            .iter()
            .filter(|(_, s)| intersection_size(q.as_slice(), s) as f64 >= need)
            .map(|(k, _)| k.as_str())
            .collect();
        let timer = Instant::now();
        let with = db.query(&passage).containment(t).run()?;
        micros += timer.elapsed().as_secs_f64() * 1e6;
        let timer = Instant::now();
        let lsh = db.query(&passage).containment(t).class_scan_cap(0).run()?;
        micros_lsh += timer.elapsed().as_secs_f64() * 1e6;
        candidates += with.explain.candidates;
        candidates_lsh += lsh.explain.candidates;
        let got: BTreeSet<&str> = with.hits.iter().map(|h| h.key.as_str()).collect();
        let got_lsh: BTreeSet<&str> = lsh.hits.iter().map(|h| h.key.as_str()).collect();
        assert!(got.is_subset(&exact) && got_lsh.is_subset(&exact));
        truth += exact.len();
        found += got.len();
        found_lsh += got_lsh.len();
        source_found += usize::from(got.contains(key.as_str()));
        source_found_lsh += usize::from(got_lsh.contains(key.as_str()));
    }
    let n = (queries / 2) as f64;
    println!(
        "{kind}, t = {t}: recall {:.4} ({found} of {truth}), source found {:.4}, \
         {:.0} candidates, {:.0} µs per query; index alone: recall {:.4}, source found \
         {:.4}, {:.0} candidates, {:.0} µs",
        found as f64 / truth as f64,
        source_found as f64 / n,
        candidates as f64 / n,
        micros / n,
        found_lsh as f64 / truth as f64,
        source_found_lsh as f64 / n,
        candidates_lsh as f64 / n,
        micros_lsh / n,
    );
    Ok(())
}
