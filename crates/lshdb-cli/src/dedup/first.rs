//! Keep policy `first`: one streaming pass. The reader's thread sorts out
//! the records of each chunk that the index need not see (bad records,
//! repeated ids, names stored before this run); the others go, as one
//! chunk, to `Database::insert_unique_bulk`, which prepares and looks up
//! the next chunk while it decides this one; each chunk's kept records are
//! written out once it is decided.

use super::*;
use crate::records::{Carried, Chunk};
use crate::support::hashes::Hashes;
use lshdb::DocumentBuf;
use std::collections::VecDeque;

/// Keep policy `first`, streaming.
pub(super) fn first(run: &Run<'_>, target: Target, out: Outputs<'_>) -> Result<Target, CliError> {
    let Run {
        args,
        db,
        threshold,
        fields,
        format,
        interrupt,
        ..
    } = *run;
    let Outputs { side, counts, bar } = out;
    // What went wrong reading or writing, which ends the load.
    let failure: RefCell<Option<CliError>> = RefCell::new(None);
    // Chunks read and not yet decided, in order (`None`: an empty chunk,
    // given to the index while the input waits, so that it decides what
    // it holds before the next chunk comes).
    let pending: RefCell<VecDeque<Option<Pending>>> = RefCell::new(VecDeque::new());
    // Keys of this run, for repeated ids: a 64-bit hash each (8.5 bytes),
    // a thirty-second of --memory of them in memory and the rest in a
    // temporary file, so that memory stays bounded at any number of
    // records. Two ids of one hash (about 1 in 3·10⁵ runs of 10 M records)
    // make the second a rejected record, which fails the run without
    // --rejected: never lost.
    let mut seen = Hashes::with_budget(args.memory / 32);
    let mut sink: Option<Sink<Target>> = None;
    let mut target = Some(target);
    // A temporary database is thrown away: it need not be written.
    let options = BulkOptions::default()
        .batch(args.batch)
        .scratch(args.db.is_none())
        .memory(args.memory)
        .duplicate_of(args.duplicate_of.unwrap_or_default());
    // On the reader's thread: what each chunk's records come to without
    // the index.
    let triage = |input, layout, chunk| {
        let place = Place {
            inputs: &args.inputs,
            input,
        };
        triage(&place, layout, chunk, &mut seen, bar, run)
    };
    let (loaded, layout) = read_ahead(&args.inputs, format, fields, interrupt, triage, |chunks| {
        let read = chunks.map_while(|triaged| {
            if failure.borrow().is_some() {
                return None;
            }
            match triaged {
                Ahead::Idle => {
                    pending.borrow_mut().push_back(None);
                    Some(Vec::new())
                }
                Ahead::Read(Ok((chunk, checks))) => {
                    pending.borrow_mut().push_back(Some(chunk));
                    Some(checks)
                }
                Ahead::Read(Err(err)) => {
                    *failure.borrow_mut() = Some(err);
                    None
                }
            }
        });
        db.insert_unique_bulk(read, threshold, &options, |decided| {
            let Some(chunk) = pending.borrow_mut().pop_front() else {
                return false;
            };
            let Some(chunk) = chunk else {
                return !interrupt.interrupted();
            };
            let outputs = (&mut sink, &mut target, &mut *side);
            let written = write_decided((&args.inputs, db), chunk, decided, outputs, counts);
            if let Err(err) = written {
                *failure.borrow_mut() = Some(err);
                return false;
            }
            !interrupt.interrupted()
        })
    })?;
    // Everything checked is committed, also when stopped.
    loaded?;
    if let Some(err) = failure.into_inner() {
        return Err(err);
    }
    if interrupt.interrupted() {
        return fail("interrupted");
    }
    finish_output(sink, target, layout)
}

/// Fails a run that asks for --time-field or --priority-field where they
/// mean nothing: without --db (nothing is stored), or with a keep policy
/// other than `first` (whose stores do not carry them); and one that asks
/// for --duplicate-of with another keep policy.
pub(super) fn check_flags(args: &Args) -> Result<(), CliError> {
    if args.duplicate_of.is_some() && args.keep != Keep::First {
        return fail(
            "--duplicate-of works with --keep first only (the default); with another \
             policy a dropped record names the record its cluster keeps",
        );
    }
    if !args.carry.any() {
        return Ok(());
    }
    if args.db.is_none() {
        return fail(
            "--time-field and --priority-field give the records stored in --db their \
             timestamp and priority; give --db FILE",
        );
    }
    if args.keep != Keep::First {
        return fail("--time-field and --priority-field work with --keep first only (the default)");
    }
    Ok(())
}

/// A chunk read and waiting for the index's decisions.
struct Pending {
    input: usize,
    chunk: Chunk,
    /// What each record comes to, in input order (blank lines left out).
    fates: Vec<(usize, Fate)>,
    /// The keys of the records checked against the index, in order.
    keys: Vec<String>,
    /// The layout the output is written with.
    layout: Layout,
    /// Records in the chunk (blank lines are not records).
    read: u64,
}

