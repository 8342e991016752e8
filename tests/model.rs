//! Model-based test: random sequences of operations run against a real
//! [`Database`] in a temporary directory and against a brute-force oracle, a
//! map from key to the exact shingle set the key holds.
//!
//! Operations: insert, replace (insert on a stored key), remove, text or
//! item-set query, query by stored key, `insert_unique`, batches (committed,
//! dropped or aborted) of inserts, removes and `insert_unique`s, and reopening
//! the file. Documents are built from a few fixed base texts (and base item
//! sets) with a handful of random edits or a splice of two bases, so exact
//! Jaccard similarities spread over the whole range and many pairs are
//! near-duplicates.
//!
//! After every operation the test checks that
//! - every hit is a stored key (never a removed or unknown one, never the
//!   query key itself), listed once, best first, with a similarity equal to
//!   the oracle's exact Jaccard and at least the query threshold;
//! - a document whose set is identical to the query's is always found (its
//!   signature, hence every band key, is identical: LSH cannot miss it);
//! - `limit(k)` returns the first k unlimited hits, pruning only drops hits,
//!   and `max_bucket(n)` only drops hits, and only when it reports a cut
//!   bucket; the explain record is consistent (counts, caps, warnings);
//! - `insert_unique` reports only true duplicates of another key and stores
//!   the document exactly when it reports none;
//! - a dropped or aborted batch changes nothing, and an open batch is
//!   invisible to readers;
//! - `len`, `contains` and `get` agree with the oracle;
//! - at the end of each case, `Database::check` is clean.
//!
//! Recall (oracle documents at or above the query threshold that the
//! database returned) is accumulated over the run and printed next to what
//! LSH theory predicts for the same pairs, by operation and by similarity
//! (see it with `cargo test --test model -- --nocapture`). For queries at or
//! above the index threshold it is asserted to be at least 0.9 and not far
//! below the prediction, so a broken index fails.
//!
//! The runs are deterministic: a fixed ChaCha seed, no failure persistence.

use lshdb::shingle::{item_set, ShingleConfig, Shingler};
use lshdb::sketch::lsh::Banding;
use lshdb::sketch::minhash::Scheme;
use lshdb::{Config, Database, Error, Explain, Hit, Unique};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{
    Config as RunnerConfig, RngAlgorithm, TestCaseError, TestRng, TestRunner,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Keys come from a small pool so that replaces and removes hit stored keys.
const KEYS: usize = 12;

/// Words the base texts and the edits draw from (a few non-ASCII ones, for
/// the character-boundary path of shingling and for case folding).
#[rustfmt::skip]
const VOCAB: [&str; 52] = [
    "database", "index", "record", "bucket", "band", "signature", "shingle", "query",
    "near", "duplicate", "similar", "exact", "jaccard", "store", "file", "page",
    "write", "read", "commit", "batch", "key", "value", "set", "hash",
    "the", "a", "of", "and", "to", "in", "is", "for",
    "quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river",
    "stone", "light", "green", "market", "paper", "north", "winter", "engine",
    "café", "naïve", "straße", "σοφία",
];

/// Base texts, and base item sets, per case.
const TEXT_BASES: usize = 4;
const ITEM_BASES: usize = 2;
/// Distinct items the item sets draw from.
const ITEMS: usize = 60;

/// Query thresholds the generator picks from (the index thresholds are 0.5
/// and 0.8, so both sides of each are covered).
const THRESHOLDS: [f64; 8] = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97];

/// A small deterministic generator for the fixed base texts (independent of
/// the library's own hash code).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

/// The fixed base texts (20–40 words) and base item sets (12–30 items).
struct Bases {
    texts: Vec<Vec<String>>,
    items: Vec<Vec<String>>,
}

