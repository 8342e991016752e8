//! Queries: near-duplicates of a text, an item set or a stored document
//! ([`Query`]), SimHash Hamming search, and all-pairs / groups over the whole
//! database.

mod exact;
mod pairs;
pub(crate) mod plan;
mod simhash;

pub use pairs::{Groups, Pair};
pub use plan::{Explain, TruncatedBucket, DEFAULT_MAX_BUCKET};
pub use simhash::SimHashHit;

use crate::db::prepare::{Document, Sketch};
use crate::db::Database;
use crate::store::codec::SignatureRecord;
use crate::store::tables::{ReadTables, Reader};
use crate::store::walk::Walker;
use crate::{Error, Result};
use plan::PlanOptions;
use std::time::Instant;

/// A verified near-duplicate.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The stored document's key.
    pub key: String,
    /// Exact Jaccard similarity of the shingle sets.
    pub similarity: f64,
}

/// A query's answer.
#[derive(Debug, Clone)]
pub struct QueryResult {
    /// Hits, best first, every one verified against the stored set.
    pub hits: Vec<Hit>,
    /// What each step did and cost.
    pub explain: Explain,
}

/// What a query is about.
#[derive(Debug, Clone)]
pub(crate) enum QueryInput {
    Text(String),
    Items(Vec<Vec<u8>>),
    Key(String),
}

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
            let sketch = self.sketch(&reader, false)?;
            let sketch_time = start.elapsed();
            let planned = plan::run(&reader, self.db.pipeline(), &sketch, &self.options)?;
            let mut explain = planned.explain;
            explain.sketch_time = sketch_time;
            let index_threshold = self.db.settings().threshold;
            if self.options.threshold < index_threshold {
                explain.warnings.insert(
                    0,
                    format!(
                    "query threshold {} is below the index threshold {}: a pair at similarity {} \
                     becomes a candidate with probability {:.2}, so some hits may be missed",
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

    /// The query's sketch; for a stored key, rebuilt from stored records,
    /// and the document itself excluded.
    fn sketch(&mut self, tables: &impl Reader, with_simhash: bool) -> Result<Sketch> {
        let pipeline = self.db.pipeline();
        match &self.input {
            QueryInput::Text(text) => pipeline.sketch(Document::Text(text), with_simhash),
            QueryInput::Items(items) => {
                let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                pipeline.sketch(Document::Items(&items), with_simhash)
            }
            QueryInput::Key(key) => {
                let id = tables
                    .index()
                    .id_of(key)?
                    .ok_or_else(|| Error::NotFound(key.clone()))?;
                self.options.exclude = Some(id);
                stored_sketch(tables, pipeline, id)
            }
        }
    }
}

/// The sketch of stored document `id`, from its records.
pub(crate) fn stored_sketch(
    tables: &impl Reader,
    pipeline: &crate::db::prepare::Pipeline,
    id: u64,
) -> Result<Sketch> {
    let mut record = SignatureRecord::default();
    let mut set = Vec::new();
    if !tables.signature_into(id, &mut record)? || !tables.set_into(id, &mut set)? {
        return Err(Error::corrupted(format!(
            "document {id} is missing its signature or set"
        )));
    }
    let mut band_keys = Vec::new();
    pipeline.banding().band_keys(&record.values, &mut band_keys);
    Ok(Sketch {
        set,
        signature: record.values,
        band_keys,
        simhash: record.simhash.unwrap_or(0),
    })
}
