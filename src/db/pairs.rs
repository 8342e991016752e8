//! All pairs and groups of a database: through the LSH index
//! ([`Database::pairs`], [`Database::groups`]) or exactly, with every
//! stored set in memory ([`Database::exact_pairs`]).

use super::Database;
use crate::query::pairs::Snapshot;
use crate::query::{Groups, Pair};
use crate::sketch::exact::{all_pairs, check_join_threshold};
use crate::store::tables::ReadTables;
use crate::Result;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{Hash, Hasher};

impl Database {
    /// Calls `emit` for every pair of stored documents with verified Jaccard
    /// similarity ≥ `threshold`, from one read snapshot; stops early when
    /// `emit` returns false. Returns the number of pairs emitted.
    ///
    /// Pairs below the index threshold are found with the probability the
    /// banding gives them (see [`crate::sketch::lsh::candidate_probability`]).
    ///
    /// In each pair `a` was stored before `b`. Documents are visited in
    /// the order they were stored, and copies (identical shingle sets) as
    /// one, at the copy stored first: their own pairs come then (similarity
    /// 1), followed by their pairs with each document they match. Copies
    /// are expanded lazily, so memory does not grow with their pairs.
    pub fn pairs(&self, threshold: f64, emit: impl FnMut(Pair) -> bool) -> Result<u64> {
        self.with_snapshot(|snapshot| {
            crate::config::check_threshold("threshold", threshold)?;
            snapshot.pairs(threshold, emit)
        })
    }

    /// Groups the documents into near-duplicate clusters: the connected
    /// components of the pairs at `threshold`. Copies are joined once, and
    /// [`Groups::pairs`] counts their pairs without listing them.
    pub fn groups(&self, threshold: f64) -> Result<Groups> {
        self.with_snapshot(|snapshot| {
            crate::config::check_threshold("threshold", threshold)?;
            snapshot.groups(threshold)
        })
    }

    /// The Jaccard similarity of the shingle sets stored under keys `a`
    /// and `b`, as a verification computes it (so at most 1, and 1 for a
    /// document with itself); `None` when either key is not stored.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("s.lshdb"), Config::jaccard(0.7))?;
    /// db.insert("a", "The quick brown fox jumps over the lazy dog")?;
    /// db.insert("b", "The quick brown fox jumped over the lazy dog")?;
    /// let s = db.similarity("a", "b")?.unwrap();
    /// assert!(s > 0.5 && s < 1.0);
    /// assert_eq!(db.similarity("a", "a")?, Some(1.0));
    /// assert_eq!(db.similarity("a", "missing")?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn similarity(&self, a: &str, b: &str) -> Result<Option<f64>> {
        use crate::store::tables::{Index, Reader};
        crate::guard::guard(|| {
            let txn = self.store().begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let mut sets = [Vec::new(), Vec::new()];
            for (key, set) in [a, b].into_iter().zip(&mut sets) {
                let Some(id) = tables.id_of(key)? else {
                    return Ok(None);
                };
                if !tables.set_into(id, set)? {
                    return Err(crate::Error::corrupted(format!(
                        "document {id} has no shingle set"
                    )));
                }
            }
            Ok(Some(crate::sketch::measures::jaccard(&sets[0], &sets[1])))
        })
    }

    fn with_snapshot<T>(&self, f: impl FnOnce(&Snapshot<'_>) -> Result<T>) -> Result<T> {
        crate::guard::guard(|| {
            let txn = self.store().begin_read()?;
            let tables = ReadTables::open(&txn)?;
            f(&Snapshot {
                tables: &tables,
                cache: self.cache(),
                pipeline: self.pipeline(),
            })
        })
    }

    /// Calls `emit` for *every* pair of stored documents with Jaccard
    /// similarity ≥ `threshold`, found exactly; stops early when `emit`
    /// returns false. Returns the number of pairs emitted.
    ///
    /// Unlike [`Database::pairs`], no LSH is involved: the stored shingle
    /// sets of all documents are read from one snapshot into memory and
    /// joined with [`all_pairs`] (prefix filtering, see
    /// [`crate::sketch::exact`]), so no pair is missed whatever the index
    /// threshold and banding. The price is memory for every set at once and
    /// a join whose cost grows faster than the corpus: it suits small
    /// corpora and serves as the ground truth to measure LSH recall against.
    /// The threshold may be 1 (identical shingle sets).
    ///
    /// Copies (identical non-empty sets) are joined as one set, and their
    /// pairs expanded lazily, so they cost neither the join nor memory per
    /// pair.
    ///
    /// Each pair has `a < b` in key order (byte-wise, as Rust orders `str`),
    /// and pairs come sorted by `(a, b)`. Similarities are bit-identical to
    /// what [`Database::pairs`] reports for the same pair.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("x.lshdb"), Config::jaccard(0.8))?;
    /// db.insert("b", "an embedded, fast, safe and concurrent key-value store")?;
    /// db.insert("a", "an embedded, fast, safe and concurrent key value store")?;
    /// db.insert("c", "something else entirely")?;
    /// let mut pairs = Vec::new();
    /// db.exact_pairs(0.5, |pair| {
    ///     pairs.push(pair);
    ///     true
    /// })?;
    /// assert_eq!(pairs.len(), 1);
    /// assert_eq!((pairs[0].a.as_str(), pairs[0].b.as_str()), ("a", "b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::InvalidParameter`] for a threshold outside (0, 1];
    /// storage errors.
    pub fn exact_pairs(&self, threshold: f64, mut emit: impl FnMut(Pair) -> bool) -> Result<u64> {
        check_join_threshold(threshold)?;
        let mut docs: Vec<(String, Vec<u32>)> = Vec::new();
        self.for_each(|doc| {
            docs.push((doc.key, doc.shingles));
            true
        })?;
        // `for_each` visits keys in order already; the orientation must not
        // depend on it.
        if !docs.is_sorted_by(|x, y| x.0 < y.0) {
            docs.sort_unstable_by(|x, y| x.0.cmp(&y.0));
        }
        let (keys, sets): (Vec<String>, Vec<Vec<u32>>) = docs.into_iter().unzip();
        let mut copies = Copies::of(sets);
        let pairs = all_pairs(&copies.sets, threshold)?;
        copies.sets = Vec::new();
        let mut count = 0;
        let mut send = |i: u32, j: u32, similarity: f64| {
            count += 1;
            emit(Pair {
                a: keys[i as usize].clone(),
                b: keys[j as usize].clone(),
                similarity,
            })
        };
        if copies.members.len() == keys.len() {
            // No copies: classes are the documents.
            for (i, j, similarity) in pairs {
                if !send(i as u32, j as u32, similarity) {
                    break;
                }
            }
        } else {
            copies.expand(&pairs, send);
        }
        Ok(count)
    }
}

