//! The Parquet reader of `dedup`: row batches read from a file (never
//! standard input), their text, id and score cells taken from columns
//! found by name or by a `.`-separated path through struct columns.

use super::text::too_large;
use super::{Chunk, Fields, Good, Parsed, Raw, CHUNK, CHUNK_BYTES};
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
    /// A batch read and not yet all given out, and its next row.
    pending: Option<(RecordBatch, usize)>,
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
            pending: None,
        };
        // Fail early on a missing column, naming those there are.
        let empty = RecordBatch::new_empty(source.schema.clone());
        let columns = || {
            let names: Vec<String> = source
                .schema
                .fields()
                .iter()
                .take(50)
                .map(|f| format!("`{}`", f.name()))
                .collect();
            names.join(", ")
        };
        let fields = &source.fields;
        let wanted = [
            (Some(&fields.text), fields.text_flag()),
            (fields.id.as_ref(), fields.id_flag()),
            (fields.score.as_ref(), " (--keep)".to_owned()),
        ];
        let extra = fields
            .extra
            .iter()
            .map(|e| (Some(&e.name), format!(" ({})", e.flag)));
        for (name, flag) in wanted.into_iter().chain(extra) {
            if let Some(name) = name.filter(|name| column(&empty, name).is_none()) {
                return fail(format!(
                    "{path} has no column `{name}`{flag}; its columns: {}",
                    columns()
                ));
            }
        }
        Ok(source)
    }

    /// The next rows: the rest of the batch being read, up to
    /// [`CHUNK_BYTES`] of text (a dictionary column may point many rows to
    /// one huge value), at least one row.
    pub(super) fn next_chunk(&mut self) -> Result<Option<Chunk>, CliError> {
        let (batch, start) = match self.pending.take() {
            Some(pending) => pending,
            None => match self.reader.next() {
                None => return Ok(None),
                Some(Ok(batch)) => (batch, 0),
                Some(Err(e)) => {
                    return fail(format!("reading {} failed: {e}", self.path));
                }
            },
        };
        let text = column(&batch, &self.fields.text);
        let id = self.fields.id.as_deref().and_then(|f| column(&batch, f));
        let score = self.fields.score.as_deref().and_then(|f| column(&batch, f));
        let extra: Vec<Option<ArrayRef>> = self
            .fields
            .extra
            .iter()
            .map(|e| column(&batch, &e.name))
            .collect();
        let mut units = Vec::new();
        let mut bytes = 0;
        let mut row = start;
        while row < batch.num_rows() && (row == start || bytes < CHUNK_BYTES) {
            self.row += 1;
            let parsed = match text.as_ref().map(|a| str_at(a, row)) {
                Some(Ok(t)) if t.map_or(0, str::len) > lshdb::MAX_DOCUMENT_BYTES => {
                    Parsed::Bad(too_large(t.map_or(0, str::len)))
                }
                // Null and empty texts are records without near-duplicates.
                Some(Ok(t)) => {
                    bytes += t.map_or(0, str::len);
                    Parsed::Good(Good {
                        id: id.as_ref().and_then(|a| id_at(a, row)),
                        text: t.unwrap_or_default().to_owned(),
                        shingles: None,
                        score: score.as_ref().and_then(|a| number_at(a, row)),
                        extra: extra
                            .iter()
                            .map(|a| a.as_ref().map(|a| cell_json(a, row)))
                            .map(|v| v.filter(|v| !v.is_null()))
                            .collect(),
                    })
                }
                Some(Err(())) | None => {
                    Parsed::Bad(format!("field `{}` is not a string", self.fields.text))
                }
            };
            units.push((self.row, parsed));
            row += 1;
        }
        let rows = batch.slice(start, row - start);
        if row < batch.num_rows() {
            self.pending = Some((batch, row));
        }
        Ok(Some(Chunk {
            units,
            raw: Raw::Batch(rows),
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

/// A string cell, borrowed: `Err` when the column holds no strings
/// (plain, large or view strings, or a dictionary of them).
fn str_at(array: &ArrayRef, row: usize) -> Result<Option<&str>, ()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    if array.is_null(row) {
        return Ok(None);
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return Ok(Some(a.value(row)));
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return Ok(Some(a.value(row)));
    }
    if let Some(a) = array.as_string_view_opt() {
        return Ok(Some(a.value(row)));
    }
    macro_rules! try_dictionary {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_dictionary_opt::<$t>() {
                let key = usize::try_from(a.keys().value(row)).map_err(|_| ())?;
                return match key < a.values().len() {
                    true => str_at(a.values(), key),
                    false => Err(()),
                };
            })*
        };
    }
    try_dictionary!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    Err(())
}

/// A string cell, copied.
fn string_at(array: &ArrayRef, row: usize) -> Result<Option<String>, ()> {
    str_at(array, row).map(|s| s.map(str::to_owned))
}

/// Row `row` of `batch` as a JSON object (for the rejected records):
/// numbers, strings, booleans, nulls and structs as themselves, any other
/// value as arrow's debug text.
pub(super) fn row_json(batch: &RecordBatch, row: usize) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        object.insert(field.name().clone(), cell_json(array, row));
    }
    serde_json::Value::Object(object)
}