impl Bases {
    fn new() -> Self {
        let mut rng = Lcg(0x6c73_6864_625f_6d6f);
        let texts = (0..TEXT_BASES)
            .map(|_| {
                let len = 20 + rng.next(21);
                (0..len)
                    .map(|_| VOCAB[rng.next(VOCAB.len())].to_owned())
                    .collect()
            })
            .collect();
        let items = (0..ITEM_BASES)
            .map(|_| {
                let len = 12 + rng.next(19);
                (0..len)
                    .map(|_| format!("sku-{}", rng.next(ITEMS)))
                    .collect()
            })
            .collect();
        Self { texts, items }
    }
}

/// A document as generated.
#[derive(Clone, Debug)]
enum Doc {
    Text(String),
    Items(Vec<String>),
}

/// One word edit of a base text.
#[derive(Clone, Debug)]
enum Edit {
    Replace(Index, usize),
    Insert(Index, usize),
    Delete(Index),
    /// Upper-cases a word: normalisation undoes it, so the set is unchanged.
    Shout(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<Index>(), 0..VOCAB.len()).prop_map(|(i, w)| Edit::Replace(i, w)),
        2 => (any::<Index>(), 0..VOCAB.len()).prop_map(|(i, w)| Edit::Insert(i, w)),
        2 => any::<Index>().prop_map(Edit::Delete),
        1 => any::<Index>().prop_map(Edit::Shout),
    ]
}

fn text_doc(bases: &'static Bases) -> impl Strategy<Value = Doc> {
    (
        0..TEXT_BASES,
        prop::option::weighted(0.2, (0..TEXT_BASES, 0.2f64..0.8)),
        prop::collection::vec(edit(), 0..=4),
    )
        .prop_map(move |(base, splice, edits)| {
            let mut words = bases.texts[base].clone();
            if let Some((other, at)) = splice {
                let other = &bases.texts[other];
                let cut = (words.len() as f64 * at) as usize;
                let from = (other.len() as f64 * at) as usize;
                words.truncate(cut);
                words.extend_from_slice(&other[from..]);
            }
            for edit in edits {
                match edit {
                    Edit::Replace(i, w) => {
                        let i = i.index(words.len());
                        words[i] = VOCAB[w].to_owned();
                    }
                    Edit::Insert(i, w) => words.insert(i.index(words.len() + 1), VOCAB[w].into()),
                    Edit::Delete(i) if words.len() > 1 => {
                        words.remove(i.index(words.len()));
                    }
                    Edit::Delete(_) => {}
                    Edit::Shout(i) => {
                        let i = i.index(words.len());
                        words[i] = words[i].to_uppercase();
                    }
                }
            }
            Doc::Text(words.join(" "))
        })
}

fn items_doc(bases: &'static Bases) -> impl Strategy<Value = Doc> {
    (
        0..ITEM_BASES,
        prop::collection::vec((any::<bool>(), any::<Index>(), 0..ITEMS), 0..=4),
    )
        .prop_map(move |(base, edits)| {
            let mut items = bases.items[base].clone();
            for (add, i, item) in edits {
                if add {
                    items.push(format!("sku-{item}"));
                } else if items.len() > 1 {
                    items.remove(i.index(items.len()));
                }
            }
            Doc::Items(items)
        })
}

fn doc(bases: &'static Bases) -> impl Strategy<Value = Doc> {
    prop_oneof![4 => text_doc(bases), 1 => items_doc(bases)]
}

fn threshold() -> impl Strategy<Value = f64> {
    prop::sample::select(THRESHOLDS.to_vec())
}

/// An operation inside a batch.
#[derive(Clone, Debug)]
enum BatchOp {
    Insert(usize, Doc),
    Remove(usize),
    InsertUnique(usize, Doc, f64),
}

/// How a batch ends.
#[derive(Clone, Copy, Debug)]
enum End {
    Commit,
    Drop,
    Abort,
}

