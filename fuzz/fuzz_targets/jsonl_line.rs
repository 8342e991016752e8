//! The CLI's JSON Lines line reader (`crates/lshdb-cli/src/support/jsonl.rs`,
//! compiled into this target as a module, unchanged; the one reader every
//! command's JSON records go through) on arbitrary bytes. Never a panic;
//! every line is a JSON object, a blank line or a bad line with a reason;
//! line numbers only grow and never pass the number of lines.
//!
//! Objects with a scalar `id` and a non-blank `text` (what `lshdb add`
//! keeps) are then sketched by a database on an in-memory backend (the
//! same path `lshdb add` takes), which must not panic either.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/lshdb-cli/src/support/jsonl.rs"]
mod jsonl;

use jsonl::{parse_object, scalar_text, Line, Lines};
use libfuzzer_sys::fuzz_target;
use lshdb::{BulkOptions, Config, Database, DocumentBuf};

fuzz_target!(|data: &[u8]| {
    let count = data.split(|&b| b == b'\n').count() as u64;
    let mut lines = Lines::new(data, 0);
    let (mut last, mut records) = (0, Vec::new());
    loop {
        match lines.read().expect("no I/O error from a byte slice") {
            Line::End => break,
            Line::TooLong => {}
            Line::Read => match parse_object(&lines.buf) {
                Ok(Some(value)) => {
                    let key = value.get("id").and_then(scalar_text);
                    if let (Some(key), Some(serde_json::Value::String(text))) = (key, value.get("text")) {
                        if !text.trim().is_empty() {
                            records.push((key, DocumentBuf::Text(text.clone())));
                        }
                    }
                }
                Ok(None) => {}
                Err(reason) => assert!(!reason.is_empty()),
            },
        }
        assert!(
            lines.line > last && lines.line <= count,
            "line {} after {last} of {count}",
            lines.line
        );
        last = lines.line;
    }
    if !records.is_empty() {
        load(records);
    }
});

/// Loads the records as `lshdb add --jsonl` does.
fn load(records: Vec<(String, DocumentBuf)>) {
    let db = Database::builder().create_with_backend(MemBackend::default(), Config::jaccard(0.8))
        .expect("create an in-memory database");
    let report = db
        .insert_bulk(records.iter().cloned(), &BulkOptions::default(), |_| true)
        .expect("an in-memory bulk load does not fail");
    assert_eq!(
        report.inserted + report.rejected.len() as u64,
        records.len() as u64
    );
    for (key, doc) in &records {
        if let DocumentBuf::Text(text) = doc {
            let _ = db.query(text).run();
        }
        let _ = db.get(key);
    }
}

#[path = "common/mem_backend.rs"]
mod mem_backend;
use mem_backend::MemBackend;
