//! The record cache: decoded signature and shingle-set records
//! ([`Entry`]) and external keys, shared by the read transactions of one
//! open database.
//!
//! Queries spend most of their time re-reading the same candidates: a
//! boilerplate family ("Haskell library X, profiling libraries") makes each
//! member a candidate of every other, so the same few thousand records are
//! fetched from redb's B-tree, CRC-checked and varint-decoded over and over.
//! The cache keeps them decoded, weighed by their bytes, and evicts with
//! `quick_cache`'s scan-resistant S3-FIFO policy.
//!
//! **Why it is never stale.** A document id's records are written once
//! and never changed: a replaced document gets a new id, a removed one's id
//! is never handed out again (see `db::writer`). A reader asks for ids it
//! found in its own snapshot's postings, and whatever the cache holds for
//! such an id is exactly what that snapshot holds. So the cache needs no
//! invalidation, in this process or across processes that share the file
//! (each process has its own cache). Entries of removed documents are
//! simply never asked for again and age out. Write transactions never use
//! the cache: their records are not committed yet.

use crate::store::codec::SignatureRecord;
use crate::store::tables::{Entry, Index, Reader};
use crate::Result;
use std::sync::Arc;

/// Default bytes of decoded records the cache holds.
pub const DEFAULT_RECORD_CACHE_BYTES: usize = 64 << 20;

/// Weighs an entry by its decoded bytes plus a fixed overhead.
#[derive(Clone)]
struct Bytes;

impl quick_cache::Weighter<Slot, Cached> for Bytes {
    fn weight(&self, _slot: &Slot, value: &Cached) -> u64 {
        let bytes = match value {
            Cached::Entry(entry) => entry.bytes(),
            Cached::Key(key) => key.len(),
        };
        (bytes + 96) as u64
    }
}

/// What a cache slot holds for a document id.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    /// Its signature record (and set).
    Entry(u64),
    /// Its external key.
    Key(u64),
}

#[derive(Clone)]
enum Cached {
    Entry(Entry),
    Key(Arc<str>),
}

type Entries = quick_cache::sync::Cache<Slot, Cached, Bytes>;

/// The cache of one open database; one of 0 bytes holds nothing.
pub struct RecordCache {
    entries: Option<Entries>,
}

impl RecordCache {
    /// A cache of at most `bytes` decoded bytes (0 disables it).
    pub fn new(bytes: usize) -> Self {
        let entries = (bytes > 0).then(|| {
            // Entries are about 1–2 KiB each on typical text.
            let estimated_items = (bytes / 1024).max(16);
            quick_cache::sync::Cache::with_weighter(estimated_items, bytes as u64, Bytes)
        });
        Self { entries }
    }

    /// Decoded bytes held now (for tests).
    #[cfg(any(test, feature = "internals"))]
    pub fn weight(&self) -> u64 {
        self.entries.as_ref().map_or(0, |e| e.weight())
    }

    /// `inner`, a read snapshot, with the cache in front of its signature,
    /// set and key reads.
    pub fn reader<'a, R: Reader>(&'a self, inner: &'a R) -> CachedReader<'a, R> {
        CachedReader { cache: self, inner }
    }

    fn get(&self, slot: Slot) -> Option<Cached> {
        self.entries.as_ref()?.get(&slot)
    }

    fn insert(&self, slot: Slot, value: Cached) {
        if let Some(entries) = &self.entries {
            entries.insert(slot, value);
        }
    }
}

/// A [`Reader`] that answers signature and set reads from the cache where
/// it can, and fills the cache from the snapshot where it cannot.
pub struct CachedReader<'a, R> {
    cache: &'a RecordCache,
    inner: &'a R,
}