#[derive(Clone, Debug)]
enum Op {
    Insert(usize, Doc),
    /// Insert on a key the oracle holds (the index picks which).
    Replace(Index, Doc),
    Remove(usize),
    /// A text or item-set query, also run with `limit` and `max_bucket`.
    Query {
        doc: Doc,
        threshold: f64,
        limit: Option<usize>,
        max_bucket: Option<usize>,
    },
    QueryKey(usize, f64),
    InsertUnique(usize, Doc, f64),
    Batch(Vec<BatchOp>, End),
    Reopen,
}

fn batch_op(bases: &'static Bases) -> impl Strategy<Value = BatchOp> {
    prop_oneof![
        4 => (0..KEYS, doc(bases)).prop_map(|(k, d)| BatchOp::Insert(k, d)),
        2 => (0..KEYS).prop_map(BatchOp::Remove),
        2 => (0..KEYS, doc(bases), threshold())
            .prop_map(|(k, d, t)| BatchOp::InsertUnique(k, d, t)),
    ]
}

fn op(bases: &'static Bases) -> impl Strategy<Value = Op> {
    let end = prop_oneof![2 => Just(End::Commit), 1 => Just(End::Drop), 1 => Just(End::Abort)];
    prop_oneof![
        5 => (0..KEYS, doc(bases)).prop_map(|(k, d)| Op::Insert(k, d)),
        2 => (any::<Index>(), doc(bases)).prop_map(|(i, d)| Op::Replace(i, d)),
        2 => (0..KEYS).prop_map(Op::Remove),
        4 => (
            doc(bases),
            threshold(),
            prop::option::weighted(0.3, 1..4usize),
            prop::option::weighted(0.3, 1..3usize),
        )
            .prop_map(|(doc, threshold, limit, max_bucket)| Op::Query {
                doc,
                threshold,
                limit,
                max_bucket
            }),
        3 => (0..KEYS, threshold()).prop_map(|(k, t)| Op::QueryKey(k, t)),
        3 => (0..KEYS, doc(bases), threshold()).prop_map(|(k, d, t)| Op::InsertUnique(k, d, t)),
        1 => (prop::collection::vec(batch_op(bases), 1..8), end).prop_map(|(o, e)| Op::Batch(o, e)),
        1 => Just(Op::Reopen),
    ]
}

fn key(k: usize) -> String {
    format!("doc-{k:02}")
}

/// The oracle: each stored key's exact shingle set, and its text when the
/// document was text.
#[derive(Clone, Default)]
struct Model {
    sets: BTreeMap<String, Vec<u32>>,
    texts: BTreeMap<String, String>,
}

impl Model {
    fn insert(&mut self, key: &str, doc: &Doc, set: Vec<u32>) {
        self.sets.insert(key.to_owned(), set);
        match doc {
            Doc::Text(text) => self.texts.insert(key.to_owned(), text.clone()),
            Doc::Items(_) => self.texts.remove(key),
        };
    }

    fn remove(&mut self, key: &str) -> bool {
        self.texts.remove(key);
        self.sets.remove(key).is_some()
    }

    /// Stored keys other than `own` whose exact Jaccard with `set` is at
    /// least `threshold`, with that similarity.
    fn similar(&self, set: &[u32], own: Option<&str>, threshold: f64) -> Vec<(&str, f64)> {
        self.sets
            .iter()
            .filter(|(k, _)| Some(k.as_str()) != own)
            .map(|(k, s)| (k.as_str(), exact_jaccard(set, s)))
            .filter(|&(_, j)| j >= threshold)
            .collect()
    }
}

/// Exact Jaccard by brute force (binary search per element, not the
/// library's merge).
fn exact_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let common = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
    let union = a.len() + b.len() - common;
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// Near-duplicates expected (by the oracle) and found (by the database),
/// with the number LSH theory predicts: the sum over pairs of the banding's
/// candidate probability 1 − (1 − J^r)^b, and that sum's variance.
#[derive(Clone, Copy, Default)]
struct Tally {
    found: u64,
    expected: u64,
    predicted: f64,
    variance: f64,
}

