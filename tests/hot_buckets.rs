//! Hot buckets: many identical copies of a text. `Database::pairs` and
//! `Database::groups` collapse identical sets into classes, so they stay
//! fast and bounded, yet the pairs stay exact and complete: every pair of
//! copies at similarity 1, and the pairs with near-duplicates at their own
//! similarity, against a brute-force oracle.

use lshdb::hash::SplitMix64;
use lshdb::shingle::Shingler;
use lshdb::sketch::measures::jaccard;
use lshdb::{BulkOptions, Config, Database};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

mod common;

const THRESHOLD: f64 = 0.7;
/// Copies of the hot text.
const COPIES: usize = 1_000;

fn words(rng: &mut SplitMix64, vocab: &[String], n: usize) -> Vec<String> {
    (0..n)
        .map(|_| vocab[(rng.next_u64() % vocab.len() as u64) as usize].clone())
        .collect()
}

/// (key, text) in insertion order: a hot text copied [`COPIES`] times, a
/// second class of 40 copies one word away from it, a third unrelated
/// class of 30 copies, near-duplicates of each (one stored before any
/// copy), and unrelated singletons, all interleaved.
fn corpus() -> Vec<(String, String)> {
    let mut rng = SplitMix64::new(0x4077);
    let vocab = common::vocabulary(400);
    let hot = words(&mut rng, &vocab, 60);
    let mut near = hot.clone();
    near[30] = "zzzword".into();
    let other = words(&mut rng, &vocab, 50);
    let variant = |base: &[String], at: usize, word: &str| {
        let mut v = base.to_vec();
        v[at] = word.into();
        v.join(" ")
    };
    let mut docs: Vec<(String, String)> = vec![("first-near".into(), variant(&hot, 5, "qqqword"))];
    for i in 0..COPIES {
        docs.push((format!("hot-{i:05}"), hot.join(" ")));
        if i % 50 == 7 {
            docs.push((format!("near-{i:05}"), near.join(" ")));
        }
        if i % 100 == 3 {
            docs.push((format!("other-{i:05}"), other.join(" ")));
        }
        if i % 150 == 11 {
            let text = words(&mut rng, &vocab, 40).join(" ");
            docs.push((format!("single-{i:05}"), text));
        }
    }
    docs.push(("last-near".into(), variant(&hot, 50, "yyyword")));
    docs.push(("other-near".into(), variant(&other, 10, "xxxword")));
    docs
}

/// The corpus, loaded into a database in a new temporary folder (keep it).
fn loaded() -> (Vec<(String, String)>, tempfile::TempDir, Database) {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir, &docs);
    (docs, dir, db)
}

fn database(dir: &tempfile::TempDir, docs: &[(String, String)]) -> Database {
    let db = Database::create(dir.path().join("hot.lshdb"), Config::jaccard(THRESHOLD)).unwrap();
    // One batch: ids follow the order of `docs` (the oracle's orientation).
    common::insert_batch(&db, docs);
    db
}

/// Every pair by brute force, as (first stored, second stored, similarity)
/// by place in `docs`, in order.
/// The similarity of two texts is computed once (the copies would make
/// this slow in a debug build), but every pair of documents is judged.
fn oracle(db: &Database, docs: &[(String, String)]) -> Vec<(u32, u32, f64)> {
    let shingler = Shingler::new(db.settings().shingle.clone()).unwrap();
    let mut texts: HashMap<&str, usize> = HashMap::new();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let of: Vec<usize> = docs
        .iter()
        .map(|(_, text)| {
            *texts.entry(text.as_str()).or_insert_with(|| {
                sets.push(shingler.set(text).as_slice().to_vec());
                sets.len() - 1
            })
        })
        .collect();
    let mut memo: HashMap<(usize, usize), f64> = HashMap::new();
    let mut out = Vec::new();
    for i in 0..docs.len() {
        for j in i + 1..docs.len() {
            let (x, y) = (of[i], of[j]);
            let s = *memo
                .entry((x, y))
                .or_insert_with(|| jaccard(&sets[x], &sets[y]));
            if s >= THRESHOLD {
                out.push((i as u32, j as u32, s));
            }
        }
    }
    out
}

