//! Bad input gets a typed error and leaves the database exactly as it was:
//! empty documents, thresholds outside (0, 1), impossible banding, keys and
//! documents outside the limits, and files that are not (this version's)
//! lshdb databases. Also what is *not* an error: texts shorter than k and
//! arbitrary bytes as items.

mod common;

use lshdb::store::schema::REDB_MAGIC;
use lshdb::{Config, Database, Error, MAX_DOCUMENT_BYTES, MAX_KEY_BYTES};
use redb::{ReadableDatabase, TableDefinition};
use std::path::{Path, PathBuf};

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

const TEXT_A: &str = "The quick brown fox jumps over the lazy dog near the river bank";
const TEXT_B: &str = "The quick brown fox jumped over the lazy dog near the river bank";

/// What must not change: the length, a query's answer, the file's bytes.
#[derive(Debug, PartialEq)]
struct State {
    len: u64,
    hits: Vec<(String, u64)>,
    documents: u64,
    /// Length and a hash of the file's bytes (the bytes themselves would
    /// make failure messages unreadable).
    file: (usize, u64),
}

fn fingerprint(path: &Path) -> (usize, u64) {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let bytes = std::fs::read(path).unwrap();
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    (bytes.len(), hasher.finish())
}

fn state(db: &Database) -> State {
    State {
        len: db.len().unwrap(),
        hits: db
            .query(TEXT_A)
            .threshold(0.5)
            .run()
            .unwrap()
            .hits
            .into_iter()
            .map(|h| (h.key, h.similarity.to_bits()))
            .collect(),
        documents: db.stats().unwrap().documents,
        file: fingerprint(db.path()),
    }
}

/// A database `bad.lshdb` holding "a" and "b", in a new temporary folder
/// (keep it).
fn fixture() -> (tempfile::TempDir, Database) {
    let (dir, db) = common::new_db("bad.lshdb", Config::jaccard(0.8));
    db.insert("a", TEXT_A).unwrap();
    db.insert("b", TEXT_B).unwrap();
    let s = state(&db);
    assert_eq!(s.len, 2);
    assert_eq!(s.hits.len(), 2);
    (dir, db)
}

fn is_invalid(result: lshdb::Result<impl std::fmt::Debug>, name: &str) -> bool {
    match result {
        Err(Error::InvalidParameter { name: n, reason }) => {
            assert_eq!(n, name, "{reason}");
            assert!(!reason.is_empty());
            true
        }
        other => panic!("expected InvalidParameter({name}), got {other:?}"),
    }
}

#[test]
fn empty_documents_are_rejected() {
    let (_dir, db) = fixture();
    let before = state(&db);
    for text in ["", " ", "  \t\n\r\n  ", "\u{2003}\u{3000}"] {
        let empty =
            |r: lshdb::Result<_>| matches!(r, Err(Error::EmptyDocument { key }) if key == "e");
        assert!(empty(db.insert("e", text)), "{text:?}");
        assert!(empty(db.insert_unique("e", text, 0.8).map(|_| ())));
        let mut batch = db.batch().unwrap();
        assert!(empty(batch.insert("e", text)));
        // The batch is still usable after a rejected document.
        batch.insert("fine", "a perfectly fine document").unwrap();
        batch.abort().unwrap();
        assert!(matches!(
            db.query(text).run(),
            Err(Error::EmptyDocument { .. })
        ));
        // Replacing an existing document with nothing is refused too.
        assert!(matches!(
            db.insert("a", text),
            Err(Error::EmptyDocument { key }) if key == "a"
        ));
    }
    let no_items: &[&[u8]] = &[];
    assert!(matches!(
        db.insert_items("e", no_items),
        Err(Error::EmptyDocument { .. })
    ));
    assert!(matches!(
        db.query_items(no_items).run(),
        Err(Error::EmptyDocument { .. })
    ));
    let err = db.insert("e", "").unwrap_err();
    assert!(err.to_string().contains("`e` is empty"), "{err}");
    assert_eq!(state(&db), before);
    // Not poisoned: rejected input is not a storage failure.
    db.insert("c", "still writable afterwards").unwrap();
    assert_eq!(db.len().unwrap(), 3);
}

