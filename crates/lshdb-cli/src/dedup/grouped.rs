//! Keep policies `longest`, `max:F`, `min:F`: two passes. The first loads
//! the records and learns the groups; the second writes the record each
//! policy keeps. Identical texts are collapsed first (as the Spark job
//! does): only the first of each set of identical texts is loaded and
//! grouped, and its copies join its group, so that many copies of one text
//! cost one document, not a quadratic number of pairs. The decisions are
//! those of grouping every record: identical texts are always in one
//! group, with similarity 1.

use super::*;
use std::hash::{Hash, Hasher};

mod decide;
use decide::decide;

/// How pass 1 decided a record without the groups.
enum Decided {
    /// Kept: an empty text.
    Keep,
    /// Dropped: a duplicate of itself stored by an earlier run.
    Drop(Drop),
    /// Rejected, with the reason (reported in pass 1, written in pass 2).
    Reject(String),
}

/// What pass 1 learnt of a record of this run.
struct Seen {
    /// Input, line.
    input: usize,
    line: u64,
    /// Position in the input, for ties.
    order: u64,
    score: f64,
    /// Dropped: (kept key, similarity to it).
    dropped: Option<(String, f64)>,
    decided: Option<Decided>,
    /// The record loaded for its text when that text is a copy of an
    /// earlier one's (this record itself is not loaded).
    copy_of: Option<String>,
}

/// What pass 1 gathered.
#[derive(Default)]
struct Learnt {
    /// Every record of this run by key.
    seen: HashMap<String, Seen>,
    /// Records read.
    order: u64,
    /// Text hash → the loaded record with that text.
    texts: HashMap<u128, String>,
    /// Loaded record → the later records with its text.
    copies: HashMap<String, Vec<String>>,
}

/// A 128-bit hash of a text, to find identical texts.
fn text_hash(text: &str) -> u128 {
    let half = |seed: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut h);
        text.hash(&mut h);
        h.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

/// Keep policies `longest`, `max:F`, `min:F`: two passes.
pub(super) fn grouped(run: &Run<'_>, target: Target, out: Outputs<'_>) -> Result<Target, CliError> {
    let Run {
        args,
        db,
        threshold,
        ..
    } = *run;
    let Outputs { side, counts, bar } = out;
    let mut learnt = pass_one(run, counts, bar)?;
    let kept_copies = decide(db, threshold, &mut learnt, run.interrupt)?;
    let Learnt { seen, .. } = learnt;
    // A persistent database keeps only the kept records: the loaded
    // records dropped go, the kept copies come in pass 2.
    if args.db.is_some() {
        let removals: Vec<&String> = seen
            .iter()
            .filter(|(_, s)| s.dropped.is_some() && s.copy_of.is_none())
            .map(|(k, _)| k)
            .collect();
        for chunk in removals.chunks(args.batch.max(1)) {
            let mut batch = db.batch()?;
            for key in chunk {
                batch.remove(key)?;
            }
            batch.commit()?;
        }
    }
    pass_two(run, seen, &kept_copies, target, (side, counts))
}

/// Pass 2: the kept records, in input order, and the dropped and rejected
/// records in their files; the kept copies stored in a persistent
/// database.
fn pass_two(
    run: &Run<'_>,
    mut seen: HashMap<String, Seen>,
    kept_copies: &HashSet<String>,
    target: Target,
    (side, counts): (&mut Side, &mut Counts),
) -> Result<Target, CliError> {
    let Run { args, db, .. } = *run;
    let mut sink: Option<Sink<Target>> = None;
    let mut target = Some(target);
    let mut done: HashSet<String> = HashSet::new();
    let mut to_store: Vec<(String, String)> = Vec::new();
    let layout = for_each_chunk(run, |input, layout, chunk| {
        let place = Place {
            inputs: &args.inputs,
            input,
        };
        let out = open_sink(&mut sink, &mut target, layout)?;
        let mut keep = vec![false; chunk.units.len()];
        for (i, (line, _)) in chunk.units.iter().enumerate() {
            let source = &args.inputs[input];
            let Some(good) = reread(side, &chunk, i, source)? else {
                continue;
            };
            let key = good.id.clone().unwrap_or_else(|| place.key(*line));
            let Some(s) = seen.get_mut(&key) else {
                continue;
            };
            if s.input != input || s.line != *line || !done.insert(key.clone()) {
                side.reject(chunk.original(i), &repeated(&key), source, *line)?;
                continue;
            }
            match fate(s, &key) {
                Fate::Reject(reason) => side.reject(chunk.original(i), &reason, source, *line)?,
                Fate::Drop(drop) => {
                    counts.dropped += 1;
                    side.record(drop, Some(db))?;
                }
                Fate::Keep => {
                    keep[i] = true;
                    counts.kept += 1;
                    if args.db.is_some() && kept_copies.contains(&key) {
                        to_store.push((key, good.text.clone()));
                        if to_store.len() >= args.batch.max(1) {
                            store(db, &mut to_store)?;
                        }
                    }
                }
            }
        }
        out.write(&chunk, &keep)?;
        Ok(())
    })?;
    store(db, &mut to_store)?;
    finish_output(sink, target, layout)
}

