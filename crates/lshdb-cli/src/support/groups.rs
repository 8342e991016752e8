//! Near-duplicate groups on standard output, as text or JSON lines, and the
//! note that a threshold below the index threshold misses pairs (`groups`,
//! `scan`, `dedup`).

use crate::output::{escaped, json, line, similarity};
use lshdb::{Database, Groups};
use serde_json::json;

/// Prints groups as text or JSON lines.
pub fn print_groups(groups: &Groups, threshold: f64, as_json: bool) {
    if as_json {
        for (i, members) in groups.groups.iter().enumerate() {
            json(&group_json(i, members));
        }
        return;
    }
    line(format_args!(
        "{} near-duplicate group(s) at similarity ≥ {threshold} ({} verified pairs)",
        groups.groups.len(),
        groups.pairs
    ));
    for (i, members) in groups.groups.iter().enumerate() {
        line("");
        line(format_args!(
            "group {} ({} documents)",
            i + 1,
            members.len()
        ));
        for (key, best) in members {
            line(format_args!("  {}\t{}", similarity(*best), escaped(key)));
        }
    }
}

/// One group as JSON.
pub fn group_json(index: usize, members: &[(String, f64)]) -> serde_json::Value {
    json!({
        "group": index + 1,
        "members": members.iter().map(|(k, s)| json!({"key": k, "similarity": s})).collect::<Vec<_>>(),
    })
}

/// Warns when a threshold below the index threshold will miss pairs.
pub fn note_threshold(db: &Database, threshold: f64) {
    let index = db.settings().threshold;
    if threshold < index {
        eprintln!(
            "lshdb: note: threshold {threshold} is below the index threshold {index}; \
             some pairs will be missed (rebuild with `lshdb rebuild {} --threshold {threshold}`)",
            crate::output::shell_arg(&db.path().to_string_lossy())
        );
    }
}