#[test]
fn thresholds_outside_zero_one_are_rejected() {
    let (dir, mut db) = fixture();
    let before = state(&db);
    for t in [0.0, 1.0, -1.0, f64::NAN, 1.5, f64::INFINITY, -0.0] {
        let path = dir.path().join(format!("never-{}.lshdb", t.to_bits()));
        assert!(is_invalid(
            Database::create(&path, Config::jaccard(t)),
            "threshold"
        ));
        assert!(!path.exists(), "a refused create left a file behind");
        assert!(is_invalid(Config::jaccard(t).resolve(), "threshold"));
        // A query may ask for 1: exact duplicates (tests/query_types.rs).
        if t != 1.0 {
            assert!(is_invalid(db.query(TEXT_A).threshold(t).run(), "threshold"));
            assert!(is_invalid(
                db.query_key("a").threshold(t).run(),
                "threshold"
            ));
            assert!(is_invalid(
                db.query_items(&["x"]).threshold(t).run(),
                "threshold"
            ));
        }
        assert!(is_invalid(db.insert_unique("new", TEXT_A, t), "threshold"));
        let mut batch = db.batch().unwrap();
        assert!(is_invalid(
            batch.insert_unique("new", TEXT_A, t),
            "threshold"
        ));
        batch.abort().unwrap();
        assert!(is_invalid(db.pairs(t, |_| true), "threshold"));
        assert!(is_invalid(db.groups(t), "threshold"));
        assert!(is_invalid(db.reband(t, None), "threshold"));
        assert!(is_invalid(db.reband(t, Some((16, 8))), "threshold"));
    }
    assert!(!db.contains("new").unwrap());
    assert_eq!(db.settings(), &Config::jaccard(0.8).resolve().unwrap());
    assert_eq!(state(&db), before);
    assert!(db.check_pages().unwrap().is_clean());
}

#[test]
fn rejected_calls_leave_the_file_bytes_unchanged() {
    let (_dir, mut db) = fixture();
    let before = state(&db);
    assert!(is_invalid(
        db.query(TEXT_A).threshold(1.5).run(),
        "threshold"
    ));
    assert!(is_invalid(
        db.insert_unique("n", TEXT_A, f64::NAN),
        "threshold"
    ));
    assert!(is_invalid(db.reband(0.0, None), "threshold"));
    assert!(is_invalid(db.reband(0.8, Some((17, 8))), "bands"));
    assert!(matches!(
        db.insert("", TEXT_A),
        Err(Error::InvalidKey { .. })
    ));
    assert!(matches!(
        db.insert("n", "  "),
        Err(Error::EmptyDocument { .. })
    ));
    assert_eq!(state(&db), before);
}

#[test]
fn banding_larger_than_the_signature_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.lshdb");
    assert!(is_invalid(
        Database::create(&path, Config::jaccard(0.8).bands(17, 8)),
        "bands"
    ));
    assert!(is_invalid(
        Database::create(&path, Config::jaccard(0.8).num_perm(64).bands(16, 8)),
        "bands"
    ));
    assert!(is_invalid(
        Database::create(&path, Config::jaccard(0.8).bands(0, 8)),
        "bands"
    ));
    assert!(is_invalid(
        Database::create(&path, Config::jaccard(0.8).bands(8, 0)),
        "rows"
    ));
    assert!(!path.exists());
    // Exactly num_perm is fine.
    let mut db = Database::create(&path, Config::jaccard(0.8).bands(16, 8)).unwrap();
    db.insert("a", TEXT_A).unwrap();
    let before = state(&db);
    assert!(is_invalid(db.reband(0.8, Some((16, 9))), "bands"));
    assert!(is_invalid(db.reband(0.8, Some((129, 1))), "bands"));
    assert!(is_invalid(db.reband(0.8, Some((0, 1))), "bands"));
    assert_eq!((db.settings().bands, db.settings().rows), (16, 8));
    assert_eq!(state(&db), before);
    db.reband(0.8, Some((128, 1))).unwrap();
    assert_eq!(db.query(TEXT_A).run().unwrap().hits[0].key, "a");
}

