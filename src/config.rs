//! What a database is created with ([`Config`]) and what it stores
//! ([`Settings`]): the user's intent, and its resolved, concrete form.
//!
//! A `Config` may say "threshold 0.8" and leave bands and rows to the tuner;
//! the `Settings` written into the file hold the chosen bands and rows, so a
//! reopened database never depends on the tuner of the build that opens it.

use crate::shingle::{ShingleConfig, ShingleKind, Shingler};
use crate::sketch::ensemble::Ensemble;
use crate::sketch::lsh::{tune, Banding, TuneGoal};
use crate::sketch::minhash::{MinHashConfig, MinHasher};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// How a new database indexes documents.
///
/// ```
/// use lshdb::Config;
/// let config = Config::jaccard(0.8).num_perm(256).simhash(3).store_text(true);
/// let settings = config.resolve()?;
/// assert_eq!(settings.minhash.num_perm, 256);
/// assert!(settings.bands * settings.rows <= 256);
/// # Ok::<(), lshdb::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// Shingling: kind, k, white space, seed, stop words.
    pub shingle: ShingleConfig,
    /// Signature scheme, length and seed.
    pub minhash: MinHashConfig,
    /// The similarity the index is built to find (strictly between 0 and 1).
    pub threshold: f64,
    /// Bands and rows; `None` lets the tuner choose them for `threshold`.
    pub banding: Option<(usize, usize)>,
    /// The largest Hamming distance SimHash search must find; `None` turns
    /// the SimHash index off.
    pub simhash_max_distance: Option<u32>,
    /// Whether documents' raw text is kept (for `get` and export).
    pub store_text: bool,
    /// Whether the containment index (LSH Ensemble, for
    /// [`crate::ContainmentQuery`]) is kept.
    pub containment: bool,
    /// Whether the time index (each document's timestamp, for
    /// [`crate::Database::expire`]) is kept.
    pub timestamps: bool,
    /// Whether near-duplicate clusters are maintained on every write, and
    /// how each cluster's representative is chosen; `None` keeps none
    /// (see [`Config::clusters`]).
    pub clusters: Option<Representative>,
}

/// How a maintained cluster's representative is chosen (`docs/clusters.md`):
/// the member that comes first in this order. Every order is total (ties
/// go to the member stored first), so the representative is always the
/// best member by the policy, whatever the order of the writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Representative {
    /// The member stored first (the smallest document id; a replaced
    /// document counts as stored when it was replaced).
    #[default]
    FirstInserted,
    /// The member with the most distinct shingles.
    Longest,
    /// The member whose key sorts first (byte order).
    SmallestKey,
    /// The member with the highest priority, a signed 64-bit integer each
    /// document may be given when it is written (0 when it is not; see
    /// [`crate::Prioritised`]); ties go to the member stored first. Files
    /// with this policy store each document's priority.
    Priority,
}

impl Representative {
    /// The policy's name, as the surfaces spell it: `first`, `longest`,
    /// `smallest-key`, `priority`.
    pub fn name(self) -> &'static str {
        match self {
            Representative::FirstInserted => "first",
            Representative::Longest => "longest",
            Representative::SmallestKey => "smallest-key",
            Representative::Priority => "priority",
        }
    }

    /// The policy named `name` (see [`Representative::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Self::FirstInserted,
            Self::Longest,
            Self::SmallestKey,
            Self::Priority,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

impl Config {
    /// Defaults for finding pairs with Jaccard similarity ≥ `threshold`:
    /// character 5-shingles, 128 one-permutation MinHash values, tuned
    /// banding, no SimHash index, text not stored.
    pub fn jaccard(threshold: f64) -> Self {
        Self {
            shingle: ShingleConfig::default(),
            minhash: MinHashConfig::default(),
            threshold,
            banding: None,
            simhash_max_distance: None,
            store_text: false,
            containment: false,
            timestamps: false,
            clusters: None,
        }
    }

    /// Sets the shingle kind and k.
    pub fn shingle(mut self, kind: ShingleKind) -> Self {
        self.shingle.kind = kind;
        self
    }

