//! [`Query`]: a query being built on a [`Database`], and run in a read
//! snapshot by the planner of `query/`.

use super::Database;
use crate::query::plan::{self, PlanOptions};
use crate::query::simhash;
use crate::query::{QueryInput, QueryResult, SimHashHit, TruncatedBucket};
use crate::store::tables::ReadTables;
use crate::store::walk::Walker;
use crate::Result;
use std::time::Instant;

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
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.options.threshold = threshold;
        self
    }

    /// Keep only the best `k` hits.
    pub fn limit(mut self, k: usize) -> Self {
        self.options.limit = Some(k);
        self
    }

    /// Prune candidates by signature agreement before verifying (default on).
    pub fn prune(mut self, prune: bool) -> Self {
        self.options.prune = prune;
        self
    }

    /// Read at most `n` postings per bucket (default [`DEFAULT_MAX_BUCKET`]).
    pub fn max_bucket(mut self, n: usize) -> Self {
        self.options.max_bucket = n.max(1);
        self
    }

    /// Runs the query in a read snapshot.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a threshold outside (0, 1);
    /// [`Error::EmptyDocument`] for a query with no shingles;
    /// [`Error::NotFound`] for an unknown key; storage errors.
    pub fn run(mut self) -> Result<QueryResult> {
        crate::guard::guard(|| {
            crate::config::check_threshold("threshold", self.options.threshold)?;
            let txn = self.db.store().begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let walker = Walker::new(&tables);
            let reader = self.db.cache().reader(&walker);
            let start = Instant::now();
            let (sketch, exclude) = self.input.sketch(&reader, self.db.pipeline(), false)?;
            self.options.exclude = exclude;
            let sketch_time = start.elapsed();
            let planned = plan::run(&reader, self.db.pipeline(), &sketch, &self.options)?;
            let mut explain = planned.explain;
            explain.sketch_time = sketch_time;
            let index_threshold = self.db.settings().threshold;
            if self.options.threshold < index_threshold {
                explain.warnings.insert(
                    0,
                    format!(
                        "query threshold {} is below the index threshold {}: a pair at \
                         similarity {} becomes a candidate with probability {:.2}, so some \
                         hits may be missed",
                        self.options.threshold,
                        index_threshold,
                        self.options.threshold,
                        explain.candidate_probability_at_threshold
                    ),
                );
            }
            let hits = plan::resolve(&reader, planned.hits)?;
            Ok(QueryResult { hits, explain })
        })
    }

    /// Documents whose SimHash fingerprint is within `max_distance` bits of
    /// the query's, closest first (ties by key). Honours
    /// [`Query::max_bucket`] and [`Query::limit`]; the blocks cut at the
    /// cap come back beside the hits.
    ///
    /// # Errors
    /// [`Error::IndexDisabled`] when the database has no SimHash index;
    /// [`Error::InvalidParameter`] when `max_distance` exceeds the distance
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
