//! Containment queries on a [`Database`] ([`ContainmentQuery`], from
//! [`crate::Query::containment`]) and building or dropping the containment
//! index of an existing file.

use super::Database;
use crate::config::Settings;
use crate::pipeline::Pipeline;
use crate::query::containment::{self, ContainmentOptions, ContainmentResult};
use crate::query::QueryInput;
use crate::sketch::ensemble::Ensemble;
use crate::store::codec;
use crate::store::containment::{ContainmentWriter, CONTAINMENT};
use crate::store::schema::SETS;
use crate::store::tables::context;
use crate::{Error, Result};
use rayon::prelude::*;
use redb::{ReadableTable, WriteTransaction};

/// A containment query being built: stored documents that contain at
/// least a fraction t of the query's shingles, |Q ∩ X| / |Q| ≥ t. Made by
/// [`crate::Query::containment`]; set options, then
/// [`ContainmentQuery::run`].
///
/// ```
/// use lshdb::{Config, Database};
/// let dir = tempfile::tempdir()?;
/// let db = Database::create(dir.path().join("c.lshdb"), Config::jaccard(0.8).containment(true))?;
/// db.insert("manual", "To install the package, run the installer and follow the \
///     instructions on screen. Then restart the computer and log in again.")?;
/// let result = db.query("run the installer and follow the instructions on screen")
///     .containment(0.9)
///     .run()?;
/// assert_eq!(result.hits[0].key, "manual");
/// assert_eq!(result.hits[0].containment, 1.0);
/// assert!(result.hits[0].jaccard < 0.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ContainmentQuery<'db> {
    db: &'db Database,
    input: QueryInput,
    options: ContainmentOptions,
    exhaustive: bool,
}

impl<'db> ContainmentQuery<'db> {
    pub(crate) fn new(
        db: &'db Database,
        input: QueryInput,
        threshold: f64,
        limit: Option<usize>,
        max_bucket: usize,
    ) -> Self {
        Self {
            db,
            input,
            options: ContainmentOptions {
                threshold,
                limit,
                exclude: None,
                max_bucket,
                class_scan_cap: containment::CLASS_SCAN_CAP,
            },
            exhaustive: false,
        }
    }

    /// Keep only the best `k` hits.
    pub fn limit(mut self, k: usize) -> Self {
        self.options.limit = Some(k);
        self
    }

    /// Take at most `n` new candidates from each probed prefix (default
    /// [`crate::DEFAULT_MAX_BUCKET`]); ids an earlier probe found do not
    /// count, so the trees of a size class together read past the cap
    /// through a group of copies.
    pub fn max_bucket(mut self, n: usize) -> Self {
        self.options.max_bucket = n.max(1);
        self
    }

    /// Size classes of at most `n` documents are read whole where the
    /// index would find a document at the threshold with probability below
    /// 0.9 — short passages against much longer documents (default
    /// 10,000; 0 never reads a class whole, leaving recall to the index
    /// alone).
    pub fn class_scan_cap(mut self, n: usize) -> Self {
        self.options.class_scan_cap = n;
        self
    }

    /// Compare the query with every stored set instead of probing the
    /// index (default false): exact recall, at a cost linear in the
    /// database. Without a containment index every query does this.
    pub fn exhaustive(mut self, exhaustive: bool) -> Self {
        self.exhaustive = exhaustive;
        self
    }

    /// Runs the query in a read snapshot.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a threshold outside (0, 1];
    /// [`Error::EmptyDocument`] for a query with no shingles;
    /// [`Error::NotFound`] for an unknown key; storage errors.
    pub fn run(mut self) -> Result<ContainmentResult> {
        crate::guard::guard(|| {
            check_containment_threshold(self.options.threshold)?;
            let db = self.db;
            db.in_snapshot(&self.input, |snap| {
                self.options.exclude = snap.exclude;
                let (set, options) = (&snap.sketch.set, &self.options);
                let ensemble = db.pipeline().containment();
                let (hits, mut explain) = match ensemble {
                    Some(ensemble) if !self.exhaustive => {
                        let table = crate::store::containment::open_read(snap.txn)?;
                        let signature = &snap.sketch.signature;
                        let table = table.as_ref();
                        containment::search(snap.reader, table, &ensemble, set, signature, options)?
                    }
                    _ => containment::scan(snap.tables, set, options, ensemble.is_some())?,
                };
                explain.sketch_time = snap.sketch_time;
                let hits = containment::finish(snap.reader, hits, options.limit, &mut explain)?;
                Ok(ContainmentResult { hits, explain })
            })
        })
    }
}

/// Checks a containment threshold: in (0, 1].
fn check_containment_threshold(t: f64) -> Result<()> {
    if t > 0.0 && t <= 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "containment",
            format!("a containment threshold must be above 0 and at most 1, got {t}"),
        ))
    }
}

impl Database {
    /// Whether the file keeps a containment index (see
    /// [`crate::Config::containment`]).
    pub fn has_containment_index(&self) -> bool {
        self.settings.containment.is_some()
    }

    /// Builds the containment index of an existing database from the
    /// stored signatures (no document is re-read), in one transaction, and
    /// records it in the settings: from then on every write maintains it.
    /// Rebuilds it when it exists.
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::Poisoned`], storage errors.
    pub fn build_containment_index(&mut self) -> Result<()> {
        let ensemble = Ensemble::for_num_perm(self.settings.minhash.num_perm)?;
        self.set_containment(Some(ensemble))
    }

    /// Drops the containment index and its table; containment queries then
    /// scan every stored set.
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::Poisoned`], storage errors.
    pub fn drop_containment_index(&mut self) -> Result<()> {
        self.set_containment(None)
    }

    fn set_containment(&mut self, ensemble: Option<Ensemble>) -> Result<()> {
        crate::guard::guard(|| {
            self.check_poisoned()?;
            let settings = Settings {
                containment: ensemble,
                ..self.settings.clone()
            };
            self.change_settings(settings, |txn, pipeline| {
                txn.delete_table(CONTAINMENT)?;
                match ensemble {
                    Some(ensemble) => build_index(txn, pipeline, ensemble),
                    None => Ok(()),
                }
            })
        })
    }
}

/// Posts every stored document in a new containment index, in chunks (so
/// memory holds one chunk's postings) whose signatures are recomputed from
/// the stored sets on every core.
fn build_index(txn: &WriteTransaction, pipeline: &Pipeline, ensemble: Ensemble) -> Result<()> {
    let mut writer = ContainmentWriter::open(txn, ensemble)?;
    let sets = txn.open_table(SETS)?;
    let mut chunk: Vec<(u64, Vec<u32>)> = Vec::new();
    let mut entries = sets.iter()?;
    loop {
        chunk.clear();
        for entry in entries.by_ref().take(65_536) {
            let (id, bytes) = entry?;
            let id = id.value();
            let mut set = Vec::new();
            codec::decode_set_into(bytes.value(), &mut set)
                .map_err(|e| context(e, "shingle set", id))?;
            chunk.push((id, set));
        }
        if chunk.is_empty() {
            return Ok(());
        }
        let signed: Vec<(u64, u32, Vec<u32>)> = chunk
            .par_iter()
            .map(|(id, set)| {
                let len = u32::try_from(set.len()).unwrap_or(u32::MAX);
                (*id, len, pipeline.signature_of(set))
            })
            .collect();
        writer.put_many(
            signed
                .iter()
                .map(|(id, len, sig)| (*id, *len, sig.as_slice())),
        )?;
    }
}
