//! Files of formats 2 and 3 read as they are and upgraded to the current
//! format (5) by the first open for writing; old and new records then live side by side
//! through every operation. Format 2's signature records hold 128 MinHash
//! values (format 3 stops storing them); formats 2 and 3 index keys in a
//! `keys` table, which the upgrade replaces by key postings (format 4),
//! and key their run blocks by their first posting in `run_blocks`, which
//! the upgrade moves to `run_blocks_by_last` (format 5).
//!
//! `tests/fixtures/format-v2.lshdb` was written by lshdb at commit 06ff7c9
//! (the last build writing format 2), `tests/fixtures/format-v3.lshdb` at
//! commit eb21e69 (the last build writing format 3), each then compacted
//! page by page with redb's `Database::compact` (its lshdb contents
//! untouched), by:
//!
//! ```text
//! let config = Config::jaccard(0.6).bands(25, 5).simhash(3).store_text(true);
//! let mut db = Database::create(&path, config)?;
//! db.insert_bulk(docs /* text(f, m) as "f{f}-m{m}", f < 8, m < 5 */,
//!                &BulkOptions::default().batch(8), |_| true)?;   // 2 runs
//! db.remove("f1-m0")?;                                          // a dead id
//! db.insert("single", SINGLE)?;                                 // fresh postings
//! db.insert_items("items", &["milk", "bread", "eggs"])?;
//! ```
//!
//! Never regenerate them to make this test pass.

mod common;

use lshdb::shingle::Shingler;
use lshdb::sketch::measures::jaccard;
use lshdb::store::codec::{decode_signature, SignatureRecord};
use lshdb::store::schema::{DOCS, SIGS};
use lshdb::{Config, Database};
use redb::{ReadableDatabase, ReadableTable};
use std::path::{Path, PathBuf};

const SINGLE: &str = "a document written on its own, into the fresh postings";

fn text(f: usize, m: usize) -> String {
    format!(
        "family {f} shares this long sentence about posting runs and merges, with words \
         alpha beta gamma delta epsilon zeta {f} eta theta; member {m} differs here {}",
        "x".repeat(m % 3)
    )
}

/// A copy of the format-`version` fixture in `dir`.
fn fixture_copy(dir: &Path, version: u32) -> PathBuf {
    let name = format!("format-v{version}.lshdb");
    let path = dir.join(&name);
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::copy(source, &path).unwrap();
    path
}

/// Whether the file has a `keys` table (formats 1 to 3).
fn has_keys_table(path: &Path) -> bool {
    has_table(path, "keys")
}

/// Whether the file has a table named `name`.
fn has_table(path: &Path, name: &str) -> bool {
    let db = redb::Database::open(path).unwrap();
    let read = db.begin_read().unwrap();
    use redb::TableHandle;
    let names: Vec<String> = read
        .list_tables()
        .unwrap()
        .map(|t| t.name().to_owned())
        .collect();
    names.iter().any(|n| n == name)
}

use common::format_version;

/// Every stored signature record, by id.
fn signature_records(path: &Path) -> Vec<(u64, SignatureRecord)> {
    let db = redb::Database::open(path).unwrap();
    let read = db.begin_read().unwrap();
    let sigs = read.open_table(SIGS).unwrap();
    sigs.iter()
        .unwrap()
        .map(|entry| {
            let (id, bytes) = entry.unwrap();
            let mut record = SignatureRecord::default();
            decode_signature(bytes.value(), &mut record).unwrap();
            (id.value(), record)
        })
        .collect()
}

/// Sorted (a, b) key pairs, a < b.
type KeyPairs = Vec<(String, String)>;

/// Pairs from the index, and exactly, as sorted (a, b) key pairs.
fn both_pairs(db: &Database, t: f64) -> (KeyPairs, KeyPairs) {
    let collect = |exact: bool| {
        let mut out = Vec::new();
        let emit = |p: lshdb::Pair| {
            let (a, b) = if p.a < p.b { (p.a, p.b) } else { (p.b, p.a) };
            out.push((a, b));
            true
        };
        if exact {
            db.exact_pairs(t, emit).unwrap();
        } else {
            db.pairs(t, emit).unwrap();
        }
        out.sort();
        out
    };
    (collect(false), collect(true))
}

/// The keys a query of `text` finds at the database's threshold.
fn keys_of(db: &Database, text: &str) -> Vec<String> {
    common::found_keys(db, text, None)
}

