//! The `--clusters` side output, within a memory budget: a line per kept
//! record that has dropped duplicates, in the order of its first drop, its
//! drops in the order they came:
//! `{"dropped":[{"id":ID,"similarity":X},...],"kept":KEY}`.
//!
//! The drops are held in memory, grouped by kept record, until they pass
//! the budget. Past it, every drop goes through two external sorts
//! ([`Sorter`]): by kept record (equal ones in the order they came), which
//! makes each group's line, and then by the group's first drop, which puts
//! the lines in order. A line is written in pieces, so that one kept
//! record with millions of drops needs no more memory than any other. The
//! file is the same either way.

use crate::support::sorter::Sorter;
use std::collections::HashMap;
use std::io::{self, Write};

/// The bytes of a line piece, at most (about).
const PIECE: usize = 1 << 16;

/// The bytes a held drop takes, beyond its names, about.
const OVERHEAD: usize = 96;

/// A drop held in memory: (id, similarity, order).
type Held = (String, f64, u64);

/// The drops, grouped by the record they duplicate (see the module docs).
pub(super) struct ClusterFile {
    /// Kept record → its place in `groups`.
    index: HashMap<String, usize>,
    /// (kept record, its drops as (id, similarity, order)), in the order
    /// of their first drop.
    groups: Vec<(String, Vec<Held>)>,
    /// Bytes held, about.
    bytes: usize,
    /// Bytes that may be held before the drops go to files.
    budget: usize,
    /// Drops so far.
    count: u64,
    /// Past the budget: every drop by kept record, with its order,
    /// similarity and id.
    spilled: Option<Sorter>,
}

impl ClusterFile {
    /// An empty output that holds about `budget` bytes in memory.
    pub fn with_budget(budget: usize) -> Self {
        Self {
            index: HashMap::new(),
            groups: Vec::new(),
            bytes: 0,
            budget,
            count: 0,
            spilled: None,
        }
    }

    /// Adds the drop of `id`, a duplicate of `kept` at `similarity`.
    pub fn add(&mut self, kept: &str, id: String, similarity: f64) -> io::Result<()> {
        let order = self.count;
        self.count += 1;
        if let Some(sorter) = &mut self.spilled {
            return sorter.push(
                kept.as_bytes().to_vec(),
                drop_payload(order, similarity, &id),
            );
        }
        let at = match self.index.get(kept) {
            Some(&at) => at,
            None => {
                self.index.insert(kept.to_owned(), self.groups.len());
                self.groups.push((kept.to_owned(), Vec::new()));
                self.bytes += 2 * kept.len() + OVERHEAD;
                self.groups.len() - 1
            }
        };
        self.bytes += id.len() + OVERHEAD;
        self.groups[at].1.push((id, similarity, order));
        if self.bytes >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Moves every held drop into the sorter by kept record.
    fn spill(&mut self) -> io::Result<()> {
        let mut sorter = Sorter::with_budget(self.budget);
        self.index = HashMap::new();
        for (kept, drops) in std::mem::take(&mut self.groups) {
            for (id, similarity, order) in drops {
                sorter.push(
                    kept.as_bytes().to_vec(),
                    drop_payload(order, similarity, &id),
                )?;
            }
        }
        self.bytes = 0;
        self.spilled = Some(sorter);
        Ok(())
    }

    /// Writes the lines to `out`.
    pub fn write_to(self, out: &mut impl Write) -> io::Result<()> {
        let Some(by_kept) = self.spilled else {
            for (kept, drops) in &self.groups {
                let mut line = Line::new(out);
                for (id, similarity, _) in drops {
                    line.member(id, *similarity)?;
                }
                line.end(kept)?;
            }
            return Ok(());
        };
        // Each group's line in pieces, by (first drop, piece).
        let mut by_first = Sorter::with_budget(self.budget);
        // The group being made: (kept record, its first drop, its line).
        let mut group: Option<(Vec<u8>, u64, Pieces)> = None;
        for record in by_kept.finish()? {
            let (kept, payload) = record?;
            let (order, similarity, id) = read_payload(&payload)?;
            let (_, first, pieces) = match &mut group {
                Some(current) if current.0 == kept => current,
                _ => {
                    if let Some((kept, first, pieces)) = group.take() {
                        pieces.end(&kept, first, &mut by_first)?;
                    }
                    group.insert((kept, order, Pieces::default()))
                }
            };
            pieces.member(id, similarity, *first, &mut by_first)?;
        }
        if let Some((kept, first, pieces)) = group {
            pieces.end(&kept, first, &mut by_first)?;
        }
        for record in by_first.finish()? {
            out.write_all(&record?.1)?;
        }
        Ok(())
    }
}

/// A spilled drop's payload: order (u64 LE), similarity (f64 LE), id.
fn drop_payload(order: u64, similarity: f64, id: &str) -> Vec<u8> {
    let mut payload = Vec::with_capacity(16 + id.len());
    payload.extend_from_slice(&order.to_le_bytes());
    payload.extend_from_slice(&similarity.to_le_bytes());
    payload.extend_from_slice(id.as_bytes());
    payload
}

/// The (order, similarity, id) of [`drop_payload`].
fn read_payload(payload: &[u8]) -> io::Result<(u64, f64, &str)> {
    let bad = || io::Error::other("a damaged record in the --clusters spill file");
    if payload.len() < 16 {
        return Err(bad());
    }
    let order = u64::from_le_bytes(payload[..8].try_into().map_err(|_| bad())?);
    let similarity = f64::from_le_bytes(payload[8..16].try_into().map_err(|_| bad())?);
    let id = std::str::from_utf8(&payload[16..]).map_err(|_| bad())?;
    Ok((order, similarity, id))
}

/// A line written straight to the output.
struct Line<'a, W> {
    out: &'a mut W,
    members: usize,
}

