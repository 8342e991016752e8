//! How explain records serialise: the counts as they are, the three
//! timings as whole microseconds under `micros`, and the warnings as typed
//! [`Warning`](super::Warning) objects. The CLI's `--json` is this shape.

use super::{ContainmentExplain, Explain};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::time::Duration;

/// The timings of one query, in whole microseconds.
#[derive(serde::Serialize)]
struct Micros {
    sketch: u64,
    lookup: u64,
    verify: u64,
}

impl Micros {
    fn new(sketch: Duration, lookup: Duration, verify: Duration) -> Self {
        let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        Micros {
            sketch: us(sketch),
            lookup: us(lookup),
            verify: us(verify),
        }
    }
}

impl Serialize for Explain {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Explain", 13)?;
        s.serialize_field("buckets_probed", &self.buckets_probed)?;
        s.serialize_field("posting_sizes", &self.posting_sizes)?;
        s.serialize_field("forest", &self.forest)?;
        s.serialize_field("truncated_buckets", &self.truncated_buckets)?;
        s.serialize_field("candidates", &self.candidates)?;
        s.serialize_field("pruned_by_length", &self.pruned_by_length)?;
        s.serialize_field("pruned_by_signature", &self.pruned_by_signature)?;
        s.serialize_field("verified", &self.verified)?;
        s.serialize_field("returned", &self.returned)?;
        s.serialize_field(
            "candidate_probability_at_threshold",
            &self.candidate_probability_at_threshold,
        )?;
        s.serialize_field("recall_estimate", &self.recall_estimate)?;
        let micros = Micros::new(self.sketch_time, self.lookup_time, self.verify_time);
        s.serialize_field("micros", &micros)?;
        s.serialize_field("warnings", &self.warnings)?;
        s.end()
    }
}

impl Serialize for ContainmentExplain {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ContainmentExplain", 9)?;
        s.serialize_field("scanned", &self.scanned)?;
        s.serialize_field("classes", &self.classes)?;
        s.serialize_field("candidates", &self.candidates)?;
        s.serialize_field("pruned_by_length", &self.pruned_by_length)?;
        s.serialize_field("verified", &self.verified)?;
        s.serialize_field("returned", &self.returned)?;
        s.serialize_field("recall_estimate", &self.recall_estimate)?;
        let micros = Micros::new(self.sketch_time, self.lookup_time, self.verify_time);
        s.serialize_field("micros", &micros)?;
        s.serialize_field("warnings", &self.warnings)?;
        s.end()
    }
}
