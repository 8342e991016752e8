//! Keep policies `longest`, `max:F`, `min:F` without `--db`: two passes
//! over the temporary database, in memory that does not grow with the
//! input.
//!
//! The temporary database keeps clusters (`docs/clusters.md`): the
//! connected components of the verified near-duplicate graph, exactly the
//! groups `Database::groups` computes, maintained as the records are
//! loaded, each represented by its member of highest priority. Pass 1
//! loads every record with the policy's score as its priority, under a key
//! that starts with its place in the input (see [`stored_key`]), so that
//! ties go to the earlier record. Pass 2 re-reads the input beside one
//! walk of the database (`Database::document_clusters`, in the order pass
//! 1 loaded the records): a record that represents its cluster is kept,
//! any other is dropped as a duplicate of its cluster's representative.
//! So the decisions are those of grouping every record, and nothing is
//! held per record but the repeated-id check's hashes (within a 32nd of
//! `--memory`, then spilled). With `--db`, `grouped.rs` decides instead:
//! the stored records of earlier runs are in the groups.

use super::*;
use crate::support::hashes::Hashes;
use lshdb::Prioritised;

/// Keep policies `longest`, `max:F`, `min:F` on a temporary database
/// that keeps clusters by priority (see the module docs).
pub(super) fn clustered(
    run: &Run<'_>,
    target: Target,
    out: Outputs<'_>,
) -> Result<Target, CliError> {
    let Outputs { side, counts, bar } = out;
    pass_one(run, counts, bar)?;
    pass_two(run, target, (side, counts))
}

/// A record's score under the keep policy as a priority, in the same
/// order (`f64::total_cmp`'s): the longest text, the greatest field, the
/// least field; a record without the field comes last.
fn priority(keep: &Keep, good: &crate::records::Good) -> i64 {
    let score = match keep {
        Keep::Longest => good.text.chars().count() as f64,
        Keep::Max(_) => good.score.unwrap_or(f64::NEG_INFINITY),
        Keep::Min(_) => good.score.map_or(f64::NEG_INFINITY, |s| -s),
        Keep::First => 0.0,
    };
    let bits = score.to_bits() as i64;
    // Negative floats order backwards by their bits: flip all but the sign.
    if bits < 0 {
        bits ^ i64::MAX
    } else {
        bits
    }
}

/// Hex digits of a record's place in [`stored_key`].
const PLACE_DIGITS: usize = 16;

/// The key record `id`, the `place`-th record loaded, has in the
/// temporary database: its place in fixed-width hex, then its id. A bulk
/// load gives the documents of a commit ids in key order, so ids follow
/// the input, and a cluster's representative, the member of highest
/// priority with ties to the smallest id, is the earliest of the best.
fn stored_key(place: u64, id: &str) -> String {
    format!("{place:0w$x}{id}", w = PLACE_DIGITS)
}

/// The record id in a key of [`stored_key`].
fn record_id(stored: &str) -> &str {
    stored.get(PLACE_DIGITS..).unwrap_or(stored)
}

