//! [`Sorter`]: an external sort of byte records (a key and a payload) by
//! their key, within a memory budget, for side outputs whose order is not
//! the order the records come in (`dedup --clusters`).
//!
//! Records are held in memory up to the budget, then sorted and written to
//! a temporary file as one sorted run (deleted by the system when closed);
//! [`Sorter::finish`] merges the runs (and what memory still holds) into
//! one sorted stream. Past [`FAN_IN`] runs, the oldest are merged into one
//! first, so that the files open at once stay few. Records of equal keys
//! come out in the order they went in. Memory stays within the budget plus
//! one read buffer per run, at any number of records.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};

/// Runs merged at once.
pub const FAN_IN: usize = 64;

/// The bytes a record takes in memory beyond its key and payload, about.
const OVERHEAD: usize = 64;

/// A record: its key, the order it came in, and its payload.
type Record = (Vec<u8>, u64, Vec<u8>);

/// An external sort of (key, payload) records by key (see the module docs).
pub struct Sorter {
    held: Vec<Record>,
    /// Bytes `held` takes, about.
    bytes: usize,
    /// Bytes `held` may take before it is written as a run.
    budget: usize,
    /// Records so far (the order of equal keys).
    count: u64,
    /// Sorted runs in temporary files, oldest first.
    runs: Vec<File>,
}

impl Sorter {
    /// An empty sorter that holds about `budget` bytes of records in
    /// memory, and the rest in temporary files.
    pub fn with_budget(budget: usize) -> Self {
        Self {
            held: Vec::new(),
            bytes: 0,
            budget: budget.max(1),
            count: 0,
            runs: Vec::new(),
        }
    }

    /// Whether any record went to a file.
    #[cfg(test)]
    pub fn spilled(&self) -> bool {
        !self.runs.is_empty()
    }

