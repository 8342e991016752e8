//! Writes are reflected exactly by every read: a removed document is never
//! returned again (by text, key, pairs or groups), a replaced document is
//! found only by its new content, removing a missing key reports false, and
//! item-set documents are matched with their exact Jaccard similarity.

mod common;

use lshdb::shingle::{item_set, ShingleConfig, Shingler};
use lshdb::sketch::measures::jaccard;
use lshdb::{Config, Database, Error};

fn keys_of(hits: &[lshdb::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.key.as_str()).collect()
}

fn all_pairs(db: &Database, t: f64) -> Vec<(String, String)> {
    let mut out = Vec::new();
    db.pairs(t, |p| {
        out.push((p.a, p.b));
        true
    })
    .unwrap();
    out
}

/// 6 families of 4 near-duplicates, inserted one by one.
fn family_db(dir: &tempfile::TempDir) -> (Database, Vec<Vec<String>>) {
    let corpus = common::families(0x77, 6, 4, 30);
    let db = Database::create(dir.path().join("w.lshdb"), Config::jaccard(0.6)).unwrap();
    for (f, family) in corpus.iter().enumerate() {
        for (m, text) in family.iter().enumerate() {
            db.insert(&common::key(f, m), text).unwrap();
        }
    }
    (db, corpus)
}

#[test]
fn removed_document_is_never_returned() {
    let dir = tempfile::tempdir().unwrap();
    let (mut db, corpus) = family_db(&dir);
    let gone = common::key(0, 1);

    // Before: the document is found every way.
    let by_text = db.query(&corpus[0][1]).run().unwrap().hits;
    assert_eq!(by_text[0].key, gone);
    assert_eq!(by_text[0].similarity, 1.0);
    assert!(
        keys_of(&db.query_key(&common::key(0, 0)).run().unwrap().hits).contains(&gone.as_str())
    );
    assert!(all_pairs(&db, 0.6)
        .iter()
        .any(|(a, b)| *a == gone || *b == gone));
    let groups = db.groups(0.6).unwrap();
    assert!(groups.groups.iter().flatten().any(|(k, _)| *k == gone));
    assert_eq!(db.len().unwrap(), 24);

    assert!(db.remove(&gone).unwrap());

    assert_eq!(db.len().unwrap(), 23);
    assert!(!db.contains(&gone).unwrap());
    assert_eq!(db.get(&gone).unwrap(), None);
    // Its own text still finds its siblings, but never it.
    let by_text = db.query(&corpus[0][1]).threshold(0.3).run().unwrap().hits;
    assert!(!by_text.is_empty(), "siblings should still be found");
    assert!(!keys_of(&by_text).contains(&gone.as_str()));
    for m in [0, 2, 3] {
        let hits = db
            .query_key(&common::key(0, m))
            .threshold(0.3)
            .run()
            .unwrap()
            .hits;
        assert!(!hits.is_empty());
        assert!(!keys_of(&hits).contains(&gone.as_str()), "query_key({m})");
    }
    assert!(matches!(
        db.query_key(&gone).run(),
        Err(Error::NotFound(k)) if k == gone
    ));
    let pairs = all_pairs(&db, 0.3);
    assert!(!pairs.is_empty());
    assert!(pairs.iter().all(|(a, b)| *a != gone && *b != gone));
    let groups = db.groups(0.3).unwrap();
    assert!(!groups.groups.is_empty());
    assert!(groups.groups.iter().flatten().all(|(k, _)| *k != gone));
    let family0: Vec<_> = groups
        .groups
        .iter()
        .find(|g| g.iter().any(|(k, _)| common::family_of(k) == 0))
        .unwrap()
        .iter()
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(family0.len(), 3, "{family0:?}");

    // Removal in a batch, too; the index stays consistent.
    let mut batch = db.batch().unwrap();
    assert!(batch.remove(&common::key(1, 0)).unwrap());
    assert!(!batch.remove(&common::key(1, 0)).unwrap());
    batch.commit().unwrap();
    assert!(!keys_of(&db.query(&corpus[1][0]).run().unwrap().hits).contains(&"fam001-m0"));
    assert_eq!(db.len().unwrap(), 22);
    let report = db.check_pages().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.documents, 22);
    assert_eq!(report.postings, 22 * db.settings().bands as u64);
}

