//! The writer of `dedup`: kept records written back in their input's
//! form (the bytes of JSON Lines and CSV, behind the CSV header; Parquet
//! rows, filtered from their batch).

use super::{Chunk, Layout, Raw};
use crate::{fail, CliError};
use std::io::Write;

/// Writes kept records in the input's form.
pub enum Sink<W: Write + Send> {
    Lines(W),
    Csv {
        out: W,
        header: Vec<u8>,
        wrote_header: bool,
    },
    Parquet(Box<parquet::arrow::ArrowWriter<W>>),
}

impl<W: Write + Send> Sink<W> {
    pub fn new(out: W, layout: &Layout) -> Result<Self, CliError> {
        Ok(match layout {
            Layout::Lines => Sink::Lines(out),
            Layout::Csv(header, _) => Sink::Csv {
                out,
                header: header.clone(),
                wrote_header: false,
            },
            Layout::Parquet(schema) => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
                    .build();
                let writer = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(props))
                    .map_err(|e| CliError::Message(format!("cannot write Parquet: {e}")))?;
                Sink::Parquet(Box::new(writer))
            }
        })
    }

    /// Writes the units of `chunk` whose `keep` is true.
    pub fn write(&mut self, chunk: &Chunk, keep: &[bool]) -> Result<(), CliError> {
        match (self, &chunk.raw) {
            (Sink::Lines(out), Raw::Bytes(raw)) => write_bytes(out, raw, keep),
            (
                Sink::Csv {
                    out,
                    header,
                    wrote_header,
                },
                Raw::Bytes(raw),
            ) => {
                if !*wrote_header {
                    out.write_all(header)?;
                    if !header.ends_with(b"\n") {
                        out.write_all(b"\n")?;
                    }
                    *wrote_header = true;
                }
                write_bytes(out, raw, keep)
            }
            (Sink::Parquet(writer), Raw::Batch(batch)) => {
                let mask = arrow_array::BooleanArray::from(keep.to_vec());
                let kept = arrow_select::filter::filter_record_batch(batch, &mask)
                    .map_err(|e| CliError::Message(format!("cannot select rows: {e}")))?;
                if kept.num_rows() > 0 {
                    writer
                        .write(&kept)
                        .map_err(|e| CliError::Message(format!("cannot write Parquet: {e}")))?;
                }
                Ok(())
            }
            _ => fail("internal error: records of one format written as another"),
        }
    }

    /// Ends the output (CSV: the header even with no record; Parquet: the
    /// footer) and gives the writer back.
    pub fn finish(self) -> Result<W, CliError> {
        match self {
            Sink::Lines(out) => Ok(out),
            Sink::Csv {
                mut out,
                header,
                wrote_header,
            } => {
                if !wrote_header {
                    out.write_all(&header)?;
                    if !header.ends_with(b"\n") {
                        out.write_all(b"\n")?;
                    }
                }
                Ok(out)
            }
            Sink::Parquet(writer) => writer
                .into_inner()
                .map_err(|e| CliError::Message(format!("cannot write Parquet: {e}"))),
        }
    }
}

fn write_bytes<W: Write>(out: &mut W, raw: &[Vec<u8>], keep: &[bool]) -> Result<(), CliError> {
    for (bytes, _) in raw.iter().zip(keep).filter(|(_, k)| **k) {
        out.write_all(bytes)?;
        if !bytes.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}
