//! All pairs and groups of a database: through the LSH index
//! ([`Database::pairs`], [`Database::groups`]) or exactly, with every
//! stored set in memory ([`Database::exact_pairs`]).

use super::Database;
use crate::query::pairs::Snapshot;
use crate::query::{Groups, Pair};
use crate::sketch::exact::{all_pairs, check_join_threshold};
use crate::store::tables::ReadTables;
use crate::Result;

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
        self.with_snapshot(|snapshot| snapshot.pairs(threshold, emit))
    }

    /// Groups the documents into near-duplicate clusters: the connected
    /// components of the pairs at `threshold`. Copies are joined once, and
    /// [`Groups::pairs`] counts their pairs without listing them.
    pub fn groups(&self, threshold: f64) -> Result<Groups> {
        self.with_snapshot(|snapshot| snapshot.groups(threshold))
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
        let pairs = all_pairs(&sets, threshold)?;
        drop(sets);
        let mut count = 0;
        for (i, j, similarity) in pairs {
            count += 1;
            let pair = Pair {
                a: keys[i].clone(),
                b: keys[j].clone(),
                similarity,
            };
            if !emit(pair) {
                break;
            }
        }
        Ok(count)
    }
}
