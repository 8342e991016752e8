//! [`Query`]: a query being built on a [`Database`], and run in a read
//! snapshot by the planner of `query/`.

use super::containment::ContainmentQuery;
use super::Database;
use crate::query::plan::{self, PlanOptions};
use crate::query::simhash;
use crate::query::topk;
use crate::query::{QueryInput, QueryResult, SimHashHit, TruncatedBucket};
use crate::sketch::ensemble::Ensemble;
use crate::store::cache::CachedReader;
use crate::store::tables::ReadTables;
use crate::store::walk::Walker;
use crate::Result;
use std::time::{Duration, Instant};

/// Top-k on a file without the prefix forest warns when its recall
/// estimate is below this.
const TOP_WARN_BELOW: f64 = 0.9;

/// A query being built: set options, then [`Query::run`].
///
/// ```
/// use lshdb::{Config, Database};
/// let dir = tempfile::tempdir()?;
/// let db = Database::create(dir.path().join("q.lshdb"), Config::jaccard(0.8))?;
/// db.insert("x", "Rust compiler front-end for the GNU Compiler Collection")?;
/// let result = db
///     .query("Rust compiler front-end for the GNU Compiler Collection.")
///     .threshold(0.6)
///     .limit(10)
///     .run()?;
/// assert_eq!(result.hits[0].key, "x");
/// // Below the index threshold, recall falls, and the result says so.
/// assert!(!result.explain.warnings.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Query<'db> {
    db: &'db Database,
    input: QueryInput,
    options: PlanOptions,
}

impl<'db> Query<'db> {
    pub(crate) fn new(db: &'db Database, input: QueryInput) -> Self {
        let options = PlanOptions {
            threshold: db.settings().threshold,
            ..PlanOptions::default()
        };
        Self { db, input, options }
    }

    /// Verified similarity a hit needs (default: the index threshold).
    ///
    /// `1.0` asks for exact duplicates: documents with the same shingle
    /// set. Identical sets have identical signatures, hence identical band
    /// keys in every band, so the planner probes band 0 only — its bucket
    /// holds every identical set — and verifies set equality. The answer
    /// is exact (all of them, nothing else) unless that bucket is cut at
    /// [`Query::max_bucket`], which the result then warns about.
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.options.threshold = threshold;
        self
    }

    /// Keep only the best `k` hits.
    pub fn limit(mut self, k: usize) -> Self {
        self.options.limit = Some(k);
        self
    }

    /// Top-k: the `k` most similar stored documents, with verified
    /// similarity, whatever it is — also below any threshold (the
    /// threshold is then not used); best first.
    ///
    /// With the containment index ([`Config::containment`](crate::Config::containment)),
    /// the search probes its prefix forest from four shared MinHash values
    /// down to one, verifying as it goes, and stops once a document as
    /// similar as the k-th hit is found with probability 0.99 (LSH Forest;
    /// `docs/algorithms.md`): recall 0.97–0.99 at k = 10 on the Debian
    /// and PyPI corpora, whose tenth neighbours mostly lie between 0.1 and
    /// 0.4. Without it every band is probed and every candidate verified;
    /// a document becomes a candidate only by sharing a bucket, so one at
    /// similarity s is found with probability P(s) of the banding, tuned
    /// for the index threshold, and a low estimate comes with
    /// [`Warning::TopWithoutForest`](crate::Warning::TopWithoutForest).
    /// [`Explain::recall_estimate`](crate::Explain::recall_estimate) gives
    /// the probability of finding a document as similar as the k-th hit.
    ///
    /// ```
    /// use lshdb::{Config, Database};
    /// let dir = tempfile::tempdir()?;
    /// let db = Database::create(dir.path().join("t.lshdb"), Config::jaccard(0.8))?;
    /// db.insert("a", "The quick brown fox jumps over the lazy dog")?;
    /// db.insert("b", "The quick brown fox jumped over the lazy dogs")?;
    /// let result = db.query("The quick brown fox jumps over the lazy dog!").top(1).run()?;
    /// assert_eq!(result.hits.len(), 1);
    /// assert_eq!(result.hits[0].key, "a");
    /// assert!(result.explain.recall_estimate.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn top(mut self, k: usize) -> Self {
        self.options.top = Some(k);
        self
    }

    /// Prune candidates by signature agreement before verifying (default on).
    pub fn prune(mut self, prune: bool) -> Self {
        self.options.prune = prune;
        self
    }

    /// Read at most `n` postings per bucket (default [`crate::DEFAULT_MAX_BUCKET`]).
    pub fn max_bucket(mut self, n: usize) -> Self {
        self.options.max_bucket = n.max(1);
        self
    }

    /// Containment search instead: stored documents holding at least a
    /// fraction `threshold` (in (0, 1]) of the query's shingles, with their
    /// exact containment and Jaccard similarity — for finding where a
    /// passage came from. Keeps this query's [`Query::limit`] and
    /// [`Query::max_bucket`]; the threshold is checked by
    /// [`ContainmentQuery::run`].
    pub fn containment(self, threshold: f64) -> ContainmentQuery<'db> {
        ContainmentQuery::new(
            self.db,
            self.input,
            threshold,
            self.options.limit,
            self.options.max_bucket,
        )
    }

    /// Runs the query in a read snapshot.
    ///
    /// # Errors
    /// [`crate::Error::InvalidParameter`] for a threshold outside (0, 1];
    /// [`crate::Error::EmptyDocument`] for a query with no shingles;
    /// [`crate::Error::NotFound`] for an unknown key; storage errors.
    pub fn run(mut self) -> Result<QueryResult> {
        crate::guard::guard(|| {
            crate::sketch::exact::check_join_threshold(self.options.threshold)?;
            let db = self.db;
            db.in_snapshot(&self.input, |snap| {
                self.options.exclude = snap.exclude;
                if let (Some(k), Some(forest)) = (self.options.top, db.pipeline().containment()) {
                    return run_forest(db, &self.options, &snap, &forest, k);
                }
                let planned = plan::run(snap.reader, db.pipeline(), &snap.sketch, &self.options)?;
                let mut explain = planned.explain;
                explain.sketch_time = snap.sketch_time;
                let index_threshold = self.db.settings().threshold;
                if self.options.top.is_none() && self.options.threshold < index_threshold {
                    explain.warnings.insert(
                        0,
                        crate::query::Warning::ThresholdBelowIndex {
                            threshold: self.options.threshold,
                            index_threshold,
                            candidate_probability: explain.candidate_probability_at_threshold,
                        },
                    );
                }
                let low = explain.recall_estimate.is_none_or(|p| p < TOP_WARN_BELOW);
                if self.options.top.is_some() && low {
                    let banding = db.pipeline().banding();
                    explain.warnings.insert(
                        0,
                        crate::query::Warning::TopWithoutForest {
                            recall_estimate: explain.recall_estimate.unwrap_or(0.0),
                            index_threshold,
                            bands: banding.bands(),
                            rows: banding.rows(),
                        },
                    );
                }
                let hits = plan::resolve(snap.reader, planned.hits)?;
                Ok(QueryResult { hits, explain })
            })
        })
    }

    /// Documents whose SimHash fingerprint is within `max_distance` bits of
    /// the query's, closest first (ties by key). Honours
    /// [`Query::max_bucket`] and [`Query::limit`]; the blocks cut at the
    /// cap come back beside the hits.
    ///
    /// # Errors
    /// [`crate::Error::IndexDisabled`] when the database has no SimHash index;
    /// [`crate::Error::InvalidParameter`] when `max_distance` exceeds the distance
    /// the index was built for.
    pub fn near_simhash(
        self,
        max_distance: u32,
    ) -> Result<(Vec<SimHashHit>, Vec<TruncatedBucket>)> {
        crate::guard::guard(|| {
            let txn = self.db.store().begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let (sketch, exclude) = self.input.sketch(&tables, self.db.pipeline(), true)?;
            let options = PlanOptions {
                exclude,
                ..self.options
            };
            simhash::search(
                &tables,
                self.db.pipeline(),
                sketch.simhash,
                max_distance,
                &options,
            )
        })
    }
}

