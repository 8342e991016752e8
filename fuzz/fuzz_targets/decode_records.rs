//! Every decoder of stored records on arbitrary bytes: `unframe`,
//! `decode_set`, `decode_signature`, `peek_set_len`, `decode_doc` and
//! `decode_settings`. None may panic; whatever decodes must re-encode to a
//! record that decodes to the same value (for the codec's own records, to
//! the very same bytes: their encodings are canonical).
//!
//! The input is tried twice: as it is (almost always a checksum failure),
//! and — so that the fuzzer reaches the payload parsers without forging
//! CRC-32s — its first byte picks a record tag and the rest is wrapped in a
//! valid frame of that tag.
//!
//! Settings that decode are then planted in a real database image and used:
//! open, insert, query, SimHash search and `check` must not panic or hang
//! on any settings record a damaged or crafted file could hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lshdb::store::codec::{
    decode_doc, decode_set, decode_signature, encode_doc, encode_set, encode_signature, frame,
    peek_set_len, unframe, SignatureRecord, Tag,
};
use lshdb::store::meta::{decode_settings, encode_settings};
use lshdb::{Builder, Config, Database, Settings};
use std::sync::OnceLock;

const TAGS: [Tag; 4] = [Tag::Config, Tag::Doc, Tag::Set, Tag::Signature];

fuzz_target!(|data: &[u8]| {
    check(data);
    if let Some((&selector, payload)) = data.split_first() {
        let tag = TAGS[usize::from(selector) % TAGS.len()];
        check(&frame(tag, payload));
    }
});

fn check(bytes: &[u8]) {
    for tag in TAGS {
        if let Ok(payload) = unframe(tag, bytes) {
            assert_eq!(frame(tag, payload), bytes, "frame(unframe(x)) != x");
        }
    }

    if let Ok(set) = decode_set(bytes) {
        assert!(set.windows(2).all(|w| w[0] < w[1]), "set not increasing");
        let again = encode_set(&set);
        assert_eq!(decode_set(&again).ok().as_ref(), Some(&set));
        assert_eq!(again, bytes, "set encoding not canonical");
    }

    let mut sig = SignatureRecord::default();
    let sig_ok = decode_signature(bytes, &mut sig).is_ok();
    let peeked = peek_set_len(bytes);
    if sig_ok {
        assert_eq!(peeked.ok(), Some(sig.set_len), "peek_set_len disagrees");
        let again = encode_signature(sig.set_len, sig.simhash, &sig.values);
        let mut back = SignatureRecord::default();
        assert!(decode_signature(&again, &mut back).is_ok());
        assert_eq!(back, sig);
        assert_eq!(again, bytes, "signature encoding not canonical");
    }

    if let Ok(doc) = decode_doc(bytes) {
        let again = encode_doc(&doc);
        assert_eq!(decode_doc(&again).ok().as_ref(), Some(&doc));
        assert_eq!(again, bytes, "document encoding not canonical");
    }

    if let Ok(settings) = decode_settings(bytes) {
        let again = encode_settings(&settings).expect("decoded settings re-encode");
        let back = decode_settings(&again).expect("re-encoded settings decode");
        assert!(same_settings(&settings, &back), "{settings:?} != {back:?}");
        exercise_settings(bytes);
    }
}

/// Equality with the threshold compared by bits (it may be a NaN).
fn same_settings(a: &Settings, b: &Settings) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    let bits = (a.threshold.to_bits(), b.threshold.to_bits());
    a.threshold = 0.0;
    b.threshold = 0.0;
    bits.0 == bits.1 && a == b
}

/// Opens a database image whose settings record is `record` and uses it.
fn exercise_settings(record: &[u8]) {
    let image = planted_image(record);
    let Ok(mut db) = small_cache().open_with_backend(MemBackend::new(image)) else {
        return;
    };
    let text = "the quick brown fox jumps over the lazy dog";
    let _ = db.insert("fuzz", text);
    let _ = db.insert_items("items", &[b"a".as_slice(), b"b"]);
    let _ = db.query(text).run();
    let _ = db.query(text).threshold(0.5).limit(3).run();
    let _ = db.query_key("fuzz").run();
    for distance in [0, 1, 3, 7, 64] {
        let _ = db.query(text).near_simhash(distance);
    }
    let _ = db.get("fuzz");
    let _ = db.for_each(|_| true);
    let _ = db.pairs(0.5, |_| true);
    let _ = db.groups(0.5);
    let _ = db.stats_deep();
    let _ = db.check_pages();
    let _ = db.remove("fuzz");
}

fn small_cache() -> Builder {
    Database::builder().cache_bytes(1 << 20)
}

/// A fresh database image (made once) with `meta["settings"]` replaced by
/// `record`, written through redb so that redb's own checks pass.
fn planted_image(record: &[u8]) -> Vec<u8> {
    static TEMPLATE: OnceLock<Vec<u8>> = OnceLock::new();
    let template = TEMPLATE.get_or_init(|| {
        let backend = MemBackend::new(Vec::new());
        let db = Database::builder().create_with_backend(backend.clone(), Config::jaccard(0.5).simhash(3))
            .expect("create the template database");
        drop(db);
        backend.image()
    });
    let backend = MemBackend::new(template.clone());
    let db = redb::Database::builder()
        .create_with_backend(backend.clone())
        .expect("open the template with redb");
    let txn = db.begin_write().expect("begin write");
    {
        let meta: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
        let mut table = txn.open_table(meta).expect("open meta");
        table.insert("settings", record).expect("plant settings");
    }
    txn.commit().expect("commit");
    drop(db);
    backend.image()
}

#[path = "common/mem_backend.rs"]
mod mem_backend;
use mem_backend::MemBackend;
