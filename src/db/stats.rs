//! Statistics. [`Database::stats`] reads only what costs no walk (table
//! lengths, which the storage engine keeps in each table's root, the run
//! list and the file's metadata), so it answers at once at any size;
//! [`Database::stats_deep`] adds the figures that walk every signature and
//! every posting (the bucket-size histogram, mean shingles).

use super::Database;
use crate::store::codec;
use crate::store::containment;
use crate::store::runs::RunTables;
use crate::store::tables::{Index, ReadTables};
use crate::Result;
use redb::{ReadableTable, ReadableTableMetadata};

/// What [`Database::stats`] reports. Serialises flat: the deep figures
/// (when counted) beside the others.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// Stored documents.
    pub documents: u64,
    /// The file's length in bytes.
    pub file_bytes: u64,
    /// Bytes the file occupies on disk (on Unix, its allocated blocks; the
    /// length elsewhere). redb grows a file by doubling, and later by whole
    /// regions, leaving the unwritten tail sparse, so this can be less
    /// than [`Stats::file_bytes`].
    pub allocated_bytes: u64,
    /// SimHash block postings (0 without a SimHash index).
    pub simhash_postings: u64,
    /// Containment index postings, one per prefix tree per document (0
    /// without a containment index).
    pub containment_postings: u64,
    /// Posting runs (format 2), and the postings they hold — those of
    /// removed documents that no merge has dropped yet included.
    pub runs: usize,
    /// Postings in runs: band postings and (format 4) key postings, one
    /// per document.
    pub run_postings: u64,
    /// Fresh postings (those of single writes, not yet in a run), band and
    /// key postings.
    pub fresh_postings: u64,
    /// The figures that walk every signature and posting: `Some` from
    /// [`Database::stats_deep`], `None` from [`Database::stats`].
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub deep: Option<DeepStats>,
}

/// The part of [`Stats`] that walks the whole file (see
/// [`Database::stats_deep`]). Serialises the histogram as
/// `bucket_size_histogram` (`{min_size, max_size, buckets}` objects) and
/// the largest buckets as `largest_buckets` (`{band, key, documents}`, the
/// key in 16 hex digits).
#[derive(Debug, Clone, Default, serde::Serialize)]
#[non_exhaustive]
pub struct DeepStats {
    /// Mean number of distinct shingles per document.
    pub mean_shingles: f64,
    /// Non-empty buckets over all bands.
    pub buckets: u64,
    /// LSH bucket postings of live documents over all bands.
    pub postings: u64,
    /// `histogram[i]` = buckets holding 2^i to 2^(i+1) − 1 documents.
    #[serde(rename = "bucket_size_histogram", serialize_with = "histogram")]
    pub histogram: Vec<u64>,
    /// The largest buckets as (band, bucket key, documents), largest first.
    #[serde(rename = "largest_buckets", serialize_with = "largest")]
    pub largest: Vec<(u32, u64, u64)>,
}

/// One row of the bucket-size histogram, as it serialises.
#[derive(serde::Serialize)]
struct SizeRow {
    min_size: u64,
    max_size: u64,
    buckets: u64,
}

/// One of the largest buckets, as it serialises.
#[derive(serde::Serialize)]
struct LargeBucket {
    band: u32,
    key: String,
    documents: u64,
}

fn histogram<S: serde::Serializer>(rows: &[u64], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().enumerate().map(|(i, &buckets)| SizeRow {
        min_size: 1u64 << i,
        max_size: (1u64 << (i + 1)) - 1,
        buckets,
    }))
}

fn largest<S: serde::Serializer>(
    rows: &[(u32, u64, u64)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().map(|&(band, key, documents)| LargeBucket {
        band,
        key: format!("{key:016x}"),
        documents,
    }))
}

impl Database {
    /// Document count, size on disk and where the postings are stored,
    /// without walking the file: the time does not grow with the number
    /// of documents (only with the number of posting runs).
    /// [`Stats::deep`] is `None`; see [`Database::stats_deep`].
    ///
    /// # Errors
    /// Storage errors.
    pub fn stats(&self) -> Result<Stats> {
        self.stats_with(false)
    }

    /// [`Database::stats`] plus [`DeepStats`]: the bucket-size histogram,
    /// the largest buckets and the mean shingles per document. It reads
    /// every signature and every posting, which takes seconds at millions
    /// of documents.
    ///
    /// # Errors
    /// Storage errors; [`crate::Error::Corrupted`] for a damaged signature.
    pub fn stats_deep(&self) -> Result<Stats> {
        self.stats_with(true)
    }

    fn stats_with(&self, deep: bool) -> Result<Stats> {
        crate::guard::guard(|| {
            let txn = self.db.begin_read()?;
            let tables = ReadTables::open(&txn)?;
            let runs = tables.runs.as_ref();
            let metadata = std::fs::metadata(&self.path).ok();
            let mut stats = Stats {
                runs: runs.map_or(0, |r| r.list().len()),
                run_postings: runs.map_or(0, RunTables::postings_count),
                fresh_postings: tables.buckets.len()?,
                documents: tables.len()?,
                file_bytes: metadata.as_ref().map_or(0, |m| m.len()),
                allocated_bytes: metadata.as_ref().map_or(0, allocated),
                simhash_postings: tables.blocks.len()?,
                ..Stats::default()
            };
            if let Some(table) = containment::open_read(&txn)? {
                stats.containment_postings = table.len()?;
            }
            if deep {
                stats.deep = Some(deep_stats(&tables, stats.documents)?);
            }
            Ok(stats)
        })
    }
}

/// Walks every signature (for the mean shingles) and every posting (for
/// the buckets).
fn deep_stats(tables: &ReadTables, documents: u64) -> Result<DeepStats> {
    let mut deep = DeepStats::default();
    let mut shingles = 0u64;
    for entry in tables.sigs.iter()? {
        let (id, bytes) = entry?;
        shingles += u64::from(
            codec::peek_set_len(bytes.value())
                .map_err(|e| crate::store::tables::context(e, "signature", id.value()))?,
        );
    }
    if documents > 0 {
        deep.mean_shingles = shingles as f64 / documents as f64;
    }
    let mut current: Option<((u32, u64), u64)> = None;
    for entry in tables.all_postings()? {
        let (band, key, _) = entry?;
        deep.postings += 1;
        current = match current {
            Some((bucket, size)) if bucket == (band, key) => Some((bucket, size + 1)),
            Some((bucket, size)) => {
                record_bucket(&mut deep, bucket, size);
                Some(((band, key), 1))
            }
            None => Some(((band, key), 1)),
        };
    }
    if let Some((bucket, size)) = current {
        record_bucket(&mut deep, bucket, size);
    }
    deep.largest
        .sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    deep.largest.truncate(10);
    Ok(deep)
}

/// Counts one bucket of `size` documents.
fn record_bucket(deep: &mut DeepStats, (band, key): (u32, u64), size: u64) {
    deep.buckets += 1;
    let class = (63 - size.leading_zeros()) as usize;
    if deep.histogram.len() <= class {
        deep.histogram.resize(class + 1, 0);
    }
    deep.histogram[class] += 1;
    deep.largest.push((band, key, size));
    if deep.largest.len() > 64 {
        deep.largest.sort_by_key(|b| std::cmp::Reverse(b.2));
        deep.largest.truncate(10);
    }
}

/// The bytes a file occupies on disk.
fn allocated(metadata: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::blocks(metadata) * 512
    }
    #[cfg(not(unix))]
    {
        metadata.len()
    }
}