fn cell_json(array: &ArrayRef, row: usize) -> serde_json::Value {
    use arrow_array::cast::AsArray;
    use serde_json::Value;
    if row >= array.len() || array.is_null(row) {
        return Value::Null;
    }
    if let Some(a) = array.as_boolean_opt() {
        return Value::Bool(a.value(row));
    }
    if let Some(s) = array.as_any().downcast_ref::<StructArray>() {
        let mut object = serde_json::Map::new();
        for (name, column) in s.column_names().into_iter().zip(s.columns()) {
            object.insert(name.to_owned(), cell_json(column, row));
        }
        return Value::Object(object);
    }
    if let Some(id) = id_at(array, row).filter(|_| !array.data_type().is_floating()) {
        if let Ok(Some(_)) = str_at(array, row) {
            return Value::String(id);
        }
        if let Ok(n) = id.parse::<serde_json::Number>() {
            return Value::Number(n);
        }
    }
    if let Some(n) = number_at(array, row).and_then(serde_json::Number::from_f64) {
        return Value::Number(n);
    }
    Value::String(format!("{:?}", array.slice(row, 1)))
}

fn number_at(array: &ArrayRef, row: usize) -> Option<f64> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type};
    if array.is_null(row) {
        return None;
    }
    if let Some(n) = integer_at(array, row) {
        return Some(n as f64);
    }
    if let Some(a) = array.as_primitive_opt::<Float32Type>() {
        return Some(f64::from(a.value(row)));
    }
    if let Some(a) = array.as_primitive_opt::<Float64Type>() {
        return Some(a.value(row));
    }
    string_at(array, row).ok().flatten()?.trim().parse().ok()
}

fn id_at(array: &ArrayRef, row: usize) -> Option<String> {
    if array.is_null(row) {
        return None;
    }
    if let Some(n) = integer_at(array, row) {
        return Some(n.to_string());
    }
    string_at(array, row).ok().flatten()
}

/// The value at `row` of an integer column (of any width and sign).
fn integer_at(array: &ArrayRef, row: usize) -> Option<i128> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    macro_rules! try_int {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(i128::from(a.value(row)));
            })*
        };
    }
    try_int!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    None
}

#[cfg(test)]
mod tests {
    use super::super::{Parsed, Raw, Source, CHUNK_BYTES};
    use arrow_array::types::Int32Type;
    use arrow_array::{Array, DictionaryArray, Int32Array, RecordBatch, StringArray};
    use std::sync::Arc;

    #[test]
    fn rows_sharing_a_huge_dictionary_value_come_in_chunks_bounded_by_bytes() {
        let (_dir, path) = crate::support::testing::temp_path("in.parquet");
        // 100 rows, all pointing at one 10 MB text: a tiny file.
        let big = "word ".repeat(2 << 20);
        let values = StringArray::from(vec![big.as_str()]);
        let keys = Int32Array::from(vec![0; 100]);
        let text = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).unwrap();
        let batch =
            RecordBatch::try_from_iter([("text", Arc::new(text) as Arc<dyn Array>)]).unwrap();
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let mut source = Source::open_text(&path, super::super::Format::Parquet);
        let mut rows = 0;
        while let Some(chunk) = source.next_chunk().unwrap() {
            let bytes: usize = chunk
                .units
                .iter()
                .map(|(_, p)| match p {
                    Parsed::Good(g) => g.text.len(),
                    _ => panic!("a good record"),
                })
                .sum();
            assert!(bytes <= CHUNK_BYTES + big.len(), "{bytes} bytes in a chunk");
            let Raw::Batch(b) = &chunk.raw else {
                panic!("rows")
            };
            assert_eq!(b.num_rows(), chunk.units.len());
            rows += chunk.units.len();
        }
        assert_eq!(rows, 100);
    }
}
