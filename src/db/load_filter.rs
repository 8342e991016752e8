//! [`LoadFilter`]: what a dedup-on-write load into an empty database has
//! written so far, as a Bloom filter in memory over the documents' keys and
//! band keys, so that a look-up whose keys are all absent skips the file.
//!
//! Most documents of a load have no stored near-duplicate and share no
//! band with a stored document. Their look-up in the last snapshot would
//! still probe every run's filter in every band (16 bands × every run,
//! rows read through redb); one probe here per key rules them out. The
//! filter only answers for a load whose database was empty when it began:
//! then everything the snapshots hold was written by the load, and added
//! here before the commit that made it visible. Answers are per band: a
//! look-up reads only the bands whose key the load may have written.
//! Blocked: the bits of a key are in one 64-bit word (one cache miss per
//! probe), 10 bits per key, under 2% false positives, which only cost the
//! ordinary look-up of that band.
//! Filters are chained, each twice as large as the one before, so memory
//! follows the load's size: about 21 bytes per document of 16 bands (16
//! bits per key took 34, 90 MB more at 10 M records), up to a budget
//! (`BulkOptions::load_filter_bytes`): a load that outgrows it turns the
//! filter off and frees it, so that its memory stays bounded at any size.
//! A bulk load without clusters looks up only its documents' keys (is
//! this key stored already?), so its filter holds only those
//! ([`LoadFilter::keys_only`], about 1.3 bytes per document): at 7 M
//! documents that look-up, through every run's filter rows, took 41 % of
//! the load's CPU.

use crate::hash::{key_hash, mix64, GOLDEN_GAMMA};
use crate::pipeline::Prepared;
use parking_lot::RwLock;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Keys the first filter holds before the next one is added (5 MiB): a
/// negative probe reads one word of every filter, so a load of a million
/// documents (17 million keys) had better need only two or three.
const FIRST_KEYS: u64 = 1 << 22;

/// Bits per key.
const BITS_PER_KEY: u64 = 10;

/// Bits set per key, in its word.
const PROBES: u32 = 4;

/// One filter: words of 64 bits, and how many keys it holds.
struct Filter {
    words: Vec<AtomicU64>,
    capacity: u64,
    keys: AtomicU64,
}

impl Filter {
    fn new(capacity: u64) -> Self {
        let words = (capacity * BITS_PER_KEY).div_ceil(64).max(1);
        Self {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            capacity,
            keys: AtomicU64::new(0),
        }
    }

    /// The word of hash `h` and its bits.
    fn locate(&self, h: u64) -> (usize, u64) {
        let word = ((u128::from(h) * self.words.len() as u128) >> 64) as usize;
        let g = mix64(h);
        let bits = (0..PROBES).fold(0u64, |acc, i| acc | 1 << ((g >> (6 * i)) & 63));
        (word, bits)
    }

    /// Sets the bits of hash `h` (without counting it).
    fn set(&self, h: u64) {
        let (word, bits) = self.locate(h);
        self.words[word].fetch_or(bits, Ordering::Release);
    }

    fn may_hold(&self, h: u64) -> bool {
        let (word, bits) = self.locate(h);
        self.words[word].load(Ordering::Acquire) & bits == bits
    }
}

/// The keys and band keys a load has written (see the module docs).
pub(crate) struct LoadFilter {
    filters: RwLock<Vec<Arc<Filter>>>,
    /// False once something was written that the filter does not hold;
    /// from then on it answers "maybe" to everything. Read under the
    /// filters' lock: turned off first, then the filters are dropped
    /// under the write lock, so a reader that saw it on sees them whole.
    on: AtomicBool,
    /// Keys the filters may hold in all: past it, the filter turns off
    /// (and frees its memory) rather than grow.
    max_keys: u64,
    /// Whether only the documents' keys are added (a bulk load without
    /// clusters, which looks up nothing but keys): then every band may
    /// be met.
    keys_only: bool,
}

impl LoadFilter {
    /// An empty filter, on, whose parts take at most `bytes` in all; a
    /// load that outgrows it goes on without it (every look-up then
    /// probes the file), so that its memory stays bounded.
    pub fn with_budget(bytes: usize) -> Self {
        let max_keys = (bytes as u64).saturating_mul(8) / BITS_PER_KEY;
        Self::with_first(FIRST_KEYS.min(max_keys), max_keys)
    }

    /// An empty filter whose first part holds `keys` keys, of `max_keys`
    /// in all.
    fn with_first(keys: u64, max_keys: u64) -> Self {
        Self {
            filters: RwLock::new(vec![Arc::new(Filter::new(keys.max(1)))]),
            on: AtomicBool::new(true),
            max_keys,
            keys_only: false,
        }
    }

    /// [`LoadFilter::with_budget`] holding only the documents' keys (about
    /// 1.3 bytes per document): for a bulk load without clusters, whose
    /// only look-up is whether a document's key is stored already.
    pub fn keys_only(bytes: usize) -> Self {
        Self {
            keys_only: true,
            ..Self::with_budget(bytes)
        }
    }

