//! Hostile input that the other input tests (bad_input, cli_add,
//! damaged_files) leave out: NUL bytes inside text, documents far above
//! the size limit (and proof that rejecting them allocates nothing of their
//! size), punctuation-only and one-character texts, mixed scripts and
//! combining characters, keys that cross the length limit inside a
//! multi-byte character, and a bulk load of very many tiny documents.
//!
//! The million-document load is `#[ignore]`d (too slow in debug builds):
//! `cargo test --release --test hostile_input -- --ignored --nocapture`.
// The counting allocator below is the only unsafe code: a `GlobalAlloc`
// impl cannot be written without it.
#![allow(unsafe_code)]

mod common;

use lshdb::shingle::{ShingleConfig, Shingler};
use lshdb::{BulkOptions, Config, Database, Error, MAX_DOCUMENT_BYTES, MAX_KEY_BYTES};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The system allocator, recording the largest single allocation made by
/// threads that asked for it (see [`largest_allocation`]).
struct Tracking;

thread_local! {
    static TRACKED: Cell<bool> = const { Cell::new(false) };
}

static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    if TRACKED.try_with(Cell::get).unwrap_or(false) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to `System`; `note` neither
// allocates nor unwinds.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Runs `f` on this thread and returns its result with the largest single
/// allocation it made (also counting threads of a pool made by
/// [`tracked_pool`]). Only one test uses this, so nothing else is counted.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::SeqCst);
    TRACKED.with(|t| t.set(true));
    let out = f();
    TRACKED.with(|t| t.set(false));
    (out, LARGEST.swap(0, Ordering::SeqCst))
}

/// A rayon pool whose threads are tracked (bulk loads prepare documents on
/// rayon threads).
fn tracked_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|_| TRACKED.with(|t| t.set(true)))
        .build()
        .unwrap()
}

fn create(dir: &tempfile::TempDir, name: &str, config: Config) -> Database {
    Database::create(dir.path().join(name), config).unwrap()
}

/// The distinct shingles the default shingler makes of `text`.
fn shingle_count(text: &str) -> usize {
    Shingler::new(ShingleConfig::default())
        .unwrap()
        .set(text)
        .len()
}

/// The hits of a query as (key, similarity), best first.
fn hits(db: &Database, text: &str, threshold: f64) -> Vec<(String, f64)> {
    db.query(text)
        .threshold(threshold)
        .run()
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.key, h.similarity))
        .collect()
}

