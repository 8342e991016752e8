//! Inputs the fuzz targets (fuzz/README.md) found, kept as ordinary tests.

use lshdb::store::codec::{frame, Tag};
use lshdb::{Config, Database, Error};
use std::path::Path;

/// A database file whose `meta["settings"]` record is `record`, written
/// through redb (so redb's checks pass: only lshdb can object).
fn with_settings_record(path: &Path, record: &[u8]) {
    drop(Database::create(path, Config::jaccard(0.5).simhash(3)).unwrap());
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let meta: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
        txn.open_table(meta)
            .unwrap()
            .insert("settings", record)
            .unwrap();
    }
    txn.commit().unwrap();
}

/// decode_records, timeout-e7fbb131e4506a541b8715690c0bc508f8df0aa7: a
/// settings record (first byte 0 selects the config tag; the rest is the
/// payload) that decodes, with valid shingling, signature and banding, but
/// `simhash_blocks = Some(4_045_630)`. The database opened, and every
/// insert, removal and SimHash search then looped over four million
/// blocks (over 10 s each under the fuzzer). Opening now refuses it.
const SIMHASH_BLOCKS_TIMEOUT: &[u8] = &[
    0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x80, 0x01, 0xb1, 0xc4, 0x91, 0xc3, 0x53, 0x00, 0x00,
    0x00, 0x01, 0x80, 0x60, 0x00, 0x00, 0x10, 0x08, 0x01, 0xbe, 0xf6, 0xf6, 0x01, 0x01,
];

#[test]
fn settings_with_an_impossible_simhash_block_count_are_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let payload = &SIMHASH_BLOCKS_TIMEOUT[1..];
    // The payload's tail: simhash_blocks = Some(varint be f6 f6 01), then
    // store_text = true.
    let (head, tail) = payload.split_at(payload.len() - 6);
    assert_eq!(tail, [0x01, 0xbe, 0xf6, 0xf6, 0x01, 0x01]);
    let with_blocks = |blocks: &[u8]| {
        let mut p = head.to_vec();
        p.extend_from_slice(blocks);
        p.push(0x01);
        frame(Tag::Config, &p)
    };
    let cases: [(&str, Vec<u8>, Option<u32>); 5] = [
        ("fuzz", frame(Tag::Config, payload), Some(4_045_630)),
        ("zero", with_blocks(&[0x01, 0x00]), Some(0)),
        ("nine", with_blocks(&[0x01, 0x09]), Some(9)),
        ("eight", with_blocks(&[0x01, 0x08]), None),
        ("none", with_blocks(&[0x00]), None),
    ];
    for (name, record, refused) in cases {
        let path = dir.path().join(format!("{name}.lshdb"));
        with_settings_record(&path, &record);
        match (Database::open(&path), refused) {
            (Err(Error::Corrupted(msg)), Some(blocks)) => {
                assert!(msg.contains(&format!("{blocks} SimHash blocks")), "{msg}");
            }
            (Ok(db), None) => {
                // The largest valid count (distance 7) and none work.
                let text = "the quick brown fox jumps over the lazy dog";
                db.insert("a", text).unwrap();
                let hits = db.query(text).threshold(0.5).run().unwrap().hits;
                assert_eq!(hits.len(), 1);
                if db.settings().simhash_blocks.is_some() {
                    let (near, _) = db
                        .query("the quick brown fox jumps")
                        .near_simhash(7)
                        .unwrap();
                    assert!(near.len() <= 1);
                }
            }
            (other, _) => panic!("{name}: {other:?}"),
        }
    }
}