impl Tally {
    fn add(&mut self, found: bool, p: f64) {
        self.found += u64::from(found);
        self.expected += 1;
        self.predicted += p;
        self.variance += p * (1.0 - p);
    }

    fn merge(mut self, other: &Tally) -> Tally {
        self.found += other.found;
        self.expected += other.expected;
        self.predicted += other.predicted;
        self.variance += other.variance;
        self
    }

    fn recall(&self) -> f64 {
        if self.expected == 0 {
            1.0
        } else {
            self.found as f64 / self.expected as f64
        }
    }

    fn describe(&self) -> String {
        let predicted = if self.expected == 0 {
            1.0
        } else {
            self.predicted / self.expected as f64
        };
        format!(
            "recall {:.4} ({}/{}), LSH theory {predicted:.4}",
            self.recall(),
            self.found,
            self.expected
        )
    }
}

/// Recall split by whether the query threshold is at or above the index
/// threshold, by operation and by the pair's exact similarity (tenths), and
/// other counters of the run.
#[derive(Default)]
struct Recall {
    by_op: BTreeMap<(bool, &'static str), Tally>,
    by_similarity: BTreeMap<(bool, u32), Tally>,
    prune_losses: u64,
    truncated_queries: u64,
    queries: u64,
    inserted_unique: u64,
    duplicates: u64,
    ops: u64,
}

impl Recall {
    fn record(&mut self, above: bool, op: &'static str, similarity: f64, found: bool, p: f64) {
        let bin = ((similarity * 10.0).floor() as u32).min(10);
        self.by_op.entry((above, op)).or_default().add(found, p);
        self.by_similarity
            .entry((above, bin))
            .or_default()
            .add(found, p);
    }

    fn total(&self, above: bool) -> Tally {
        self.by_op
            .iter()
            .filter(|((a, _), _)| *a == above)
            .fold(Tally::default(), |acc, (_, t)| acc.merge(t))
    }

    fn print(&self, name: &str, index_threshold: f64) {
        eprintln!(
            "[{name}] {} operations, {} queries, insert_unique: {} inserted, {} duplicates; \
             hits lost to pruning: {}; queries with a bucket cut by max_bucket: {}",
            self.ops,
            self.queries,
            self.inserted_unique,
            self.duplicates,
            self.prune_losses,
            self.truncated_queries
        );
        for above in [true, false] {
            let side = if above { ">=" } else { "< " };
            eprintln!(
                "[{name}] query threshold {side} index threshold {index_threshold}: {}",
                self.total(above).describe()
            );
            for ((a, op), tally) in &self.by_op {
                if *a == above {
                    eprintln!("[{name}]     {op:<15} {}", tally.describe());
                }
            }
            for ((a, bin), tally) in &self.by_similarity {
                if *a == above {
                    let range = if *bin == 10 {
                        "J = 1.0        ".to_owned()
                    } else {
                        format!(
                            "J in [{:.1}, {:.1})",
                            f64::from(*bin) / 10.0,
                            f64::from(bin + 1) / 10.0
                        )
                    };
                    eprintln!("[{name}]     {range} {}", tally.describe());
                }
            }
        }
    }
}

/// One run's context: oracle shingling, the index threshold, statistics.
struct Harness<'r> {
    shingler: Shingler,
    index_threshold: f64,
    banding: Banding,
    store_text: bool,
    recall: &'r RefCell<Recall>,
}

type Checked<T = ()> = Result<T, TestCaseError>;

