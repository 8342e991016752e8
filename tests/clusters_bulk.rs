//! Bulk loads into a file with clusters, over many commits: near-duplicates
//! that arrive in different commits join one cluster, whether the file was
//! empty when the load began (the load's filter of what it wrote rules out
//! most probes) or not, and when another writer stores documents between
//! two of the load's commits (past that filter). After each load the
//! clusters equal `groups()`' components and `check` is clean.

mod common;

use lshdb::{BulkOptions, Config, Database};
use std::collections::{BTreeMap, BTreeSet};

/// Document `i` of a load: every third document is a member of a family
/// (17 consecutive members, one word of forty edited in each), so that
/// members spread over many commits of five; the others have texts of
/// their own.
fn text(i: usize) -> String {
    let family = if i % 3 == 0 { i / 51 } else { 1_000 + i };
    let mut words: Vec<String> = (0..40)
        .map(|w| format!("w{}x{w}", family * 7 + w))
        .collect();
    if i % 3 == 0 {
        // Members differ in one word of forty: Jaccard well above 0.7.
        words[(i / 3) % 17 % 40] = format!("edit{i}");
    }
    words.join(" ")
}

/// A new file with clusters, `name` in `dir`.
fn with_clusters(dir: &tempfile::TempDir, name: &str) -> Database {
    Database::create(dir.path().join(name), Config::jaccard(0.7).clusters(true)).unwrap()
}

/// Documents `0..n`: [`keys`] with [`text`].
fn corpus(n: usize) -> Vec<(String, String)> {
    keys(n).into_iter().zip((0..n).map(text)).collect()
}

fn keys(n: usize) -> Vec<String> {
    // Keys in input order: ids follow key order within a commit.
    (0..n).map(|i| format!("d{i:04}")).collect()
}

/// The clusters of two or more, as sets of keys.
fn kept(db: &Database) -> BTreeSet<BTreeSet<String>> {
    common::maintained_clusters(db)
        .into_values()
        .map(|(_, members)| members)
        .filter(|members| members.len() > 1)
        .collect()
}

/// The clusters equal `groups()`'; `check` is clean.
fn assert_right(db: &Database) -> BTreeSet<BTreeSet<String>> {
    let groups: BTreeSet<BTreeSet<String>> = db
        .groups(db.settings().threshold)
        .unwrap()
        .groups
        .into_iter()
        .map(|g| g.into_iter().map(|(k, _)| k).collect())
        .collect();
    let clusters = kept(db);
    assert_eq!(clusters, groups);
    let report = db.check().unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    clusters
}

fn load(db: &Database, docs: &[(String, String)], progress: impl FnMut() -> bool) {
    load_with(db, docs, BulkOptions::default(), progress);
}

/// [`load`] with `options` (in commits of 5 documents).
fn load_with(
    db: &Database,
    docs: &[(String, String)],
    options: BulkOptions,
    progress: impl FnMut() -> bool,
) {
    let mut progress = progress;
    let options = options.batch(5);
    let report = db
        .insert_bulk(docs.iter().cloned(), &options, |_| progress())
        .unwrap();
    assert!(report.commits > 10, "{} commits", report.commits);
}

#[test]
fn near_duplicates_in_different_commits_of_a_load_into_an_empty_file_join() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "e.lshdb");
    let docs = corpus(120);
    load(&db, &docs, || true);
    let clusters = assert_right(&db);
    // The families: multiples of 3 in 0..=48, 51..=99 and 102..=117.
    assert_eq!(clusters.len(), 3, "{clusters:?}");
    let sizes: Vec<usize> = clusters.iter().map(BTreeSet::len).collect();
    assert_eq!(sizes.iter().sum::<usize>(), 40);
}