#[test]
fn keys_outside_the_limits_are_rejected() {
    let (_dir, db) = fixture();
    let before = state(&db);
    let too_long = "k".repeat(MAX_KEY_BYTES + 1);
    // 2-byte characters: MAX_KEY_BYTES / 2 + 1 of them is one byte too many.
    let too_long_utf8 = "é".repeat(MAX_KEY_BYTES / 2 + 1);
    for (key, len) in [
        ("", 0),
        (too_long.as_str(), MAX_KEY_BYTES + 1),
        (too_long_utf8.as_str(), MAX_KEY_BYTES + 2),
    ] {
        let bad = |r: lshdb::Result<()>| matches!(r, Err(Error::InvalidKey { len: l, max: MAX_KEY_BYTES }) if l == len);
        assert!(common::write_every_way(&db, key, TEXT_A)
            .into_iter()
            .all(bad));
        assert!(!db.contains(key).unwrap());
    }
    assert_eq!(state(&db), before);
    let msg = db.insert("", TEXT_A).unwrap_err().to_string();
    assert!(
        msg.contains(&format!("1 to {MAX_KEY_BYTES} bytes")),
        "{msg}"
    );

    // Exactly the limit is accepted, in bytes.
    let max = "m".repeat(MAX_KEY_BYTES);
    let max_utf8 = "é".repeat(MAX_KEY_BYTES / 2);
    db.insert(&max, TEXT_A).unwrap();
    db.insert_items(&max_utf8, &["x"]).unwrap();
    assert_eq!(db.get(&max).unwrap().unwrap().key, max);
    assert!(db.contains(&max_utf8).unwrap());
    let hits = db.query(TEXT_A).run().unwrap().hits;
    assert!(hits.iter().any(|h| h.key == max && h.similarity == 1.0));
    assert!(db.remove(&max).unwrap());
    assert_eq!(db.len().unwrap(), 3);
}

#[test]
fn documents_above_the_size_limit_are_rejected() {
    let (_dir, db) = fixture();
    let before = state(&db);
    let huge = "a".repeat(MAX_DOCUMENT_BYTES + 1);
    let too_large = |r: lshdb::Result<()>| {
        matches!(r, Err(Error::DocumentTooLarge { key, len, max: MAX_DOCUMENT_BYTES })
            if key == "big" && len == MAX_DOCUMENT_BYTES + 1)
    };
    assert!(too_large(db.insert("big", huge.as_str())));
    assert!(too_large(
        db.insert_unique("big", huge.as_str(), 0.5).map(|_| ())
    ));
    // Items count their total bytes.
    let half = vec![0u8; MAX_DOCUMENT_BYTES / 2];
    let items: [&[u8]; 3] = [&half, &half, b"x"];
    assert!(too_large(db.insert_items("big", &items)));
    assert!(matches!(
        db.query(&huge).run(),
        Err(Error::DocumentTooLarge { .. })
    ));
    assert_eq!(state(&db), before);
}

#[test]
fn text_shorter_than_k_is_one_shingle() {
    let (_dir, db) = common::new_db("short.lshdb", Config::jaccard(0.8));
    db.insert("editor", "vim").unwrap();
    assert_eq!(db.get("editor").unwrap().unwrap().shingles, 1);
    for query in ["Vim", "vim", "  VIM\n"] {
        let hits = db.query(query).run().unwrap().hits;
        assert_eq!(hits.len(), 1, "{query:?}");
        assert_eq!((hits[0].key.as_str(), hits[0].similarity), ("editor", 1.0));
    }
    for query in ["vi", "vimm", "neovim"] {
        assert!(
            db.query(query)
                .threshold(0.01)
                .run()
                .unwrap()
                .hits
                .is_empty(),
            "{query:?}"
        );
    }
}

#[test]
fn arbitrary_bytes_are_valid_items() {
    let (_dir, db) = common::new_db("bytes.lshdb", Config::jaccard(0.5));
    let items: [&[u8]; 5] = [b"\0", b"\xff\xfe\xfd", b"", b"abc\0def", &[0x80, 0, 0xff]];
    db.insert_items("bin", &items).unwrap();
    assert_eq!(db.get("bin").unwrap().unwrap().shingles, 5);
    let hits = db.query_items(&items).run().unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].key.as_str(), hits[0].similarity), ("bin", 1.0));
    // 4 of the 5 items: J = 4/5.
    let hits = db.query_items(&items[1..]).run().unwrap().hits;
    assert_eq!(hits[0].similarity, 4.0 / 5.0);
    // Bytes are not normalised: 0xFF is not 0xFE.
    let other: [&[u8]; 1] = [b"\xff"];
    assert!(db
        .query_items(&other)
        .threshold(0.01)
        .run()
        .unwrap()
        .hits
        .is_empty());
}

fn not_a_database(path: &Path) -> String {
    match Database::open(path) {
        Err(Error::NotADatabase { path: p, reason }) => {
            assert_eq!(p, path);
            let msg = Database::open(path).unwrap_err().to_string();
            assert!(msg.contains("is not an lshdb database"), "{msg}");
            assert!(msg.contains(&reason), "{msg}");
            reason
        }
        other => panic!("{}: expected NotADatabase, got {other:?}", path.display()),
    }
}