    /// Sets the signature length.
    pub fn num_perm(mut self, num_perm: usize) -> Self {
        self.minhash.num_perm = num_perm;
        self
    }

    /// Sets bands and rows explicitly instead of tuning them.
    pub fn bands(mut self, bands: usize, rows: usize) -> Self {
        self.banding = Some((bands, rows));
        self
    }

    /// Turns the SimHash index on for searches up to `max_distance` bits.
    pub fn simhash(mut self, max_distance: u32) -> Self {
        self.simhash_max_distance = Some(max_distance);
        self
    }

    /// Keeps (or not) each document's raw text.
    pub fn store_text(mut self, store: bool) -> Self {
        self.store_text = store;
        self
    }

    /// Keeps (or not) the containment index: one posting per prefix tree
    /// (32 with 128 values) per document, for fast containment queries
    /// ([`crate::Query::containment`]); without it they scan every set.
    /// Its prefix forest also serves top-k ([`crate::Query::top`]) at
    /// every similarity, where the bands find only neighbours near the
    /// threshold.
    pub fn containment(mut self, on: bool) -> Self {
        self.containment = on;
        self
    }

    /// Keeps (or not) the time index: each document's timestamp (given
    /// with [`crate::Database::insert_at`], or the time it was written),
    /// for [`crate::Database::expire`]. Two small entries per document.
    pub fn timestamps(mut self, on: bool) -> Self {
        self.timestamps = on;
        self
    }

    /// Maintains (or not) near-duplicate clusters with stable ids, on
    /// every write, with the representative policy
    /// [`Representative::FirstInserted`]: see [`crate::Database::cluster_of`]
    /// and `docs/clusters.md`.
    pub fn clusters(mut self, on: bool) -> Self {
        self.clusters = on.then_some(Representative::default());
        self
    }

    /// Maintains clusters whose representative `policy` chooses.
    pub fn cluster_representative(mut self, policy: Representative) -> Self {
        self.clusters = Some(policy);
        self
    }

    /// Validates the configuration and resolves it into stored [`Settings`].
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a threshold outside (0, 1), invalid
    /// shingling or signature length, bands × rows > num_perm, or a SimHash
    /// distance above [`MAX_SIMHASH_DISTANCE`].
    pub fn resolve(&self) -> Result<Settings> {
        check_threshold("threshold", self.threshold)?;
        Shingler::new(self.shingle.clone())?;
        MinHasher::new(self.minhash)?;
        let n = self.minhash.num_perm;
        let banding = match self.banding {
            Some((bands, rows)) => Banding::new(bands, rows, n)?,
            None => tune(&TuneGoal::new(self.threshold, n))?.banding,
        };
        let simhash_blocks = match self.simhash_max_distance {
            None => None,
            Some(d) if d <= MAX_SIMHASH_DISTANCE => Some(d + 1),
            Some(d) => {
                return Err(Error::invalid(
                    "simhash_max_distance",
                    format!("must be at most {MAX_SIMHASH_DISTANCE} bits, got {d}"),
                ))
            }
        };
        Ok(Settings {
            shingle: self.shingle.clone(),
            minhash: self.minhash,
            threshold: self.threshold,
            bands: banding.bands(),
            rows: banding.rows(),
            simhash_blocks,
            store_text: self.store_text,
            containment: if self.containment {
                Some(Ensemble::for_num_perm(n)?)
            } else {
                None
            },
            timestamps: self.timestamps,
            clusters: self.clusters,
        })
    }
}

/// The largest SimHash search distance an index can be built for (its
/// block tables then have 8 blocks of 8 bits).
pub const MAX_SIMHASH_DISTANCE: u32 = 7;

/// Checks that a similarity threshold lies strictly between 0 and 1.
pub(crate) fn check_threshold(name: &'static str, t: f64) -> Result<()> {
    if t > 0.0 && t < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            name,
            format!("a similarity threshold must be strictly between 0 and 1, got {t}"),
        ))
    }
}