#[test]
fn a_load_whose_filter_outgrows_its_memory_goes_on_without_it() {
    // 4 KiB: a filter of about 190 documents of 16 bands, dropped mid-load.
    let docs = corpus(600);
    let mut clusters = Vec::new();
    for bytes in [4096, lshdb::DEFAULT_LOAD_FILTER_BYTES] {
        let dir = tempfile::tempdir().unwrap();
        let db = with_clusters(&dir, "b.lshdb");
        load_with(
            &db,
            &docs,
            BulkOptions::default().load_filter_bytes(bytes),
            || true,
        );
        clusters.push(assert_right(&db));
    }
    assert_eq!(clusters[0], clusters[1]);
    // Families of 17 every third document: 600 / 51 of them, and a part.
    assert_eq!(clusters[0].len(), 12, "{:?}", clusters[0]);
}

#[test]
fn a_load_into_a_file_that_holds_documents_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "f.lshdb");
    // Every other family member first, one by one; the rest by a load.
    let all = corpus(120);
    for (key, text) in all.iter().step_by(2) {
        db.insert(key, text.as_str()).unwrap();
    }
    let rest: Vec<(String, String)> = all.iter().skip(1).step_by(2).cloned().collect();
    load(&db, &rest, || true);
    assert_eq!(assert_right(&db).len(), 3);
}

/// Another writer stores documents between two commits of a load that
/// began on an empty file: later documents of the load that are their
/// near-duplicates still join them (the load's filter, which does not hold
/// them, stops answering).
#[test]
fn documents_stored_between_a_loads_commits_are_met() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "g.lshdb");
    let docs = corpus(120);
    // Near-duplicates of documents of the load that are in no family (so
    // nothing else the load wrote shares their buckets), stored between
    // its first commits.
    let outside: BTreeMap<String, String> = [61usize, 65, 70, 110]
        .into_iter()
        .map(|i| (format!("other{i}"), format!("{} other", text(i))))
        .collect();
    let mut between = outside.clone().into_iter();
    load(&db, &docs, || {
        if let Some((key, text)) = between.next() {
            db.insert(&key, text.as_str()).unwrap();
        }
        true
    });
    let clusters = assert_right(&db);
    for key in outside.keys() {
        let cluster = clusters
            .iter()
            .find(|c| c.contains(key))
            .unwrap_or_else(|| panic!("{key} joined no cluster: {clusters:?}"));
        assert!(cluster.iter().any(|k| k.starts_with('d')), "{cluster:?}");
    }
}

/// Dedup-on-write into an empty file with clusters, a commit per chunk
/// (a tiny memory budget): the documents it keeps join the clusters of the
/// near-duplicates kept in earlier commits (below the dedup threshold,
/// above the index's), as `groups()` has them.
#[test]
fn a_dedup_load_into_an_empty_file_keeps_clusters_right() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "u.lshdb");
    let docs = corpus(120);
    let chunks: Vec<Vec<(String, String)>> = docs.chunks(5).map(<[_]>::to_vec).collect();
    let options = BulkOptions::default().memory(4096);
    // At 0.999 only exact copies are duplicates: every document is kept.
    let report = db
        .insert_unique_bulk(chunks, 0.999, &options, |_| true)
        .unwrap();
    assert_eq!(report.inserted, 120);
    assert!(report.commits > 10, "{report:?}");
    assert_eq!(assert_right(&db).len(), 3);
}

/// Copies (identical texts) among the documents of a load: of a document
/// a few places before (often in the same commit), and of family members
/// far before (in earlier commits). A copy joins its first twin's cluster
/// without a walk of its buckets (`db/clusters/run.rs`); the clusters are
/// still `groups()`' components, in commits of 5 and in one.
#[test]
fn copies_in_a_load_join_their_twins_clusters() {
    let docs: Vec<(String, String)> = (0..300)
        .map(|i| {
            let text = match i {
                _ if i % 5 == 4 => text(i - 4),
                _ if i % 7 == 6 => text(3 * (i / 7)),
                _ => text(i),
            };
            (format!("d{i:04}"), text)
        })
        .collect();
    let mut found = Vec::new();
    for batch in [5, 1_000] {
        let dir = tempfile::tempdir().unwrap();
        let db = with_clusters(&dir, "c.lshdb");
        let options = BulkOptions::default().batch(batch);
        db.insert_bulk(docs.iter().cloned(), &options, |_| true)
            .unwrap();
        found.push(assert_right(&db));
    }
    assert_eq!(found[0], found[1]);
    // Copies of a text of its own make clusters of two or three.
    assert_eq!(found[0].len(), 40, "{:?}", found[0]);
}