/// The documents of an exact join, by key order, with copies (identical
/// non-empty sets) collapsed: each class of copies is one set.
struct Copies {
    /// The distinct sets, in the order of their first document.
    sets: Vec<Vec<u32>>,
    /// Each class's documents, ascending.
    members: Vec<Vec<u32>>,
    /// Each document's class.
    class_of: Vec<u32>,
}

impl Copies {
    /// Classes of `sets` (by a hash of each set, checked by equality).
    /// Empty sets pair with nothing and stay apart.
    fn of(all: Vec<Vec<u32>>) -> Self {
        let mut copies = Copies {
            sets: Vec::new(),
            members: Vec::new(),
            class_of: Vec::with_capacity(all.len()),
        };
        let mut by_hash: HashMap<u64, Vec<u32>> = HashMap::new();
        for (doc, set) in all.into_iter().enumerate() {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            set.hash(&mut hasher);
            let candidates = by_hash.entry(hasher.finish()).or_default();
            let same = candidates
                .iter()
                .copied()
                .find(|&c| !set.is_empty() && copies.sets[c as usize] == set);
            let class = match same {
                Some(class) => class,
                None => {
                    let class = copies.sets.len() as u32;
                    if !set.is_empty() {
                        candidates.push(class);
                    }
                    copies.sets.push(set);
                    copies.members.push(Vec::new());
                    class
                }
            };
            copies.members[class as usize].push(doc as u32);
            copies.class_of.push(class);
        }
        copies
    }

    /// Calls `send(a, b, similarity)` for every pair of documents, sorted
    /// by (a, b), from the pairs of classes (sorted, as [`all_pairs`]
    /// gives them); stops when `send` returns false. Each document's later
    /// partners — its copies (similarity 1) and the members of each class
    /// its own matched — are merged in order on a heap.
    fn expand(&self, pairs: &[(usize, usize, f64)], mut send: impl FnMut(u32, u32, f64) -> bool) {
        let mut matched: Vec<Vec<(u32, f64)>> = vec![Vec::new(); self.members.len()];
        for &(x, y, similarity) in pairs {
            matched[x].push((y as u32, similarity));
            matched[y].push((x as u32, similarity));
        }
        let mut heap: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
        for (doc, &class) in self.class_of.iter().enumerate() {
            let doc = doc as u32;
            // Sources: 0 is the document's own class, k > 0 its k-th match.
            let source = |k: u32| match k {
                0 => (class, 1.0),
                k => matched[class as usize][k as usize - 1],
            };
            let later = |class: u32| -> &[u32] {
                let members = &self.members[class as usize];
                &members[members.partition_point(|&m| m <= doc)..]
            };
            let mut cursors: Vec<&[u32]> = Vec::new();
            heap.clear();
            for k in 0..=matched[class as usize].len() as u32 {
                let rest = later(source(k).0);
                if let Some(&next) = rest.first() {
                    heap.push(Reverse((next, k)));
                }
                cursors.push(rest);
            }
            while let Some(Reverse((other, k))) = heap.pop() {
                if !send(doc, other, source(k).1) {
                    return;
                }
                let rest = &cursors[k as usize][1..];
                cursors[k as usize] = rest;
                if let Some(&next) = rest.first() {
                    heap.push(Reverse((next, k)));
                }
            }
        }
    }
}
