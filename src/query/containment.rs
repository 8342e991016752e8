//! Containment search: stored documents that contain at least a fraction
//! t of the query's shingles (|Q ∩ X| / |Q| ≥ t), for finding where a
//! passage came from.
//!
//! With the containment index (`store::containment`, LSH Ensemble), every
//! size class that can hold t·|Q| shingles is probed on its own: the class's
//! largest size turns the containment threshold into a Jaccard bound, and
//! `Ensemble::plan` picks how many prefix trees to probe at what depth for
//! it. Candidates are verified against their stored sets, so every hit's
//! containment is exact and nothing below t is returned; a document is
//! missed only when it shares no probed prefix with the query, which the
//! explain record's `recall_estimate` bounds.
//!
//! **Small classes are read whole.** Where the best plan still finds a set
//! at the threshold with probability below [`MIN_CANDIDATE_PROBABILITY`] —
//! a short passage against much longer documents, whose Jaccard bound is
//! tiny — the class is read whole instead (tree 0 lists each of its
//! documents once) when it holds at most [`CLASS_SCAN_CAP`] documents, so
//! its recall is 1. Larger such classes are probed as planned, and the
//! explain record's `recall_estimate` says how likely a miss is. Set sizes
//! follow a power law in most corpora, so the classes of long documents,
//! where this happens, are the small ones.
//!
//! Without the index (or when asked to be exhaustive) the engine scans
//! every stored set: exact, and linear in the database.

use crate::query::plan::resolve;
use crate::query::Warning;
use crate::sketch::ensemble::{common_needed, intersection_at_least, ClassPlan, Ensemble};
use crate::store::codec;
use crate::store::containment::{self as index, Posting};
use crate::store::tables::{ReadTables, Reader};
use crate::Result;
use redb::ReadableTable;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// A class whose plan finds a set at the threshold with a lower
/// probability than this is read whole when it is small enough.
pub const MIN_CANDIDATE_PROBABILITY: f64 = 0.9;

/// The most documents a size class may hold to be read whole.
pub const CLASS_SCAN_CAP: usize = 10_000;

/// Knobs of one containment search.
#[derive(Debug, Clone)]
pub struct ContainmentOptions {
    /// Containment a hit needs, in (0, 1].
    pub threshold: f64,
    /// Keep only the best `limit` hits.
    pub limit: Option<usize>,
    /// A document id never returned (the query document itself).
    pub exclude: Option<u64>,
    /// New candidates taken from one probed prefix at most.
    pub max_bucket: usize,
    /// Classes of at most this many documents are read whole where their
    /// plan finds too little (default [`CLASS_SCAN_CAP`]; 0: never).
    pub class_scan_cap: usize,
}

/// A stored document that contains the query (or enough of it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ContainmentHit {
    /// The stored document's key.
    pub key: String,
    /// Exact containment of the query in it: |Q ∩ X| / |Q|.
    pub containment: f64,
    /// Exact Jaccard similarity |Q ∩ X| / |Q ∪ X|.
    pub jaccard: f64,
}

/// How one size class was probed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ClassProbe {
    /// The size class: ⌊p·log₂ size⌋.
    pub class: u8,
    /// Smallest set size of the class.
    pub min_size: u64,
    /// Largest set size of the class.
    pub max_size: u64,
    /// Lowest Jaccard similarity of a set of the class at the threshold.
    pub jaccard_bound: f64,
    /// True when every document of the class was a candidate (a small
    /// class whose plan found too little; see the module docs).
    pub whole: bool,
    /// Prefix trees probed.
    pub trees: usize,
    /// Fragments a probe shared with the query (the band width).
    pub depth: usize,
    /// Probability that a set of the class at the threshold became a
    /// candidate (1 for a class read whole).
    pub candidate_probability: f64,
    /// That probability under the plan, had the class been probed.
    pub index_probability: f64,
    /// Candidates read (ids no earlier probe of the query found).
    pub postings: usize,
    /// Probes cut at the cap.
    pub truncated: usize,
}