#[test]
fn files_that_are_not_databases_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, bytes: &[u8]| -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    match Database::open(dir.path().join("missing.lshdb")) {
        Err(Error::Io { source, .. }) => assert_eq!(source.kind(), std::io::ErrorKind::NotFound),
        other => panic!("expected Io, got {other:?}"),
    }
    let empty = file("empty", b"");
    let text = file("text", b"hello, this is a text file\n");
    let truncated = file("truncated", &REDB_MAGIC[..5]);
    let plain = dir.path().join("plain.redb");
    {
        let db = redb::Database::create(&plain).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(TableDefinition::<&str, u64>::new("other"))
            .unwrap();
        txn.commit().unwrap();
    }
    let mut reasons = Vec::new();
    for path in [&empty, &text, &plain] {
        let before = fingerprint(path);
        reasons.push(not_a_database(path));
        if path != &plain {
            // Refused before anything opened them for writing. (redb itself
            // rewrites its header when it opens a file, so the plain redb
            // file is checked by opening it again instead.)
            assert_eq!(fingerprint(path), before, "{}", path.display());
        }
    }
    {
        let db = redb::Database::open(&plain).unwrap();
        let txn = db.begin_read().unwrap();
        txn.open_table(TableDefinition::<&str, u64>::new("other"))
            .unwrap();
    }
    assert_eq!(reasons[0], "the file is empty");
    assert!(
        reasons[2].contains("without lshdb metadata"),
        "{}",
        reasons[2]
    );
    let mut distinct = reasons.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{reasons:?}");
    // A file cut inside the magic number is a damaged database, refused
    // before anything opened it for writing; a folder is refused at once.
    let before = fingerprint(&truncated);
    match Database::open(&truncated) {
        Err(Error::Corrupted(what)) => assert!(what.contains("truncated"), "{what}"),
        other => panic!("expected Corrupted, got {other:?}"),
    }
    assert_eq!(fingerprint(&truncated), before);
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    assert_eq!(
        not_a_database(&dir.path().join("folder")),
        "it is a folder, not a database file"
    );

    // A meta table without lshdb's format record, and one with garbage.
    let no_format = dir.path().join("no-format.redb");
    let garbage = dir.path().join("garbage.redb");
    for (path, value) in [(&no_format, None), (&garbage, Some(&b"something else"[..]))] {
        let db = redb::Database::create(path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut meta = txn.open_table(META).unwrap();
            if let Some(v) = value {
                meta.insert("format", v).unwrap();
            }
        }
        txn.commit().unwrap();
    }
    let (a, b) = (not_a_database(&no_format), not_a_database(&garbage));
    assert_ne!(a, b);
    assert!(!reasons.contains(&a) && !reasons.contains(&b));
}

#[test]
fn create_refuses_an_existing_path() {
    let (dir, db) = fixture();
    let path = db.path().to_owned();
    drop(db);
    let before = fingerprint(&path);
    match Database::create(&path, Config::jaccard(0.8)) {
        Err(Error::FileExists { path: p }) => assert_eq!(p, path),
        other => panic!("expected FileExists, got {other:?}"),
    }
    assert_eq!(fingerprint(&path), before);
    let other = dir.path().join("some file");
    std::fs::write(&other, b"precious").unwrap();
    assert!(matches!(
        Database::create(&other, Config::jaccard(0.8)),
        Err(Error::FileExists { .. })
    ));
    assert_eq!(std::fs::read(&other).unwrap(), b"precious");
    assert!(matches!(
        Database::create(dir.path(), Config::jaccard(0.8)),
        Err(Error::FileExists { .. })
    ));
    assert_eq!(Database::open(&path).unwrap().len().unwrap(), 2);
}