impl Harness<'_> {
    fn set(&self, doc: &Doc) -> Vec<u32> {
        match doc {
            Doc::Text(text) => self.shingler.set(text).into_vec(),
            Doc::Items(items) => item_set(items, 0).into_vec(),
        }
    }

    /// Checks hits for a query with set `set` (excluding `own`) against the
    /// oracle, and records recall.
    fn check_hits(
        &self,
        model: &Model,
        set: &[u32],
        own: Option<&str>,
        threshold: f64,
        hits: &[Hit],
        op: &'static str,
    ) -> Checked {
        let mut seen = BTreeSet::new();
        let mut previous = f64::INFINITY;
        for hit in hits {
            let Some(stored) = model.sets.get(&hit.key) else {
                return Err(TestCaseError::fail(format!(
                    "{op}: hit `{}` is not stored (removed or never inserted)",
                    hit.key
                )));
            };
            prop_assert!(
                Some(hit.key.as_str()) != own,
                "{op}: returned the query key itself"
            );
            prop_assert!(
                seen.insert(hit.key.as_str()),
                "{op}: `{}` listed twice",
                hit.key
            );
            let exact = exact_jaccard(set, stored);
            prop_assert!(
                (hit.similarity - exact).abs() <= 1e-12,
                "{op}: `{}` reported similarity {} but the exact Jaccard is {exact}",
                hit.key,
                hit.similarity
            );
            prop_assert!(
                hit.similarity >= threshold,
                "{op}: `{}` at {} is below the threshold {threshold}",
                hit.key,
                hit.similarity
            );
            prop_assert!(hit.similarity <= previous, "{op}: hits are not best first");
            previous = hit.similarity;
        }
        let above = threshold >= self.index_threshold;
        let mut recall = self.recall.borrow_mut();
        recall.queries += 1;
        for (key, similarity) in model.similar(set, own, threshold) {
            let found = seen.contains(key);
            prop_assert!(
                found || similarity < 1.0,
                "{op}: `{key}` has the very same shingle set as the query but was not found"
            );
            recall.record(
                above,
                op,
                similarity,
                found,
                self.banding.probability(similarity),
            );
        }
        Ok(())
    }

    /// A text or item-set query, unlimited, limited and unpruned.
    fn query(
        &self,
        db: &Database,
        model: &Model,
        doc: &Doc,
        threshold: f64,
        limit: Option<usize>,
        max_bucket: Option<usize>,
    ) -> Checked {
        let query = || {
            match doc {
                Doc::Text(text) => db.query(text),
                Doc::Items(items) => db.query_items(items),
            }
            .threshold(threshold)
        };
        let result = query().run()?;
        self.check_explain(&result.explain, result.hits.len(), threshold, None)?;
        let hits = result.hits;
        self.check_hits(model, &self.set(doc), None, threshold, &hits, "query")?;
        if let Some(k) = limit {
            let limited = query().limit(k).run()?.hits;
            prop_assert_eq!(
                &limited[..],
                &hits[..k.min(hits.len())],
                "limit({}) is not a prefix",
                k
            );
        }
        if let Some(cap) = max_bucket {
            let capped = query().max_bucket(cap).run()?;
            self.check_explain(&capped.explain, capped.hits.len(), threshold, Some(cap))?;
            if capped.explain.truncated_buckets.is_empty() {
                prop_assert_eq!(&capped.hits, &hits, "max_bucket({}) cut nothing", cap);
            } else {
                self.recall.borrow_mut().truncated_queries += 1;
                for hit in &capped.hits {
                    prop_assert!(hits.contains(hit), "max_bucket({cap}) added {hit:?}");
                }
            }
        }
        let unpruned = query().prune(false).run()?.hits;
        self.subset(&hits, &unpruned)
    }

    /// The explain record agrees with itself and with the hits.
    fn check_explain(
        &self,
        explain: &Explain,
        hits: usize,
        threshold: f64,
        cap: Option<usize>,
    ) -> Checked {
        prop_assert_eq!(explain.returned, hits, "explain.returned");
        prop_assert_eq!(explain.posting_sizes.len(), explain.buckets_probed);
        prop_assert!(
            hits <= explain.verified
                && explain.verified + explain.pruned_by_length + explain.pruned_by_signature
                    <= explain.candidates
                && explain.candidates <= explain.posting_sizes.iter().sum::<usize>(),
            "inconsistent explain counts: {explain:?}"
        );
        let cap = cap.unwrap_or(lshdb::DEFAULT_MAX_BUCKET);
        prop_assert!(explain.posting_sizes.iter().all(|&n| n <= cap));
        for cut in &explain.truncated_buckets {
            prop_assert_eq!(cut.read, cap, "truncated bucket {:?}", cut);
            prop_assert_eq!(explain.posting_sizes[cut.band], cap);
        }
        let expect_warnings =
            threshold < self.index_threshold || !explain.truncated_buckets.is_empty();
        prop_assert_eq!(
            !explain.warnings.is_empty(),
            expect_warnings,
            "warnings: {:?}",
            explain.warnings
        );
        Ok(())
    }

    /// Pruning only removes hits; counts what it removed.
    fn subset(&self, pruned: &[Hit], unpruned: &[Hit]) -> Checked {
        for hit in pruned {
            prop_assert!(
                unpruned.contains(hit),
                "pruning added the hit {hit:?} missing without pruning"
            );
        }
        self.recall.borrow_mut().prune_losses += (unpruned.len() - pruned.len()) as u64;
        Ok(())
    }

    fn query_key(
        &self,
        db: &Database,
        model: &Model,
        key: &str,
        threshold: f64,
        op: &'static str,
    ) -> Checked {
        match model.sets.get(key) {
            None => {
                let result = db.query_key(key).threshold(threshold).run();
                prop_assert!(
                    matches!(result, Err(Error::NotFound(ref k)) if k == key),
                    "query_key on absent `{key}` gave {result:?}"
                );
            }
            Some(set) => {
                let result = db.query_key(key).threshold(threshold).run()?;
                self.check_explain(&result.explain, result.hits.len(), threshold, None)?;
                let hits = result.hits;
                self.check_hits(model, set, Some(key), threshold, &hits, op)?;
                let unpruned = db
                    .query_key(key)
                    .threshold(threshold)
                    .prune(false)
                    .run()?
                    .hits;
                self.subset(&hits, &unpruned)?;
            }
        }
        Ok(())
    }

    /// Checks `insert_unique`'s answer against `model` (the state it ran
    /// on) and applies it.
    fn unique(
        &self,
        model: &mut Model,
        key: &str,
        doc: &Doc,
        threshold: f64,
        result: Unique,
    ) -> Checked {
        let set = self.set(doc);
        let duplicates = model.similar(&set, Some(key), threshold);
        // The most similar stored duplicate, if any: the pair recall is
        // recorded for (LSH finds it at least as often as any other).
        let best = duplicates
            .iter()
            .map(|&(k, j)| (k.to_owned(), j))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let mut recall = self.recall.borrow_mut();
        if let Some((_, similarity)) = best {
            let found = matches!(result, Unique::Duplicate(_));
            let above = threshold >= self.index_threshold;
            let p = self.banding.probability(similarity);
            recall.record(above, "insert_unique", similarity, found, p);
        }
        match result {
            Unique::Duplicate(hit) => {
                recall.duplicates += 1;
                let Some(&(_, exact)) = duplicates.iter().find(|(k, _)| *k == hit.key) else {
                    return Err(TestCaseError::fail(format!(
                        "insert_unique(`{key}`) reported `{}` at {}, which is not a stored \
                         near-duplicate of another key",
                        hit.key, hit.similarity
                    )));
                };
                prop_assert!(
                    (hit.similarity - exact).abs() <= 1e-12 && hit.similarity >= threshold,
                    "insert_unique(`{key}`) reported `{}` at {}, exact {exact}",
                    hit.key,
                    hit.similarity
                );
            }
            Unique::Inserted => {
                recall.inserted_unique += 1;
                // A miss is possible (LSH is probabilistic) unless the sets
                // are identical.
                if let Some((other, similarity)) = best {
                    prop_assert!(
                        similarity < 1.0,
                        "insert_unique(`{key}`) inserted although `{other}` has the same set"
                    );
                }
                model.insert(key, doc, set);
            }
        }
        Ok(())
    }

    /// `len`, `contains` and `get` of every pool key against the oracle.
    fn check_state(&self, db: &Database, model: &Model) -> Checked {
        prop_assert_eq!(db.len()?, model.sets.len() as u64, "len");
        for k in 0..KEYS {
            let key = key(k);
            let stored = db.get(&key)?;
            prop_assert_eq!(
                db.contains(&key)?,
                stored.is_some(),
                "contains vs get `{}`",
                key
            );
            match (stored, model.sets.get(&key)) {
                (None, None) => {}
                (Some(doc), Some(set)) => {
                    prop_assert_eq!(&doc.key, &key);
                    prop_assert_eq!(doc.shingles, set.len(), "shingle count of `{}`", key);
                    let text = model.texts.get(&key).filter(|_| self.store_text);
                    prop_assert_eq!(doc.text.as_ref(), text, "text of `{}`", key);
                }
                (stored, expected) => {
                    return Err(TestCaseError::fail(format!(
                        "`{key}`: database has {stored:?}, oracle has {expected:?}"
                    )))
                }
            }
        }
        Ok(())
    }

    fn batch(&self, db: &Database, model: &mut Model, ops: &[BatchOp], end: End) -> Checked {
        let mut staged = model.clone();
        let mut batch = db.batch()?;
        for op in ops {
            match op {
                BatchOp::Insert(k, doc) => {
                    with_document(doc, |d| batch.insert(&key(*k), d))?;
                    staged.insert(&key(*k), doc, self.set(doc));
                }
                BatchOp::Remove(k) => {
                    let removed = batch.remove(&key(*k))?;
                    prop_assert_eq!(removed, staged.remove(&key(*k)), "batch remove");
                }
                BatchOp::InsertUnique(k, doc, t) => {
                    let result = with_document(doc, |d| batch.insert_unique(&key(*k), d, *t))?;
                    self.unique(&mut staged, &key(*k), doc, *t, result)?;
                }
            }
        }
        // Nothing is visible before the commit.
        self.check_state(db, model)?;
        match end {
            End::Commit => {
                batch.commit()?;
                *model = staged;
            }
            End::Drop => drop(batch),
            End::Abort => batch.abort()?,
        }
        Ok(())
    }

    /// Runs one case: `ops` on a fresh database created with `config`.
    fn run_case(&self, config: &Config, dir: &Path, ops: &[Op]) -> Checked {
        let path = dir.join("model.lshdb");
        let mut db = Database::create(&path, config.clone())?;
        let settings = db.settings().clone();
        let mut model = Model::default();
        for op in ops {
            self.recall.borrow_mut().ops += 1;
            match op {
                Op::Insert(k, doc) => {
                    with_document(doc, |d| db.insert(&key(*k), d))?;
                    model.insert(&key(*k), doc, self.set(doc));
                }
                Op::Replace(i, doc) => {
                    let key = match model.sets.len() {
                        0 => key(0),
                        n => model
                            .sets
                            .keys()
                            .nth(i.index(n))
                            .cloned()
                            .expect("index within the stored keys"),
                    };
                    with_document(doc, |d| db.insert(&key, d))?;
                    model.insert(&key, doc, self.set(doc));
                }
                Op::Remove(k) => {
                    let removed = db.remove(&key(*k))?;
                    prop_assert_eq!(removed, model.remove(&key(*k)), "remove `{}`", key(*k));
                }
                Op::Query {
                    doc,
                    threshold,
                    limit,
                    max_bucket,
                } => self.query(&db, &model, doc, *threshold, *limit, *max_bucket)?,
                Op::QueryKey(k, t) => self.query_key(&db, &model, &key(*k), *t, "query_key")?,
                Op::InsertUnique(k, doc, t) => {
                    let result = with_document(doc, |d| db.insert_unique(&key(*k), d, *t))?;
                    self.unique(&mut model, &key(*k), doc, *t, result)?;
                }
                Op::Batch(ops, end) => self.batch(&db, &mut model, ops, *end)?,
                Op::Reopen => {
                    drop(db);
                    db = Database::open(&path)?;
                    prop_assert_eq!(db.settings(), &settings, "settings after reopen");
                }
            }
            self.check_state(&db, &model)?;
        }
        // Every stored document against every other, at the index threshold.
        for key in model.sets.keys() {
            self.query_key(&db, &model, key, self.index_threshold, "final_query_key")?;
        }
        let report = db.check_pages()?;
        prop_assert!(report.is_clean(), "check: {:?}", report);
        prop_assert_eq!(report.documents, model.sets.len() as u64);
        Ok(())
    }
}