/// What a containment search did and cost.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ContainmentExplain {
    /// True when every stored set was scanned (no containment index, or
    /// an exhaustive query) instead of probing the index.
    pub scanned: bool,
    /// The size classes probed, smallest first (empty for a scan).
    pub classes: Vec<ClassProbe>,
    /// Distinct candidate documents (every document, for a scan).
    pub candidates: usize,
    /// Candidates too small to hold t·|Q| shingles (exact).
    pub pruned_by_length: usize,
    /// Candidates whose sets were compared with the query's.
    pub verified: usize,
    /// Hits returned.
    pub returned: usize,
    /// A lower bound on the probability that a stored document with
    /// containment at or above the threshold is found: the least
    /// candidate probability over the classes probed (1 for a scan).
    pub recall_estimate: f64,
    /// Time to shingle and sketch the query.
    pub sketch_time: Duration,
    /// Time in index look-ups.
    pub lookup_time: Duration,
    /// Time reading and verifying candidates.
    pub verify_time: Duration,
    /// Things the caller should know (a scan, cut probes).
    pub warnings: Vec<Warning>,
}

/// A containment search's answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ContainmentResult {
    /// Hits, highest containment first (then Jaccard, then insertion
    /// order), every one verified against the stored set.
    pub hits: Vec<ContainmentHit>,
    /// What each step did and cost.
    pub explain: ContainmentExplain,
}

/// Verified hits as (id, containment, Jaccard).
type Scored = Vec<(u64, f64, f64)>;

/// Containment and Jaccard of a query of `q` shingles and a set of `x`
/// that share `common`.
fn scores(common: usize, q: usize, x: usize) -> (f64, f64) {
    let union = q + x - common;
    (common as f64 / q as f64, common as f64 / union as f64)
}

