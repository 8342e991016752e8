//! Where `dedup` writes: the kept records' target (a file or standard
//! output), and the side outputs (`--dropped` lines, `--clusters`).

use crate::docs::Output;
use crate::CliError;
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;

/// An output file or standard output.
pub(super) enum Target {
    File(Output),
    Stdout(std::io::BufWriter<std::io::Stdout>),
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Target::File(f) => f.write(buf),
            Target::Stdout(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Target::File(f) => f.flush(),
            Target::Stdout(s) => s.flush(),
        }
    }
}

impl Target {
    pub fn finish(self) -> Result<(), CliError> {
        match self {
            Target::File(f) => f.finish(),
            Target::Stdout(mut s) => match s.flush() {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
                other => Ok(other?),
            },
        }
    }
}

/// What one record became, for `--dropped` and `--clusters`.
pub(super) struct Drop {
    pub id: String,
    pub of: String,
    pub similarity: f64,
}

/// Clusters being collected: kept key → its place in the list of
/// (kept key, dropped members), in order of first drop.
type Clusters = (HashMap<String, usize>, Vec<(String, Vec<(String, f64)>)>);

/// The side outputs.
pub(super) struct Side {
    pub dropped: Option<Output>,
    /// Kept key → its dropped members, in order of first drop.
    pub clusters: Option<Clusters>,
}

impl Side {
    pub fn record(&mut self, drop: Drop) -> Result<(), CliError> {
        if let Some(out) = &mut self.dropped {
            writeln!(
                out,
                "{}",
                json!({"id": drop.id, "duplicate_of": drop.of, "similarity": drop.similarity})
            )?;
        }
        if let Some((index, list)) = &mut self.clusters {
            let at = *index.entry(drop.of.clone()).or_insert_with(|| {
                list.push((drop.of.clone(), Vec::new()));
                list.len() - 1
            });
            list[at].1.push((drop.id, drop.similarity));
        }
        Ok(())
    }
}
