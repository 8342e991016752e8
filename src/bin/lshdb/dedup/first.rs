//! Keep policy `first`: one streaming pass. Each chunk of records is
//! checked against the database (and the records kept before it) with
//! `insert_unique_many`; the kept records are written out as they come.

use super::*;

/// Keep policy `first`, streaming.
pub(super) fn first(run: &Run<'_>, target: Target, out: Outputs<'_>) -> Result<Target, CliError> {
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
    let mut sink: Option<Sink<Target>> = None;
    let mut target = Some(target);
    // Keys of this run: key → line, for repeated ids.
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut txn = Some(db.batch()?);
    let mut in_txn = 0usize;
    let outcome = for_each_chunk(&args.inputs, format, fields, |input, layout, chunk| {
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
        // What each record comes to, in input order; records to check
        // against the index go to one `insert_unique_many` per chunk.
        let mut outcomes: Vec<(usize, Fate)> = Vec::with_capacity(chunk.units.len());
        let mut checks: Vec<(String, &str)> = Vec::new();
        for (i, (line, parsed)) in chunk.units.iter().enumerate() {
            let good = match parsed {
                Parsed::Blank => continue,
                Parsed::Bad(reason) => {
                    counts.read += 1;
                    outcomes.push((i, Fate::Bad(reason.clone())));
                    continue;
                }
                Parsed::Good(good) => good,
            };
            counts.read += 1;
            bar.inc(1);
            let key = good.id.clone().unwrap_or_else(|| place.key(*line));
            if let Some(first_line) = seen.get(&key) {
                let reason = format!(
                    "repeated id: `{}` is also at line {first_line}",
                    short(&key)
                );
                outcomes.push((i, Fate::Bad(reason)));
                continue;
            }
            seen.insert(key.clone(), *line);
            if !fresh && db.contains(&key)? {
                let outcome = match stored_before(db, &key, &good.text, threshold, resuming)? {
                    Ok(None) => Fate::Keep,
                    Ok(Some(drop)) => Fate::Drop(drop),
                    Err(reason) => Fate::Bad(reason),
                };
                outcomes.push((i, outcome));
                continue;
            }
            outcomes.push((i, Fate::Check));
            checks.push((key, good.text.as_str()));
        }
        let batch = txn
            .as_mut()
            .ok_or_else(|| CliError::Message("internal error: no transaction".into()))?;
        let mut checked = Vec::with_capacity(checks.len());
        for ((key, _), done) in checks
            .iter()
            .zip(batch.insert_unique_many(&checks, threshold)?)
        {
            checked.push(match done {
                Ok(Unique::Inserted) => {
                    in_txn += 1;
                    Fate::Keep
                }
                Ok(Unique::Duplicate(hit)) => Fate::Drop(Drop {
                    id: key.clone(),
                    of: hit.key,
                    similarity: hit.similarity,
                }),
                Err(err) => match refusal(&err) {
                    Some(reason) => Fate::Bad(reason),
                    None => return Err(err.into()),
                },
            });
        }
        // The checked fates, in the order of their records.
        let mut checked = checked.into_iter();
        let mut keep = vec![false; chunk.units.len()];
        for (i, outcome) in outcomes {
            let outcome = match outcome {
                Fate::Check => checked.next().ok_or_else(|| {
                    CliError::Message("internal error: a record was not checked".into())
                })?,
                decided => decided,
            };
            match outcome {
                Fate::Keep | Fate::Check => {
                    keep[i] = true;
                    counts.kept += 1;
                }
                Fate::Drop(drop) => {
                    counts.dropped += 1;
                    side.record(drop)?;
                }
                Fate::Bad(reason) => bad(counts, &place, chunk.units[i].0, &reason),
            }
        }
        if in_txn >= args.batch.max(1) {
            if let Some(done) = txn.take() {
                done.commit()?;
            }
            txn = Some(db.batch()?);
            in_txn = 0;
        }
        if let Some(sink) = &mut sink {
            sink.write(&chunk, &keep)?;
        }
        if interrupted() {
            return fail("interrupted");
        }
        Ok(())
    });
    // Commit what was checked, also when stopped.
    if let Some(done) = txn.take() {
        done.commit()?;
    }
    let layout = outcome?;
    finish_output(sink, target, layout)
}

/// What a record of policy `first` comes to.
enum Fate {
    Keep,
    Drop(Drop),
    Bad(String),
    /// Decided by the index (`insert_unique_many`), in record order.
    Check,
}