/// Probes the containment index for `set` (signature `signature`) and
/// verifies the candidates.
pub fn search(
    reader: &impl Reader,
    table: Option<&impl ReadableTable<Posting, ()>>,
    ensemble: &Ensemble,
    set: &[u32],
    signature: &[u32],
    options: &ContainmentOptions,
) -> Result<(Scored, ContainmentExplain)> {
    let mut explain = ContainmentExplain {
        recall_estimate: 1.0,
        ..ContainmentExplain::default()
    };
    let (q, t) = (set.len(), options.threshold);
    let need = common_needed(t, q);
    let start = Instant::now();
    let mut candidates = Vec::new();
    let mut seen = HashSet::new();
    let mut prefixes = Vec::new();
    ensemble.prefixes(signature, &mut prefixes);
    // The smallest class that can hold `need` shingles, then each
    // non-empty class after it.
    let mut class = ensemble.class_of(u32::try_from(need).unwrap_or(u32::MAX));
    while let Some(table) = table {
        let Some(found) = index::next_class(table, class)? else {
            break;
        };
        class = found;
        // No plan: the class is too small to hold `need` shingles.
        if let Some(plan) = ensemble.plan(class, q, t) {
            let probe = probe_class(
                table,
                ensemble,
                class,
                plan,
                &prefixes,
                options,
                (&mut seen, &mut candidates),
            )?;
            explain.recall_estimate = explain.recall_estimate.min(probe.candidate_probability);
            explain.classes.push(probe);
        }
        match class.checked_add(1) {
            Some(next) => class = next,
            None => break,
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    if let Some(own) = options.exclude {
        candidates.retain(|&id| id != own);
    }
    explain.candidates = candidates.len();
    explain.lookup_time = start.elapsed();

    let hits = verify(reader, set, candidates, need, &mut explain)?;
    let cut: usize = explain.classes.iter().map(|c| c.truncated).sum();
    if cut > 0 {
        explain.warnings.push(Warning::ProbesTruncated {
            probes: cut,
            max_bucket: options.max_bucket,
        });
    }
    Ok((hits, explain))
}

/// Reads each candidate's set and keeps those that share at least `need`
/// shingles with the query set `set`, scored. Counts and the time go to
/// `explain`.
fn verify(
    reader: &impl Reader,
    set: &[u32],
    candidates: Vec<u64>,
    need: usize,
    explain: &mut ContainmentExplain,
) -> Result<Scored> {
    let q = set.len();
    let start = Instant::now();
    let mut hits = Vec::new();
    for id in candidates {
        let mut want = |set_len: u32, _: &[u32]| set_len as usize >= need;
        let Some(entry) = reader.entry(id, &mut want)? else {
            continue; // removed concurrently within this transaction
        };
        let Some(other) = entry.set() else {
            if (entry.set_len() as usize) < need {
                explain.pruned_by_length += 1;
            }
            continue;
        };
        explain.verified += 1;
        if let Some(common) = intersection_at_least(set, other, need) {
            let (containment, jaccard) = scores(common, q, other.len());
            hits.push((id, containment, jaccard));
        }
    }
    explain.verify_time = start.elapsed();
    Ok(hits)
}

/// Probes one size class as `plan` says (or reads it whole, see the
/// module docs), appending the ids found to `candidates`.
fn probe_class(
    table: &impl ReadableTable<Posting, ()>,
    ensemble: &Ensemble,
    class: u8,
    plan: ClassPlan,
    prefixes: &[u64],
    options: &ContainmentOptions,
    (seen, candidates): (&mut HashSet<u64>, &mut Vec<u64>),
) -> Result<ClassProbe> {
    let (min_size, max_size) = ensemble.class_bounds(class);
    let mut probe = ClassProbe {
        class,
        min_size,
        max_size,
        whole: false,
        jaccard_bound: plan.jaccard_bound,
        trees: plan.trees,
        depth: plan.depth,
        candidate_probability: plan.candidate_probability,
        index_probability: plan.candidate_probability,
        postings: 0,
        truncated: 0,
    };
    if plan.candidate_probability < MIN_CANDIDATE_PROBABILITY && options.class_scan_cap > 0 {
        // Tree 0 holds each document of the class once.
        let mut all = Vec::new();
        let slot = index::slot(class, 0);
        if !index::probe(table, slot, (0, u64::MAX), options.class_scan_cap, &mut all)? {
            probe.whole = true;
            probe.postings = all.len();
            probe.candidate_probability = 1.0;
            candidates.extend(all);
            return Ok(probe);
        }
    }
    let mut cut = Vec::new();
    for (tree, &prefix) in prefixes.iter().enumerate().take(plan.trees) {
        let before = candidates.len();
        let range = Ensemble::prefix_range(prefix, plan.depth);
        let slot = index::slot(class, tree);
        if index::probe_unseen(table, slot, range, options.max_bucket, seen, candidates)? {
            cut.push((slot, range));
        }
        probe.postings += candidates.len() - before;
    }
    // A cut probe whose rest the class's later probes read lost nothing.
    for (slot, range) in cut {
        if !index::covered(table, slot, range, seen, 4 * options.max_bucket)? {
            probe.truncated += 1;
        }
    }
    Ok(probe)
}

/// Compares `set` with every stored set: exact, linear in the database.
/// `indexed` says whether the file has a containment index (the warning
/// then says the scan was asked for, not forced).
pub fn scan(
    tables: &ReadTables,
    set: &[u32],
    options: &ContainmentOptions,
    indexed: bool,
) -> Result<(Scored, ContainmentExplain)> {
    let mut explain = ContainmentExplain {
        scanned: true,
        recall_estimate: 1.0,
        ..ContainmentExplain::default()
    };
    let q = set.len();
    let need = common_needed(options.threshold, q);
    let start = Instant::now();
    let mut hits = Vec::new();
    let mut other = Vec::new();
    for entry in tables.sigs.iter()? {
        let (id, bytes) = entry?;
        let id = id.value();
        if Some(id) == options.exclude {
            continue;
        }
        explain.candidates += 1;
        let len = codec::peek_set_len(bytes.value())
            .map_err(|e| crate::store::tables::context(e, "signature", id))?;
        if (len as usize) < need {
            explain.pruned_by_length += 1;
            continue;
        }
        if !tables.set_into(id, &mut other)? {
            continue;
        }
        explain.verified += 1;
        if let Some(common) = intersection_at_least(set, &other, need) {
            let (containment, jaccard) = scores(common, q, other.len());
            hits.push((id, containment, jaccard));
        }
    }
    explain.verify_time = start.elapsed();
    explain.warnings.push(if indexed {
        Warning::ExhaustiveScan
    } else {
        Warning::NoContainmentIndex
    });
    Ok((hits, explain))
}

/// Ranks verified hits (containment, then Jaccard, best first; then id),
/// cuts them at `limit` and reads their keys.
pub fn finish(
    reader: &impl Reader,
    mut hits: Scored,
    limit: Option<usize>,
    explain: &mut ContainmentExplain,
) -> Result<Vec<ContainmentHit>> {
    hits.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(b.2.total_cmp(&a.2))
            .then(a.0.cmp(&b.0))
    });
    if let Some(limit) = limit {
        hits.truncate(limit);
    }
    explain.returned = hits.len();
    let keyed = resolve(reader, hits.iter().map(|&(id, c, _)| (id, c)).collect())?;
    Ok(keyed
        .into_iter()
        .zip(hits)
        .map(|(hit, (_, containment, jaccard))| ContainmentHit {
            key: hit.key,
            containment,
            jaccard,
        })
        .collect())
}