impl<'a, W: Write> Line<'a, W> {
    fn new(out: &'a mut W) -> Self {
        Self { out, members: 0 }
    }

    fn member(&mut self, id: &str, similarity: f64) -> io::Result<()> {
        let mut piece = Vec::new();
        member_json(&mut piece, self.members == 0, id, similarity)?;
        self.members += 1;
        self.out.write_all(&piece)
    }

    fn end(self, kept: &str) -> io::Result<()> {
        let mut piece = Vec::new();
        if self.members == 0 {
            piece.extend_from_slice(b"{\"dropped\":[");
        }
        end_json(&mut piece, kept.as_bytes())?;
        self.out.write_all(&piece)
    }
}

/// A spilled group's line being cut into pieces.
#[derive(Default)]
struct Pieces {
    /// The piece being filled.
    piece: Vec<u8>,
    /// Pieces written so far.
    written: u64,
    members: usize,
}

impl Pieces {
    fn member(&mut self, id: &str, similarity: f64, first: u64, to: &mut Sorter) -> io::Result<()> {
        member_json(&mut self.piece, self.members == 0, id, similarity)?;
        self.members += 1;
        if self.piece.len() >= PIECE {
            self.flush(first, to)?;
        }
        Ok(())
    }

    fn end(mut self, kept: &[u8], first: u64, to: &mut Sorter) -> io::Result<()> {
        end_json(&mut self.piece, kept)?;
        self.flush(first, to)
    }

    /// Files the piece under (first drop, piece number), big-endian so
    /// that the keys sort as the numbers do.
    fn flush(&mut self, first: u64, to: &mut Sorter) -> io::Result<()> {
        let mut key = first.to_be_bytes().to_vec();
        key.extend_from_slice(&self.written.to_be_bytes());
        self.written += 1;
        to.push(key, std::mem::take(&mut self.piece))
    }
}

/// A member of the `dropped` list (opening the line before the first).
fn member_json(out: &mut Vec<u8>, first: bool, id: &str, similarity: f64) -> io::Result<()> {
    out.extend_from_slice(if first { b"{\"dropped\":[" } else { b"," });
    out.extend_from_slice(b"{\"id\":");
    serde_json::to_writer(&mut *out, id)?;
    out.extend_from_slice(b",\"similarity\":");
    serde_json::to_writer(&mut *out, &similarity)?;
    out.push(b'}');
    Ok(())
}

/// The end of a line: the kept record's key.
fn end_json(out: &mut Vec<u8>, kept: &[u8]) -> io::Result<()> {
    let kept = std::str::from_utf8(kept)
        .map_err(|_| io::Error::other("a damaged key in the --clusters spill file"))?;
    out.extend_from_slice(b"],\"kept\":");
    serde_json::to_writer(&mut *out, kept)?;
    out.extend_from_slice(b"}\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(file: ClusterFile) -> String {
        let mut out = Vec::new();
        file.write_to(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The same lines in memory and through files (tiny budgets spill at
    /// once; one group is cut into many pieces), and as serde_json writes
    /// them.
    #[test]
    fn spilled_lines_equal_lines_held() {
        let mut next = crate::support::testing::numbers(3);
        let drops: Vec<(String, String, f64)> = (0..30_000u64)
            .map(|i| {
                let kept = match next() % 3 {
                    0 => "hot \"kept\" é".to_owned(),
                    _ => format!("k{}", next() % 2000),
                };
                (kept, format!("d{i}\t"), (next() % 1000) as f64 / 999.0)
            })
            .collect();
        let mut outputs = Vec::new();
        for budget in [usize::MAX, 1 << 16, 300] {
            let mut file = ClusterFile::with_budget(budget);
            for (kept, id, s) in &drops {
                file.add(kept, id.clone(), *s).unwrap();
            }
            assert_eq!(file.spilled.is_some(), budget != usize::MAX);
            outputs.push(written(file));
        }
        assert_eq!(outputs[0], outputs[1]);
        assert_eq!(outputs[0], outputs[2]);
        let first = outputs[0].lines().next().unwrap();
        let kept = &drops[0].0;
        let members: Vec<_> = drops
            .iter()
            .filter(|(k, _, _)| k == kept)
            .map(|(_, id, s)| serde_json::json!({"id": id, "similarity": s}))
            .collect();
        let expected = serde_json::json!({"kept": kept, "dropped": members}).to_string();
        assert_eq!(first, expected);
        let kept_in_order: Vec<String> = outputs[0]
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kept"].to_string())
            .collect();
        let mut seen = std::collections::HashSet::new();
        let firsts: Vec<String> = drops
            .iter()
            .filter(|(k, _, _)| seen.insert(k.clone()))
            .map(|(k, _, _)| serde_json::Value::from(k.as_str()).to_string())
            .collect();
        assert_eq!(kept_in_order, firsts, "lines in the order of first drop");
    }

    #[test]
    fn no_drops_no_lines() {
        assert_eq!(written(ClusterFile::with_budget(0)), "");
        assert_eq!(written(ClusterFile::with_budget(usize::MAX)), "");
    }
}