/// [`keys_of`], checked against an exhaustive search over the stored sets
/// (at 25 × 5 bands and t = 0.6 these documents are far enough above the
/// threshold that LSH finds every one).
fn hit_keys(db: &Database, text: &str) -> Vec<String> {
    let keys = keys_of(db, text);
    let query = Shingler::new(Default::default()).unwrap().set(text);
    let t = db.settings().threshold;
    let mut brute = Vec::new();
    db.for_each(|doc| {
        if jaccard(query.as_slice(), &doc.shingles) >= t {
            brute.push(doc.key);
        }
        true
    })
    .unwrap();
    brute.sort();
    assert_eq!(keys, brute, "query {text:?}");
    keys
}

/// A new database of `config` holding the same documents as `db` (by their
/// stored shingle sets): its signatures and band keys are computed afresh.
fn twin(db: &Database, path: &Path, config: Config) -> Database {
    let fresh = Database::create(path, config).unwrap();
    let mut docs = Vec::new();
    db.for_each(|doc| {
        docs.push((doc.key, doc.shingles));
        true
    })
    .unwrap();
    for (key, set) in &docs {
        fresh
            .insert(key, lshdb::Document::Shingles(set.as_slice()))
            .unwrap();
    }
    fresh
}

#[test]
fn a_format_2_file_is_read_as_it_is_and_upgraded_on_write() {
    read_as_it_is_and_upgraded_on_write(2);
}

#[test]
fn a_format_3_file_is_read_as_it_is_and_upgraded_on_write() {
    read_as_it_is_and_upgraded_on_write(3);
}

/// `tests/fixtures/format-v4.lshdb` was written by the `lshdb` CLI at
/// commit f49628e (the last build writing format 4: run blocks keyed by
/// their first posting, keys indexed by key postings in the runs), then
/// compacted as the others, by:
///
/// ```text
/// lshdb create F --threshold 0.6 --bands 25 --rows 5 --simhash --store-text
/// lshdb add F --jsonl FAMILIES --batch 8   # text(f, m) as "f{f}-m{m}", f < 8, m < 5
/// lshdb remove F f1-m0
/// lshdb add F --text-stdin single          # SINGLE on standard input
/// ```
///
/// Never regenerate it to make this test pass.
#[test]
fn a_format_4_file_is_read_as_it_is_and_its_blocks_move_on_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), 4);
    assert!(
        has_table(&path, "run_blocks"),
        "blocks keyed by their first posting"
    );
    assert!(!has_table(&path, "run_blocks_by_last"));
    assert!(!has_keys_table(&path));
    let answers = |db: &Database| {
        assert_eq!(db.len().unwrap(), 40);
        // Key look-ups read the key postings in the runs.
        assert!(db.get("f1-m0").unwrap().is_none()); // removed
        assert!(db.contains("f3-m2").unwrap());
        assert_eq!(db.get("single").unwrap().unwrap().key, "single");
        let found = hit_keys(db, &text(2, 1));
        assert!(found.contains(&"f2-m1".to_owned()), "{found:?}");
        assert!(!hit_keys(db, &text(1, 1)).contains(&"f1-m0".to_owned()));
        assert_eq!(hit_keys(db, SINGLE), ["single"]);
        let (lsh, exact) = both_pairs(db, 0.6);
        assert_eq!(lsh, exact);
        assert!(lsh.len() > 7 * 10 + 6, "{}", lsh.len());
        assert!(db.check().unwrap().is_clean(), "{:?}", db.check().unwrap());
        (
            lsh,
            (0..8).map(|f| keys_of(db, &text(f, 3))).collect::<Vec<_>>(),
        )
    };

    // Read-only: answers, and the file stays as it is, byte for byte.
    let before = std::fs::read(&path).unwrap();
    let read_only = {
        let db = Database::builder().read_only(true).open(&path).unwrap();
        answers(&db)
    };
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(format_version(&path), 4);

    // Opened for writing: every block moves under its last posting, and
    // the file answers as before, then takes writes and merges.
    drop(Database::open(&path).unwrap());
    assert_eq!(format_version(&path), lshdb::FORMAT_VERSION);
    assert!(!has_table(&path, "run_blocks"));
    assert!(has_table(&path, "run_blocks_by_last"));
    let mut db = Database::open(&path).unwrap();
    assert_eq!(answers(&db), read_only);
    db.insert("f2-new", &text(2, 7)).unwrap();
    assert!(db.remove("f2-m1").unwrap());
    let found = hit_keys(&db, &text(2, 0));
    assert!(found.contains(&"f2-new".to_owned()));
    assert!(!found.contains(&"f2-m1".to_owned()));
    db.compact().unwrap();
    assert!(db.check_pages().unwrap().is_clean());
    assert_eq!(hit_keys(&db, &text(2, 0)), found);
    assert_eq!(hit_keys(&db, SINGLE), ["single"]);
}