/// Pass 1: every good record with a text and an id of its own loaded in
/// bulk, with its priority, unless [`refused`] refuses it. Nothing is
/// kept per refused record: pass 2 finds them again.
fn pass_one(
    run: &Run<'_>,
    counts: &mut Counts,
    bar: &indicatif::ProgressBar,
) -> Result<(), CliError> {
    let args = run.args;
    let mut seen = Hashes::with_budget(args.memory / 32);
    let mut places = 0u64;
    // A temporary database is thrown away: it need not be written. Its
    // load refuses only what `refused` refuses first, so it keeps no list.
    let options = BulkOptions::default()
        .batch(args.batch)
        .scratch(true)
        .memory(args.memory)
        .max_rejected(0);
    read_and_load(run, &options, |input, chunk, docs| {
        let place = Place {
            inputs: &args.inputs,
            input,
        };
        for (line, parsed) in chunk.units {
            counts.read += u64::from(!matches!(parsed, Parsed::Blank));
            let good = match parsed {
                Parsed::Blank => continue,
                Parsed::Bad(reason) => {
                    bad(counts, &place, line, &reason);
                    continue;
                }
                Parsed::Good(good) => good,
            };
            bar.inc(1);
            let key = good.id.clone().unwrap_or_else(|| place.key(line));
            if !first_time(&mut seen, &key)? {
                bad(counts, &place, line, &repeated(&key));
                continue;
            }
            places += 1;
            // An empty text has no near-duplicates: kept, never loaded.
            if refused(&key, &good.text).is_none() && !good.text.trim().is_empty() {
                let priority = priority(&args.keep, &good);
                let stored = stored_key(places - 1, &key);
                docs.push((stored, Prioritised::new(good.text, priority)));
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// Why record `id` with `text` is rejected rather than loaded: an id too
/// long to store (as with `--db`), or to store with its place
/// ([`stored_key`]), or a text above the document limit. The same answer
/// in both passes, so pass 1 keeps no list of them, however many there
/// are.
fn refused(id: &str, text: &str) -> Option<String> {
    let max = lshdb::MAX_KEY_BYTES - PLACE_DIGITS;
    if id.len() > lshdb::MAX_KEY_BYTES {
        let err = lshdb::Error::InvalidKey {
            len: id.len(),
            max: lshdb::MAX_KEY_BYTES,
        };
        return Some(err.to_string());
    }
    if id.len() > max {
        return Some(format!(
            "id of {} bytes: --keep {{longest,max,min}} without --db takes ids of at most \
             {max} bytes (with --db, {})",
            id.len(),
            lshdb::MAX_KEY_BYTES
        ));
    }
    (text.len() > lshdb::MAX_DOCUMENT_BYTES).then(|| {
        let too_large = lshdb::Error::DocumentTooLarge {
            key: id.to_owned(),
            len: text.len(),
            max: lshdb::MAX_DOCUMENT_BYTES,
        };
        refusal(&too_large).unwrap_or_else(|| too_large.to_string())
    })
}

/// Whether `key` is seen for the first time in this pass.
fn first_time(seen: &mut Hashes, key: &str) -> Result<bool, CliError> {
    seen.insert(id_hash(key)).map_err(|e| {
        CliError::Message(format!(
            "the repeated-id check cannot use its temporary file: {e}"
        ))
    })
}

/// Pass 2: the kept records, in input order, and the dropped and rejected
/// records in their files.
fn pass_two(
    run: &Run<'_>,
    target: Target,
    (side, counts): (&mut Side, &mut Counts),
) -> Result<Target, CliError> {
    let Run { args, db, .. } = *run;
    let mut sink: Option<Sink<Target>> = None;
    let mut target = Some(target);
    let mut seen = Hashes::with_budget(args.memory / 32);
    let mut places = 0u64;
    let mut loaded = db.document_clusters()?.peekable();
    let layout = for_each_chunk(run, |input, layout, chunk| {
        let place = Place {
            inputs: &args.inputs,
            input,
        };
        let source = &args.inputs[input];
        let out = open_sink(&mut sink, &mut target, layout)?;
        let mut keep = vec![false; chunk.units.len()];
        for (i, (line, _)) in chunk.units.iter().enumerate() {
            let Some(good) = reread(side, &chunk, i, source)? else {
                continue;
            };
            let key = good.id.clone().unwrap_or_else(|| place.key(*line));
            if !first_time(&mut seen, &key)? {
                side.reject(chunk.original(i), &repeated(&key), source, *line)?;
                continue;
            }
            let stored = stored_key(places, &key);
            places += 1;
            if let Some(reason) = refused(&key, &good.text) {
                bad(counts, &place, *line, &reason);
                side.reject(chunk.original(i), &reason, source, *line)?;
                continue;
            }
            match fate(&mut loaded, db, &stored, &good.text)? {
                None => {
                    keep[i] = true;
                    counts.kept += 1;
                }
                Some(drop) => {
                    counts.dropped += 1;
                    // The temporary database's cluster ids mean nothing
                    // after the run: no `cluster` in the --dropped lines.
                    side.record(drop, None)?;
                }
            }
        }
        out.write(&chunk, &keep)?;
        Ok(())
    })?;
    if let Some(left) = loaded.next() {
        return out_of_order(&left?.key);
    }
    finish_output(sink, target, layout)
}

/// The temporary database's documents with their clusters, in id order,
/// which is the order pass 1 loaded them in ([`stored_key`]).
type Loaded = std::iter::Peekable<lshdb::DocumentClusters>;

/// What becomes of the record stored under `stored` ([`stored_key`]),
/// loaded in pass 1 unless its text is empty or was refused as empty once
/// normalised: kept (`None`) when it represents its cluster or is in none,
/// else dropped as a duplicate of the representative. Takes it from
/// `loaded`, where it is next when it was loaded.
fn fate(
    loaded: &mut Loaded,
    db: &Database,
    stored: &str,
    text: &str,
) -> Result<Option<Drop>, CliError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let next = match loaded.peek() {
        Some(Ok(doc)) => Some(doc.key.as_str()),
        Some(Err(_)) => match loaded.next() {
            Some(Err(err)) => return Err(err.into()),
            _ => return fail("internal error: a read of the temporary database changed"),
        },
        None => None,
    };
    match next {
        Some(key) if key == stored => {}
        Some(key) if key < stored => return out_of_order(key),
        // Not loaded: refused as empty once normalised. Made sure of, as
        // a record loaded out of order would otherwise be missed.
        _ if db.contains(stored)? => return out_of_order(stored),
        _ => return Ok(None),
    }
    let Some(doc) = loaded.next().transpose()? else {
        return fail("internal error: a read of the temporary database changed");
    };
    if doc.cluster.representative == doc.key {
        return Ok(None);
    }
    Ok(Some(Drop {
        id: record_id(&doc.key).to_owned(),
        of: record_id(&doc.cluster.representative).to_owned(),
        similarity: doc.similarity,
    }))
}

/// Fails the run: the temporary database's documents are not in the order
/// pass 1 loaded them in, which pass 2 relies on.
fn out_of_order<T>(stored: &str) -> Result<T, CliError> {
    fail(format!(
        "internal error: the temporary database holds `{}` out of input order",
        short(record_id(stored))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good(text: &str, score: Option<f64>) -> crate::records::Good {
        crate::records::Good {
            id: None,
            text: text.to_owned(),
            shingles: None,
            score,
            extra: Vec::new(),
        }
    }

    #[test]
    fn stored_keys_sort_by_place_and_give_back_the_id() {
        let keys: Vec<String> = [(9, "b"), (10, "a"), (255, ""), (256, "é/x")]
            .iter()
            .map(|&(place, id)| stored_key(place, id))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        assert_eq!(keys[0], "0000000000000009b");
        assert_eq!(record_id(&keys[3]), "é/x");
        assert_eq!(stored_key(u64::MAX, "z").len(), PLACE_DIGITS + 1);
    }

    #[test]
    fn priorities_order_as_the_scores() {
        let max = Keep::Max("f".into());
        let scores = [
            None,
            Some(f64::NEG_INFINITY),
            Some(-1e300),
            Some(-2.5),
            Some(-0.0),
            Some(0.0),
            Some(1e-300),
            Some(3.0),
            Some(3.5),
            Some(1e300),
        ];
        let ranked: Vec<i64> = scores
            .iter()
            .map(|&s| priority(&max, &good("x", s)))
            .collect();
        assert!(ranked.windows(2).all(|w| w[0] <= w[1]), "{ranked:?}");
        assert!(ranked[2] < ranked[3] && ranked[7] < ranked[8]);
        // min: the least field first; longest: the most characters.
        let min = Keep::Min("f".into());
        assert!(priority(&min, &good("x", Some(-4.0))) > priority(&min, &good("x", Some(2.0))));
        assert!(priority(&min, &good("x", Some(9.0))) > priority(&min, &good("x", None)));
        let longest = Keep::Longest;
        assert!(priority(&longest, &good("ééé", None)) > priority(&longest, &good("ab", None)));
    }
}
