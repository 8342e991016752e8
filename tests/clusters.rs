//! Maintained clusters (`docs/clusters.md`), property-tested: after every
//! operation of a seeded random sequence of inserts, replaces, removes
//! (including ones that split a cluster), batches, bulk loads,
//! dedup-on-write and reopens, under each representative policy (the
//! priority policy with random priorities, ties frequent), the clusters
//! equal the connected components
//! that `Database::groups` computes from scratch (and unpaired documents
//! are clusters of one), `check` is clean, and the ids follow the rules:
//! - a cluster keeps its id as members join;
//! - when clusters merge, the oldest (smallest) id survives and the others
//!   resolve to it;
//! - when a removal splits a cluster, the part holding the representative
//!   (the best member left, by the policy) keeps the id, and the others
//!   get new ids, larger than any handed out before.
//!
//! Documents walk along a path of edits from a few base texts, two words
//! per step, so neighbours on the path are near-duplicates and distant
//! ones are not: clusters are chains, and removing a middle link splits
//! one.

mod common;

use lshdb::{BulkOptions, Config, Database, Prioritised, Representative, Unique};
use std::collections::{BTreeMap, BTreeSet};

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: [&str; 24] = [
    "database",
    "index",
    "record",
    "bucket",
    "band",
    "signature",
    "shingle",
    "query",
    "near",
    "duplicate",
    "similar",
    "exact",
    "store",
    "file",
    "page",
    "write",
    "river",
    "stone",
    "light",
    "green",
    "market",
    "paper",
    "north",
    "winter",
];

