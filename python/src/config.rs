//! Keyword arguments → [`lshdb::Config`], and [`lshdb::Settings`] → a dict.

use crate::errors::Fail;
use lshdb::shingle::ShingleKind;
use lshdb::{Config, Settings};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Parses `char:K`, `word:K` or `stopword:K` (K optional: 5, 2 and 3), as
/// the CLI's `--shingle` and [`ShingleKind`]'s `Display` write it.
pub fn parse_shingle(s: &str) -> Result<ShingleKind, Fail> {
    let (kind, k) = match s.split_once(':') {
        Some((kind, k)) => (kind, Some(k)),
        None => (s, None),
    };
    let k = match k {
        Some(k) => Some(k.parse::<usize>().map_err(|_| {
            Fail::Input(format!(
                "invalid parameter `shingle`: `{k}` is not a shingle length; write for example \"char:5\""
            ))
        })?),
        None => None,
    };
    match kind {
        "char" | "chars" => Ok(ShingleKind::Chars(k.unwrap_or(5))),
        "word" | "words" => Ok(ShingleKind::Words(k.unwrap_or(2))),
        "stopword" | "stopwords" => Ok(ShingleKind::StopWords(k.unwrap_or(3))),
        other => Err(Fail::Input(format!(
            "invalid parameter `shingle`: unknown kind `{other}`; use \"char:K\", \"word:K\" or \"stopword:K\""
        ))),
    }
}

/// What `Database.create` and `Sketcher` take.
pub struct ConfigArgs<'a> {
    pub threshold: f64,
    pub shingle: &'a str,
    pub num_perm: usize,
    pub bands: Option<usize>,
    pub rows: Option<usize>,
    pub simhash: Option<u32>,
    pub store_text: bool,
}

impl ConfigArgs<'_> {
    /// The configuration (validated later by `Config::resolve`).
    pub fn config(&self) -> Result<Config, Fail> {
        let mut config = Config::jaccard(self.threshold)
            .shingle(parse_shingle(self.shingle)?)
            .num_perm(self.num_perm)
            .store_text(self.store_text);
        match (self.bands, self.rows) {
            (Some(bands), Some(rows)) => config = config.bands(bands, rows),
            (None, None) => {}
            _ => {
                return Err(Fail::Input(
                    "invalid parameter `bands`: give both bands and rows, or neither (the tuner \
                     then chooses them for the threshold)"
                        .to_owned(),
                ))
            }
        }
        if let Some(distance) = self.simhash {
            config = config.simhash(distance);
        }
        Ok(config)
    }
}

/// The stored settings as a dict: [`lshdb::SettingsReport`]'s fields
/// (`containment` included: `None` or `{trees, depth, classes_per_octave}`).
pub fn settings_dict<'py>(py: Python<'py>, s: &Settings) -> PyResult<Bound<'py, PyDict>> {
    Ok(crate::convert::to_python(py, &s.report())?.cast_into::<PyDict>()?)
}
