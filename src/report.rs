//! [`Settings`] as a report: the stored configuration in plain values
//! (shingling and scheme as their names, the containment index's shape),
//! serialising with serde, for surfaces to render. Apart from the settings
//! record's file encoding, which is `store::meta`'s.

use crate::shingle::Whitespace;
use crate::Settings;

/// The stored settings in plain values, as the CLI's `stats --json` and
/// Python's `Database.settings` give them. Built by [`Settings::report`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct SettingsReport {
    /// Shingling: `char:K`, `word:K` or `stopword:K`.
    pub shingle: String,
    /// White-space handling: `collapse` or `remove`.
    pub whitespace: &'static str,
    /// The shingle hash seed.
    pub shingle_seed: u32,
    /// The MinHash scheme's name.
    pub scheme: String,
    /// Signature length.
    pub num_perm: usize,
    /// The MinHash seed.
    pub minhash_seed: u64,
    /// The index threshold the banding was chosen for.
    pub threshold: f64,
    /// Number of bands.
    pub bands: usize,
    /// Rows per band.
    pub rows: usize,
    /// The largest SimHash search distance, `None` without the index.
    pub simhash_max_distance: Option<u32>,
    /// Whether raw text is stored.
    pub store_text: bool,
    /// The containment index's shape, `None` without the index.
    pub containment: Option<ContainmentSettings>,
    /// Whether the time index (each document's timestamp) is kept.
    pub timestamps: bool,
    /// The maintained clusters' representative policy (`first`,
    /// `longest`, `smallest-key`), `None` without clusters.
    pub clusters: Option<&'static str>,
}

/// The containment index's shape (LSH Ensemble).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ContainmentSettings {
    /// Prefix trees per size class.
    pub trees: usize,
    /// Signature values per tree.
    pub depth: usize,
    /// Size classes per doubling of set size.
    pub classes_per_octave: u32,
}

impl Settings {
    /// These settings as a [`SettingsReport`].
    pub fn report(&self) -> SettingsReport {
        SettingsReport {
            shingle: self.shingle.kind.to_string(),
            whitespace: match self.shingle.whitespace {
                Whitespace::Collapse => "collapse",
                Whitespace::Remove => "remove",
            },
            shingle_seed: self.shingle.seed,
            scheme: self.minhash.scheme.to_string(),
            num_perm: self.minhash.num_perm,
            minhash_seed: self.minhash.seed,
            threshold: self.threshold,
            bands: self.bands,
            rows: self.rows,
            simhash_max_distance: self.simhash_max_distance(),
            store_text: self.store_text,
            containment: self.containment.map(|e| ContainmentSettings {
                trees: e.trees(),
                depth: e.depth(),
                classes_per_octave: e.classes_per_octave(),
            }),
            timestamps: self.timestamps,
            clusters: self.clusters.map(|p| p.name()),
        }
    }
}