/// The text at `step` on the path from base `base`: a 40-word sentence
/// whose first `2 * step` words are replaced.
fn text(base: usize, step: usize) -> String {
    (0..40)
        .map(|i| {
            let w = (i * 7 + base * 11) % WORDS.len();
            if i < 2 * step {
                format!("{}{}", WORDS[(w + 5) % WORDS.len()], i % 3)
            } else {
                WORDS[w].to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn random_text(rng: &mut Rng) -> String {
    text(rng.below(3), rng.below(14))
}

/// The clusters as the database keeps them: id → (representative, members).
type Kept = BTreeMap<u64, (String, BTreeSet<String>)>;

fn kept(db: &Database) -> Kept {
    common::maintained_clusters(db)
}

fn cluster_of_key(kept: &Kept) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (&id, (_, members)) in kept {
        for key in members {
            assert!(
                out.insert(key.clone(), id).is_none(),
                "{key} in two clusters"
            );
        }
    }
    out
}

/// The clusters equal `groups`' components; every key is in one.
fn assert_matches_groups(db: &Database, kept: &Kept, keys: &BTreeSet<String>) {
    let threshold = db.settings().threshold;
    let groups: BTreeSet<BTreeSet<String>> = db
        .groups(threshold)
        .unwrap()
        .groups
        .into_iter()
        .map(|g| g.into_iter().map(|(k, _)| k).collect())
        .collect();
    let larger: BTreeSet<BTreeSet<String>> = kept
        .values()
        .filter(|(_, m)| m.len() > 1)
        .map(|(_, m)| m.clone())
        .collect();
    assert_eq!(larger, groups);
    let all: BTreeSet<String> = cluster_of_key(kept).into_keys().collect();
    assert_eq!(&all, keys);
}

/// The model: each key's insertion order (a replaced key counts as
/// inserted when replaced) and priority, for the representative policies.
struct Model {
    order: BTreeMap<String, u64>,
    priority: BTreeMap<String, i64>,
    clock: u64,
    /// The largest cluster id seen so far.
    max_id: u64,
}

impl Model {
    /// `key` stored with `priority` (which counts only under the
    /// priority policy; other files ignore it in bulk loads).
    fn stored(&mut self, key: &str, priority: i64) {
        self.clock += 1;
        self.order.insert(key.to_string(), self.clock);
        self.priority.insert(key.to_string(), priority);
    }

    fn removed(&mut self, key: &str) {
        self.order.remove(key);
        self.priority.remove(key);
    }

    fn best(&self, policy: Representative, members: &BTreeSet<String>) -> String {
        match policy {
            Representative::SmallestKey => members.iter().next().unwrap().clone(),
            // The highest priority; ties to the first stored.
            Representative::Priority => members
                .iter()
                .min_by_key(|k| (-self.priority[*k], self.order[*k]))
                .unwrap()
                .clone(),
            _ => members
                .iter()
                .min_by_key(|k| self.order[*k])
                .unwrap()
                .clone(),
        }
    }
}

/// The id rules for an insert of `key` (new or a replacement whose old
/// version's cluster lost nothing else): every cluster before keeps its
/// id, or merged into the smallest id of those it merged with.
fn assert_insert_rules(db: &Database, before: &Kept, after: &Kept, key: &str, model: &Model) {
    let was = cluster_of_key(before);
    for (&id, (_, members)) in after {
        let old: BTreeSet<u64> = members
            .iter()
            .filter(|k| k.as_str() != key)
            .filter_map(|k| was.get(k).copied())
            .collect();
        match old.first() {
            Some(&oldest) => {
                assert_eq!(id, oldest, "a merge keeps the oldest id");
                for &merged in &old {
                    assert_eq!(
                        db.cluster(merged).unwrap().unwrap().id,
                        id,
                        "alias {merged}"
                    );
                }
            }
            None if was.contains_key(key) => {} // a replaced document may keep its id
            None => assert!(id > model.max_id, "a new cluster gets a new id"),
        }
    }
}

/// The id rules for the removal of `key`: the clusters it was not in are
/// unchanged; the part of its cluster holding the best member left keeps
/// the id; the other parts get new ids.
fn assert_remove_rules(
    before: &Kept,
    after: &Kept,
    key: &str,
    policy: Representative,
    model: &Model,
) {
    let was = cluster_of_key(before);
    let Some(&home) = was.get(key) else { return };
    let left: BTreeSet<String> = before[&home]
        .1
        .iter()
        .filter(|k| k.as_str() != key)
        .cloned()
        .collect();
    for (&id, entry) in before {
        if id != home {
            assert_eq!(after.get(&id), Some(entry), "cluster {id} untouched");
        }
    }
    if left.is_empty() {
        assert!(!after.contains_key(&home));
        return;
    }
    let now = cluster_of_key(after);
    if policy != Representative::Longest {
        let representative = model.best(policy, &left);
        assert_eq!(
            now[&representative], home,
            "the representative's part keeps the id"
        );
    }
    for k in &left {
        let id = now[k];
        assert!(
            id == home || id > model.max_id,
            "a split part gets a new id"
        );
    }
}

/// A random priority in -2..=2 (0 half the time), so ties are frequent.
fn random_priority(rng: &mut Rng) -> i64 {
    match rng.below(2) {
        0 => 0,
        _ => rng.below(5) as i64 - 2,
    }
}

/// A random document with a priority: a random one under the priority
/// policy; else one from its length, which those files ignore (drawing
/// nothing more keeps the other policies' seeded sequences as they were).
fn random_doc(rng: &mut Rng, by_priority: bool) -> Prioritised<String> {
    if !by_priority {
        let text = random_text(rng);
        let priority = (text.len() % 5) as i64 - 2;
        return Prioritised::new(text, priority);
    }
    let priority = random_priority(rng);
    Prioritised::new(random_text(rng), priority)
}

/// A bulk load of a few random documents, with priorities (which files
/// of other policies ignore), committing every 3.
fn bulk_load(db: &Database, rng: &mut Rng, model: &mut Model, by_priority: bool) {
    let docs: Vec<(String, Prioritised<String>)> = (0..rng.below(8) + 1)
        .map(|_| (format!("k{}", rng.below(40)), random_doc(rng, by_priority)))
        .collect();
    for chunk in docs.chunks(3) {
        // A commit's ids follow key order; the last copy of a key wins.
        let mut last: BTreeMap<&String, i64> = BTreeMap::new();
        for (key, doc) in chunk {
            last.insert(key, doc.priority);
        }
        for (key, priority) in last {
            model.stored(key, priority);
        }
    }
    let options = BulkOptions::default().batch(3);
    db.insert_bulk(docs, &options, |_| true).unwrap();
}

/// Pipelined dedup-on-write of two chunks of new keys, ascending (`counter`
/// numbers them), so the accepted documents' ids follow the input order.
fn pipelined_unique(
    db: &Database,
    rng: &mut Rng,
    model: &mut Model,
    by_priority: bool,
    counter: &mut u64,
) {
    let chunks: Vec<Vec<(String, Prioritised<String>)>> = (0..2)
        .map(|_| {
            (0..rng.below(4) + 1)
                .map(|_| {
                    *counter += 1;
                    (format!("p{counter:06}"), random_doc(rng, by_priority))
                })
                .filter(|(k, _)| !model.order.contains_key(k))
                .collect()
        })
        .collect();
    let keys: Vec<(String, i64)> = chunks
        .iter()
        .flatten()
        .map(|(k, d)| (k.clone(), d.priority))
        .collect();
    let mut decisions = Vec::new();
    let options = BulkOptions::default().batch(2);
    db.insert_unique_bulk(chunks, 0.9, &options, |d| {
        decisions.extend(d);
        true
    })
    .unwrap();
    for ((key, priority), done) in keys.iter().zip(decisions) {
        if done.unwrap() == Unique::Inserted {
            model.stored(key, *priority);
        }
    }
}

fn run(seed: u64, policy: Representative, steps: usize) {
    let by_priority = policy == Representative::Priority;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.lshdb");
    let config = Config::jaccard(0.7).cluster_representative(policy);
    let mut db = Database::create(&path, config).unwrap();
    let mut rng = Rng(seed);
    let mut model = Model {
        order: BTreeMap::new(),
        priority: BTreeMap::new(),
        clock: 0,
        max_id: 0,
    };
    let mut splits = 0;
    let mut pipelined = 0u64;
    for step in 0..steps {
        let before = kept(&db);
        let keys: Vec<String> = model.order.keys().cloned().collect();
        let op = rng.below(10);
        match op {
            0..=3 => {
                let key = format!("k{}", rng.below(40));
                let doc = random_doc(&mut rng, by_priority);
                if by_priority {
                    db.insert_document(&key, &doc).unwrap();
                    model.stored(&key, doc.priority);
                } else {
                    let joined = db.insert_clustered(&key, doc.doc.as_str()).unwrap();
                    model.stored(&key, 0);
                    assert_eq!(joined, db.cluster_of(&key).unwrap());
                }
                let after = kept(&db);
                let replaced = before.values().any(|(_, m)| m.contains(&key));
                if !replaced {
                    assert_insert_rules(&db, &before, &after, &key, &model);
                }
            }
            4..=5 if !keys.is_empty() => {
                let key = keys[rng.below(keys.len())].clone();
                assert!(db.remove(&key).unwrap());
                model.removed(&key);
                let after = kept(&db);
                assert_remove_rules(&before, &after, &key, policy, &model);
                if after.len() > before.len() {
                    splits += 1;
                }
            }
            6 => {
                let mut batch = db.batch().unwrap();
                for _ in 0..rng.below(5) + 1 {
                    let key = format!("k{}", rng.below(40));
                    if rng.below(3) == 0 {
                        batch.remove(&key).unwrap();
                        model.removed(&key);
                    } else if by_priority {
                        let doc = random_doc(&mut rng, by_priority);
                        batch.insert_document(&key, &doc).unwrap();
                        model.stored(&key, doc.priority);
                    } else {
                        batch.insert(&key, random_text(&mut rng).as_str()).unwrap();
                        model.stored(&key, 0);
                    }
                }
                batch.commit().unwrap();
            }
            7 => bulk_load(&db, &mut rng, &mut model, by_priority),
            8 if rng.below(2) == 0 => {
                pipelined_unique(&db, &mut rng, &mut model, by_priority, &mut pipelined)
            }
            8 => {
                let key = format!("u{}", rng.below(40));
                let doc = random_doc(&mut rng, by_priority);
                let (done, priority) = if by_priority {
                    let done = db.insert_unique_document(&key, &doc, 0.9).unwrap();
                    (done, doc.priority)
                } else {
                    (db.insert_unique(&key, doc.doc.as_str(), 0.9).unwrap(), 0)
                };
                if done == Unique::Inserted {
                    model.stored(&key, priority);
                }
            }
            _ => {
                drop(db);
                db = Database::open(&path).unwrap();
            }
        }
        let after = kept(&db);
        let keys: BTreeSet<String> = model.order.keys().cloned().collect();
        assert_matches_groups(&db, &after, &keys);
        if step % 10 == 0 {
            let report = db.check().unwrap();
            assert!(report.is_clean(), "{:?}", report.problems);
        }
        for (&id, (representative, members)) in &after {
            if policy != Representative::Longest {
                assert_eq!(
                    representative,
                    &model.best(policy, members),
                    "cluster {id} step {step} op {op} {members:?} {:?}",
                    model.order
                );
            }
        }
        model.max_id = model.max_id.max(after.keys().copied().max().unwrap_or(0));
    }
    assert!(splits > 0, "no removal split a cluster");
    let report = db.check().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
}

#[test]
fn clusters_equal_groups_and_keep_their_ids_first_inserted() {
    for seed in [1, 2, 3] {
        run(
            0x9e37_79b9_7f4a_7c15 ^ seed,
            Representative::FirstInserted,
            250,
        );
    }
}

#[test]
fn clusters_equal_groups_and_keep_their_ids_smallest_key() {
    run(77, Representative::SmallestKey, 250);
}

#[test]
fn clusters_equal_groups_longest() {
    run(991, Representative::Longest, 200);
}

#[test]
fn clusters_equal_groups_and_keep_their_ids_priority() {
    for seed in [5, 6] {
        run(0x2545_f491_4f6c_dd1d ^ seed, Representative::Priority, 250);
    }
}

/// Clusters built for an existing file, rebuilt by a re-banding, and
/// dropped: each time they equal `groups()` and `check` is clean; a file
/// without them answers cluster reads with an error.
#[test]
fn clusters_are_built_rebuilt_and_dropped_on_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::create(dir.path().join("b.lshdb"), Config::jaccard(0.7)).unwrap();
    let mut rng = Rng(5);
    let mut keys = BTreeSet::new();
    for i in 0..60 {
        let key = format!("k{i}");
        db.insert(&key, random_text(&mut rng).as_str()).unwrap();
        keys.insert(key);
    }
    assert!(matches!(
        db.cluster_of("k0"),
        Err(lshdb::Error::InvalidParameter { .. })
    ));
    db.build_clusters(Representative::SmallestKey).unwrap();
    assert!(db.has_clusters());
    assert_matches_groups(&db, &kept(&db), &keys);
    assert!(db.check().unwrap().is_clean());
    db.reband(0.6, None).unwrap();
    assert_matches_groups(&db, &kept(&db), &keys);
    assert!(db.check().unwrap().is_clean());
    drop(db);
    let mut db = Database::open(dir.path().join("b.lshdb")).unwrap();
    assert_eq!(db.settings().clusters, Some(Representative::SmallestKey));
    db.remove("k3").unwrap();
    keys.remove("k3");
    assert_matches_groups(&db, &kept(&db), &keys);
    db.drop_clusters().unwrap();
    assert!(!db.has_clusters());
    assert!(db.check().unwrap().is_clean());
}

/// Clusters and the time index together: expiring documents takes them
/// out of their clusters (the removal path does both), so after `expire`
/// the clusters still equal `groups()` and `check` is clean; dropping or
/// building either keeps the other.
#[test]
fn clusters_stay_equal_to_groups_after_expire() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.lshdb");
    let config = Config::jaccard(0.7)
        .timestamps(true)
        .cluster_representative(Representative::Longest);
    let db = Database::create(&path, config).unwrap();
    let mut rng = Rng(11);
    let mut keys = BTreeSet::new();
    for i in 0..80u64 {
        let key = format!("k{i}");
        // Stamps in no order, so expiry cuts across clusters.
        let at = 1_000 + (i * 37) % 80;
        db.insert_at(&key, random_text(&mut rng).as_str(), at)
            .unwrap();
        if at >= 1_040 {
            keys.insert(key);
        }
    }
    let report = db.expire(1_040).unwrap();
    assert_eq!(report.removed, 40);
    assert_matches_groups(&db, &kept(&db), &keys);
    assert!(db.check().unwrap().is_clean());
    drop(db);
    let mut db = Database::open(&path).unwrap();
    assert!(db.settings().timestamps);
    assert_eq!(db.settings().clusters, Some(Representative::Longest));
    db.drop_time_index().unwrap();
    assert_eq!(db.settings().clusters, Some(Representative::Longest));
    db.drop_clusters().unwrap();
    db.build_time_index(2_000).unwrap();
    db.build_clusters(Representative::FirstInserted).unwrap();
    assert!(db.settings().timestamps);
    assert_eq!(db.expire(2_001).unwrap().removed, keys.len() as u64);
    assert!(kept(&db).is_empty());
    assert!(db.check().unwrap().is_clean());
}
