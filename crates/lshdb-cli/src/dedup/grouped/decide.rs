//! The decisions of the grouped keep policies after pass 1: the groups,
//! the kept member of each, and each dropped record's similarity to it.

use super::super::*;
use super::{Learnt, Seen};

/// The groups, and one kept member in each: sets each dropped record's
/// `dropped`. Returns the kept records that are copies (not loaded).
pub(super) fn decide(
    db: &Database,
    threshold: f64,
    learnt: &mut Learnt,
    interrupt: &Interrupt,
) -> Result<HashSet<String>, CliError> {
    let groups = db.groups(threshold)?;
    let mut pairs_needed: Vec<(String, String)> = Vec::new();
    let mut grouped: HashSet<String> = HashSet::new();
    let undecided =
        |seen: &HashMap<String, Seen>, k: &str| seen.get(k).is_some_and(|s| s.decided.is_none());
    for members in &groups.groups {
        let loaded: Vec<&String> = members
            .iter()
            .map(|(k, _)| k)
            .filter(|k| undecided(&learnt.seen, k))
            .collect();
        if loaded.is_empty() {
            continue;
        }
        grouped.extend(loaded.iter().map(|k| (*k).clone()));
        // A member from an earlier run was kept then: it stays kept.
        let earlier = members
            .iter()
            .map(|(k, _)| k)
            .find(|k| learnt.seen.get(*k).is_none_or(|s| s.decided.is_some()));
        choose(learnt, &loaded, earlier, &mut pairs_needed);
    }
    // Texts with copies and no near-duplicate: a group of their own.
    let alone: Vec<String> = learnt
        .copies
        .keys()
        .filter(|k| !grouped.contains(*k) && undecided(&learnt.seen, k))
        .cloned()
        .collect();
    for key in &alone {
        choose(learnt, &[key], None, &mut pairs_needed);
    }
    let kept_copies = pairs_needed
        .iter()
        .map(|(_, kept)| kept)
        .filter(|k| learnt.seen.get(*k).is_some_and(|s| s.copy_of.is_some()))
        .cloned()
        .collect();
    similarities(db, learnt, pairs_needed, interrupt)?;
    Ok(kept_copies)
}

/// Chooses the kept member of a group of loaded records (with their
/// copies): `earlier` when a record of an earlier run is in it, else the
/// best by score, then order. Adds (dropped, kept) for every other member.
fn choose(
    learnt: &Learnt,
    loaded: &[&String],
    earlier: Option<&String>,
    pairs_needed: &mut Vec<(String, String)>,
) {
    let ours: Vec<&String> = loaded
        .iter()
        .flat_map(|k| std::iter::once(*k).chain(learnt.copies.get(*k).into_iter().flatten()))
        .collect();
    let kept = match earlier {
        Some(k) => k,
        None => {
            let best = ours.iter().copied().max_by(|a, b| {
                let (sa, sb) = (&learnt.seen[*a], &learnt.seen[*b]);
                sa.score.total_cmp(&sb.score).then(sb.order.cmp(&sa.order))
            });
            match best {
                Some(k) => k,
                None => return,
            }
        }
    };
    for key in ours {
        if key != kept {
            pairs_needed.push((key.clone(), kept.clone()));
        }
    }
}

/// Sets each dropped record's similarity to the kept one, from the stored
/// sets (a copy's set is its loaded record's).
fn similarities(
    db: &Database,
    learnt: &mut Learnt,
    pairs_needed: Vec<(String, String)>,
    interrupt: &Interrupt,
) -> Result<(), CliError> {
    let loaded_as = |seen: &HashMap<String, Seen>, k: &str| -> String {
        seen.get(k)
            .and_then(|s| s.copy_of.clone())
            .unwrap_or_else(|| k.to_owned())
    };
    let wanted: HashSet<String> = pairs_needed
        .iter()
        .flat_map(|(a, b)| [loaded_as(&learnt.seen, a), loaded_as(&learnt.seen, b)])
        .collect();
    let mut sets: HashMap<String, Vec<u32>> = HashMap::new();
    if !wanted.is_empty() {
        db.for_each(|doc| {
            if wanted.contains(doc.key.as_str()) {
                sets.insert(doc.key, doc.shingles);
            }
            !interrupt.interrupted()
        })?;
    }
    for (dropped, kept) in pairs_needed {
        let a = sets.get(&loaded_as(&learnt.seen, &dropped));
        let b = sets.get(&loaded_as(&learnt.seen, &kept));
        let similarity = match (a, b) {
            (Some(a), Some(b)) => lshdb::sketch::measures::jaccard(a, b),
            _ => 0.0,
        };
        if let Some(s) = learnt.seen.get_mut(&dropped) {
            s.dropped = Some((kept, similarity));
        }
    }
    Ok(())
}