/// A hot bucket of copies across many commits (one text stored 600
/// times, in commits of 7, in two loads), beside near-variants of it, a
/// second text's copies, and a late near-variant: a copy
/// of a stored document joins that document's cluster without reading its
/// buckets whole (`db/clusters/run.rs`, `stored_twin`), and the clusters
/// are still `groups()`' components, with one id for the first text's
/// copies from first to last.
#[test]
fn copies_of_stored_documents_join_their_clusters() {
    let words = |seed: usize| -> Vec<String> { (0..40).map(|w| format!("w{seed}x{w}")).collect() };
    let (a, b) = (words(1).join(" "), words(2).join(" "));
    let mut docs = Vec::new();
    for i in 0..1_200 {
        let text = match i % 4 {
            0 | 1 => a.clone(),
            2 => b.clone(),
            _ if i % 40 == 3 => {
                let mut v = words(1);
                v[i / 40 % 40] = format!("edit{i}");
                v.join(" ")
            }
            _ => format!("{} own{i}", words(1_000 + i).join(" ")),
        };
        docs.push((format!("d{i:05}"), text));
    }
    // Late: most of a's words and a few of b's.
    let bridge: Vec<String> = words(1)[..36]
        .iter()
        .chain(&words(2)[..4])
        .cloned()
        .collect();
    docs.push(("z-bridge".into(), bridge.join(" ")));
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "c.lshdb");
    let first = {
        let options = BulkOptions::default().batch(7);
        db.insert_bulk(docs[..600].iter().cloned(), &options, |_| true)
            .unwrap();
        db.cluster_of("d00000").unwrap().unwrap().id
    };
    let options = BulkOptions::default().batch(7);
    db.insert_bulk(docs[600..].iter().cloned(), &options, |_| true)
        .unwrap();
    let clusters = assert_right(&db);
    let of_a = db.cluster_of("d01197").unwrap().unwrap();
    assert_eq!(
        of_a.id, first,
        "the copies keep the first copy's cluster id"
    );
    assert!(of_a.size >= 600, "{of_a:?}");
    // The variants of a (one word edited) are in a's cluster, b's copies
    // in one of their own.
    assert_eq!(db.cluster_of("d00003").unwrap().unwrap().id, first);
    let of_b = db.cluster_of("d00002").unwrap().unwrap();
    assert_ne!(of_b.id, first);
    assert_eq!(of_b.size, 300);
    assert!(clusters
        .iter()
        .any(|c| c.len() == 300 && c.contains("d01198")));
}