#[test]
fn nul_bytes_inside_text_are_ordinary_characters() {
    let (_dir, path, db) = common::new_db_at("nul.lshdb", Config::jaccard(0.8).store_text(true));
    let with_nul = "header\0field one\0field two\0\0trailer of the record";
    let nul_only = "\0\0\0\0\0\0\0";
    let nul_key = "key\0with\0nul";
    db.insert("with-nul", with_nul).unwrap();
    db.insert("nul-only", nul_only).unwrap();
    db.insert(nul_key, "an ordinary text under a key with NUL bytes")
        .unwrap();
    // Bulk loads and batches take them too.
    let report = db
        .insert_bulk(
            [("bulk\0", "\0bulk text\0 with NUL bytes\0")],
            &BulkOptions::default(),
            |_| true,
        )
        .unwrap();
    assert_eq!((report.inserted, report.rejected.len()), (1, 0));
    let mut batch = db.batch().unwrap();
    batch.insert("batch", "a\0b\0c\0d\0e\0f").unwrap();
    batch.commit().unwrap();

    // NUL is not white space: it is shingled like any other character,
    // and the text comes back byte for byte.
    let stored = db.get("with-nul").unwrap().unwrap();
    assert_eq!(stored.text.as_deref(), Some(with_nul));
    assert_eq!(stored.shingles, shingle_count(with_nul));
    // Seven NULs: three 5-shingles, all "\0\0\0\0\0": one distinct.
    assert_eq!(db.get("nul-only").unwrap().unwrap().shingles, 1);
    assert_eq!(db.get(nul_key).unwrap().unwrap().key, nul_key);
    assert!(!db.contains("key").unwrap());

    // Queries find them, exactly.
    assert_eq!(hits(&db, with_nul, 0.8)[0], ("with-nul".to_owned(), 1.0));
    assert_eq!(hits(&db, nul_only, 0.8), [("nul-only".to_owned(), 1.0)]);
    assert_eq!(
        hits(&db, "\0bulk text\0 with NUL bytes\0", 0.8)[0],
        ("bulk\0".to_owned(), 1.0)
    );
    assert_eq!(
        hits(&db, "A\0B\0C\0D\0E\0F", 0.8)[0],
        ("batch".to_owned(), 1.0)
    );
    // A NUL is not a blank: with blanks instead, the text is another one.
    let blanks = with_nul.replace('\0', " ");
    let near = hits(&db, &blanks, 0.01);
    assert!(near.iter().all(|(k, s)| k != "with-nul" || *s < 1.0));
    let hits_by_key = db.query_key("with-nul").threshold(0.01).run().unwrap();
    assert!(hits_by_key.hits.iter().all(|h| h.key != "with-nul"));

    // And they survive a reopen, intact.
    drop(db);
    let mut db = Database::open(&path).unwrap();
    let mut exported = Vec::new();
    db.for_each(|d| {
        exported.push((d.key, d.text));
        true
    })
    .unwrap();
    assert!(exported.contains(&("with-nul".to_owned(), Some(with_nul.to_owned()))));
    assert!(exported.contains(&(
        nul_key.to_owned(),
        Some("an ordinary text under a key with NUL bytes".to_owned())
    )));
    assert_eq!(db.len().unwrap(), 5);
    assert!(db.check_pages().unwrap().is_clean());
}

#[test]
fn documents_far_above_the_size_limit_allocate_nothing_of_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir, "big.lshdb", Config::jaccard(0.8).store_text(true));
    db.insert("small", "a small document that is fine").unwrap();
    // Built once: 100 MiB of text; its first 64 MiB + 1 byte is the
    // smallest text that is too large.
    let huge = "abcdefghijklmnopqrstuvwxyz0123456789 ".repeat((100 << 20) / 37 + 1);
    let just_over = &huge[..MAX_DOCUMENT_BYTES + 1];
    // Bytes count, not characters: 2-byte characters, one byte over.
    let wide = "é".repeat(MAX_DOCUMENT_BYTES / 2 + 1);
    assert!(huge.len() > 100 << 20);
    assert!(wide.chars().count() < MAX_DOCUMENT_BYTES);
    // Pre-hashed shingles count 4 bytes each.
    let shingles: Vec<u32> = (0..(MAX_DOCUMENT_BYTES / 4 + 1) as u32).collect();
    let pool = tracked_pool();
    // The tracker itself sees a large allocation.
    let (_, seen) = largest_allocation(|| std::hint::black_box(vec![1u8; 2 << 20]).len());
    assert!(seen >= 2 << 20, "the allocation tracker missed {seen}");

    for text in [just_over, huge.as_str(), wide.as_str()] {
        let too_large = |r: lshdb::Result<()>| {
            matches!(r, Err(Error::DocumentTooLarge { ref key, len, max: MAX_DOCUMENT_BYTES })
                if key == "big" && len == text.len())
        };
        // No allocation of the document's size (nor of any size near it):
        // the limit is checked before anything is copied or shingled.
        let (r, largest) = largest_allocation(|| db.insert("big", text));
        assert!(too_large(r));
        assert!(largest < 1 << 20, "insert allocated {largest} bytes");
        let (r, largest) = largest_allocation(|| db.insert_unique("big", text, 0.5).map(|_| ()));
        assert!(too_large(r));
        assert!(largest < 1 << 20, "insert_unique allocated {largest} bytes");
        let (r, largest) = largest_allocation(|| {
            let mut batch = db.batch().unwrap();
            let r = batch.insert("big", text);
            batch.commit().unwrap();
            r
        });
        assert!(too_large(r));
        assert!(largest < 1 << 20, "batch allocated {largest} bytes");
        // A bulk load reports it and stores the others.
        let (report, largest) = largest_allocation(|| {
            pool.install(|| {
                db.insert_bulk(
                    [("big", text), ("other", "another small document")],
                    &BulkOptions::default(),
                    |_| true,
                )
            })
        });
        let report = report.unwrap();
        assert_eq!(report.inserted, 1);
        assert_eq!(report.rejected.len(), 1);
        assert!(too_large(Err(report
            .rejected
            .into_iter()
            .next()
            .unwrap()
            .1)));
        assert!(largest < 1 << 20, "insert_bulk allocated {largest} bytes");
        // A query refuses it too. (`Database::query` keeps its own copy of
        // the text, so one allocation of the text's size is made.)
        let (r, largest) = largest_allocation(|| db.query(text).run().map(|_| ()));
        assert!(matches!(r, Err(Error::DocumentTooLarge { len, .. }) if len == text.len()));
        assert!(largest <= text.len(), "query allocated {largest} bytes");
    }
    let r = db.insert("big", lshdb::Document::Shingles(&shingles));
    assert!(matches!(r, Err(Error::DocumentTooLarge { len, .. }) if len == shingles.len() * 4));

    // Nothing of it was stored; the database is intact.
    assert!(!db.contains("big").unwrap());
    assert_eq!(db.len().unwrap(), 2);
    assert_eq!(hits(&db, "a small document that is fine", 0.8)[0].1, 1.0);
}

