//! The CLI's one rendering of each library report: explain records (both
//! kinds), settings, stats, check reports and query warnings, as JSON
//! (`serde_json::to_value` of the library's value, with the warnings
//! worded for the CLI) and as text; bulk reports as JSON.

use crate::output::line;
use lshdb::{
    BulkReport, CheckReport, ContainmentExplain, Explain, Hints, Settings, Stats, Warning,
};
use serde_json::{json, Value};
use std::time::Duration;

/// A query warning in the CLI's words: the library's facts with the
/// flag to pass and the command that builds a missing index.
pub fn warning(w: &Warning) -> String {
    w.describe(&Hints {
        max_bucket: "`--max-bucket {}`",
        build_containment: "`lshdb rebuild FILE --containment`",
    })
}

/// The warnings in the CLI's words, as notes on standard error.
pub fn print_warnings(warnings: &[Warning]) {
    for w in warnings {
        eprintln!("lshdb: note: {}", warning(w));
    }
}

/// The warnings in the CLI's words, as a JSON array.
pub fn warnings_json(warnings: &[Warning]) -> Value {
    json!(warnings.iter().map(warning).collect::<Vec<_>>())
}

/// One query's JSON line (`query --json`, `query --jsonl`): its label,
/// its hits, the warnings in the CLI's words and, with `--explain`, the
/// explain record.
pub fn query_json(
    label: &Value,
    hits: Vec<Value>,
    warnings: &[Warning],
    explain: Option<Value>,
) -> Value {
    let mut value = json!({"query": label, "hits": hits, "warnings": warnings_json(warnings)});
    if let Some(explain) = explain {
        value["explain"] = explain;
    }
    value
}

/// `value` serialised, with its `warnings` field worded for the CLI.
fn with_warnings(value: &impl serde::Serialize, warnings: &[Warning]) -> Value {
    let mut value = serde_json::to_value(value).unwrap_or(Value::Null);
    value["warnings"] = warnings_json(warnings);
    value
}

/// A query's explain record as JSON.
pub fn explain_json(e: &Explain) -> Value {
    with_warnings(e, &e.warnings)
}

/// A containment search's explain record as JSON.
pub fn containment_explain_json(e: &ContainmentExplain) -> Value {
    with_warnings(e, &e.warnings)
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A query's plan as text, after its hits.
pub fn print_explain(e: &Explain) {
    line("plan:");
    line(format_args!("  sketch     {:>9.1} µs", us(e.sketch_time)));
    line(format_args!(
        "  lookup     {:>9.1} µs  {} {} probed, postings per {} {:?}{}",
        us(e.lookup_time),
        e.buckets_probed,
        if e.forest { "prefixes" } else { "buckets" },
        if e.forest { "depth" } else { "band" },
        e.posting_sizes,
        if e.truncated_buckets.is_empty() {
            String::new()
        } else {
            format!(", {} bucket(s) cut at the cap", e.truncated_buckets.len())
        }
    ));
    line(format_args!("  candidates {:>9}", e.candidates));
    line(format_args!(
        "  verify     {:>9.1} µs  pruned {} by size, {} by signature; {} verified, {} returned",
        us(e.verify_time),
        e.pruned_by_length,
        e.pruned_by_signature,
        e.verified,
        e.returned
    ));
    match e.recall_estimate {
        Some(recall) => line(format_args!(
            "  recall estimate: {recall:.4} (P(found) at the last hit's similarity)"
        )),
        None => line(format_args!(
            "  P(candidate) at the threshold: {:.4}",
            e.candidate_probability_at_threshold
        )),
    }
}

/// A containment search's plan as text, after its hits.
pub fn print_containment_explain(e: &ContainmentExplain) {
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

/// The settings as JSON (`stats --json`, `create --json`).
pub fn settings_json(s: &Settings) -> Value {
    serde_json::to_value(s.report()).unwrap_or(Value::Null)
}

/// The settings as one line of text (`stats`, `create`).
pub fn settings_text(s: &Settings) -> String {
    let r = s.report();
    format!(
        "{}, {} {} values, {} bands × {} rows, threshold {}, SimHash {}, text {}{}{}",
        r.shingle,
        r.num_perm,
        r.scheme,
        r.bands,
        r.rows,
        r.threshold,
        r.simhash_max_distance
            .map_or("off".to_owned(), |d| format!("≤ {d} bits")),
        if r.store_text { "stored" } else { "not stored" },
        containment_words(s),
        if r.timestamps { ", time index" } else { "" },
    )
}

/// The banding and the containment and time indexes as text (`rebuild`):
/// `threshold T, B bands × R rows[, containment index (…)][, time index]`.
pub fn banding_text(s: &Settings) -> String {
    let r = s.report();
    format!(
        "threshold {}, {} bands × {} rows{}{}",
        r.threshold,
        r.bands,
        r.rows,
        containment_words(s),
        if r.timestamps { ", time index" } else { "" },
    )
}

/// `, containment index (T trees × D)` when the index is on, else empty.
fn containment_words(s: &Settings) -> String {
    let r = s.report();
    let containment = r.containment.map_or(String::new(), |e| {
        format!(", containment index ({} trees × {})", e.trees, e.depth)
    });
    let clusters = r.clusters.map_or(String::new(), |policy| {
        format!(", clusters (representative: {policy})")
    });
    containment + &clusters
}

/// `rebuild --json`: the new banding and whether the containment index is
/// on.
pub fn rebuilt_json(s: &Settings) -> Value {
    let r = s.report();
    json!({
        "threshold": r.threshold,
        "bands": r.bands,
        "rows": r.rows,
        "containment": r.containment.is_some(),
        "clusters": r.clusters,
        "timestamps": r.timestamps,
    })
}

/// The name of the shingle hash function, as export headers give it.
const SHINGLE_HASH: &str = "murmur3_x86_32";

/// The settings that decide which hashes a text turns into, as an export
/// header records them (and `import` compares them): two databases that
/// agree on all of them store the same shingle set for the same text.
pub fn export_settings(s: &Settings) -> Value {
    let r = s.report();
    json!({
        "shingle": r.shingle,
        "whitespace": r.whitespace,
        "seed": r.shingle_seed,
        "stop_words": s.shingle.stop_words,
        "hash": SHINGLE_HASH,
    })
}

/// `stats --json`: the library's stats (the deep fields only when
/// counted), the bytes per document and the settings.
pub fn stats_json(stats: &Stats, s: &Settings, per_doc: f64) -> Value {
    let mut value = serde_json::to_value(stats).unwrap_or(Value::Null);
    value["bytes_per_document"] = json!(per_doc);
    value["settings"] = settings_json(s);
    value
}

/// `check --json`: the library's report and its verdict, `clean`.
pub fn check_json(report: &CheckReport) -> Value {
    let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
    value["clean"] = json!(report.is_clean());
    value
}

/// `add --json` and `import --json`: the library's bulk report, with
/// `rejected`, the first refused documents as `[key, reason]` pairs
/// (`rejected_count` counts all), the near-duplicates `--unique` left out,
/// the bad records skipped, and whether the whole input was read.
pub fn bulk_json(
    report: &BulkReport,
    rejected: &[(String, String)],
    duplicates: u64,
    bad: u64,
    complete: bool,
) -> Value {
    let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
    value["rejected"] = json!(rejected);
    value["duplicates"] = json!(duplicates);
    value["bad"] = json!(bad);
    value["complete"] = json!(complete);
    value
}
