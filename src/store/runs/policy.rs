//! The merge policy: which runs to merge next, and which merges a write
//! makes itself (small ones, [`INLINE_MAX`]) rather than leave to the
//! background merger (`background.rs`).
//!
//! Runs are kept in levels, ⌊log₂ postings / 2⌋ (base 4), with at most
//! `FANOUT − 1` runs per level: `FANOUT` runs of one level are merged into
//! one run of a higher level. So each posting is rewritten about
//! log₄(total / first run) times, and a look-up probes at most three runs
//! per level (the run filters make most of those probes free). A run of a
//! lower level than the run after it (a load's last, short commit) is
//! merged into that run when the two are small, so short runs cannot stay
//! behind. The levels of the runs do not need to be in order: a merge made
//! in the background ends after newer runs were written.

use super::class;

/// Runs of one level at most before they are merged.
pub const FANOUT: usize = 4;

/// Postings of a merge at most for a write to make it itself (1 Mi
/// postings, 16 MiB of blocks, a few hundred milliseconds): larger merges
/// are left to the background merger, so that no write pays for them.
pub const INLINE_MAX: u64 = 1 << 20;

/// Runs at most before a write merges inline whatever merge is due, however
/// large, and then the smallest runs: the bound on the runs a look-up
/// probes when the background merger falls behind (or is not running: a
/// handle that another build or a tool opened). The policy keeps far fewer
/// (three per level, about 20 at 10 M documents).
pub const MAX_RUNS: usize = 48;

/// The level of a run of `postings` postings.
pub fn level(postings: u64) -> u32 {
    class(postings) / 2
}

/// The next merge the policy calls for among `list` (oldest first, as
/// (run, postings)), leaving out the `busy` runs (inputs of a background
/// merge), of at most `max_total` postings; `odd`: also the merge of a
/// run into the next one of a higher level. Returns the inputs, oldest
/// first.
pub fn next_merge(
    list: &[(u32, u64)],
    busy: &[u32],
    max_total: u64,
    odd: bool,
) -> Option<Vec<(u32, u64)>> {
    let free: Vec<(u32, u64)> = list
        .iter()
        .copied()
        .filter(|r| !busy.contains(&r.0))
        .collect();
    let total = |runs: &[(u32, u64)]| runs.iter().map(|r| r.1).sum::<u64>();
    if odd {
        let pair = (0..free.len().saturating_sub(1)).rev().find(|&i| {
            level(free[i].1) < level(free[i + 1].1) && total(&free[i..=i + 1]) <= max_total
        });
        if let Some(i) = pair {
            return Some(free[i..=i + 1].to_vec());
        }
    }
    let mut levels: Vec<u32> = free.iter().map(|r| level(r.1)).collect();
    levels.sort_unstable();
    levels.dedup();
    for l in levels {
        let runs: Vec<(u32, u64)> = free
            .iter()
            .copied()
            .filter(|r| level(r.1) == l)
            .take(FANOUT)
            .collect();
        if runs.len() == FANOUT && total(&runs) <= max_total {
            return Some(runs);
        }
    }
    None
}

/// The merge a write makes when more than [`MAX_RUNS`] runs are listed: the
/// `FANOUT` smallest runs not `busy` (oldest first), when there are two.
pub fn overflow_merge(list: &[(u32, u64)], busy: &[u32]) -> Option<Vec<(u32, u64)>> {
    if list.len() <= MAX_RUNS {
        return None;
    }
    let mut free: Vec<(u32, u64)> = list
        .iter()
        .copied()
        .filter(|r| !busy.contains(&r.0))
        .collect();
    free.sort_by_key(|r| (r.1, r.0));
    free.truncate(FANOUT);
    free.sort_unstable();
    (free.len() >= 2).then_some(free)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_runs_of_a_level_merge_wherever_they_are() {
        let list = [
            (1, 1 << 20),
            (2, 100),
            (3, 1 << 20),
            (4, 1 << 20),
            (5, 1 << 20),
        ];
        let merge = next_merge(&list, &[], u64::MAX, false).unwrap();
        assert_eq!(
            merge,
            vec![(1, 1 << 20), (3, 1 << 20), (4, 1 << 20), (5, 1 << 20)]
        );
        // Too large to merge inline; and busy runs are left out.
        assert_eq!(next_merge(&list, &[], INLINE_MAX, false), None);
        assert_eq!(next_merge(&list, &[3], u64::MAX, false), None);
    }

    #[test]
    fn a_short_run_merges_into_the_next_larger_one_when_small() {
        let list = [(1, 4000), (2, 10), (3, 4000)];
        assert_eq!(
            next_merge(&list, &[], INLINE_MAX, true),
            Some(vec![(2, 10), (3, 4000)])
        );
        assert_eq!(next_merge(&list, &[], INLINE_MAX, false), None);
        let list = [(1, 10), (2, INLINE_MAX)];
        assert_eq!(next_merge(&list, &[], INLINE_MAX, true), None);
    }

    #[test]
    fn piled_up_runs_are_bounded_by_merging_the_smallest() {
        let list: Vec<(u32, u64)> = (1..=MAX_RUNS as u32 + 1)
            .map(|r| (r, 1u64 << (r % 30)))
            .collect();
        let merge = overflow_merge(&list, &[]).unwrap();
        assert_eq!(merge.len(), FANOUT);
        assert!(merge.iter().all(|r| r.1 <= 8), "{merge:?}");
        assert_eq!(overflow_merge(&list[..MAX_RUNS], &[]), None);
    }
}
