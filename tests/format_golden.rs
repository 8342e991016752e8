//! The file format as stored bytes: the settings record is pinned byte for
//! byte, and a database file written by format version 1
//! (`tests/fixtures/format-v1.lshdb`) must open and answer exactly as it did
//! when it was written. If this fails, the change breaks existing files.
//!
//! The fixture was written by the ignored test `write_fixture`
//! (`cargo test --test format_golden -- --ignored write_fixture`); never
//! regenerate it to make this test pass.

use lshdb::store::meta::{decode_settings, encode_settings};
use lshdb::{Config, Database};
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1.lshdb")
}

/// The fixture's settings. The banding is explicit: it is what the tuner
/// chose when the fixture was written, and later tuners may choose others.
fn fixture_config() -> Config {
    Config::jaccard(0.6)
        .bands(25, 5)
        .simhash(3)
        .store_text(true)
}

const A: &str = "The quick brown fox jumps over the lazy dog";
const B: &str = "The quick brown fox jumped over the lazy dog";
const C: &str = "Pack my box with five dozen liquor jugs";

#[test]
#[ignore = "writes the format fixture; run only when a new format version is introduced"]
fn write_fixture() {
    let path = fixture();
    let _ = std::fs::remove_file(&path);
    let mut db = Database::create(&path, fixture_config()).unwrap();
    db.insert("a", A).unwrap();
    db.insert("b", B).unwrap();
    db.insert("c", C).unwrap();
    db.insert_items("d", &["milk", "bread"]).unwrap();
    db.compact().unwrap();
}

#[test]
fn settings_record_bytes_are_pinned() {
    let settings = Config::jaccard(0.8).bands(14, 9).resolve().unwrap();
    let bytes = encode_settings(&settings).unwrap();
    assert_eq!(
        bytes,
        [
            1, 0xbe, 0x7b, 0x96, 0x69, // tag 1 (Config), CRC-32 (zlib.crc32 agrees)
            0, 5, 0, 0, 0, // Chars(5), Collapse, seed 0, no stop words
            1, 128, 1, 0xb1, 0xc4, 0x91, 0xc3, 0xb6, 0x8e, 0x1b, // OnePermutation, 128, seed
            0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xe9, 0x3f, // threshold 0.8 (f64 LE)
            14, 9, 0, 0, // bands, rows, no SimHash, text not stored
        ]
    );
    assert_eq!(decode_settings(&bytes).unwrap(), settings);
}

#[test]
fn format_v1_fixture_opens_and_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("copy.lshdb");
    std::fs::copy(fixture(), &path).unwrap();
    let mut db = Database::open(&path).unwrap();
    assert_eq!(db.settings(), &fixture_config().resolve().unwrap());
    assert_eq!(db.len().unwrap(), 4);
    assert_eq!(db.get("a").unwrap().unwrap().text.as_deref(), Some(A));

    let hits = db.query_key("a").threshold(0.5).run().unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key, "b");
    assert_eq!(hits[0].similarity, 34.0 / 45.0); // checked by hand in Python

    let hits = db.query(C).run().unwrap().hits;
    assert_eq!((hits[0].key.as_str(), hits[0].similarity), ("c", 1.0));
    let hits = db.query_items(&["bread", "milk"]).run().unwrap().hits;
    assert_eq!((hits[0].key.as_str(), hits[0].similarity), ("d", 1.0));

    assert_eq!(
        db.get("a").unwrap().unwrap().simhash,
        Some(0xb677_513e_3a32_630b)
    );
    let (near, _) = db.query(A).near_simhash(3).unwrap();
    assert_eq!(near[0].key, "a");
    assert!(db.check_pages().unwrap().is_clean());
}
