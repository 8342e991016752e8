//! The CLI's JSON Lines reader (`crates/lshdb-cli/src/input.rs`, compiled into
//! this target as a module, unchanged) on arbitrary bytes, with the default
//! fields `id`/`text` and with `key`/`body`. Never a panic; every line is
//! either a record, a bad line with its number, or blank; line numbers
//! only grow and never pass the number of lines; a text record's text is
//! not blank, and its key is the JSON field's value.
//!
//! Records are then sketched by a database on an in-memory backend (the
//! same path `lshdb add` takes), which must not panic either.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/lshdb-cli/src/input.rs"]
mod input;

use input::{InputError, JsonLines};
use libfuzzer_sys::fuzz_target;
use lshdb::{BulkOptions, Config, Database, DocumentBuf};

fuzz_target!(|data: &[u8]| {
    let lines = data.split(|&b| b == b'\n').count() as u64;
    for (key_field, text_field) in [("id", "text"), ("key", "body")] {
        let mut last = 0;
        let mut records = Vec::new();
        for item in JsonLines::new(data, key_field, text_field) {
            let line = match item {
                Ok(record) => {
                    if let DocumentBuf::Text(text) = &record.doc {
                        assert!(!text.trim().is_empty(), "blank text accepted");
                    }
                    let line = record.line;
                    records.push((record.key, record.doc));
                    line
                }
                Err(InputError::Bad { line, reason }) => {
                    assert!(!reason.is_empty());
                    line
                }
                Err(InputError::Io(e)) => panic!("I/O error from a byte slice: {e}"),
            };
            assert!(
                line > last && line <= lines,
                "line {line} after {last} of {lines}"
            );
            last = line;
        }
        if !records.is_empty() {
            load(records);
        }
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
