//! Step 1 of the exact join, the global token order: every token counted
//! over all sets, ranked by increasing document frequency (rare first, ties
//! by value), and each set rewritten as the sorted ranks of its tokens,
//! through a value → rank hash table.

use rayon::prelude::*;

/// Rewrites every set as the sorted ranks of its tokens in the global
/// order of increasing frequency (then value).
pub(super) fn rank_sets(sets: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut all: Vec<u32> = Vec::with_capacity(sets.iter().map(Vec::len).sum());
    for set in sets {
        all.extend_from_slice(set);
    }
    all.par_sort_unstable();
    // Distinct values (ascending) with their frequencies.
    let mut counted: Vec<(u32, u32)> = Vec::new();
    for &v in &all {
        match counted.last_mut() {
            Some((value, freq)) if *value == v => *freq += 1,
            _ => counted.push((v, 1)),
        }
    }
    drop(all);
    counted.par_sort_unstable_by_key(|&(value, freq)| (freq, value));
    let ranks = RankTable::new(counted.iter().map(|&(value, _)| value), counted.len());
    drop(counted);
    sets.par_iter()
        .map(|set| {
            let mut ranks: Vec<u32> = set.iter().map(|&v| ranks.rank(v)).collect();
            ranks.sort_unstable();
            ranks
        })
        .collect()
}

/// Value → rank, an open-addressing hash table (linear probing) over the
/// distinct values: one cache miss a look-up where a binary search over
/// millions of values takes twenty.
struct RankTable {
    /// (value, rank + 1); rank + 1 = 0 marks an empty slot.
    slots: Vec<(u32, u32)>,
    mask: usize,
    /// 64 − log₂(slots): the hash is the top bits of the product.
    shift: u32,
}

impl RankTable {
    /// `values` in rank order, `len` of them.
    fn new(values: impl Iterator<Item = u32>, len: usize) -> Self {
        // Load factor between 1/3 and 2/3.
        let size = (len + len / 2 + 1).next_power_of_two();
        let mut table = Self {
            slots: vec![(0, 0); size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
        };
        for (rank, value) in values.enumerate() {
            let mut slot = table.home(value);
            while table.slots[slot].1 != 0 {
                slot = (slot + 1) & table.mask;
            }
            table.slots[slot] = (value, rank as u32 + 1);
        }
        table
    }

    fn home(&self, value: u32) -> usize {
        // Fibonacci hashing: the top bits of the product are well mixed
        // even for small or sequential values.
        let h = (value as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h.checked_shr(self.shift).unwrap_or(0) as usize & self.mask
    }

    /// The rank of a value the table holds.
    fn rank(&self, value: u32) -> u32 {
        let mut slot = self.home(value);
        loop {
            let (v, r) = self.slots[slot];
            if r == 0 || v == value {
                // Every looked-up value is in the table, so an empty slot
                // is never reached.
                return r.wrapping_sub(1);
            }
            slot = (slot + 1) & self.mask;
        }
    }
}