/// What a record of policy `first` comes to.
enum Fate {
    Keep,
    Drop(Drop),
    Bad(String),
    /// Decided by the index (`insert_unique_bulk`), in record order.
    Check,
}

/// Decides what it can of a chunk's records without the index (bad
/// records, repeated ids, a bad --time-field or --priority-field, empty
/// texts, names stored before this run); returns the chunk with those
/// fates and the (key, document) of the records left for the index.
fn triage(
    place: &Place<'_>,
    layout: Layout,
    mut chunk: Chunk,
    seen: &mut Hashes,
    bar: &indicatif::ProgressBar,
    run: &Run<'_>,
) -> Result<(Pending, Vec<(String, Carried)>), CliError> {
    let mut read = 0;
    let mut fates: Vec<(usize, Fate)> = Vec::with_capacity(chunk.units.len());
    let mut checks: Vec<(String, Carried)> = Vec::new();
    for (i, (line, parsed)) in chunk.units.iter_mut().enumerate() {
        let good = match parsed {
            Parsed::Blank => continue,
            Parsed::Bad(reason) => {
                read += 1;
                fates.push((i, Fate::Bad(std::mem::take(reason))));
                continue;
            }
            Parsed::Good(good) => good,
        };
        read += 1;
        bar.inc(1);
        let key = good.id.clone().unwrap_or_else(|| place.key(*line));
        let new = seen.insert(id_hash(&key)).map_err(|e| {
            CliError::Message(format!(
                "the repeated-id check cannot use its temporary file: {e}"
            ))
        })?;
        if !new {
            fates.push((i, Fate::Bad(repeated(&key))));
            continue;
        }
        let (at, priority) = match crate::records::read_extras(&run.fields.extra, &good.extra) {
            Ok(carried) => carried,
            Err(reason) => {
                fates.push((i, Fate::Bad(reason)));
                continue;
            }
        };
        // An empty text has no near-duplicates: kept, never stored.
        if good.text.trim().is_empty() {
            fates.push((i, Fate::Keep));
            continue;
        }
        if !run.fresh && run.db.contains(&key)? {
            let fate = match stored_before(run.db, &key, &good.text, run.threshold)? {
                Ok(drop) => Fate::Drop(drop),
                Err(reason) => Fate::Bad(reason),
            };
            fates.push((i, fate));
            continue;
        }
        fates.push((i, Fate::Check));
        let doc = DocumentBuf::Text(std::mem::take(&mut good.text));
        checks.push((key, Carried { doc, at, priority }));
    }
    let keys = checks.iter().map(|(key, _)| key.clone()).collect();
    let pending = Pending {
        input: place.input,
        chunk,
        fates,
        keys,
        layout,
        read,
    };
    Ok((pending, checks))
}

/// Counts a decided chunk's records, reports its drops and bad records,
/// and writes its kept records.
fn write_decided(
    (inputs, db): (&[String], &Database),
    pending: Pending,
    decided: Vec<lshdb::Result<Unique>>,
    (sink, target, side): (&mut Option<Sink<Target>>, &mut Option<Target>, &mut Side),
    counts: &mut Counts,
) -> Result<(), CliError> {
    let Pending {
        input,
        chunk,
        fates,
        keys,
        layout,
        read,
    } = pending;
    counts.read += read;
    let place = Place { inputs, input };
    let mut checked = keys.into_iter().zip(decided);
    let mut keep = vec![false; chunk.units.len()];
    for (i, fate) in fates {
        let fate = match fate {
            Fate::Check => {
                let (key, done) = checked.next().ok_or_else(|| {
                    CliError::Message("internal error: a record was not checked".into())
                })?;
                match done {
                    Ok(Unique::Inserted) => Fate::Keep,
                    Ok(Unique::Duplicate(hit)) => Fate::Drop(Drop {
                        id: key,
                        of: hit.key,
                        similarity: hit.similarity,
                    }),
                    // Empty once normalised: no near-duplicates either.
                    Err(lshdb::Error::EmptyDocument { .. }) => Fate::Keep,
                    Err(err) => match refusal(&err) {
                        Some(reason) => Fate::Bad(reason),
                        None => return Err(err.into()),
                    },
                }
            }
            decided => decided,
        };
        match fate {
            Fate::Keep | Fate::Check => {
                keep[i] = true;
                counts.kept += 1;
            }
            Fate::Drop(drop) => {
                counts.dropped += 1;
                side.record(drop, Some(db))?;
            }
            Fate::Bad(reason) => {
                let line = chunk.units[i].0;
                bad(counts, &place, line, &reason);
                side.reject(chunk.original(i), &reason, &inputs[input], line)?;
            }
        }
    }
    if sink.is_none() {
        let out = target
            .take()
            .ok_or_else(|| CliError::Message("internal error: no output".into()))?;
        *sink = Some(Sink::new(out, &layout)?);
    }
    if let Some(sink) = sink {
        sink.write(&chunk, &keep)?;
    }
    Ok(())
}