/// A stored set of the same size in the same band-0 bucket is not a copy
/// unless it is equal: twenty lookalikes (half the set's hashes replaced,
/// so Jaccard about 1/3, yet the same band-0 key) fill the bucket, and the
/// set loaded after them must not join their clusters (the clusters still
/// equal `groups()`).
#[test]
fn a_lookalike_in_a_hot_bucket_is_not_taken_for_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "c.lshdb");
    let sketcher = lshdb::Sketcher::new(db.settings()).unwrap();
    let band_keys = |set: &[u32]| {
        let mut keys = Vec::new();
        sketcher.band_keys_into(&sketcher.signature(set), &mut keys);
        keys
    };
    let mut state = 11u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 32) as u32
    };
    let set: Vec<u32> = {
        let mut s: Vec<u32> = (0..64).map(|_| next()).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let key0 = band_keys(&set)[0];
    let mut lookalikes: Vec<Vec<u32>> = Vec::new();
    for _ in 0..2_000_000 {
        if lookalikes.len() == 20 {
            break;
        }
        let mut other: Vec<u32> = set.iter().copied().filter(|_| next() % 2 == 0).collect();
        while other.len() < set.len() {
            other.push(next());
            other.sort_unstable();
            other.dedup();
        }
        if band_keys(&other)[0] == key0 && !lookalikes.contains(&other) {
            lookalikes.push(other);
        }
    }
    assert_eq!(lookalikes.len(), 20, "no lookalikes found");
    let stored: Vec<(String, Vec<u32>)> = lookalikes
        .into_iter()
        .enumerate()
        .map(|(i, s)| (format!("look{i:02}"), s))
        .collect();
    db.insert_bulk(stored, &BulkOptions::default(), |_| true)
        .unwrap();
    db.insert_bulk(
        vec![("set".to_owned(), set)],
        &BulkOptions::default(),
        |_| true,
    )
    .unwrap();
    assert_right(&db);
    assert_eq!(db.cluster_of("set").unwrap().unwrap().size, 1);
}

/// A load whose commits replace stored documents (the same keys, texts of
/// other families or of their own) and add new ones: the stored state a
/// commit's look-up begins from is no longer the transaction's once a
/// document is removed, so the look-up is made again in the transaction.
/// Members leave their clusters, which split, and join others.
#[test]
fn a_load_that_replaces_stored_documents_moves_them_between_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "r.lshdb");
    let first = corpus(120);
    load(&db, &first, || true);
    assert_eq!(assert_right(&db).len(), 3);
    // Keys d0000, d0012, d0024, ... (members of the first family) take
    // the texts of members of the second family or of no family; new
    // documents follow.
    let again: Vec<(String, String)> = (0..120)
        .step_by(12)
        .map(|i| {
            let moved = if i % 24 == 0 {
                text(51 + i / 4 * 3)
            } else {
                text(1_000_000 + i)
            };
            (format!("d{i:04}"), moved)
        })
        .chain((120..180).map(|i| (format!("d{i:04}"), text(i))))
        .collect();
    let report = db
        .insert_bulk(
            again.iter().cloned(),
            &BulkOptions::default().batch(5),
            |_| true,
        )
        .unwrap();
    assert_eq!(report.replaced, 10);
    let clusters = assert_right(&db);
    // d0000 now holds a second-family text: it is in that family's cluster.
    let of = |key: &str| clusters.iter().find(|c| c.contains(key)).cloned();
    assert_eq!(of("d0000"), of("d0051"));
    assert!(of("d0012").is_none(), "{clusters:?}");
}

/// A commit that replaces a stored document and adds a near-duplicate of
/// its old text only: the new document has no neighbour left (the old
/// text is removed in the same transaction), so it must not join the
/// cluster the old text was in.
#[test]
fn a_near_duplicate_of_a_text_replaced_in_its_own_commit_stays_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = with_clusters(&dir, "o.lshdb");
    let base: Vec<String> = (0..40).map(|w| format!("base{w}")).collect();
    let edited = |from: usize, tag: &str| {
        let mut words = base.clone();
        for (n, word) in words.iter_mut().skip(from).take(6).enumerate() {
            *word = format!("{tag}{n}");
        }
        words.join(" ")
    };
    // x and y are neighbours, and x and z, but not y and z.
    let (x, y, z) = (base.join(" "), edited(0, "y"), edited(34, "z"));
    db.insert_bulk([("x", x), ("y", y)], &BulkOptions::default(), |_| true)
        .unwrap();
    assert_eq!(assert_right(&db).len(), 1);
    let other = (0..40)
        .map(|w| format!("other{w}"))
        .collect::<Vec<_>>()
        .join(" ");
    db.insert_bulk([("x", other), ("z", z)], &BulkOptions::default(), |_| true)
        .unwrap();
    assert!(assert_right(&db).is_empty());
}