#[test]
fn replacing_by_key_swaps_content_atomically() {
    let (_dir, path, mut db) = common::new_db_at("r.lshdb", Config::jaccard(0.7).store_text(true));
    let corpus = common::families(0x99, 3, 1, 30);
    let (old, other, new) = (&corpus[0][0], &corpus[1][0], &corpus[2][0]);
    let new = format!("{new} {new} with a longer tail of extra words");
    db.insert("doc", old.as_str()).unwrap();
    db.insert("other", other.as_str()).unwrap();
    let shingler = Shingler::new(ShingleConfig::default()).unwrap();
    let before = db.get("doc").unwrap().unwrap();
    assert_eq!(before.text.as_deref(), Some(old.as_str()));
    assert_eq!(before.shingles, shingler.set(old).len());
    assert_eq!(db.query(old).run().unwrap().hits[0].key, "doc");

    db.insert("doc", new.as_str()).unwrap();

    assert_eq!(db.len().unwrap(), 2);
    let after = db.get("doc").unwrap().unwrap();
    assert_eq!(after.text.as_deref(), Some(new.as_str()));
    assert_eq!(after.shingles, shingler.set(&new).len());
    assert_ne!(after.shingles, before.shingles);
    let hits = db.query(&new).run().unwrap().hits;
    assert_eq!(keys_of(&hits), ["doc"]);
    assert_eq!(hits[0].similarity, 1.0);
    // The old content is gone from the index: its buckets lead nowhere.
    let result = db.query(old).run().unwrap();
    assert!(result.hits.is_empty());
    assert_eq!(result.explain.candidates, 0);
    let hits = db
        .query(old)
        .threshold(0.05)
        .prune(false)
        .run()
        .unwrap()
        .hits;
    assert!(
        hits.iter().all(|h| h.key != "doc" || h.similarity < 0.5),
        "{hits:?}"
    );
    assert!(hits.iter().all(|h| h.similarity < 1.0));
    assert!(db.check_pages().unwrap().is_clean());
    assert_eq!(
        db.check_pages().unwrap().postings,
        2 * db.settings().bands as u64
    );

    // Replacing in a batch with the same key twice keeps one document.
    let mut batch = db.batch().unwrap();
    batch.insert("other", old.as_str()).unwrap();
    batch.insert("other", other.as_str()).unwrap();
    batch.commit().unwrap();
    assert_eq!(db.len().unwrap(), 2);
    assert_eq!(
        db.get("other").unwrap().unwrap().text.as_deref(),
        Some(other.as_str())
    );
    assert!(db.query(old).run().unwrap().hits.is_empty());
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.get("doc").unwrap().unwrap(), after);
}

#[test]
fn removing_a_missing_key_returns_false() {
    let (_dir, db) = common::new_db("m.lshdb", Config::jaccard(0.8));
    assert!(!db.remove("nothing here").unwrap());
    assert!(db.is_empty().unwrap());
    db.insert("a", "some text that is stored").unwrap();
    assert!(!db.remove("b").unwrap());
    assert!(!db.remove("A").unwrap(), "keys are case-sensitive");
    assert_eq!(db.len().unwrap(), 1);
    assert!(db.remove("a").unwrap());
    assert!(!db.remove("a").unwrap());
    assert!(db.is_empty().unwrap());
    assert!(db
        .query("some text that is stored")
        .run()
        .unwrap()
        .hits
        .is_empty());
}

#[test]
fn item_sets_match_with_exact_jaccard() {
    // A low index threshold so that every pair above 0.5 is a candidate.
    let (_dir, db) = common::new_db("shop.lshdb", Config::jaccard(0.3).store_text(true));
    let alice = ["milk", "bread", "eggs", "butter", "cheese", "apples"];
    let bob = ["milk", "bread", "eggs", "butter", "cheese", "pears"]; // 5 / 7 with alice
    let carol = ["milk", "bread", "eggs", "butter", "jam", "tea"]; // 4 / 8 with alice
    let dave = ["shoes", "socks", "hat", "gloves", "scarf"]; // 0 with everyone
    for (key, items) in [
        ("alice", &alice[..]),
        ("bob", &bob[..]),
        ("carol", &carol[..]),
        ("dave", &dave[..]),
    ] {
        db.insert_items(key, items).unwrap();
    }
    let stored = db.get("alice").unwrap().unwrap();
    assert_eq!(stored.shingles, 6);
    assert_eq!(stored.text, None, "items are not text");

    let hits = db.query_key("alice").threshold(0.5).run().unwrap().hits;
    assert_eq!(keys_of(&hits), ["bob", "carol"]);
    assert_eq!(hits[0].similarity, 5.0 / 7.0);
    assert_eq!(hits[1].similarity, 4.0 / 8.0);
    // The same as the exact Jaccard of the hashed item sets.
    let set = |items: &[&str]| item_set(items, 0);
    assert_eq!(
        hits[0].similarity,
        jaccard(set(&alice).as_slice(), set(&bob).as_slice())
    );

    // Order and repeats do not matter; the query is not excluded.
    let shuffled = [
        "apples", "cheese", "milk", "butter", "eggs", "bread", "milk",
    ];
    let hits = db.query_items(&shuffled).threshold(0.5).run().unwrap().hits;
    assert_eq!(keys_of(&hits), ["alice", "bob", "carol"]);
    assert_eq!(hits[0].similarity, 1.0);

    // bob vs carol: {milk, bread, eggs, butter} / 8 items = 0.5.
    let hits = db.query_key("carol").threshold(0.45).run().unwrap().hits;
    assert_eq!(keys_of(&hits), ["alice", "bob"]);
    assert!(hits.iter().all(|h| h.similarity == 0.5));

    let hits = db
        .query_items(&dave[..4])
        .threshold(0.5)
        .run()
        .unwrap()
        .hits;
    assert_eq!(keys_of(&hits), ["dave"]);
    assert_eq!(hits[0].similarity, 4.0 / 5.0);

    // Items are hashed whole with the shingle seed and no normalisation; a
    // text shorter than k is one shingle, its whole normalised text. So the
    // text "MILK" (normalised "milk") meets the item "milk", not "MILK".
    db.insert("note", "MILK").unwrap();
    let hits = db.query_items(&["milk"]).threshold(0.9).run().unwrap().hits;
    assert_eq!(keys_of(&hits), ["note"]);
    let hits = db.query_items(&["MILK"]).threshold(0.1).run().unwrap().hits;
    assert!(hits.is_empty(), "{hits:?}");
}
