//! Record helpers shared by the `lshdb dedup` tests: pseudo-random texts,
//! record lines, and reading an output file back (decompressed).

use super::{Cli, Run};
use std::io::Read;

/// A text of 40 pseudo-random words, distinct for each seed.
pub fn text(seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut words = Vec::new();
    for _ in 0..40 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 4 + (x % 5) as usize;
        let word: String = (0..len)
            .map(|i| (b'a' + ((x >> (5 * i)) % 26) as u8) as char)
            .collect();
        words.push(word);
    }
    words.join(" ")
}

/// A record line `{"id", "text"}` whose text is any JSON value.
pub fn rec(id: &str, text: serde_json::Value) -> String {
    format!("{}\n", serde_json::json!({"id": id, "text": text}))
}

/// Non-blank lines of a file (decompressed when `.gz` or `.zst`).
pub fn lines_of(cli: &Cli, name: &str) -> Vec<String> {
    let raw = std::fs::read(cli.path(name)).unwrap_or_default();
    let text = decompress(&raw);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The bytes as text, gunzipped or zstd-decoded when their magic bytes
/// say so.
pub fn decompress(raw: &[u8]) -> String {
    let mut out = String::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(raw)
            .read_to_string(&mut out)
            .unwrap();
    } else if raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        out = String::from_utf8(zstd::decode_all(raw).unwrap()).unwrap();
    } else {
        out = String::from_utf8(raw.to_vec()).unwrap();
    }
    out
}

/// Runs `lshdb dedup INPUT --id-field id EXTRA…`.
pub fn dedup_ids(cli: &Cli, input: &str, extra: &[&str]) -> Run {
    let mut args = vec!["dedup", input, "--id-field", "id"];
    args.extend_from_slice(extra);
    cli.run(&args)
}

/// Runs `lshdb dedup INPUT --text-field FIELD EXTRA…`.
pub fn dedup_text(cli: &Cli, input: &str, field: &str, extra: &[&str]) -> Run {
    cli.run_with(&["dedup", input, "--text-field", field], extra)
}

/// Writes `batch` as the Parquet file `name` of the working folder.
pub fn write_parquet(cli: &Cli, name: &str, batch: &arrow_array::RecordBatch) {
    let file = std::fs::File::create(cli.path(name)).expect("create the Parquet file");
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

/// The side outputs most dedup tests ask for: dropped and rejected
/// records, and the summary as JSON.
pub const SIDE_OUTPUTS: [&str; 5] = ["--dropped", "d.jsonl", "--rejected", "r.jsonl", "--json"];
