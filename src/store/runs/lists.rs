//! [`ListCache`]: posting lists read from runs, kept for a dedup-on-write
//! load's look-ups.
//!
//! Real corpora have hot buckets: boilerplate, templated texts and copies
//! of one text share their band keys, and every copy that arrives looks
//! the same lists up again, block after block through redb's pages. A run
//! never changes once written, so what was read from it stays true; the
//! cache keeps the lists (at most a bound of bytes, S3-FIFO) under
//! (run, band, key), and the load's [`RowCache`](super::RowCache) forgets
//! those of runs that are gone, and all of them when a run id is issued
//! again.

use crate::store::probe::Probe;
use crate::Result;
use std::sync::Arc;

/// A list as read: the ids (at most `cap`), and whether it was cut there.
struct List {
    ids: Box<[u64]>,
    cut: bool,
    cap: usize,
}

impl List {
    /// The answer to a look-up of at most `cap` ids, when this list has it.
    fn answer(&self, cap: usize) -> Option<(&[u64], bool)> {
        if self.cut && self.cap < cap {
            return None; // the list goes on past what was read
        }
        let n = self.ids.len().min(cap);
        Some((&self.ids[..n], self.cut || self.ids.len() > cap))
    }
}

/// Weighs a list by its bytes.
#[derive(Clone)]
struct Bytes;

impl quick_cache::Weighter<(u32, u32, u64), Arc<List>> for Bytes {
    fn weight(&self, _key: &(u32, u32, u64), list: &Arc<List>) -> u64 {
        list.ids.len() as u64 * 8 + 64
    }
}

/// Posting lists read from runs, by (run, band, key).
pub struct ListCache {
    lists: quick_cache::sync::Cache<(u32, u32, u64), Arc<List>, Bytes>,
}

impl ListCache {
    /// A cache of about `bytes` bytes of lists.
    pub fn with_bytes(bytes: usize) -> Self {
        let items = (bytes / 256).max(16);
        Self {
            lists: quick_cache::sync::Cache::with_weighter(items, bytes as u64, Bytes),
        }
    }

    /// Appends to `out` run `run`'s list of `probe`, from the cache or by
    /// `read` (which appends it and says whether it was cut at the cap);
    /// true when cut. Look-ups from a given id on are not kept.
    pub fn postings(
        &self,
        run: u32,
        probe: Probe,
        out: &mut Vec<u64>,
        read: impl FnOnce(&mut Vec<u64>) -> Result<bool>,
    ) -> Result<bool> {
        if probe.after.is_some() {
            return read(out);
        }
        let at = (run, probe.index, probe.key);
        if let Some(list) = self.lists.get(&at) {
            if let Some((ids, cut)) = list.answer(probe.cap) {
                out.extend_from_slice(ids);
                return Ok(cut);
            }
        }
        let from = out.len();
        let cut = read(out)?;
        let list = List {
            ids: out[from..].into(),
            cut,
            cap: probe.cap,
        };
        self.lists.insert(at, Arc::new(list));
        Ok(cut)
    }

    /// Forgets the lists of runs `keep` refuses.
    pub fn retain(&self, keep: impl Fn(u32) -> bool) {
        self.lists.retain(|&(run, _, _), _| keep(run));
    }

    /// Forgets every list.
    pub fn clear(&self) {
        self.lists.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_within_what_was_read() {
        let full = List {
            ids: vec![1, 2, 3].into(),
            cut: false,
            cap: 10,
        };
        assert_eq!(full.answer(10), Some((&[1u64, 2, 3][..], false)));
        assert_eq!(full.answer(2), Some((&[1u64, 2][..], true)));
        let cut = List {
            ids: vec![1, 2].into(),
            cut: true,
            cap: 2,
        };
        assert_eq!(cut.answer(2), Some((&[1u64, 2][..], true)));
        assert_eq!(cut.answer(1), Some((&[1u64][..], true)));
        assert_eq!(cut.answer(3), None);
    }

    #[test]
    fn reads_once_then_answers_from_memory() {
        let cache = ListCache::with_bytes(1 << 20);
        let probe = Probe::all(3, 99, 100);
        let mut reads = 0;
        for _ in 0..3 {
            let mut out = vec![7];
            let cut = cache
                .postings(5, probe, &mut out, |out| {
                    reads += 1;
                    out.extend([10, 11]);
                    Ok(false)
                })
                .unwrap();
            assert_eq!((out, cut), (vec![7, 10, 11], false));
        }
        assert_eq!(reads, 1);
        cache.retain(|run| run != 5);
        let mut out = Vec::new();
        cache
            .postings(5, probe, &mut out, |out| {
                reads += 1;
                out.push(10);
                Ok(false)
            })
            .unwrap();
        assert_eq!(reads, 2, "a run let go is read again");
    }
}