fn read_as_it_is_and_upgraded_on_write(version: u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), version);
    let records = signature_records(&path);
    // Format 2 stores the values, format 3 none.
    let values = if version == 2 { 128 } else { 0 };
    assert_eq!(records.len(), 41);
    assert!(records.iter().all(|(_, r)| r.values.len() == values));
    assert!(has_keys_table(&path));
    assert!(
        has_table(&path, "run_blocks"),
        "blocks keyed by their first posting"
    );

    // Read-only: answers, and the file stays as it is, byte for byte.
    let before = std::fs::read(&path).unwrap();
    {
        let db = Database::builder().read_only(true).open(&path).unwrap();
        assert_eq!(db.len().unwrap(), 41);
        let found = hit_keys(&db, &text(1, 1));
        assert!(found.contains(&"f1-m1".to_owned()));
        assert!(!found.contains(&"f1-m0".to_owned())); // removed
        assert_eq!(hit_keys(&db, SINGLE), ["single"]);
        let hits = db
            .query_items(&["bread", "eggs", "milk"])
            .run()
            .unwrap()
            .hits;
        assert_eq!((hits[0].key.as_str(), hits[0].similarity), ("items", 1.0));
        let (lsh, exact) = both_pairs(&db, 0.6);
        assert_eq!(lsh, exact);
        assert!(lsh.len() > 7 * 10 + 6, "{}", lsh.len());
        assert!(db.check().unwrap().is_clean());
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(format_version(&path), version);

    // Opened for writing: upgraded to the current format first (its keys table
    // replaced by key postings); old records keep their values, new ones
    // hold none, and every operation sees both.
    drop(Database::open(&path).unwrap());
    assert_eq!(format_version(&path), lshdb::FORMAT_VERSION);
    assert!(!has_table(&path, "run_blocks"));
    assert!(has_table(&path, "run_blocks_by_last"));
    assert!(!has_keys_table(&path));
    let db = Database::open(&path).unwrap();
    assert!(db.check().unwrap().is_clean(), "{:?}", db.check().unwrap());
    assert_eq!(db.len().unwrap(), 41);
    assert_eq!(
        db.stats().unwrap().run_postings + db.stats().unwrap().fresh_postings,
        db.stats_deep().unwrap().deep.unwrap().postings + 41 + 25,
        "band postings, 41 key postings, 25 dead ones"
    );
    assert!(db.get("f1-m0").unwrap().is_none()); // removed before
    assert!(db.get("f1-m1").unwrap().is_some());
    assert!(db.remove("f2-m1").unwrap()); // postings in a run
    assert!(db.remove("single").unwrap()); // postings in the fresh table
    db.insert("f2-new", &text(2, 7)).unwrap();
    db.insert("f3-m4", &text(3, 9)).unwrap(); // replaces an old record
    assert!(db.check().unwrap().is_clean(), "{:?}", db.check().unwrap());
    assert_eq!(hit_keys(&db, SINGLE), Vec::<String>::new());
    let found = hit_keys(&db, &text(2, 0));
    assert!(found.contains(&"f2-new".to_owned()));
    assert!(!found.contains(&"f2-m1".to_owned()));
    let (lsh, exact) = both_pairs(&db, 0.6);
    assert_eq!(lsh, exact);

    drop(db);
    let records = signature_records(&path);
    let lean = records.iter().filter(|(_, r)| r.values.is_empty()).count();
    assert_eq!(
        (records.len(), lean),
        (40, if version == 2 { 2 } else { 40 })
    );
    let mut db = Database::open(&path).unwrap();

    // Re-banding and compaction rebuild the postings from both kinds: the
    // file then answers exactly as a new file of the same documents does.
    db.reband(0.8, Some((16, 8))).unwrap();
    assert!(db.check().unwrap().is_clean());
    let config = Config::jaccard(0.8)
        .bands(16, 8)
        .simhash(3)
        .store_text(true);
    let fresh = twin(&db, &dir.path().join("twin.lshdb"), config);
    for f in 0..8 {
        assert_eq!(keys_of(&db, &text(f, 0)), keys_of(&fresh, &text(f, 0)));
    }
    assert_eq!(both_pairs(&db, 0.8).0, both_pairs(&fresh, 0.8).0);
    db.compact().unwrap();
    assert!(db.check_pages().unwrap().is_clean());
    assert_eq!(both_pairs(&db, 0.8).0, both_pairs(&fresh, 0.8).0);
    assert_eq!(keys_of(&db, &text(4, 0)), keys_of(&fresh, &text(4, 0)));
}

