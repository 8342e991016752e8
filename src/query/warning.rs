//! What a query tells its caller besides its hits: typed values with their
//! numbers as fields, so each surface words them (and its own hint: a CLI
//! flag, a Python argument) without parsing English back.

use std::fmt;

/// A note on a query's answer: something that may make it incomplete or
/// slower than expected. `Display` gives the library's wording, which
/// names no surface's flag or argument; surfaces word their own hints from
/// the fields. Serialises as an object tagged by `kind` (snake case).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Warning {
    /// `buckets` LSH buckets held more than `max_bucket` postings and were
    /// read only that far, so hits may be missing.
    BucketsTruncated {
        /// Buckets cut.
        buckets: usize,
        /// The cap each was cut at.
        max_bucket: usize,
    },
    /// `probes` prefix probes of the containment index held more than
    /// `max_bucket` postings and were read only that far.
    ProbesTruncated {
        /// Probes cut.
        probes: usize,
        /// The cap each was cut at.
        max_bucket: usize,
    },
    /// The query threshold is below the one the index was banded for, so a
    /// pair at the query threshold becomes a candidate only with
    /// probability `candidate_probability`.
    ThresholdBelowIndex {
        /// The query's threshold.
        threshold: f64,
        /// The index's threshold.
        index_threshold: f64,
        /// P(candidate) at the query threshold.
        candidate_probability: f64,
    },
    /// A top-k query on a database without the prefix forest (the
    /// containment index) probed the bands, tuned for the index
    /// threshold: a document becomes a candidate only by sharing a bucket,
    /// so neighbours below that threshold are mostly missed.
    TopWithoutForest {
        /// P(candidate) at the k-th hit's similarity (0 without hits).
        recall_estimate: f64,
        /// The threshold the bands were tuned for.
        index_threshold: f64,
        /// Bands.
        bands: usize,
        /// Rows per band.
        rows: usize,
    },
    /// An exhaustive containment search compared every stored set.
    ExhaustiveScan,
    /// The database has no containment index, so a containment search
    /// compared every stored set (exact, but linear in the database).
    NoContainmentIndex,
}

/// How a surface names the two remedies the warnings suggest. The facts
/// are worded once, by [`Warning::describe`]; a surface gives only its
/// hints (a CLI flag, a Python argument), and `Display` uses
/// [`Hints::RUST`].
#[derive(Debug, Clone, Copy)]
pub struct Hints<'a> {
    /// How to run the query again with more postings per bucket; `{}`
    /// stands for the new cap (ten times the one that cut).
    pub max_bucket: &'a str,
    /// How to build the containment index.
    pub build_containment: &'a str,
}

impl Hints<'static> {
    /// The library's own hints: its builder calls.
    pub const RUST: Hints<'static> = Hints {
        max_bucket: "Query::max_bucket({})",
        build_containment: "Database::build_containment_index",
    };
}

impl Warning {
    /// The warning in words, with `hints` naming the remedies.
    pub fn describe(&self, hints: &Hints<'_>) -> String {
        let again = |cap: usize| {
            let with = hints
                .max_bucket
                .replace("{}", &cap.saturating_mul(10).to_string());
            format!("for an exhaustive answer run the query again with {with}")
        };
        let build = hints.build_containment;
        match self {
            Warning::BucketsTruncated {
                buckets,
                max_bucket,
            } => format!(
                "{buckets} bucket(s) held more than {max_bucket} documents and were cut there; {}",
                again(*max_bucket)
            ),
            Warning::ProbesTruncated { probes, max_bucket } => format!(
                "{probes} prefix probe(s) held more than {max_bucket} documents and were cut \
                 there; {}",
                again(*max_bucket)
            ),
            Warning::ThresholdBelowIndex {
                threshold,
                index_threshold,
                candidate_probability,
            } => format!(
                "query threshold {threshold} is below the index threshold {index_threshold}: a \
                 pair at similarity {threshold} becomes a candidate with probability \
                 {candidate_probability:.2}, so some hits may be missed"
            ),
            Warning::TopWithoutForest {
                recall_estimate,
                index_threshold,
                bands,
                rows,
            } => format!(
                "top-k probed the {bands} x {rows} bands tuned for similarity \
                 {index_threshold}, so less similar neighbours are mostly missed (recall \
                 estimate {recall_estimate:.2}); build the containment index, whose prefix \
                 forest top-k probes at every depth, with {build}"
            ),
            Warning::ExhaustiveScan => {
                "exhaustive: every stored set was compared with the query".to_owned()
            }
            Warning::NoContainmentIndex => format!(
                "this database has no containment index, so every stored set was compared with \
                 the query (exact, but linear in the database); build the index with {build}"
            ),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&Hints::RUST))
    }
}

#[cfg(test)]
mod tests {
    use super::Warning;

    #[test]
    fn warnings_carry_their_numbers_and_name_no_flag() {
        let cut = Warning::BucketsTruncated {
            buckets: 3,
            max_bucket: 7,
        };
        assert_eq!(
            serde_json::to_value(&cut).unwrap(),
            serde_json::json!({"kind": "buckets_truncated", "buckets": 3, "max_bucket": 7})
        );
        let all = [
            cut,
            Warning::ProbesTruncated {
                probes: 2,
                max_bucket: 5,
            },
            Warning::ThresholdBelowIndex {
                threshold: 0.5,
                index_threshold: 0.8,
                candidate_probability: 0.25,
            },
            Warning::ExhaustiveScan,
            Warning::NoContainmentIndex,
            Warning::TopWithoutForest {
                recall_estimate: 0.12,
                index_threshold: 0.8,
                bands: 16,
                rows: 8,
            },
        ];
        for w in &all {
            let words = w.to_string();
            assert!(
                !words.contains("--") && !words.contains("lshdb "),
                "{words}"
            );
            let kind = serde_json::to_value(w).unwrap()["kind"].clone();
            assert!(kind.is_string(), "{w:?}");
        }
        assert!(all[2].to_string().contains("probability 0.25"));
    }
}