/// Top-k over the prefix forest (`query::topk`), in snapshot `snap`.
fn run_forest(
    db: &Database,
    options: &PlanOptions,
    snap: &Snapshot<'_, '_>,
    forest: &Ensemble,
    k: usize,
) -> Result<QueryResult> {
    let table = crate::store::containment::open_read(snap.txn)?;
    let (mut hits, mut explain) = topk::search(
        snap.reader,
        table.as_ref(),
        forest,
        db.pipeline(),
        &snap.sketch,
        k,
        options.exclude,
        options.max_bucket,
    )?;
    explain.sketch_time = snap.sketch_time;
    if let Some(limit) = options.limit {
        hits.truncate(limit);
        explain.returned = hits.len();
    }
    let hits = plan::resolve(snap.reader, hits)?;
    Ok(QueryResult { hits, explain })
}

/// A query's read snapshot, with the query input sketched in it.
pub(super) struct Snapshot<'a, 't> {
    /// The read transaction.
    pub txn: &'t redb::ReadTransaction,
    /// Its tables.
    pub tables: &'t ReadTables,
    /// The tables through the record cache.
    pub reader: &'a CachedReader<'a, Walker<'t>>,
    /// The query's sketch.
    pub sketch: crate::pipeline::Sketch,
    /// The document a key query leaves out of its hits.
    pub exclude: Option<u64>,
    /// How long sketching took.
    pub sketch_time: Duration,
}

impl Database {
    /// Opens a read snapshot, sketches `input` in it (without SimHash) and
    /// hands both to `f`.
    pub(super) fn in_snapshot<T>(
        &self,
        input: &QueryInput,
        f: impl FnOnce(Snapshot<'_, '_>) -> Result<T>,
    ) -> Result<T> {
        let txn = self.store().begin_read()?;
        let tables = ReadTables::open(&txn)?;
        let walker = Walker::new(&tables);
        let reader = self.cache().reader(&walker);
        let start = Instant::now();
        let (sketch, exclude) = input.sketch(&reader, self.pipeline(), false)?;
        f(Snapshot {
            txn: &txn,
            tables: &tables,
            reader: &reader,
            sketch,
            exclude,
            sketch_time: start.elapsed(),
        })
    }
}
