//! Records with keys, for the commands that load or query documents
//! (`add`, `query --jsonl`, `import`): whatever a [`Source`] reads (JSON
//! Lines, CSV, Parquet; plain or compressed), each good record turned into
//! its key and document ([`Record`]), each bad one into its line and
//! reason. The first chunk is read when the input is opened, so that a
//! wrong field name fails before anything is loaded, as in `dedup`.

use super::{read_extras, Fields, Good, Parsed, Source};
use crate::input::{InputError, Record};
use crate::interrupt::Interrupt;
use crate::CliError;
use lshdb::DocumentBuf;

/// An input's records with their keys, read a chunk at a time.
pub struct Keyed {
    source: Source,
    fields: Fields,
    /// The units of the chunk being given out.
    units: std::vec::IntoIter<(u64, Parsed)>,
    /// Whether the input has ended (or failed).
    done: bool,
    /// The run's Ctrl-C state: a read that fails after Ctrl-C ends the
    /// records quietly (the command reports the interruption).
    interrupt: Interrupt,
}

impl Keyed {
    /// The records of an open [`Source`]; reads its first chunk.
    pub fn new(
        mut source: Source,
        fields: &Fields,
        interrupt: &Interrupt,
    ) -> Result<Self, CliError> {
        // Ctrl-C while the first chunk is read (a pipe that stalls) ends
        // the input there, as it does for any later chunk.
        let first = match source.next_chunk() {
            Err(_) if interrupt.interrupted() => None,
            read => read?,
        };
        Ok(Self {
            done: first.is_none(),
            units: first.map(|c| c.units).unwrap_or_default().into_iter(),
            source,
            fields: fields.clone(),
            interrupt: interrupt.clone(),
        })
    }

    /// A unit as a keyed record; `None` for a blank line.
    fn record(&self, line: u64, parsed: Parsed) -> Option<Result<Record, InputError>> {
        match parsed {
            Parsed::Blank => None,
            Parsed::Bad(reason) => Some(Err(InputError::Bad { line, reason })),
            Parsed::Good(good) => Some(self.keyed(line, good)),
        }
    }

    /// A good record with its key, a document to index and what it
    /// carries (`Fields::extra`): a record without the key, whose text is
    /// blank, or whose timestamp or priority is missing or bad, is bad.
    fn keyed(&self, line: u64, good: Good) -> Result<Record, InputError> {
        let bad = |reason: String| Err(InputError::Bad { line, reason });
        let Some(key) = good.id else {
            return bad(format!(
                "missing field `{}`",
                self.fields.id.as_deref().unwrap_or_default()
            ));
        };
        let doc = match good.shingles {
            Some(hashes) => DocumentBuf::Shingles(hashes),
            None if good.text.trim().is_empty() => {
                return bad(format!("field `{}` is empty", self.fields.text))
            }
            None => DocumentBuf::Text(good.text),
        };
        let (at, priority) = match read_extras(&self.fields.extra, &good.extra) {
            Ok(carried) => carried,
            Err(reason) => return bad(reason),
        };
        Ok(Record {
            line,
            key,
            doc,
            at,
            priority,
        })
    }
}

impl Iterator for Keyed {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((line, parsed)) = self.units.next() {
                match self.record(line, parsed) {
                    Some(item) => return Some(item),
                    None => continue,
                }
            }
            if self.done {
                return None;
            }
            match self.source.next_chunk() {
                Ok(Some(chunk)) => self.units = chunk.units.into_iter(),
                Ok(None) => self.done = true,
                Err(_) if self.interrupt.interrupted() => self.done = true,
                Err(err) => {
                    self.done = true;
                    return Some(Err(InputError::Io(std::io::Error::other(err.to_string()))));
                }
            }
        }
    }
}