#[test]
fn punctuation_only_and_one_repeated_character() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir, "punct.lshdb", Config::jaccard(0.8).store_text(true));
    let docs = [
        ("bangs", "!!!!!!!!!!!!!!!!!!!!!!!!"),
        ("mixed-punct", "?!.,;:-_()[]{}<>/\\|@#$%^&*~`'\"+="),
        ("dots", "... ... ... ..."),
        ("a-long", &*"a".repeat(10_000)),
        ("a-short", "aa"),
        ("e-acute", &*"é".repeat(1000)),
        ("emoji", &*"🦀".repeat(500)),
        ("nbsp-x", "x\u{a0}x\u{a0}x\u{a0}x\u{a0}x\u{a0}x"),
    ];
    for (key, text) in docs {
        db.insert(key, text).unwrap();
        let stored = db.get(key).unwrap().unwrap();
        assert_eq!(stored.text.as_deref(), Some(text));
        assert_eq!(stored.shingles, shingle_count(text), "{key}");
        // Each finds itself, at similarity 1.
        let found = hits(&db, text, 0.8);
        assert!(found.contains(&(key.to_owned(), 1.0)), "{key}: {found:?}");
    }
    // Punctuation is kept, not stripped: "!!!!!" is one shingle.
    assert_eq!(db.get("bangs").unwrap().unwrap().shingles, 1);
    // 32 distinct characters: 28 distinct 5-shingles.
    assert_eq!(db.get("mixed-punct").unwrap().unwrap().shingles, 28);
    // One character repeated is one shingle, however long; shorter than k
    // it is the whole text, another shingle.
    assert_eq!(db.get("a-long").unwrap().unwrap().shingles, 1);
    assert_eq!(db.get("e-acute").unwrap().unwrap().shingles, 1);
    assert_eq!(db.get("emoji").unwrap().unwrap().shingles, 1);
    assert_eq!(db.get("a-short").unwrap().unwrap().shingles, 1);
    // So 10,000 a's and 7 a's are the same document, and "aa" is not.
    let sevens = hits(&db, "AAAAAAA", 0.8);
    assert_eq!(sevens, [("a-long".to_owned(), 1.0)]);
    assert_eq!(hits(&db, "aa", 0.8), [("a-short".to_owned(), 1.0)]);
    // Different punctuation is a different document.
    assert!(hits(&db, "?????????", 0.01).is_empty());
    // A no-break space is white space: collapsed to a blank.
    assert_eq!(hits(&db, "x x x x x x", 0.8), [("nbsp-x".to_owned(), 1.0)]);
    // Only white space of any kind is empty, not punctuation.
    let r = db.insert("blank", "\u{a0}\u{2003}\u{3000}\t\r\n");
    assert!(matches!(r, Err(Error::EmptyDocument { .. })));
}

