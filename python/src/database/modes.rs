//! Modes: a database held in memory, the durability of a handle's commits
//! (`durability="none"` with `flush()`), and the options every way of
//! opening shares.

use super::Database;
use crate::config::ConfigArgs;
use crate::errors::{run, Fail};
use lshdb::{Builder, Config, Database as Db, Durability};
use pyo3::prelude::*;

/// `durability=`: "immediate" (every commit on disk when it returns) or
/// "none" (on disk at the next `flush()` or clean close).
pub(super) fn parse_durability(text: &str) -> Result<Durability, Fail> {
    match text {
        "immediate" => Ok(Durability::Immediate),
        "none" => Ok(Durability::None),
        other => Err(Fail::Input(format!(
            "invalid parameter `durability`: `{other}`; use \"immediate\" or \"none\""
        ))),
    }
}

/// The builder of a create or open with these options.
pub(super) fn builder(
    (cache_bytes, record_cache_bytes, kept_filter_bytes): (
        Option<usize>,
        Option<usize>,
        Option<usize>,
    ),
    durability: Durability,
) -> Builder {
    let mut builder = Db::builder().durability(durability);
    if let Some(bytes) = cache_bytes {
        builder = builder.cache_bytes(bytes);
    }
    if let Some(bytes) = record_cache_bytes {
        builder = builder.record_cache_bytes(bytes);
    }
    if let Some(bytes) = kept_filter_bytes {
        builder = builder.kept_filter_bytes(bytes);
    }
    builder
}

/// `create`'s configuration arguments, `containment` and `clusters` (a
/// representative policy's name, `None` for none) included.
pub(super) fn config(
    args: &ConfigArgs<'_>,
    containment: bool,
    clusters: Option<&str>,
) -> Result<Config, Fail> {
    let config = args.config()?.containment(containment);
    Ok(match clusters {
        None => config,
        Some(name) => config.cluster_representative(
            lshdb::Representative::from_name(name).ok_or_else(|| {
                Fail::Input(format!(
                    "clusters: `{name}` is not a policy: use True, \"first\", \"longest\" or \"smallest-key\""
                ))
            })?,
        ),
    })
}

#[pymethods]
impl Database {
    /// A new database held in memory (redb's in-memory backend).
    #[staticmethod]
    #[pyo3(signature = (threshold = 0.8, *, shingle = "char:5", num_perm = 128, bands = None, rows = None, simhash = None, store_text = false, containment = false, clusters = None, cache_bytes = None, record_cache_bytes = None, kept_filter_bytes = None, durability = "immediate", timestamps = false))]
    #[allow(clippy::too_many_arguments)]
    fn memory(
        py: Python<'_>,
        threshold: f64,
        shingle: &str,
        num_perm: usize,
        bands: Option<usize>,
        rows: Option<usize>,
        simhash: Option<u32>,
        store_text: bool,
        containment: bool,
        clusters: Option<String>,
        cache_bytes: Option<usize>,
        record_cache_bytes: Option<usize>,
        kept_filter_bytes: Option<usize>,
        durability: &str,
        timestamps: bool,
    ) -> PyResult<Self> {
        let args = ConfigArgs {
            threshold,
            shingle,
            num_perm,
            bands,
            rows,
            simhash,
            store_text,
        };
        let db = run(py, || {
            let config = config(&args, containment, clusters.as_deref())?.timestamps(timestamps);
            let builder = builder(
                (cache_bytes, record_cache_bytes, kept_filter_bytes),
                parse_durability(durability)?,
            );
            Ok(builder.create_in_memory(config)?)
        })?;
        Ok(Self::wrap_named(db, ":memory:".into()))
    }

    /// Makes every commit so far durable.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.read(py, |db| Ok(db.flush()?))
    }

    /// "immediate" or "none".
    #[getter]
    fn durability(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.read(py, |db| {
            Ok(match db.durability() {
                Durability::None => "none",
                _ => "immediate",
            })
        })
    }
}