    /// Turns the filter off for good (something was written past it, or
    /// it reached its budget), and frees its memory.
    pub fn turn_off(&self) {
        self.on.store(false, Ordering::SeqCst);
        self.filters.write().clear();
    }

    /// Whether the filter still answers (false: it was turned off).
    #[cfg(test)]
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::SeqCst)
    }

    /// Adds a document about to be written: its key and its band keys.
    #[cfg(test)]
    pub fn add(&self, doc: &Prepared) {
        self.add_many(&[doc]);
    }

    /// Adds many documents about to be written, on every core.
    /// Past the budget, the filter turns off instead.
    ///
    /// The bits are set with no lock held: a thread that holds a lock while
    /// it waits for work on the pool may be given a look-up of that pool
    /// to run meanwhile, and the look-up's [`LoadFilter::may_meet`] would
    /// wait for the lock forever (a deadlock once the pool has three
    /// threads or more). The bits are atomic; only the chain needs the
    /// lock.
    pub fn add_many(&self, docs: &[&Prepared]) {
        let keys: u64 = match self.keys_only {
            true => docs.len() as u64,
            false => docs.iter().map(|doc| 1 + doc.band_keys.len() as u64).sum(),
        };
        let Some(last) = self.filter_for(keys) else {
            return;
        };
        docs.par_iter().for_each(|doc| match self.keys_only {
            true => last.set(key_hash(&doc.key)),
            false => hashes(doc).into_iter().for_each(|h| last.set(h)),
        });
        last.keys.fetch_add(keys, Ordering::Relaxed);
    }

    /// The filter that takes `keys` more keys: the last one, or a new one
    /// chained after it; none when the filter is off or would pass its
    /// budget (then it turns off).
    fn filter_for(&self, keys: u64) -> Option<Arc<Filter>> {
        let mut filters = self.filters.write();
        if !self.on.load(Ordering::SeqCst) {
            return None;
        }
        let full = filters
            .last()
            .is_none_or(|last| last.keys.load(Ordering::Relaxed) + keys > last.capacity);
        if full {
            // Large enough for these keys too, however many; twice the
            // last, or what is left of the budget.
            let mut capacity = filters.last().map_or(FIRST_KEYS, |last| last.capacity * 2);
            while capacity < keys {
                capacity *= 2;
            }
            let left = self
                .max_keys
                .saturating_sub(filters.iter().map(|f| f.capacity).sum());
            if left < keys {
                drop(filters);
                self.turn_off();
                return None;
            }
            filters.push(Arc::new(Filter::new(capacity.min(left))));
        }
        filters.last().cloned()
    }

    /// What of `doc` the load may have written: whether its key (false:
    /// certainly no document of the load has it), and the bands in which
    /// a document of the load may share its band key (bit `b` for band
    /// `b`; the others certainly not). Everything when off.
    pub fn may_meet(&self, doc: &Prepared) -> (bool, u64) {
        let filters = self.filters.read();
        if !self.on.load(Ordering::SeqCst) {
            return (true, u64::MAX);
        }
        // The newest filter first: the largest, holding most keys.
        let held = |h: u64| filters.iter().rev().any(|f| f.may_hold(h));
        let bands = match self.keys_only {
            true => u64::MAX,
            false => mask(band_hashes(&doc.band_keys), held),
        };
        (held(key_hash(&doc.key)), bands)
    }

    /// Whether a document of the load may have key `key` (false: none
    /// has it); true when off.
    pub fn may_hold_key(&self, key: &str) -> bool {
        let filters = self.filters.read();
        if !self.on.load(Ordering::SeqCst) {
            return true;
        }
        let h = key_hash(key);
        filters.iter().rev().any(|f| f.may_hold(h))
    }

    /// The bands (bit `min(band, 63)`) in which a document of the load may
    /// share a bucket with band keys `band_keys`; everything when off.
    pub fn bands_met(&self, band_keys: &[u64]) -> u64 {
        let filters = self.filters.read();
        if !self.on.load(Ordering::SeqCst) || self.keys_only {
            return u64::MAX;
        }
        mask(band_hashes(band_keys), |h| {
            filters.iter().rev().any(|f| f.may_hold(h))
        })
    }
}

/// The mask of the bands whose hash `held` may hold.
fn mask(hashes: impl Iterator<Item = u64>, held: impl Fn(u64) -> bool) -> u64 {
    hashes
        .enumerate()
        .filter(|&(_, h)| held(h))
        .fold(0u64, |mask, (band, _)| mask | 1 << band.min(63))
}

/// The hashes of a document's key and of each (band, band key).
fn hashes(doc: &Prepared) -> Vec<u64> {
    std::iter::once(key_hash(&doc.key))
        .chain(band_hashes(&doc.band_keys))
        .collect()
}