#[test]
fn mixed_scripts_and_combining_characters() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir, "scripts.lshdb", Config::jaccard(0.8).store_text(true));
    let docs = [
        (
            "latin-cyrillic-greek",
            "Moscow Москва Μόσχα — one city, three scripts",
        ),
        ("cjk", "東京は日本の首都です。東京タワーと東京スカイツリー"),
        ("arabic-hebrew", "مرحبا بالعالم שלום עולם hello world"),
        ("devanagari", "नमस्ते दुनिया, यह एक परीक्षण है"),
        (
            "precomposed",
            "caf\u{e9} cr\u{e8}me br\u{fb}l\u{e9}e na\u{ef}ve",
        ),
        (
            "decomposed",
            "cafe\u{301} cre\u{300}me bru\u{302}le\u{301}e nai\u{308}ve",
        ),
        (
            "stacked-marks",
            "Z\u{351}\u{36b}\u{343}a\u{300}\u{301}\u{302}l\u{334}g\u{335}o",
        ),
        (
            "emoji-zwj",
            "family 👨\u{200d}👩\u{200d}👧\u{200d}👦 flag 🇫🇷 skin 👍🏽",
        ),
        (
            "bidi-controls",
            "abc\u{202e}fed\u{202c} \u{200f}rtl\u{200e} \u{feff}bom",
        ),
        ("greek-sigma", "ΣΟΦΟΣ ΟΔΟΣ"),
    ];
    for (key, text) in docs {
        db.insert(key, text).unwrap();
        let stored = db.get(key).unwrap().unwrap();
        assert_eq!(stored.text.as_deref(), Some(text), "{key}");
        assert_eq!(stored.shingles, shingle_count(text), "{key}");
        let found = hits(&db, text, 0.8);
        assert_eq!(found.first(), Some(&(key.to_owned(), 1.0)), "{key}");
    }
    // Lower-casing works per character in every script: upper-case
    // Cyrillic and Greek find the same document.
    let upper = "MOSCOW МОСКВА ΜΌΣΧΑ — ONE CITY, THREE SCRIPTS";
    assert_eq!(
        hits(&db, upper, 0.8)[0],
        ("latin-cyrillic-greek".to_owned(), 1.0)
    );
    // Every final sigma is lower-cased to σ (no context rules), so the
    // lower-case spelling with ς is a different text.
    assert_eq!(
        hits(&db, "σοφοσ οδοσ", 0.8)[0],
        ("greek-sigma".to_owned(), 1.0)
    );
    assert!(hits(&db, "σοφος οδος", 0.8).is_empty());
    // No Unicode normalisation: precomposed and decomposed accents are
    // different characters, so the two spellings are not duplicates.
    let pre = hits(&db, docs[4].1, 0.01);
    assert!(
        pre.iter().all(|(k, s)| k != "decomposed" || *s < 0.8),
        "{pre:?}"
    );
    let mut db = db;
    assert!(db.check_pages().unwrap().is_clean());
}