/// The resolved configuration stored in a database file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Settings {
    /// Shingling.
    pub shingle: ShingleConfig,
    /// Signatures.
    pub minhash: MinHashConfig,
    /// The index threshold the banding was chosen for.
    pub threshold: f64,
    /// Number of bands.
    pub bands: usize,
    /// Rows per band.
    pub rows: usize,
    /// Blocks of the SimHash index (max distance + 1), or `None` when off.
    pub simhash_blocks: Option<u32>,
    /// Whether raw text is stored.
    pub store_text: bool,
    /// The containment index's shape, or `None` when off. The settings
    /// record appends it only when on, so a file without it reads as before
    /// (`store::settings_record`, `docs/format.md`).
    #[serde(skip)]
    pub containment: Option<Ensemble>,
    /// Whether the time index is kept (`store::times`). The settings record
    /// appends it only when on, as the containment index.
    #[serde(skip)]
    pub timestamps: bool,
    /// The representative policy of the maintained clusters, or `None`
    /// when the file keeps none. Appended to the settings record only when
    /// on, as the containment index is.
    #[serde(skip)]
    pub clusters: Option<Representative>,
}

impl Settings {
    /// The banding, re-validated.
    pub fn banding(&self) -> Result<Banding> {
        Banding::new(self.bands, self.rows, self.minhash.num_perm)
    }

    /// The largest distance SimHash search supports, or `None` when off.
    pub fn simhash_max_distance(&self) -> Option<u32> {
        self.simhash_blocks.map(|b| b.saturating_sub(1))
    }

    /// The first field where `self` and `other` differ, as
    /// (field, self's value, other's value).
    pub(crate) fn first_difference(
        &self,
        other: &Settings,
    ) -> Option<(&'static str, String, String)> {
        let fields: [(&'static str, String, String); 10] = [
            (
                "shingle",
                format!("{:?}", self.shingle),
                format!("{:?}", other.shingle),
            ),
            (
                "minhash",
                format!("{:?}", self.minhash),
                format!("{:?}", other.minhash),
            ),
            (
                "threshold",
                self.threshold.to_string(),
                other.threshold.to_string(),
            ),
            ("bands", self.bands.to_string(), other.bands.to_string()),
            ("rows", self.rows.to_string(), other.rows.to_string()),
            (
                "simhash_max_distance",
                format!("{:?}", self.simhash_max_distance()),
                format!("{:?}", other.simhash_max_distance()),
            ),
            (
                "store_text",
                self.store_text.to_string(),
                other.store_text.to_string(),
            ),
            (
                "containment",
                format!("{:?}", self.containment),
                format!("{:?}", other.containment),
            ),
            (
                "timestamps",
                self.timestamps.to_string(),
                other.timestamps.to_string(),
            ),
            (
                "clusters",
                format!("{:?}", self.clusters),
                format!("{:?}", other.clusters),
            ),
        ];
        fields.into_iter().find(|(_, a, b)| a != b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_with_tuner_or_explicit_banding() {
        let s = Config::jaccard(0.8).resolve().unwrap();
        assert_eq!((s.bands, s.rows), (16, 8));
        let s = Config::jaccard(0.5).bands(16, 8).resolve().unwrap();
        assert_eq!((s.bands, s.rows), (16, 8));
    }

    #[test]
    fn rejects_bad_parameters() {
        for t in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert!(matches!(
                Config::jaccard(t).resolve(),
                Err(Error::InvalidParameter {
                    name: "threshold",
                    ..
                })
            ));
        }
        assert!(Config::jaccard(0.8).bands(20, 8).resolve().is_err());
        assert!(Config::jaccard(0.8).num_perm(0).resolve().is_err());
        assert!(Config::jaccard(0.8).simhash(8).resolve().is_err());
        assert_eq!(
            Config::jaccard(0.8)
                .simhash(3)
                .resolve()
                .unwrap()
                .simhash_blocks,
            Some(4)
        );
    }

    #[test]
    fn first_difference_names_the_field() {
        let a = Config::jaccard(0.8).resolve().unwrap();
        let b = Config::jaccard(0.8).store_text(true).resolve().unwrap();
        assert_eq!(a.first_difference(&a), None);
        assert_eq!(a.first_difference(&b).map(|d| d.0), Some("store_text"));
    }
}