/// Calls `f` with the library's document for a generated one.
fn with_document<R>(doc: &Doc, f: impl FnOnce(lshdb::Document<'_>) -> R) -> R {
    match doc {
        Doc::Text(text) => f(lshdb::Document::Text(text)),
        Doc::Items(items) => {
            let slices: Vec<&[u8]> = items.iter().map(|i| i.as_bytes()).collect();
            f(lshdb::Document::Items(&slices))
        }
    }
}

fn bases() -> &'static Bases {
    static BASES: std::sync::OnceLock<Bases> = std::sync::OnceLock::new();
    BASES.get_or_init(Bases::new)
}

/// Runs the model test for `config`; returns the recall statistics.
fn run_model(name: &str, config: Config, cases: u32) -> Recall {
    let index_threshold = config.threshold;
    let recall = RefCell::new(Recall::default());
    let harness = Harness {
        shingler: Shingler::new(ShingleConfig::default()).expect("default shingling"),
        index_threshold,
        banding: config
            .resolve()
            .and_then(|settings| settings.banding())
            .expect("valid configuration"),
        store_text: config.store_text,
        recall: &recall,
    };
    let runner_config = RunnerConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..RunnerConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(
        runner_config,
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let strategy = prop::collection::vec(op(bases()), 10..60);
    let result = runner.run(&strategy, |ops| {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        harness.run_case(&config, dir.path(), &ops)
    });
    if let Err(e) = result {
        panic!("[{name}] {e}");
    }
    let recall = recall.into_inner();
    recall.print(name, index_threshold);
    recall
}

/// Asserts overall recall at or above the index threshold: at least 0.9,
/// and not far below what LSH theory predicts for the pairs seen (a
/// generous five standard deviations, plus 1% for the one-permutation
/// scheme's approximation of independent permutations). Also checks that the
/// generator produced enough near-duplicates for this to mean something.
fn assert_recall(name: &str, recall: &Recall) {
    let total = recall.total(true);
    assert!(
        total.expected >= 150,
        "[{name}] only {} near-duplicate pairs at or above the index threshold",
        total.expected
    );
    assert!(
        total.recall() >= 0.9,
        "[{name}] {} is below 0.9",
        total.describe()
    );
    let floor = total.predicted - 5.0 * total.variance.sqrt() - 0.01 * total.expected as f64;
    assert!(
        total.found as f64 >= floor,
        "[{name}] {}: found {} pairs, theory allows no fewer than {floor:.1}",
        total.describe(),
        total.found
    );
}

#[test]
fn model_one_permutation_at_0_5() {
    let recall = run_model("oph-0.5", Config::jaccard(0.5), 48);
    assert_recall("oph-0.5", &recall);
}

#[test]
fn model_permutations_at_0_8_with_text_and_simhash() {
    let mut config = Config::jaccard(0.8).store_text(true).simhash(3);
    config.minhash.scheme = Scheme::Permutations;
    let recall = run_model("perm-0.8", config, 48);
    assert_recall("perm-0.8", &recall);
}