#[test]
fn keys_crossing_the_limit_inside_a_multibyte_character() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir, "keys.lshdb", Config::jaccard(0.8));
    let text = "the document stored under a key at the length limit";
    let pad = |n: usize, c: char| format!("{}{c}", "k".repeat(n));
    // At the limit, ending in a 2-, 3- and 4-byte character.
    let fit = [
        pad(MAX_KEY_BYTES - 2, 'é'),
        pad(MAX_KEY_BYTES - 3, '€'),
        pad(MAX_KEY_BYTES - 4, '🦀'),
    ];
    // The same characters one byte later: the key ends one byte over.
    let over = [
        pad(MAX_KEY_BYTES - 1, 'é'),
        pad(MAX_KEY_BYTES - 2, '€'),
        pad(MAX_KEY_BYTES - 3, '🦀'),
    ];
    for key in &fit {
        assert_eq!(key.len(), MAX_KEY_BYTES);
        db.insert(key, text).unwrap();
        assert_eq!(db.get(key).unwrap().unwrap().key, *key);
    }
    let invalid = |r: lshdb::Result<()>| matches!(r, Err(Error::InvalidKey { len, max: MAX_KEY_BYTES }) if len == MAX_KEY_BYTES + 1);
    for key in &over {
        assert_eq!(key.len(), MAX_KEY_BYTES + 1);
        assert!(common::write_every_way(&db, key, text)
            .into_iter()
            .all(invalid));
        // Reads and removal of a key that cannot exist just miss.
        assert_eq!(db.get(key).unwrap(), None);
        assert!(!db.contains(key).unwrap());
        assert!(!db.remove(key).unwrap());
        assert!(matches!(
            db.query_key(key).run(),
            Err(Error::NotFound(k)) if k == *key
        ));
    }
    // A bulk load rejects the over-long keys and stores the rest.
    let docs: Vec<(&str, &str)> = fit
        .iter()
        .chain(&over)
        .map(|k| (k.as_str(), "bulk text"))
        .collect();
    let report = db
        .insert_bulk(docs, &BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!((report.inserted, report.replaced), (3, 3));
    let mut rejected: Vec<String> = report.rejected.iter().map(|(k, _)| k.clone()).collect();
    rejected.sort();
    let mut expected = over.to_vec();
    expected.sort();
    assert_eq!(rejected, expected);
    assert!(report.rejected.into_iter().all(|(_, e)| invalid(Err(e))));
    assert_eq!(db.len().unwrap(), 3);
    let found = hits(&db, "bulk text", 0.8);
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|(k, s)| fit.contains(k) && *s == 1.0));
}

/// A tiny document: one or two words, distinct for every `i`.
fn tiny(i: usize) -> String {
    const WORDS: [&str; 8] = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo"];
    if i % 3 == 0 {
        format!("{}{i}", WORDS[i % 8])
    } else {
        format!("{} {i}", WORDS[i % 8])
    }
}

/// Bulk-loads `n` tiny documents and checks counts and a sample of
/// queries; returns the seconds the load took.
fn load_tiny(n: usize, config: Config) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let db = create(&dir, "tiny.lshdb", config);
    let start = Instant::now();
    let docs = (0..n).map(|i| (format!("t{i}"), tiny(i)));
    let mut calls = 0u64;
    let report = db
        .insert_bulk(docs, &BulkOptions::default(), |_| {
            calls += 1;
            true
        })
        .unwrap();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(report.inserted, n as u64);
    assert_eq!(report.replaced, 0);
    assert!(report.rejected.is_empty());
    assert!(!report.stopped);
    assert_eq!(
        report.commits,
        n.div_ceil(BulkOptions::default().batch) as u64
    );
    assert_eq!(calls, report.commits);
    assert_eq!(db.len().unwrap(), n as u64);
    for i in [0, 1, 2, n / 2, n - 1] {
        let key = format!("t{i}");
        let found = hits(&db, &tiny(i), 0.8);
        assert!(found.contains(&(key.clone(), 1.0)), "{key}: {found:?}");
        assert_eq!(
            db.get(&key).unwrap().unwrap().shingles,
            shingle_count(&tiny(i))
        );
    }
    seconds
}

/// 200,000 tiny documents. The index is kept small (16 values, 2 bands of
/// 8 rows: two postings a document) because redb is slow in debug builds:
/// this takes about a minute there, a few seconds in release.
#[test]
fn bulk_load_of_many_tiny_documents() {
    let config = Config::jaccard(0.8).num_perm(16).bands(2, 8);
    let seconds = load_tiny(200_000, config);
    eprintln!("200,000 tiny documents loaded in {seconds:.1} s");
}

/// The figure: a million tiny documents, with the default index
/// (128 values, 16 bands of 8 rows). Too slow for a debug build; run with
/// `cargo test --release --test hostile_input -- --ignored --nocapture`.
#[test]
#[ignore]
fn bulk_load_of_a_million_tiny_documents() {
    let seconds = load_tiny(1_000_000, Config::jaccard(0.8));
    eprintln!("1,000,000 tiny documents loaded in {seconds:.1} s");
}
