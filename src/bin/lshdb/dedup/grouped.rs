//! Keep policies `longest`, `max:F`, `min:F`: two passes. The first loads
//! every record and learns the groups; the second writes the record each
//! policy keeps.

use super::*;

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
    /// Whether pass 1 already decided it without the groups (a resumed
    /// record, or a duplicate of itself from an earlier run).
    decided: Option<Result<(), Drop>>,
}

/// Keep policies `longest`, `max:F`, `min:F`: two passes.
pub(super) fn grouped(run: &Run<'_>, target: Target, out: Outputs<'_>) -> Result<Target, CliError> {
    let Run {
        args,
        db,
        threshold,
        resuming,
        fresh,
        fields,
        format,
    } = *run;
    let Outputs { side, counts, bar } = out;
    // Pass 1: every good record into the database, in bulk.
    let state = RefCell::new((HashMap::<String, Seen>::new(), 0u64));
    let failure = RefCell::new(None::<CliError>);
    let counts_cell = RefCell::new(std::mem::take(counts));
    let (sender, receiver) = std::sync::mpsc::sync_channel::<(String, String)>(4096);
    let mut report = None;
    std::thread::scope(|scope| -> Result<(), CliError> {
        let loader = scope.spawn(|| {
            db.insert_bulk(receiver, &BulkOptions::default().batch(args.batch), |_| {
                !interrupted()
            })
        });
        let read = for_each_chunk(&args.inputs, format, fields, |input, _, chunk| {
            let place = Place {
                inputs: &args.inputs,
                input,
            };
            let mut counts = counts_cell.borrow_mut();
            let mut state = state.borrow_mut();
            for (line, parsed) in chunk.units {
                let good = match parsed {
                    Parsed::Blank => continue,
                    Parsed::Bad(reason) => {
                        counts.read += 1;
                        bad(&mut counts, &place, line, &reason);
                        continue;
                    }
                    Parsed::Good(good) => good,
                };
                counts.read += 1;
                bar.inc(1);
                state.1 += 1;
                let order = state.1;
                let key = good.id.clone().unwrap_or_else(|| place.key(line));
                if let Some(seen) = state.0.get(&key) {
                    let first_line = seen.line;
                    bad(
                        &mut counts,
                        &place,
                        line,
                        &format!(
                            "repeated id: `{}` is also at line {first_line}",
                            short(&key)
                        ),
                    );
                    continue;
                }
                let score = match &args.keep {
                    Keep::Longest => good.text.chars().count() as f64,
                    Keep::Max(_) => good.score.unwrap_or(f64::NEG_INFINITY),
                    Keep::Min(_) => good.score.map_or(f64::NEG_INFINITY, |s| -s),
                    Keep::First => 0.0,
                };
                let mut seen = Seen {
                    input,
                    line,
                    order,
                    score,
                    dropped: None,
                    decided: None,
                };
                if !fresh && db.contains(&key)? {
                    match stored_before(db, &key, &good.text, threshold, resuming)? {
                        Ok(None) => {} // resumed: grouped with the rest
                        Ok(Some(drop)) => seen.decided = Some(Err(drop)),
                        Err(reason) => {
                            bad(&mut counts, &place, line, &reason);
                            continue;
                        }
                    }
                    state.0.insert(key, seen);
                    continue;
                }
                state.0.insert(key.clone(), seen);
                if sender.send((key, good.text)).is_err() {
                    break; // the loader stopped: its error is reported
                }
            }
            Ok(())
        });
        drop(sender);
        let loaded = loader
            .join()
            .map_err(|_| CliError::Message("internal error: the loader panicked".into()))?;
        if let Err(e) = read {
            *failure.borrow_mut() = Some(e);
        }
        report = Some(loaded?);
        Ok(())
    })?;
    *counts = counts_cell.into_inner();
    if let Some(err) = failure.into_inner() {
        return Err(err);
    }
    if interrupted() {
        return fail("interrupted");
    }
    let (mut seen, _) = state.into_inner();
    if let Some(report) = report {
        for (key, err) in report.rejected {
            if let Some(s) = seen.remove(&key) {
                let place = Place {
                    inputs: &args.inputs,
                    input: s.input,
                };
                bad(
                    counts,
                    &place,
                    s.line,
                    &refusal(&err).unwrap_or_else(|| err.to_string()),
                );
            }
        }
    }

    // The groups, and one kept member in each.
    let groups = db.groups(threshold)?;
    let mut pairs_needed: Vec<(String, String)> = Vec::new();
    for members in &groups.groups {
        let ours: Vec<&String> = members
            .iter()
            .map(|(k, _)| k)
            .filter(|k| seen.get(*k).is_some_and(|s| s.decided.is_none()))
            .collect();
        if ours.is_empty() {
            continue;
        }
        // A member from an earlier run was kept then: it stays kept.
        let earlier = members
            .iter()
            .map(|(k, _)| k)
            .find(|k| seen.get(*k).is_none_or(|s| s.decided.is_some()));
        let kept = match earlier {
            Some(k) => k.clone(),
            None => {
                let best = ours.iter().copied().max_by(|a, b| {
                    let (sa, sb) = (&seen[*a], &seen[*b]);
                    sa.score.total_cmp(&sb.score).then(sb.order.cmp(&sa.order))
                });
                match best {
                    Some(k) => k.clone(),
                    None => continue,
                }
            }
        };
        for key in ours {
            if *key != kept {
                pairs_needed.push((key.clone(), kept.clone()));
            }
        }
    }
    // Each dropped record's similarity to the kept one, from the stored sets.
    let wanted: HashSet<&str> = pairs_needed
        .iter()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    let mut sets: HashMap<String, Vec<u32>> = HashMap::new();
    if !wanted.is_empty() {
        db.for_each(|doc| {
            if wanted.contains(doc.key.as_str()) {
                sets.insert(doc.key, doc.shingles);
            }
            !interrupted()
        })?;
    }
    let mut removals = Vec::new();
    for (dropped, kept) in &pairs_needed {
        let similarity = match (sets.get(dropped), sets.get(kept)) {
            (Some(a), Some(b)) => lshdb::sketch::measures::jaccard(a, b),
            _ => 0.0,
        };
        if let Some(s) = seen.get_mut(dropped) {
            s.dropped = Some((kept.clone(), similarity));
        }
        removals.push(dropped.clone());
    }
    // A persistent database keeps only the kept records.
    if args.db.is_some() {
        for chunk in removals.chunks(args.batch.max(1)) {
            let mut batch = db.batch()?;
            for key in chunk {
                batch.remove(key)?;
            }
            batch.commit()?;
        }
    }

    // Pass 2: the kept records, in input order.
    let mut sink: Option<Sink<Target>> = None;
    let mut target = Some(target);
    let mut done: HashSet<String> = HashSet::new();
    let layout = for_each_chunk(&args.inputs, format, fields, |input, layout, chunk| {
        let place = Place {
            inputs: &args.inputs,
            input,
        };
        if sink.is_none() {
            let out = target
                .take()
                .ok_or_else(|| CliError::Message("internal error: no output".into()))?;
            sink = Some(Sink::new(out, layout)?);
        }
        let mut keep = vec![false; chunk.units.len()];
        for (i, (line, parsed)) in chunk.units.iter().enumerate() {
            let Parsed::Good(good) = parsed else { continue };
            let key = good.id.clone().unwrap_or_else(|| place.key(*line));
            let Some(s) = seen.get_mut(&key) else {
                continue;
            };
            if s.input != input || s.line != *line || !done.insert(key.clone()) {
                continue; // a repeated id, reported in pass 1
            }
            match (s.decided.take(), s.dropped.take()) {
                (Some(Err(drop)), _) => {
                    counts.dropped += 1;
                    side.record(drop)?;
                }
                (_, Some((of, similarity))) => {
                    counts.dropped += 1;
                    side.record(Drop {
                        id: key,
                        of,
                        similarity,
                    })?;
                }
                _ => {
                    keep[i] = true;
                    counts.kept += 1;
                }
            }
        }
        if let Some(sink) = &mut sink {
            sink.write(&chunk, &keep)?;
        }
        Ok(())
    })?;
    finish_output(sink, target, layout)
}
