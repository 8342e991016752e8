//! `Database::exact_pairs` against a brute-force all-pairs join of the
//! shingle sets, and LSH `Database::pairs` as a subset of it.

use lshdb::hash::SplitMix64;
use lshdb::shingle::Shingler;
use lshdb::sketch::measures::jaccard;
use lshdb::{Config, Database, Error, Pair};
use std::collections::BTreeMap;

mod common;

const THRESHOLD: f64 = 0.5;

/// About 300 (key, text) documents: families of a base text and variants
/// with 0 to 9 random word edits (replace, insert, delete), so that
/// similarities spread around the threshold, plus unrelated singletons.
/// Keys are shuffled so that insertion order is not key order.
fn corpus(seed: u64) -> Vec<(String, String)> {
    let mut rng = SplitMix64::new(seed);
    let vocab = common::vocabulary(300);
    let pick = |rng: &mut SplitMix64| vocab[(rng.next_u64() % vocab.len() as u64) as usize].clone();
    let mut texts: Vec<String> = Vec::new();
    while texts.len() < 300 {
        let words = 12 + (rng.next_u64() % 20) as usize;
        let base: Vec<String> = (0..words).map(|_| pick(&mut rng)).collect();
        texts.push(base.join(" "));
        let variants = rng.next_u64() % 7; // 0: an unrelated singleton
        for _ in 0..variants {
            let mut variant = base.clone();
            for _ in 0..rng.next_u64() % 10 {
                let at = (rng.next_u64() % variant.len() as u64) as usize;
                match rng.next_u64() % 3 {
                    0 => variant[at] = pick(&mut rng),
                    1 => variant.insert(at, pick(&mut rng)),
                    _ if variant.len() > 1 => {
                        variant.remove(at);
                    }
                    _ => {}
                }
            }
            texts.push(variant.join(" "));
        }
    }
    // Key numbers: a shuffled permutation.
    let mut numbers: Vec<usize> = (0..texts.len()).collect();
    for i in (1..numbers.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        numbers.swap(i, j);
    }
    numbers
        .into_iter()
        .zip(texts)
        .map(|(n, text)| (format!("doc-{n:04}"), text))
        .collect()
}

fn database(dir: &tempfile::TempDir, docs: &[(String, String)]) -> Database {
    let db = Database::create(dir.path().join("exact.lshdb"), Config::jaccard(THRESHOLD)).unwrap();
    common::insert_batch(&db, docs);
    db
}

/// Brute force over the shingle sets: unordered key pair → similarity.
fn brute_force(
    db: &Database,
    docs: &[(String, String)],
    t: f64,
) -> BTreeMap<(String, String), f64> {
    let shingler = Shingler::new(db.settings().shingle.clone()).unwrap();
    let sets: Vec<Vec<u32>> = docs
        .iter()
        .map(|(_, text)| shingler.set(text).as_slice().to_vec())
        .collect();
    let mut out = BTreeMap::new();
    for i in 0..docs.len() {
        for j in i + 1..docs.len() {
            let s = jaccard(&sets[i], &sets[j]);
            if s >= t {
                out.insert(ordered(&docs[i].0, &docs[j].0), s);
            }
        }
    }
    out
}

fn ordered(a: &str, b: &str) -> (String, String) {
    if a < b {
        (a.to_owned(), b.to_owned())
    } else {
        (b.to_owned(), a.to_owned())
    }
}

fn collect(run: impl FnOnce(&mut dyn FnMut(Pair) -> bool) -> lshdb::Result<u64>) -> Vec<Pair> {
    let mut pairs = Vec::new();
    let count = run(&mut |pair| {
        pairs.push(pair);
        true
    })
    .unwrap();
    assert_eq!(count, pairs.len() as u64);
    pairs
}

#[test]
fn exact_pairs_equal_brute_force_and_contain_lsh_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(0xe8ac7);
    let db = database(&dir, &docs);
    let expected = brute_force(&db, &docs, THRESHOLD);

    let exact = collect(|emit| db.exact_pairs(THRESHOLD, emit));
    // Oriented a < b by key, sorted by (a, b), each pair once.
    for pair in &exact {
        assert!(pair.a < pair.b, "{pair:?}");
    }
    assert!(exact
        .windows(2)
        .all(|w| (&w[0].a, &w[0].b) < (&w[1].a, &w[1].b)));
    let exact: BTreeMap<(String, String), f64> = exact
        .into_iter()
        .map(|p| ((p.a, p.b), p.similarity))
        .collect();
    assert_eq!(exact, expected);
    // A test with few pairs, or none near the threshold, would prove little.
    assert!(exact.len() > 300, "{} pairs", exact.len());
    assert!(exact.values().any(|&s| s < 0.6));

    let lsh = collect(|emit| db.pairs(THRESHOLD, emit));
    let lsh: BTreeMap<(String, String), f64> = lsh
        .into_iter()
        .map(|p| (ordered(&p.a, &p.b), p.similarity))
        .collect();
    for (pair, similarity) in &lsh {
        let exact_similarity = exact.get(pair).copied();
        assert_eq!(
            exact_similarity.map(f64::to_bits),
            Some(similarity.to_bits()),
            "{pair:?}"
        );
    }
    let recall = lsh.len() as f64 / exact.len() as f64;
    println!(
        "LSH pairs at {THRESHOLD}: {} of {} exact pairs, recall {recall:.4}",
        lsh.len(),
        exact.len()
    );
    assert!(recall > 0.5, "recall {recall}");
}