/// What pass 2 does with a record of pass 1.
enum Fate {
    Reject(String),
    Drop(Drop),
    Keep,
}

/// The fate of the record `key` that pass 1 saw as `s` (taken from it).
fn fate(s: &mut Seen, key: &str) -> Fate {
    match (s.decided.take(), s.dropped.take()) {
        (Some(Decided::Reject(reason)), _) => Fate::Reject(reason),
        (Some(Decided::Drop(drop)), _) => Fate::Drop(drop),
        (_, Some((of, similarity))) => Fate::Drop(Drop {
            id: key.to_owned(),
            of,
            similarity,
        }),
        _ => Fate::Keep,
    }
}

/// Stores kept copies (records not loaded in pass 1) in the database.
fn store(db: &Database, docs: &mut Vec<(String, String)>) -> Result<(), CliError> {
    if docs.is_empty() {
        return Ok(());
    }
    let mut batch = db.batch()?;
    for (key, text) in docs.drain(..) {
        batch.insert(&key, text.as_str())?;
    }
    batch.commit()?;
    Ok(())
}

/// Pass 1: every record read; the first of each text loaded in bulk.
fn pass_one(
    run: &Run<'_>,
    counts: &mut Counts,
    bar: &indicatif::ProgressBar,
) -> Result<Learnt, CliError> {
    let args = run.args;
    let mut learnt = Learnt::default();
    let options = BulkOptions::default().batch(args.batch);
    let rejected = read_and_load(run, &options, |input, chunk, docs| {
        let place = Place {
            inputs: &args.inputs,
            input,
        };
        for (line, parsed) in chunk.units {
            let good = match parsed {
                Parsed::Blank => continue,
                Parsed::Bad(reason) => {
                    counts.read += 1;
                    bad(counts, &place, line, &reason);
                    continue;
                }
                Parsed::Good(good) => good,
            };
            counts.read += 1;
            bar.inc(1);
            docs.extend(learn(run, &place, line, good, &mut learnt, counts)?);
        }
        Ok(())
    })?;
    refused(args, rejected, &mut learnt, counts);
    Ok(learnt)
}

/// The records the loader refused, and their copies: kept (an empty
/// text) or rejected, with the reason reported.
fn refused(
    args: &Args,
    rejected: Vec<(String, lshdb::Error)>,
    learnt: &mut Learnt,
    counts: &mut Counts,
) {
    for (key, err) in rejected {
        // The loader's refusal holds for the record's copies too.
        let copies = learnt.copies.remove(&key).unwrap_or_default();
        for key in std::iter::once(key).chain(copies) {
            let Some(s) = learnt.seen.get_mut(&key) else {
                continue;
            };
            s.decided = Some(match (&err, refusal(&err)) {
                (lshdb::Error::EmptyDocument { .. }, _) => Decided::Keep,
                (_, reason) => {
                    let reason = reason.unwrap_or_else(|| err.to_string());
                    let place = Place {
                        inputs: &args.inputs,
                        input: s.input,
                    };
                    bad(counts, &place, s.line, &reason);
                    Decided::Reject(reason)
                }
            });
        }
    }
}

/// Learns one good record of pass 1; returns (key, text) when it is to be
/// loaded (the first record with its text).
fn learn(
    run: &Run<'_>,
    place: &Place<'_>,
    line: u64,
    good: crate::records::Good,
    state: &mut Learnt,
    counts: &mut Counts,
) -> Result<Option<(String, String)>, CliError> {
    state.order += 1;
    let key = good.id.clone().unwrap_or_else(|| place.key(line));
    if state.seen.contains_key(&key) {
        bad(counts, place, line, &repeated(&key));
        return Ok(None);
    }
    let score = match &run.args.keep {
        Keep::Longest => good.text.chars().count() as f64,
        Keep::Max(_) => good.score.unwrap_or(f64::NEG_INFINITY),
        Keep::Min(_) => good.score.map_or(f64::NEG_INFINITY, |s| -s),
        Keep::First => 0.0,
    };
    let mut seen = Seen {
        input: place.input,
        line,
        order: state.order,
        score,
        dropped: None,
        decided: None,
        copy_of: None,
    };
    if good.text.trim().is_empty() {
        seen.decided = Some(Decided::Keep);
    } else if !run.fresh && run.db.contains(&key)? {
        seen.decided = Some(
            match stored_before(run.db, &key, &good.text, run.threshold)? {
                Ok(drop) => Decided::Drop(drop),
                Err(reason) => {
                    bad(counts, place, line, &reason);
                    Decided::Reject(reason)
                }
            },
        );
    } else {
        let hash = text_hash(&good.text);
        if let Some(first) = state.texts.get(&hash) {
            seen.copy_of = Some(first.clone());
            state
                .copies
                .entry(first.clone())
                .or_default()
                .push(key.clone());
        } else {
            state.texts.insert(hash, key.clone());
            state.seen.insert(key.clone(), seen);
            return Ok(Some((key, good.text)));
        }
    }
    state.seen.insert(key, seen);
    Ok(None)
}