#[test]
fn identical_copies_pair_exactly_and_completely() {
    let (docs, _dir, db) = loaded();
    let expected = oracle(&db, &docs);
    let copies = COPIES as u64;
    // The copies' own pairs and more: with the second class, the
    // near-duplicates and the other class.
    let near = docs.iter().filter(|(k, _)| k.starts_with("near-")).count() as u64;
    assert!(near >= 10);
    assert!(expected.len() as u64 > copies * (copies - 1) / 2 + near * copies);

    let place: HashMap<&str, u32> = docs
        .iter()
        .enumerate()
        .map(|(i, (key, _))| (key.as_str(), i as u32))
        .collect();
    let mut found = Vec::new();
    let count = db
        .pairs(THRESHOLD, |p| {
            found.push((place[p.a.as_str()], place[p.b.as_str()], p.similarity));
            true
        })
        .unwrap();
    assert_eq!(count, found.len() as u64);
    // The oracle's pairs are in storage order: `a` was stored before `b`,
    // each pair comes once, and similarities are bit-identical.
    found.sort_by_key(|&(a, b, _)| (a, b));
    assert_eq!(found.len(), expected.len());
    assert!(found == expected, "the pairs differ from the oracle's");
}

#[test]
fn identical_copies_pair_exactly_without_lsh() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir, &docs);
    let mut expected: Vec<(String, String, f64)> = oracle(&db, &docs)
        .into_iter()
        .map(|(i, j, s)| {
            let (a, b) = (&docs[i as usize].0, &docs[j as usize].0);
            (a.min(b).clone(), a.max(b).clone(), s)
        })
        .collect();
    expected.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    let mut found = Vec::new();
    let count = db
        .exact_pairs(THRESHOLD, |p| {
            found.push((p.a, p.b, p.similarity));
            true
        })
        .unwrap();
    assert_eq!(count, found.len() as u64);
    assert_eq!(found.len(), expected.len());
    assert!(found == expected, "sorted by (a, b), each once, exact");
    // An early stop after the first pair.
    let mut first = None;
    let count = db
        .exact_pairs(THRESHOLD, |p| {
            first = Some((p.a, p.b, p.similarity));
            false
        })
        .unwrap();
    assert_eq!(count, 1);
    assert_eq!(first.as_ref(), expected.first());
}

#[test]
fn identical_copies_group_once() {
    let (docs, _dir, db) = loaded();
    let expected = oracle(&db, &docs);
    // Components and best similarities from the oracle's pairs.
    let mut parent: HashMap<String, String> = HashMap::new();
    fn root(parent: &mut HashMap<String, String>, k: &str) -> String {
        let mut k = k.to_owned();
        while let Some(p) = parent.get(&k) {
            k = p.clone();
        }
        k
    }
    let mut best: HashMap<String, f64> = HashMap::new();
    for &(i, j, s) in &expected {
        let (a, b) = (&docs[i as usize].0, &docs[j as usize].0);
        for k in [a, b] {
            let e = best.entry(k.clone()).or_insert(s);
            *e = e.max(s);
        }
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra != rb {
            parent.insert(ra.clone().max(rb.clone()), ra.min(rb));
        }
    }
    let mut want: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for (k, &s) in &best {
        let r = root(&mut parent, k);
        want.entry(r).or_default().push((k.clone(), s));
    }
    let mut want: Vec<Vec<(String, f64)>> = want.into_values().collect();
    for g in &mut want {
        g.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    }
    want.sort_by(|x, y| y.len().cmp(&x.len()).then_with(|| x[0].0.cmp(&y[0].0)));

    let groups = db.groups(THRESHOLD).unwrap();
    assert_eq!(groups.pairs, expected.len() as u64);
    assert_eq!(groups.groups.len(), 2, "the hot family and the other one");
    assert_eq!(groups.groups, want);
}

#[test]
fn the_first_pair_of_a_hot_bucket_comes_at_once() {
    let (_dir, db) = common::new_db("copies.lshdb", Config::jaccard(0.8));
    let text = "the same text stored many times over, a hot bucket in every band";
    let copies = (0..20_000).map(|i| (format!("copy-{i}"), text));
    db.insert_bulk(copies, &BulkOptions::default(), |_| true)
        .unwrap();
    let start = Instant::now();
    let mut first = None;
    let count = db
        .pairs(0.8, |p| {
            first = Some((p.a, p.b, p.similarity));
            false
        })
        .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        first,
        Some(("copy-0".to_owned(), "copy-1".to_owned(), 1.0)),
        "the copies' pairs come in storage order"
    );
    // Generous: it takes well under a second; the quadratic path took
    // minutes.
    assert!(start.elapsed() < Duration::from_secs(60));
    let groups = db.groups(0.8).unwrap();
    assert_eq!(groups.groups.len(), 1);
    assert_eq!(groups.groups[0].len(), 20_000);
    assert_eq!(groups.pairs, 20_000 * 19_999 / 2);
    assert!(groups.groups[0].iter().all(|(_, s)| *s == 1.0));
}
