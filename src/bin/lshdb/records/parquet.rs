//! The Parquet reader of `dedup`: row batches read from a file (never
//! standard input), their text, id and score cells taken from columns
//! found by name or by a `.`-separated path through struct columns.

use super::{Chunk, Fields, Good, Parsed, Raw, CHUNK};
use crate::input::{compression_of, Compression};
use crate::{fail, CliError};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use std::io::Read;
use std::path::Path;

pub struct ParquetSource {
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    pub(super) schema: arrow_schema::SchemaRef,
    fields: Fields,
    row: u64,
    path: String,
}

impl ParquetSource {
    pub(super) fn new(path: &str, fields: &Fields) -> Result<Self, CliError> {
        if path == "-" {
            return fail("Parquet input must be a file: it cannot be read from standard input");
        }
        let name = Path::new(path);
        let file =
            std::fs::File::open(name).map_err(crate::io_context("cannot open input", name))?;
        let mut head = [0u8; 4];
        if let Ok(mut probe) = file.try_clone() {
            let _ = probe.read_exact(&mut head);
            use std::io::Seek;
            let _ = probe.seek(std::io::SeekFrom::Start(0));
        }
        if compression_of(&head) != Compression::None {
            return fail(format!(
                "{path} is compressed as a whole; Parquet compresses inside the file, decompress it first"
            ));
        }
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| CliError::Message(format!("cannot read {path} as Parquet: {e}")))?;
        let schema = builder.schema().clone();
        let reader = builder
            .with_batch_size(CHUNK)
            .build()
            .map_err(|e| CliError::Message(format!("cannot read {path} as Parquet: {e}")))?;
        let source = Self {
            reader,
            schema,
            fields: fields.clone(),
            row: 0,
            path: path.to_owned(),
        };
        // Fail early on a missing text column.
        let empty = RecordBatch::new_empty(source.schema.clone());
        if column(&empty, &source.fields.text).is_none() {
            return fail(format!(
                "{path} has no column `{}` (--text-field)",
                source.fields.text
            ));
        }
        if let Some(id) = &source.fields.id {
            if column(&empty, id).is_none() {
                return fail(format!("{path} has no column `{id}` (--id-field)"));
            }
        }
        if let Some(score) = &source.fields.score {
            if column(&empty, score).is_none() {
                return fail(format!("{path} has no column `{score}` (--keep)"));
            }
        }
        Ok(source)
    }

    pub(super) fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let batch = match self.reader.next() {
            None => return Ok(None),
            Some(Ok(batch)) => batch,
            Some(Err(e)) => {
                return fail(format!("reading {} failed: {e}", self.path));
            }
        };
        let text = column(&batch, &self.fields.text);
        let id = self.fields.id.as_deref().and_then(|f| column(&batch, f));
        let score = self.fields.score.as_deref().and_then(|f| column(&batch, f));
        let mut units = Vec::with_capacity(batch.num_rows());
        for row in 0..batch.num_rows() {
            self.row += 1;
            let parsed = match text.as_ref().map(|a| string_at(a, row)) {
                Some(Ok(Some(t))) if t.trim().is_empty() => {
                    Parsed::Bad(format!("field `{}` is empty", self.fields.text))
                }
                Some(Ok(Some(t))) => Parsed::Good(Good {
                    id: id.as_ref().and_then(|a| id_at(a, row)),
                    text: t,
                    score: score.as_ref().and_then(|a| number_at(a, row)),
                }),
                Some(Ok(None)) => Parsed::Bad(format!("field `{}` is null", self.fields.text)),
                Some(Err(())) | None => {
                    Parsed::Bad(format!("field `{}` is not a string", self.fields.text))
                }
            };
            units.push((self.row, parsed));
        }
        Ok(Some(Chunk {
            units,
            raw: Raw::Batch(batch),
        }))
    }
}

/// A column by name, or by a `.`-separated path through struct columns.
fn column(batch: &RecordBatch, name: &str) -> Option<ArrayRef> {
    if let Some(array) = batch.column_by_name(name) {
        return Some(array.clone());
    }
    let mut parts = name.split('.');
    let mut array = batch.column_by_name(parts.next()?)?.clone();
    for part in parts {
        let s = array.as_any().downcast_ref::<StructArray>()?;
        array = s.column_by_name(part)?.clone();
    }
    Some(array)
}

/// A string cell: `Err` when the column is not a string column.
fn string_at(array: &ArrayRef, row: usize) -> Result<Option<String>, ()> {
    use arrow_array::cast::AsArray;
    if array.is_null(row) {
        return Ok(None);
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return Ok(Some(a.value(row).to_owned()));
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return Ok(Some(a.value(row).to_owned()));
    }
    if let Some(a) = array.as_string_view_opt() {
        return Ok(Some(a.value(row).to_owned()));
    }
    Err(())
}

fn number_at(array: &ArrayRef, row: usize) -> Option<f64> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return None;
    }
    macro_rules! try_type {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(a.value(row) as f64);
            })*
        };
    }
    try_type!(
        Int8Type,
        Int16Type,
        Int32Type,
        Int64Type,
        UInt8Type,
        UInt16Type,
        UInt32Type,
        UInt64Type,
        Float32Type,
        Float64Type
    );
    string_at(array, row).ok().flatten()?.trim().parse().ok()
}

fn id_at(array: &ArrayRef, row: usize) -> Option<String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return None;
    }
    macro_rules! try_int {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(a.value(row).to_string());
            })*
        };
    }
    try_int!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    string_at(array, row).ok().flatten()
}
