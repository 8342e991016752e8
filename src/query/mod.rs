//! Queries over one read snapshot: the planner (a sketch → candidates →
//! verified hits), SimHash search, and all pairs and groups.
//!
//! Everything here works on a snapshot reader and the [`Pipeline`]; the
//! `Database` façade in `db/` opens the snapshots and calls in. So this
//! folder depends on `store` and `pipeline`, never on `db`.

pub(crate) mod containment;
pub(crate) mod pairs;
pub(crate) mod plan;
mod serial;
pub(crate) mod shared;
pub(crate) mod simhash;
pub(crate) mod topk;
pub(crate) mod verify;
mod warning;

pub use containment::{ClassProbe, ContainmentExplain, ContainmentHit, ContainmentResult};
pub use pairs::{Groups, Pair};
pub use plan::{Explain, TruncatedBucket, DEFAULT_MAX_BUCKET};
pub use simhash::SimHashHit;
pub use warning::{Hints, Warning};

use crate::pipeline::{Document, Pipeline, Sketch};
use crate::store::codec::SignatureRecord;
use crate::store::tables::Reader;
use crate::{Error, Result};

/// A verified near-duplicate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Hit {
    /// The stored document's key.
    pub key: String,
    /// Exact Jaccard similarity of the shingle sets.
    pub similarity: f64,
}

/// A query's answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
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

impl QueryInput {
    /// The query's sketch (its SimHash only when `with_simhash`), and for a
    /// stored key the id to leave out of the hits, rebuilt from the stored
    /// records.
    ///
    /// # Errors
    /// [`Error::EmptyDocument`]; [`Error::NotFound`] for an unknown key.
    pub(crate) fn sketch(
        &self,
        reader: &impl Reader,
        pipeline: &Pipeline,
        with_simhash: bool,
    ) -> Result<(Sketch, Option<u64>)> {
        match self {
            QueryInput::Text(text) => {
                Ok((pipeline.sketch(Document::Text(text), with_simhash)?, None))
            }
            QueryInput::Items(items) => {
                let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                Ok((
                    pipeline.sketch(Document::Items(&items), with_simhash)?,
                    None,
                ))
            }
            QueryInput::Key(key) => {
                let id = reader
                    .index()
                    .id_of(key)?
                    .ok_or_else(|| Error::NotFound(key.clone()))?;
                Ok((stored_sketch(reader, pipeline, id)?, Some(id)))
            }
        }
    }
}

/// The sketch of stored document `id`, from its records.
pub(crate) fn stored_sketch(tables: &impl Reader, pipeline: &Pipeline, id: u64) -> Result<Sketch> {
    let mut record = SignatureRecord::default();
    let mut set = Vec::new();
    if !pipeline.stored_signature(tables, id, &mut record, &mut set)? {
        return Err(Error::corrupted(format!(
            "document {id} is missing its signature record"
        )));
    }
    if set.is_empty() && !tables.set_into(id, &mut set)? {
        return Err(Error::corrupted(format!(
            "document {id} is missing its shingle set"
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