/// The hashes of a document's (band, band key) pairs.
fn band_hashes(band_keys: &[u64]) -> impl Iterator<Item = u64> + '_ {
    band_keys
        .iter()
        .enumerate()
        .map(|(band, &key)| mix64(key ^ (band as u64 + 1).wrapping_mul(GOLDEN_GAMMA)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketcher::Document;
    use crate::testing::new_db;

    fn prepared(key: &str, text: &str) -> Prepared {
        let (_dir, _path, db) = new_db("f.lshdb");
        db.pipeline().prepare(key, Document::Text(text)).unwrap()
    }

    #[test]
    fn added_documents_are_always_met() {
        let filter = LoadFilter::with_budget(1 << 20);
        let a = prepared("a", "the quick brown fox jumps over the lazy dog");
        assert_eq!(filter.may_meet(&a), (false, 0));
        filter.add(&a);
        let all = (1u64 << a.band_keys.len()) - 1;
        assert_eq!(filter.may_meet(&a), (true, all));
        // The same key with another text: met through the key.
        assert!(
            filter
                .may_meet(&prepared("a", "something else entirely here"))
                .0
        );
        // A copy under another key: met in every band.
        let copy = prepared("b", "the quick brown fox jumps over the lazy dog");
        assert_eq!(filter.may_meet(&copy).1, all);
    }

    #[test]
    fn a_filter_of_keys_only_holds_keys_and_answers_every_band() {
        let filter = LoadFilter::keys_only(1 << 20);
        let a = prepared("a", "the quick brown fox jumps over the lazy dog");
        assert!(!filter.may_hold_key("a"));
        filter.add(&a);
        assert!(filter.may_hold_key("a"));
        // The bands were not added: any may be met.
        let copy = prepared("b", "the quick brown fox jumps over the lazy dog");
        assert_eq!(filter.may_meet(&copy), (false, u64::MAX));
        assert_eq!(filter.bands_met(&copy.band_keys), u64::MAX);
        // One key per document, none per band.
        let keys: u64 = filter
            .filters
            .read()
            .iter()
            .map(|f| f.keys.load(Ordering::Relaxed))
            .sum();
        assert_eq!(keys, 1);
        filter.turn_off();
        assert!(filter.may_hold_key("never added"));
    }

    #[test]
    fn grows_and_keeps_everything_and_turns_off() {
        let filter = LoadFilter::with_first(40, u64::MAX);
        let docs: Vec<Prepared> = (0..200)
            .map(|i| prepared(&format!("k{i}"), &format!("document number {i} of a load")))
            .collect();
        for doc in &docs {
            filter.add(doc);
        }
        assert!(filter.filters.read().len() > 5, "chained as it filled");
        for d in &docs {
            assert_eq!(filter.may_meet(d), (true, (1u64 << d.band_keys.len()) - 1));
        }
        let other = prepared("zz", "an unrelated sentence about lighthouses");
        filter.turn_off();
        assert_eq!(filter.may_meet(&other), (true, u64::MAX));
    }

    /// The writer adds while look-ups on the same pool read: a thread that
    /// waits inside `add_many` for its pool may be handed a look-up, which
    /// must not find the filter locked by that very thread. Before the
    /// bits were set outside the lock, a pool of four threads hung here.
    #[test]
    fn adding_beside_lookups_on_one_pool_never_deadlocks() {
        let docs: Vec<Prepared> = (0..256)
            .map(|i| prepared(&format!("k{i}"), &format!("document number {i} of a load")))
            .collect();
        let filter = Arc::new(LoadFilter::with_first(64, u64::MAX));
        let (done, finished) = std::sync::mpsc::channel();
        let adder = Arc::clone(&filter);
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(4)
                .build()
                .unwrap();
            pool.install(|| {
                for round in 0..200 {
                    let refs: Vec<&Prepared> = docs.iter().skip(round % 7).collect();
                    rayon::join(
                        || adder.add_many(&refs),
                        || {
                            docs.par_iter().for_each(|d| {
                                adder.may_meet(d);
                            })
                        },
                    );
                }
            });
            let _ = done.send(());
        });
        let ended = finished.recv_timeout(std::time::Duration::from_secs(120));
        assert!(
            ended.is_ok(),
            "add_many and may_meet deadlocked on one pool"
        );
        assert!(filter.is_on());
    }

    #[test]
    fn a_filter_past_its_budget_turns_off_and_frees_its_memory() {
        // 2,048 bytes: 1,638 keys.
        let filter = LoadFilter::with_budget(2048);
        let docs: Vec<Prepared> = (0..400)
            .map(|i| prepared(&format!("k{i}"), &format!("document number {i} of a load")))
            .collect();
        let mut added = 0;
        while filter.is_on() {
            filter.add(&docs[added]);
            added += 1;
            if filter.is_on() {
                // Whatever was added is met, up to the last document.
                for d in &docs[..added] {
                    assert_eq!(filter.may_meet(d), (true, (1u64 << d.band_keys.len()) - 1));
                }
            }
        }
        // The document that would not fit turned it off.
        let per_doc = 1 + docs[0].band_keys.len();
        assert_eq!(added, 2048 * 8 / BITS_PER_KEY as usize / per_doc + 1);
        assert!(filter.filters.read().is_empty(), "memory freed");
        // Off: "maybe" for everything, and adding more changes nothing.
        filter.add(&docs[300]);
        for d in &docs {
            assert_eq!(filter.may_meet(d), (true, u64::MAX));
            assert_eq!(filter.bands_met(&d.band_keys), u64::MAX);
        }
    }
}
