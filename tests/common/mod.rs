//! Shared helpers for the integration tests: a deterministic corpus of
//! near-duplicate families built from a fixed pseudo-word vocabulary.
#![allow(dead_code)]

use lshdb::hash::SplitMix64;
use lshdb::Database;
use std::collections::{BTreeMap, BTreeSet};

/// Syllables the vocabulary's pseudo-words are made of.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo", "pe", "zu", "ga", "fi", "dor", "wen", "bal",
    "tix", "qua", "sor", "lim", "hep",
];

/// A fixed vocabulary of `size` distinct pseudo-words.
pub fn vocabulary(size: usize) -> Vec<String> {
    let mut rng = SplitMix64::new(0x5eed_0001);
    let mut words: Vec<String> = Vec::with_capacity(size);
    while words.len() < size {
        let parts = 2 + (rng.next_u64() % 2) as usize;
        let word: String = (0..parts)
            .map(|_| SYLLABLES[(rng.next_u64() % SYLLABLES.len() as u64) as usize])
            .collect();
        if !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// Near-duplicate families: each has a base text of `words` random words
/// and `size - 1` variants with 1 to 3 words replaced. Deterministic in
/// `seed`.
pub fn families(seed: u64, count: usize, size: usize, words: usize) -> Vec<Vec<String>> {
    let vocab = vocabulary(400);
    let mut rng = SplitMix64::new(seed);
    let pick = |rng: &mut SplitMix64| vocab[(rng.next_u64() % vocab.len() as u64) as usize].clone();
    (0..count)
        .map(|_| {
            let base: Vec<String> = (0..words).map(|_| pick(&mut rng)).collect();
            let mut family = vec![base.join(" ")];
            for _ in 1..size {
                let mut variant = base.clone();
                let changes = 1 + (rng.next_u64() % 3) as usize;
                for _ in 0..changes {
                    let at = (rng.next_u64() % words as u64) as usize;
                    variant[at] = pick(&mut rng);
                }
                family.push(variant.join(" "));
            }
            family
        })
        .collect()
}

/// The key of member `m` of family `f`.
pub fn key(f: usize, m: usize) -> String {
    format!("fam{f:03}-m{m}")
}

/// The family index encoded in a key made by [`key`].
pub fn family_of(key: &str) -> usize {
    key[3..6].parse().expect("a key made by common::key")
}

/// The sorted keys a query of `text` finds with no bucket cap, at
/// `threshold`, or at the database's own when `None`.
pub fn found_keys(db: &lshdb::Database, text: &str, threshold: Option<f64>) -> Vec<String> {
    let mut query = db.query(text).max_bucket(usize::MAX);
    if let Some(t) = threshold {
        query = query.threshold(t);
    }
    let run = query.run().unwrap();
    let mut keys: Vec<String> = run.hits.into_iter().map(|h| h.key).collect();
    keys.sort();
    keys
}

/// The version in the `format` record of the `meta` table of a database
/// file, read with redb directly.
pub fn format_version(path: &std::path::Path) -> u32 {
    use redb::ReadableDatabase;
    let meta: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
    let db = redb::Database::open(path).unwrap();
    let read = db.begin_read().unwrap();
    let table = read.open_table(meta).unwrap();
    let record = table.get("format").unwrap().unwrap().value().to_vec();
    u32::from_le_bytes(record[8..12].try_into().unwrap())
}

/// A new database `name` in a new temporary folder, which the caller keeps
/// for as long as the database is used.
pub fn new_db(name: &str, config: lshdb::Config) -> (tempfile::TempDir, lshdb::Database) {
    let (dir, _, db) = new_db_at(name, config);
    (dir, db)
}

/// [`new_db`], with the database file's path.
pub fn new_db_at(
    name: &str,
    config: lshdb::Config,
) -> (tempfile::TempDir, std::path::PathBuf, lshdb::Database) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let db = lshdb::Database::create(&path, config).unwrap();
    (dir, path, db)
}

/// Inserts `docs` (key, text) into `db` in one batch, so that ids follow
/// their order.
pub fn insert_batch(db: &lshdb::Database, docs: &[(String, String)]) {
    let mut batch = db.batch().unwrap();
    for (key, text) in docs {
        batch.insert(key, text.as_str()).unwrap();
    }
    batch.commit().unwrap();
}

/// Writes `key` every way there is (insert, insert_items, insert_unique,
/// and a batch insert, aborted); the result of each.
pub fn write_every_way(db: &lshdb::Database, key: &str, text: &str) -> Vec<lshdb::Result<()>> {
    let mut results = vec![
        db.insert(key, text),
        db.insert_items(key, &["x"]),
        db.insert_unique(key, text, 0.9).map(|_| ()),
    ];
    let mut batch = db.batch().unwrap();
    results.push(batch.insert(key, text));
    batch.abort().unwrap();
    results
}

/// A file's maintained clusters, by id: its representative and its
/// members, read through `clusters()` and `members()`; asserts that each
/// cluster's size is its members' count and that its representative is
/// one of them.
pub fn maintained_clusters(db: &Database) -> BTreeMap<u64, (String, BTreeSet<String>)> {
    let mut out = BTreeMap::new();
    for cluster in db.clusters().unwrap() {
        let cluster = cluster.unwrap();
        let members: BTreeSet<String> = db
            .members(cluster.id)
            .unwrap()
            .map(|k| k.unwrap())
            .collect();
        assert_eq!(members.len() as u64, cluster.size, "cluster {}", cluster.id);
        assert!(members.contains(&cluster.representative));
        out.insert(cluster.id, (cluster.representative, members));
    }
    out
}