#[test]
fn new_signature_records_hold_the_set_size_and_no_values() {
    let (_dir, path, db) = common::new_db_at("v3.lshdb", Config::jaccard(0.8));
    db.insert("a", "The quick brown fox jumps over the lazy dog")
        .unwrap();
    drop(db);
    let db = redb::Database::open(&path).unwrap();
    let read = db.begin_read().unwrap();
    let sigs = read.open_table(SIGS).unwrap();
    let (_, bytes) = sigs.iter().unwrap().next().unwrap().unwrap();
    let bytes = bytes.value().to_vec();
    // Frame (tag 4, CRC-32), set_len 39 (u32 LE), no SimHash, count 0.
    assert_eq!(bytes[0], 4);
    assert_eq!(&bytes[5..], &[39, 0, 0, 0, 0, 0, 0, 0, 0]);
    let mut record = SignatureRecord::default();
    decode_signature(&bytes, &mut record).unwrap();
    assert_eq!((record.set_len, record.values.len()), (39, 0));
}

#[test]
fn check_finds_stored_values_that_do_not_match_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), 2);
    // Give one old record another document's values (valid frame).
    let records = signature_records(&path);
    let (victim, _) = records[3].clone();
    let (_, other) = records[20].clone();
    let victim_record = &records[3].1;
    let forged = lshdb::store::codec::encode_signature(
        victim_record.set_len,
        victim_record.simhash,
        &other.values,
    );
    {
        let db = redb::Database::open(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(SIGS)
            .unwrap()
            .insert(victim, forged.as_slice())
            .unwrap();
        txn.commit().unwrap();
    }
    let db = Database::builder().read_only(true).open(&path).unwrap();
    let report = db.check().unwrap();
    let all = report.problems.join("\n");
    assert!(
        all.contains(&format!(
            "stored signature of document {victim} does not match its shingle set"
        )),
        "{all}"
    );
}

/// The upgrade to format 4 reads every document record; a damaged one
/// makes the open for writing fail with `Corrupted`, and the upgrade's one
/// transaction is not committed: the file stays format 3 with its keys
/// table, readable read-only, and `export --salvage` gets the rest out.
#[test]
fn a_damaged_record_fails_the_upgrade_and_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), 3);
    {
        let db = redb::Database::open(&path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut docs = txn.open_table(DOCS).unwrap();
            let (id, mut bytes) = {
                let (id, bytes) = docs.iter().unwrap().nth(5).unwrap().unwrap();
                (id.value(), bytes.value().to_vec())
            };
            let at = bytes.len() - 1;
            bytes[at] ^= 0x20;
            docs.insert(id, bytes.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    match Database::open(&path) {
        Err(lshdb::Error::Corrupted(what)) => assert!(what.contains("document"), "{what}"),
        other => panic!("expected Corrupted, got {:?}", other.map(|_| ())),
    }
    // The upgrade's transaction was not committed (redb itself may still
    // rewrite its own header on close, so bytes are not compared).
    assert_eq!(format_version(&path), 3);
    assert!(has_keys_table(&path));
    let db = Database::builder().read_only(true).open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 41);
    let (mut good, mut bad) = (0, 0);
    db.for_each_salvage(
        |_| {
            good += 1;
            true
        },
        |_| bad += 1,
    )
    .unwrap();
    assert_eq!((good, bad), (40, 1));
}

/// A damaged run block fails the upgrade to format 5 as a damaged record
/// does: nothing of it is committed, and the file stays at format 4 with
/// its first-keyed blocks, readable read-only.
#[test]
fn a_damaged_block_fails_the_upgrade_and_leaves_the_file_as_it_was() {
    const OLD_BLOCKS: redb::TableDefinition<(u32, u32, u64, u64), &[u8]> =
        redb::TableDefinition::new("run_blocks");
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), 4);
    {
        let db = redb::Database::open(&path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut blocks = txn.open_table(OLD_BLOCKS).unwrap();
            let (key, mut bytes) = {
                let (key, bytes) = blocks.iter().unwrap().nth(3).unwrap().unwrap();
                (key.value(), bytes.value().to_vec())
            };
            let at = bytes.len() - 1;
            bytes[at] ^= 0x20;
            blocks.insert(key, bytes.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    match Database::open(&path) {
        Err(lshdb::Error::Corrupted(what)) => assert!(what.contains("run "), "{what}"),
        other => panic!("expected Corrupted, got {:?}", other.map(|_| ())),
    }
    assert_eq!(format_version(&path), 4);
    assert!(has_table(&path, "run_blocks"));
    assert!(!has_table(&path, "run_blocks_by_last"));
    let db = Database::builder().read_only(true).open(&path).unwrap();
    assert_eq!(db.len().unwrap(), 40);
}
