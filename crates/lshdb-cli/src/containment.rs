//! `lshdb query --containment T`: stored documents that contain at least a
//! fraction T of the query's shingles, as text lines or JSON.

use crate::output::{escaped, json, line, similarity};
use lshdb::{ContainmentExplain, ContainmentResult};
use serde_json::json;

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
    for warning in &result.explain.warnings {
        eprintln!("lshdb: note: {}", cli_warning(warning));
    }
    for hit in &result.hits {
        line(format_args!(
            "{}\t{}\t{}",
            similarity(hit.containment),
            similarity(hit.jaccard),
            escaped(&hit.key)
        ));
    }
    if explain {
        print_explain(&result.explain);
    }
    if result.hits.is_empty() {
        eprintln!("lshdb: no stored document contains {threshold} of the query");
    }
}

/// The JSON object of one containment result.
pub fn result_json(
    label: &serde_json::Value,
    threshold: f64,
    result: &ContainmentResult,
    explain: bool,
) -> serde_json::Value {
    let hits: Vec<_> = result
        .hits
        .iter()
        .map(|h| json!({"key": h.key, "containment": h.containment, "jaccard": h.jaccard}))
        .collect();
    let warnings: Vec<String> = result
        .explain
        .warnings
        .iter()
        .map(|w| cli_warning(w))
        .collect();
    let mut value = json!({
        "query": label,
        "containment": threshold,
        "hits": hits,
        "warnings": warnings,
    });
    if explain {
        value["explain"] = explain_json(&result.explain);
    }
    value
}

fn explain_json(e: &ContainmentExplain) -> serde_json::Value {
    json!({
        "scanned": e.scanned,
        "classes": e.classes.iter().map(|c| json!({
            "class": c.class,
            "min_size": c.min_size,
            "max_size": c.max_size,
            "jaccard_bound": c.jaccard_bound,
            "whole": c.whole,
            "trees": c.trees,
            "depth": c.depth,
            "candidate_probability": c.candidate_probability,
            "index_probability": c.index_probability,
            "postings": c.postings,
            "truncated": c.truncated,
        })).collect::<Vec<_>>(),
        "candidates": e.candidates,
        "pruned_by_length": e.pruned_by_length,
        "verified": e.verified,
        "returned": e.returned,
        "recall_estimate": e.recall_estimate,
        "micros": {
            "sketch": e.sketch_time.as_micros() as u64,
            "lookup": e.lookup_time.as_micros() as u64,
            "verify": e.verify_time.as_micros() as u64,
        },
        "warnings": e.warnings.iter().map(|w| cli_warning(w)).collect::<Vec<_>>(),
    })
}

/// A library warning in the CLI's words (flags instead of method names).
fn cli_warning(warning: &str) -> String {
    warning
        .replace(
            "Database::build_containment_index (`lshdb rebuild FILE --containment`)",
            "`lshdb rebuild FILE --containment`",
        )
        .replace("raise max_bucket", "raise --max-bucket")
}

fn print_explain(e: &ContainmentExplain) {
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    line("plan:");
    line(format_args!("  sketch     {:>9.1} µs", us(e.sketch_time)));
    if e.scanned {
        line("  lookup     scan of every stored set (no index probed)");
    } else {
        line(format_args!(
            "  lookup     {:>9.1} µs  {} size class(es) probed",
            us(e.lookup_time),
            e.classes.len()
        ));
        for c in &e.classes {
            if c.whole {
                line(format_args!(
                    "    class {:>3} (sizes {}..{}): read whole (the index alone: P {:.4}), {} postings",
                    c.class, c.min_size, c.max_size, c.index_probability, c.postings
                ));
                continue;
            }
            line(format_args!(
                "    class {:>3} (sizes {}..{}): Jaccard ≥ {:.4}, {} trees × depth {}, \
                 P(candidate) {:.4}, {} postings{}",
                c.class,
                c.min_size,
                c.max_size,
                c.jaccard_bound,
                c.trees,
                c.depth,
                c.candidate_probability,
                c.postings,
                if c.truncated > 0 {
                    format!(", {} probe(s) cut at the cap", c.truncated)
                } else {
                    String::new()
                }
            ));
        }
    }
    line(format_args!("  candidates {:>9}", e.candidates));
    line(format_args!(
        "  verify     {:>9.1} µs  pruned {} by size; {} verified, {} returned",
        us(e.verify_time),
        e.pruned_by_length,
        e.verified,
        e.returned
    ));
    line(format_args!(
        "  recall estimate: {:.4} (least P(candidate) over the classes probed)",
        e.recall_estimate
    ));
}
