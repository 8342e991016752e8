//! The scripted workload of the fault-injection tests, the logical state it
//! should leave after each operation, and the check of a recovered image.

use super::{Call, FaultyBackend};
use lshdb::{Config, Database, Error, Unique};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Texts: a family of near-duplicates (0, 1, 3, 9) and unrelated ones.
pub const TEXTS: &[&str] = &[
    "the quick brown fox jumps over the lazy dog near the quiet river bank",
    "the quick brown fox jumped over the lazy dog near the quiet river bank",
    "an embedded database keeps its pages in a single file on the disk",
    "the quick brown fox jumps over a lazy dog near the quiet river bank today",
    "minhash signatures estimate the jaccard similarity of two shingle sets",
    "locality sensitive hashing files similar signatures into the same bucket",
    "the slow brown fox walks around the lazy dog near the quiet river",
    "write ahead logs and checksums protect a database from torn writes",
    "a b-tree keeps its keys sorted so that range scans read few pages",
    "the quick brown fox jumps over the lazy dog near a quiet river bank",
    "copy on write pages let readers see a snapshot while a writer commits",
];

/// The fixed query whose hits are compared.
pub const QUERY: &str = "the quick brown fox jumps over the lazy dog near the quiet river";

/// Small and fast; text is stored so that recovered texts can be compared;
/// clusters are maintained, so every recovered image's clusters are
/// compared too, and `check` holds them against `groups`.
pub fn config() -> Config {
    Config::jaccard(0.5).store_text(true).clusters(true)
}