impl<R: Reader> Reader for CachedReader<'_, R> {
    fn index(&self) -> &dyn Index {
        self.inner.index()
    }

    fn doc(&self, id: u64) -> Result<Option<crate::store::codec::DocRecord>> {
        self.inner.doc(id)
    }

    fn key(&self, id: u64) -> Result<Option<Arc<str>>> {
        if let Some(Cached::Key(key)) = self.cache.get(Slot::Key(id)) {
            return Ok(Some(key));
        }
        let key = self.inner.key(id)?;
        if let Some(key) = &key {
            self.cache
                .insert(Slot::Key(id), Cached::Key(Arc::clone(key)));
        }
        Ok(key)
    }

    fn set_into(&self, id: u64, out: &mut Vec<u32>) -> Result<bool> {
        self.inner.set_into(id, out)
    }

    fn signature_into(&self, id: u64, out: &mut SignatureRecord) -> Result<bool> {
        self.inner.signature_into(id, out)
    }

    fn entry(
        &self,
        id: u64,
        want_set: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> Result<Option<Entry>> {
        let cached = match self.cache.get(Slot::Entry(id)) {
            Some(Cached::Entry(entry)) => Some(entry),
            _ => None,
        };
        let entry = match cached {
            // `want_set` always sees the record: the caller's verdict
            // depends on it.
            Some(entry)
                if !want_set(entry.set_len(), entry.signature()) || entry.set().is_some() =>
            {
                return Ok(Some(entry))
            }
            // Cached without its set, and the set is wanted now.
            Some(entry) => {
                let mut set = Vec::new();
                if !self.inner.set_into(id, &mut set)? {
                    return Ok(None);
                }
                Entry::new(entry.set_len(), entry.signature(), Some(&set))
            }
            None => match self.inner.entry(id, want_set)? {
                Some(entry) => entry,
                None => return Ok(None),
            },
        };
        self.cache
            .insert(Slot::Entry(id), Cached::Entry(entry.clone()));
        Ok(Some(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::codec::DocRecord;
    use crate::store::probe::Probe;
    use crate::store::tables::Postings;
    use std::cell::Cell;

    /// A snapshot holding document 1 with set {1, 2, 3}; counts set reads.
    #[derive(Default)]
    struct Fake {
        set_reads: Cell<usize>,
    }

    impl Index for Fake {
        fn id_of(&self, _: &str) -> Result<Option<u64>> {
            Ok(None)
        }
        fn postings(&self, _: Postings, _: Probe, _: &mut Vec<u64>) -> Result<bool> {
            Ok(false)
        }
        fn len(&self) -> Result<u64> {
            Ok(1)
        }
    }

    impl Reader for Fake {
        fn index(&self) -> &dyn Index {
            self
        }
        fn doc(&self, _: u64) -> Result<Option<DocRecord>> {
            Ok(None)
        }
        fn set_into(&self, id: u64, out: &mut Vec<u32>) -> Result<bool> {
            self.set_reads.set(self.set_reads.get() + 1);
            out.clear();
            out.extend([1, 2, 3]);
            Ok(id == 1)
        }
        fn signature_into(&self, id: u64, out: &mut SignatureRecord) -> Result<bool> {
            out.set_len = 3;
            out.values = vec![7; 4];
            Ok(id == 1)
        }
    }

    fn set_of(reader: &impl Reader, id: u64) -> Option<Vec<u32>> {
        let entry = reader.entry(id, &mut |_, _| true).unwrap()?;
        entry.set().map(<[u32]>::to_vec)
    }

    #[test]
    fn hits_after_the_first_read() {
        let cache = RecordCache::new(1 << 20);
        let fake = Fake::default();
        let reader = cache.reader(&fake);
        assert_eq!(set_of(&reader, 1), Some(vec![1, 2, 3]));
        assert_eq!(set_of(&reader, 1), Some(vec![1, 2, 3]));
        assert_eq!(fake.set_reads.get(), 1, "the second read is a hit");
        assert_eq!(set_of(&reader, 2), None, "absent stays absent");
        assert!(cache.weight() > 0);
    }

    #[test]
    fn a_signature_only_entry_gains_its_set_when_wanted() {
        let cache = RecordCache::new(1 << 20);
        let fake = Fake::default();
        let reader = cache.reader(&fake);
        let entry = reader.entry(1, &mut |_, _| false).unwrap().unwrap();
        assert_eq!((entry.set().is_none(), fake.set_reads.get()), (true, 0));
        let mut seen = 0;
        let entry = reader
            .entry(1, &mut |set_len, _| {
                seen = set_len;
                true
            })
            .unwrap()
            .unwrap();
        assert_eq!(seen, 3, "the judge sees the cached record");
        assert_eq!(entry.set(), Some(&[1, 2, 3][..]));
        set_of(&reader, 1);
        assert_eq!(fake.set_reads.get(), 1);
    }

    #[test]
    fn a_disabled_cache_holds_nothing() {
        let cache = RecordCache::new(0);
        let fake = Fake::default();
        let reader = cache.reader(&fake);
        set_of(&reader, 1);
        set_of(&reader, 1);
        assert_eq!((fake.set_reads.get(), cache.weight()), (2, 0));
    }
}
