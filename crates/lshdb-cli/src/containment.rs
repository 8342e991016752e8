//! `lshdb query --containment T`: stored documents that contain at least a
//! fraction T of the query's shingles, as text lines or JSON.

use crate::output::{escaped, json, line, similarity};
use lshdb::ContainmentResult;
use serde_json::{json, Value};

/// Prints one result: `containment<TAB>jaccard<TAB>key` lines (notes on
/// standard error), or one JSON object.
pub fn print(
    label: &serde_json::Value,
    threshold: f64,
    result: &ContainmentResult,
    as_json: bool,
    explain: bool,
) {
    if as_json {
        json(&result_json(label, threshold, result, explain));
        return;
    }
    crate::render::print_warnings(&result.explain.warnings);
    for hit in &result.hits {
        line(format_args!(
            "{}\t{}\t{}",
            similarity(hit.containment),
            similarity(hit.jaccard),
            escaped(&hit.key)
        ));
    }
    if explain {
        crate::render::print_containment_explain(&result.explain);
    }
    if result.hits.is_empty() {
        eprintln!("lshdb: no stored document contains {threshold} of the query");
    }
}

/// The JSON object of one containment result: the query's line with the
/// threshold, and hits with their containment and Jaccard similarity.
pub fn result_json(
    label: &Value,
    threshold: f64,
    result: &ContainmentResult,
    explain: bool,
) -> Value {
    let hits = result
        .hits
        .iter()
        .map(|h| json!({"key": h.key, "containment": h.containment, "jaccard": h.jaccard}));
    let explain = explain.then(|| crate::render::containment_explain_json(&result.explain));
    let warnings = &result.explain.warnings;
    let mut value = crate::render::query_json(label, hits.collect(), warnings, explain);
    value["containment"] = json!(threshold);
    value
}