    /// Adds a record.
    pub fn push(&mut self, key: Vec<u8>, payload: Vec<u8>) -> io::Result<()> {
        self.bytes += key.len() + payload.len() + OVERHEAD;
        self.held.push((key, self.count, payload));
        self.count += 1;
        if self.bytes >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes what memory holds as one sorted run; past [`FAN_IN`] runs,
    /// merges the oldest into one.
    fn spill(&mut self) -> io::Result<()> {
        let mut held = std::mem::take(&mut self.held);
        self.bytes = 0;
        held.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let mut out = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        for record in &held {
            write_record(&mut out, record)?;
        }
        drop(held);
        self.runs.push(rewound(out)?);
        if self.runs.len() >= FAN_IN {
            let oldest: Vec<File> = self.runs.drain(..FAN_IN).collect();
            let mut out = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
            for record in merge(oldest, Vec::new())? {
                write_record(&mut out, &record?)?;
            }
            self.runs.insert(0, rewound(out)?);
        }
        Ok(())
    }

    /// Every record, sorted by key (equal keys in the order they came),
    /// as (key, payload).
    pub fn finish(mut self) -> io::Result<impl Iterator<Item = io::Result<(Vec<u8>, Vec<u8>)>>> {
        self.held
            .sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let merged = merge(self.runs, self.held)?;
        Ok(merged.map(|record| record.map(|(key, _, payload)| (key, payload))))
    }
}

/// The file `out` wrote, flushed and read from its start.
fn rewound(out: BufWriter<File>) -> io::Result<File> {
    let mut file = out.into_inner().map_err(|e| e.into_error())?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// Writes a record: key length, payload length (u32 LE), order (u64 LE),
/// key, payload.
fn write_record(out: &mut impl Write, (key, order, payload): &Record) -> io::Result<()> {
    let too_long = || io::Error::other("a record of over 4 GiB");
    out.write_all(
        &u32::try_from(key.len())
            .map_err(|_| too_long())?
            .to_le_bytes(),
    )?;
    out.write_all(
        &u32::try_from(payload.len())
            .map_err(|_| too_long())?
            .to_le_bytes(),
    )?;
    out.write_all(&order.to_le_bytes())?;
    out.write_all(key)?;
    out.write_all(payload)
}

/// Reads the next record of a run; `None` at its end.
fn read_record(input: &mut impl Read) -> io::Result<Option<Record>> {
    let mut head = [0u8; 16];
    match input.read_exact(&mut head[..1]) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    input.read_exact(&mut head[1..])?;
    let word = |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let (key_len, payload_len) = (word(0) as usize, word(4) as usize);
    let order = u64::from(word(8)) | u64::from(word(12)) << 32;
    let mut key = vec![0u8; key_len];
    input.read_exact(&mut key)?;
    let mut payload = vec![0u8; payload_len];
    input.read_exact(&mut payload)?;
    Ok(Some((key, order, payload)))
}

/// Where merged records come from: a run's file, or memory.
enum Source {
    File(BufReader<File>),
    Memory(std::vec::IntoIter<Record>),
}

impl Source {
    fn next_record(&mut self) -> io::Result<Option<Record>> {
        match self {
            Source::File(reader) => read_record(reader),
            Source::Memory(records) => Ok(records.next()),
        }
    }
}

/// The records of sorted `runs` and of sorted `held`, merged in order.
fn merge(
    runs: Vec<File>,
    held: Vec<Record>,
) -> io::Result<impl Iterator<Item = io::Result<Record>>> {
    let mut sources: Vec<Source> = runs
        .into_iter()
        .map(|f| Source::File(BufReader::with_capacity(1 << 16, f)))
        .collect();
    sources.push(Source::Memory(held.into_iter()));
    // The next record of each source: its (key, order, source) in the
    // heap, its payload in `payloads`.
    let mut heap = BinaryHeap::new();
    let mut payloads: Vec<Vec<u8>> = vec![Vec::new(); sources.len()];
    for (i, source) in sources.iter_mut().enumerate() {
        if let Some((key, order, payload)) = source.next_record()? {
            heap.push(Reverse((key, order, i)));
            payloads[i] = payload;
        }
    }
    let mut failed = false;
    Ok(std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let Reverse((key, order, i)) = heap.pop()?;
        let payload = std::mem::take(&mut payloads[i]);
        match sources[i].next_record() {
            Ok(Some((k, o, p))) => {
                heap.push(Reverse((k, o, i)));
                payloads[i] = p;
            }
            Ok(None) => {}
            Err(err) => {
                failed = true;
                return Some(Err(err));
            }
        }
        Some(Ok((key, order, payload)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of random keys, sorted in memory and through files (with
    /// more runs than FAN_IN), come out alike: by key, equal keys in the
    /// order they went in.
    #[test]
    fn sorts_through_files_as_in_memory() {
        let mut next = crate::support::testing::numbers(1);
        let records: Vec<(Vec<u8>, Vec<u8>)> = (0..20_000u64)
            .map(|i| {
                let key = format!("k{}", next() % 500).into_bytes();
                (
                    key,
                    format!("payload {i}")
                        .repeat((next() % 4) as usize)
                        .into_bytes(),
                )
            })
            .collect();
        // A stable sort by key keeps equal keys in the order they came.
        let mut expected = records.clone();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        for budget in [usize::MAX, 4096, 200] {
            let mut sorter = Sorter::with_budget(budget);
            for (key, payload) in &records {
                sorter.push(key.clone(), payload.clone()).unwrap();
            }
            assert_eq!(sorter.spilled(), budget != usize::MAX);
            let sorted: Vec<_> = sorter.finish().unwrap().map(Result::unwrap).collect();
            assert_eq!(sorted, expected, "budget {budget}");
        }
    }

    #[test]
    fn nothing_in_nothing_out() {
        let sorter = Sorter::with_budget(10);
        assert_eq!(sorter.finish().unwrap().count(), 0);
    }
}