#[test]
fn exact_pairs_at_other_thresholds_and_identical_documents() {
    let dir = tempfile::tempdir().unwrap();
    let mut docs = corpus(0x5eed);
    docs.truncate(120);
    // Identical texts under other keys, and one normalising to the same set.
    docs.push(("zz-copy".to_owned(), docs[3].1.clone()));
    docs.push((
        "aa-copy".to_owned(),
        format!("  {}  ", docs[3].1.to_uppercase()),
    ));
    let db = database(&dir, &docs);
    for t in [0.3, 0.8, 0.9, 1.0] {
        let got: BTreeMap<(String, String), f64> = collect(|emit| db.exact_pairs(t, emit))
            .into_iter()
            .map(|p| ((p.a, p.b), p.similarity))
            .collect();
        assert_eq!(got, brute_force(&db, &docs, t), "t = {t}");
        if t == 1.0 {
            assert!(got.contains_key(&ordered("zz-copy", &docs[3].0)));
            assert!(got.values().all(|&s| s == 1.0));
        }
    }
}

#[test]
fn exact_pairs_stops_early_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let docs = corpus(0xe8ac7);
    let db = database(&dir, &docs);
    let mut seen = 0;
    let count = db
        .exact_pairs(THRESHOLD, |_| {
            seen += 1;
            seen < 3
        })
        .unwrap();
    assert_eq!((count, seen), (3, 3));
    for t in [0.0, -1.0, 1.5, f64::NAN] {
        assert!(matches!(
            db.exact_pairs(t, |_| true),
            Err(Error::InvalidParameter {
                name: "threshold",
                ..
            })
        ));
    }
    let empty = Database::create(dir.path().join("empty.lshdb"), Config::jaccard(0.8)).unwrap();
    assert_eq!(empty.exact_pairs(0.5, |_| true).unwrap(), 0);
}

/// Timing on real data: every Debian long description, char 5-shingles.
/// `cargo test --release --test exact_pairs -- --ignored --nocapture`
#[test]
#[ignore = "needs tools/data/debian-desc-long.jsonl; a timing run"]
fn time_all_pairs_on_debian_descriptions() {
    use lshdb::shingle::{ShingleConfig, Shingler};
    use lshdb::sketch::exact::all_pairs;
    use rayon::prelude::*;
    use std::time::Instant;

    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/data/debian-desc-long.jsonl");
    let Ok(data) = std::fs::read_to_string(&path) else {
        eprintln!("{} not found; nothing to time", path.display());
        return;
    };
    let texts: Vec<String> = data
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["text"].as_str().unwrap().to_owned()
        })
        .collect();
    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    let start = Instant::now();
    let sets: Vec<Vec<u32>> = texts
        .par_iter()
        .map(|t| shingler.set(t).as_slice().to_vec())
        .collect();
    let tokens: usize = sets.iter().map(Vec::len).sum();
    println!(
        "{} documents, {tokens} shingles ({:.1} per document), shingled in {:.2?} on {} threads",
        sets.len(),
        tokens as f64 / sets.len() as f64,
        start.elapsed(),
        rayon::current_num_threads()
    );
    for t in [0.5, 0.8, 0.9] {
        let (start, cpu) = (Instant::now(), cpu_seconds());
        let pairs = all_pairs(&sets, t).unwrap();
        println!(
            "t = {t}: {} pairs in {:.3} s ({:.1} s of CPU)",
            pairs.len(),
            start.elapsed().as_secs_f64(),
            cpu_seconds() - cpu
        );
    }
    // A sample checked against brute force.
    let sample = &sets[..2000];
    for t in [0.5, 0.8] {
        let mut expected = Vec::new();
        for i in 0..sample.len() {
            for j in i + 1..sample.len() {
                let s = jaccard(&sample[i], &sample[j]);
                if s >= t {
                    expected.push((i, j, s));
                }
            }
        }
        assert_eq!(all_pairs(sample, t).unwrap(), expected);
        println!(
            "t = {t}: first 2000 documents agree with brute force ({} pairs)",
            expected.len()
        );
    }
}

/// CPU seconds (user + system) of this process so far, from /proc; 0
/// where there is none. Wall time alone misleads on a shared machine.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // utime and stime are fields 14 and 15 of the line, in clock ticks
    // (100 a second on Linux); fields 12 and 13 after the command name.
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields
        .get(11..13)
        .unwrap_or(&[])
        .iter()
        .map(|f| f.parse::<f64>().unwrap_or(0.0))
        .sum();
    ticks / 100.0
}