/// One operation of a batch.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Insert (or replace) key with `TEXTS[i]`.
    Insert(&'static str, usize),
    /// Remove key.
    Remove(&'static str),
}

/// One transaction of the script.
#[derive(Debug, Clone)]
pub enum Op {
    /// `Database::insert` of `TEXTS[i]`.
    Insert(&'static str, usize),
    /// `Database::insert_unique` of `TEXTS[i]`, which must be unique.
    InsertUnique(&'static str, usize),
    /// `Database::remove`.
    Remove(&'static str),
    /// A `Batch` of several steps, one commit.
    Batch(Vec<Step>),
    /// `Database::reband` to (threshold, (bands, rows)).
    Reband(f64, (usize, usize)),
}

/// About ten transactions: single inserts, a replace, removes (one of a
/// missing key), two batches, a re-band and a dedup-on-write insert.
pub fn script() -> Vec<Op> {
    use Op::*;
    vec![
        Insert("a", 0),
        Insert("b", 1),
        Insert("c", 2),
        Insert("a", 3), // replace
        Remove("b"),
        Batch(vec![
            Step::Insert("d", 4),
            Step::Insert("e", 5),
            Step::Remove("c"),
            Step::Insert("b", 6),
        ]),
        Reband(0.6, (20, 6)),
        Insert("f", 7),
        Remove("d"),
        Remove("missing"), // commits, changes nothing
        Batch(vec![
            Step::Insert("g", 8),
            Step::Insert("a", 9), // replace inside a batch
            Step::Remove("e"),
            Step::Insert("h", 1),
        ]),
        InsertUnique("i", 10),
    ]
}

/// The logical state: key → text, and the banding settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Key → stored text.
    pub docs: BTreeMap<String, String>,
    /// Bands.
    pub bands: usize,
    /// Rows per band.
    pub rows: usize,
    /// The index threshold.
    pub threshold: f64,
}

impl Model {
    /// The state after `op`, computed without lshdb.
    pub fn apply(&mut self, op: &Op) {
        let mut step = |s: &Step| match *s {
            Step::Insert(key, text) => {
                self.docs.insert(key.to_owned(), TEXTS[text].to_owned());
            }
            Step::Remove(key) => {
                self.docs.remove(key);
            }
        };
        match op {
            Op::Insert(key, text) | Op::InsertUnique(key, text) => step(&Step::Insert(key, *text)),
            Op::Remove(key) => step(&Step::Remove(key)),
            Op::Batch(steps) => steps.iter().for_each(step),
            Op::Reband(threshold, (bands, rows)) => {
                self.threshold = *threshold;
                self.bands = *bands;
                self.rows = *rows;
            }
        }
    }
}

/// Runs `op` on `db`; Ok means the operation was acknowledged.
pub fn apply(db: &mut Database, op: &Op) -> lshdb::Result<()> {
    match op {
        Op::Insert(key, text) => db.insert(key, TEXTS[*text]),
        Op::InsertUnique(key, text) => match db.insert_unique(key, TEXTS[*text], 0.5)? {
            Unique::Inserted => Ok(()),
            Unique::Duplicate(hit) => panic!("the script expects {key} to be unique: {hit:?}"),
        },
        Op::Remove(key) => db.remove(key).map(|_| ()),
        Op::Batch(steps) => {
            let mut batch = db.batch()?;
            for step in steps {
                match *step {
                    Step::Insert(key, text) => batch.insert(key, TEXTS[text])?,
                    Step::Remove(key) => {
                        batch.remove(key)?;
                    }
                }
            }
            batch.commit()
        }
        Op::Reband(threshold, bands) => db.reband(*threshold, Some(*bands)),
    }
}

/// What a database shows: the model's fields, read back, plus the fixed
/// query's hits (key, similarity bits).
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// Keys and texts (through `for_each` and `get`) and settings.
    pub model: Model,
    /// The fixed query's hits.
    pub hits: Vec<(String, u64)>,
    /// The maintained clusters: (id, representative, members).
    pub clusters: Vec<(u64, String, Vec<String>)>,
}

/// Reads everything [`Observed`] holds from `db`.
pub fn observe(db: &Database) -> lshdb::Result<Observed> {
    let mut exported = Vec::new();
    db.for_each(|doc| {
        exported.push(doc);
        true
    })?;
    let mut docs = BTreeMap::new();
    for doc in exported {
        let Some(stored) = db.get(&doc.key)? else {
            return Err(Error::NotFound(doc.key));
        };
        if stored.text != doc.text || stored.shingles != doc.shingles.len() {
            return Err(Error::Corrupted(format!(
                "get and for_each disagree on {}",
                doc.key
            )));
        }
        let text = doc
            .text
            .ok_or_else(|| Error::Corrupted("a text is missing".into()))?;
        docs.insert(doc.key, text);
    }
    if db.len()? != docs.len() as u64 {
        return Err(Error::Corrupted("len disagrees with for_each".into()));
    }
    let settings = db.settings();
    let hits = db
        .query(QUERY)
        .run()?
        .hits
        .into_iter()
        .map(|h| (h.key, h.similarity.to_bits()))
        .collect();
    let mut clusters = Vec::new();
    for cluster in db.clusters()? {
        let cluster = cluster?;
        let members = db.members(cluster.id)?.collect::<lshdb::Result<Vec<_>>>()?;
        clusters.push((cluster.id, cluster.representative, members));
    }
    Ok(Observed {
        clusters,
        model: Model {
            docs,
            bands: settings.bands,
            rows: settings.rows,
            threshold: settings.threshold,
        },
        hits,
    })
}

/// Asserts that none of a fault-injection test's `runs` failed: else
/// says how many did (`what` words it) and lists `failures`, one a line.
pub fn assert_none_failed(failures: &[String], runs: u64, what: &str) {
    assert!(
        failures.is_empty(),
        "{} of {runs} {what}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The backend calls of each kind (by [`Call::index`]) made so far.
pub fn calls(backend: &FaultyBackend) -> [u64; 3] {
    Call::ALL.map(|kind| backend.calls(kind))
}

/// The fault-free run: the state after create (index 0) and after each
/// operation, each checked against the [`Model`]; and the backend calls
/// that create, the script and the close make when nothing else runs.
pub fn reference() -> (Vec<Observed>, [u64; 3]) {
    let backend = FaultyBackend::new();
    let mut db = Database::builder()
        .create_with_backend(backend.clone(), config())
        .unwrap();
    assert_eq!(db.path(), std::path::Path::new("<backend>"));
    let settings = db.settings().clone();
    let mut model = Model {
        docs: BTreeMap::new(),
        bands: settings.bands,
        rows: settings.rows,
        threshold: settings.threshold,
    };
    let mut states = vec![observe(&db).unwrap()];
    assert_eq!(states[0].model, model);
    for op in script() {
        apply(&mut db, &op).unwrap();
        model.apply(&op);
        let observed = observe(&db).unwrap();
        assert_eq!(observed.model, model, "after {op:?}");
        states.push(observed);
    }
    drop(db);
    // The query finds the near-duplicate family, so comparing hits means
    // something.
    assert!(states.last().unwrap().hits.len() >= 2);
    // ...and forms a cluster, so comparing clusters means something too.
    assert!(states
        .last()
        .unwrap()
        .clusters
        .iter()
        .any(|c| c.2.len() >= 2));
    // (`check` commits, so it runs on a copy.)
    let mut copy = Database::builder()
        .open_with_backend(FaultyBackend::from_image(&backend.live_image()))
        .unwrap();
    assert!(copy.check_pages().unwrap().is_clean());
    assert_eq!(observe(&copy).unwrap(), *states.last().unwrap());

    // The calls of the same workload without the reads in between, which
    // is what the fault runs do.
    let counter = FaultyBackend::new();
    let mut db = Database::builder()
        .create_with_backend(counter.clone(), config())
        .unwrap();
    for op in script() {
        apply(&mut db, &op).unwrap();
    }
    drop(db);
    assert_eq!(counter.live_image(), backend.live_image());
    (states, calls(&counter))
}

/// How a reopened image turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovered {
    /// At the state of the last acknowledged operation.
    Acknowledged,
    /// With the operation in flight at the fault committed as well.
    InFlight,
    /// Not an lshdb database: the fault hit `create`, which failed.
    NotADatabase,
}

/// Opens `image` on a healthy backend and checks it: no panic, open
/// succeeds (redb repairs what needs it), [`Database::check`] is clean, the
/// contents equal `states[i]` for some `i` in `lo..=hi`, and the database
/// takes a new write and stays clean. When `create_acked` is false the
/// image may also be refused as [`Error::NotADatabase`].
pub fn verify_image(
    image: &[u8],
    lo: usize,
    hi: usize,
    create_acked: bool,
    states: &[Observed],
) -> Result<Recovered, String> {
    let checked = catch_unwind(AssertUnwindSafe(|| {
        let opened = Database::builder().open_with_backend(FaultyBackend::from_image(image));
        let mut db = match opened {
            Ok(db) => db,
            Err(Error::NotADatabase { .. }) if !create_acked => return Ok(Recovered::NotADatabase),
            Err(e) => return Err(format!("open failed: {e}")),
        };
        let report = db.check_pages().map_err(|e| format!("check failed: {e}"))?;
        if !report.is_clean() {
            return Err(format!("check is not clean: {report:?}"));
        }
        let observed = observe(&db).map_err(|e| format!("reading failed: {e}"))?;
        let Some(at) = (lo..=hi).find(|&i| states[i] == observed) else {
            return Err(format!(
                "the contents match no acceptable state ({lo}..={hi}): {observed:?}"
            ));
        };
        db.insert("after-recovery", TEXTS[2])
            .map_err(|e| format!("a write after recovery failed: {e}"))?;
        let report = db.check_pages().map_err(|e| format!("check failed: {e}"))?;
        if !report.is_clean() {
            return Err(format!("check after a write is not clean: {report:?}"));
        }
        Ok(if at == lo {
            Recovered::Acknowledged
        } else {
            Recovered::InFlight
        })
    }));
    checked.unwrap_or_else(|_| Err("reopening panicked".to_owned()))
}