#[test]
fn expected_config_must_match_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cfg.lshdb");
    let config = Config::jaccard(0.8).store_text(true);
    drop(Database::create(&path, config.clone()).unwrap());
    let open = |c: Config| Database::builder().expect(c).open(&path);
    let mismatch = |c: Config, field: &str| match open(c) {
        Err(err @ Error::ConfigMismatch { .. }) => {
            let msg = err.to_string();
            let Error::ConfigMismatch {
                field: f,
                stored,
                given,
            } = err
            else {
                unreachable!()
            };
            assert_eq!(f, field);
            assert_ne!(stored, given);
            assert!(msg.contains(field), "{msg}");
            (stored, given)
        }
        other => panic!("expected ConfigMismatch({field}), got {other:?}"),
    };
    let mut other_threshold = config.clone();
    other_threshold.threshold = 0.7;
    assert_eq!(
        mismatch(other_threshold, "threshold"),
        ("0.8".to_owned(), "0.7".to_owned())
    );
    mismatch(
        config
            .clone()
            .shingle(lshdb::shingle::ShingleKind::Chars(4)),
        "shingle",
    );
    mismatch(config.clone().num_perm(256), "minhash");
    mismatch(config.clone().bands(14, 9), "bands");
    mismatch(config.clone().simhash(2), "simhash_max_distance");
    mismatch(config.clone().store_text(false), "store_text");
    assert!(is_invalid(open(Config::jaccard(2.0)), "threshold"));
    // The matching configuration opens, and so does none.
    let db = open(config.clone()).unwrap();
    assert_eq!(db.settings(), &config.resolve().unwrap());
    drop(db);
    drop(
        Database::builder()
            .cache_bytes(1 << 20)
            .record_cache_bytes(0)
            .open(&path)
            .unwrap(),
    );
}

/// Overwrites `meta["format"]` with lshdb's magic and `version`.
fn set_format_version(path: &Path, version: u32) {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut meta = txn.open_table(META).unwrap();
        let mut value = b"lshdb\0\0\0".to_vec();
        value.extend_from_slice(&version.to_le_bytes());
        meta.insert("format", value.as_slice()).unwrap();
    }
    txn.commit().unwrap();
    // Sanity: the value is there.
    let read = db.begin_read().unwrap();
    let meta = read.open_table(META).unwrap();
    assert_eq!(meta.get("format").unwrap().unwrap().value().len(), 12);
}

#[test]
fn other_format_versions_are_refused_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.lshdb");
    drop(fixture_at(&path));
    set_format_version(&path, 6);
    match Database::open(&path) {
        Err(Error::FormatVersion {
            path: p,
            found: 6,
            supported: 5,
            ..
        }) => assert_eq!(p, path),
        other => panic!("expected FormatVersion, got {other:?}"),
    }
    let msg = Database::open(&path).unwrap_err().to_string();
    assert!(msg.contains("version 6"), "{msg}");
    assert!(msg.contains("upgrade lshdb"), "{msg}");

    set_format_version(&path, 0);
    let msg = match Database::open(&path) {
        Err(e @ Error::FormatVersion { found: 0, .. }) => e.to_string(),
        other => panic!("expected FormatVersion, got {other:?}"),
    };
    assert!(msg.contains("export it"), "{msg}");
    assert!(!msg.contains("upgrade"), "{msg}");

    // Back to version 1: opens with its documents.
    // Version 1 (no posting runs) is read as it is; a read-only open leaves
    // it at 1, and an open for writing marks it current before writing anything.
    set_format_version(&path, 1);
    let reader = Database::builder().read_only(true).open(&path).unwrap();
    assert_eq!(reader.len().unwrap(), 2);
    drop(reader);
    assert_eq!(format_version(&path), 1);
    assert_eq!(Database::open(&path).unwrap().len().unwrap(), 2);
    assert_eq!(format_version(&path), lshdb::FORMAT_VERSION);
}

use common::format_version;

fn fixture_at(path: &Path) -> Database {
    let db = Database::create(path, Config::jaccard(0.8)).unwrap();
    db.insert("a", TEXT_A).unwrap();
    db.insert("b", TEXT_B).unwrap();
    db
}

/// A file cut just after redb's magic number (or anywhere inside the
/// header) is damage that says "truncated", not "failed to fill whole
/// buffer" — for writers and read-only opens alike.
#[test]
fn a_file_cut_after_its_magic_number_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.lshdb");
    drop(fixture_at(&whole));
    let bytes = std::fs::read(&whole).unwrap();
    for cut in [REDB_MAGIC.len(), REDB_MAGIC.len() + 1, 64, 319] {
        let path = dir.path().join(format!("cut-{cut}.lshdb"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        for read_only in [false, true] {
            let err = Database::builder()
                .read_only(read_only)
                .open(&path)
                .unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(err, Error::Corrupted(_)) && msg.contains("truncated"),
                "cut at {cut}, read_only {read_only}: {msg}"
            );
            assert!(!msg.contains("fill whole buffer"), "{msg}");
        }
    }
}
