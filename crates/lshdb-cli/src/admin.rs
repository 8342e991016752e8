//! Database administration: `create`, `stats`, `check`, `compact`,
//! `rebuild`.

use crate::args::{open_read_only, open_waiting, parse_shingle, parse_threshold, Wait};
use crate::output::{json, line};
use crate::support::context::Context;
use crate::{CmdResult, Outcome};
use lshdb::shingle::ShingleKind;
use lshdb::{Config, Database};
use serde_json::json;
use std::path::PathBuf;

/// Create an empty database.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb create pages.lshdb --threshold 0.8 --shingle word:3 --store-text\n  \
                  lshdb create pages.lshdb --containment   # also fast `query --containment`, `--top`"
)]
pub struct CreateArgs {
    /// The database file to create (must not exist).
    file: PathBuf,
    /// Similarity threshold the index is tuned for.
    #[arg(long, default_value = "0.8", value_parser = parse_threshold)]
    threshold: f64,
    /// Signature length (number of MinHash values).
    #[arg(long, default_value_t = 128)]
    num_perm: usize,
    /// Number of LSH bands (with --rows; otherwise tuned from the threshold).
    #[arg(long, requires = "rows")]
    bands: Option<usize>,
    /// Rows per band (with --bands).
    #[arg(long, requires = "bands")]
    rows: Option<usize>,
    /// Shingling: char:K, word:K or stopword:K.
    #[arg(long, default_value = "char:5", value_parser = parse_shingle)]
    shingle: ShingleKind,
    /// Turn on the SimHash index (Hamming search up to 3 bits).
    #[arg(long)]
    simhash: bool,
    /// Keep each document's text (for `get` and `export`).
    #[arg(long)]
    store_text: bool,
    /// Keep the containment index (LSH Ensemble): fast `query
    /// --containment`, and `query --top` at full recall, at one more
    /// posting per prefix tree (32) per document.
    #[arg(long)]
    containment: bool,
    /// Maintain near-duplicate clusters with stable ids on every write
    /// (`lshdb clusters`, `get`, and dedup with a database).
    #[arg(long)]
    clusters: bool,
    /// The clusters' representative: first (inserted), longest,
    /// smallest-key or priority (the highest, given by `add
    /// --priority-field`).
    #[arg(long, value_parser = parse_representative, requires = "clusters")]
    representative: Option<lshdb::Representative>,
    /// Keep the time index: each document's timestamp (the time it is
    /// added), for `expire` and `dedup --window`.
    #[arg(long)]
    timestamps: bool,
    /// One JSON object with the settings, as `stats --json` gives them.
    #[arg(long)]
    json: bool,
}

pub fn create(args: &CreateArgs, ctx: &Context) -> CmdResult {
    let mut config = Config::jaccard(args.threshold)
        .num_perm(args.num_perm)
        .shingle(args.shingle)
        .store_text(args.store_text)
        .containment(args.containment)
        .timestamps(args.timestamps);
    if args.clusters {
        config = config.cluster_representative(args.representative.unwrap_or_default());
    }
    if let (Some(b), Some(r)) = (args.bands, args.rows) {
        config = config.bands(b, r);
    }
    if args.simhash {
        config = config.simhash(3);
    }
    let db = Database::create(&args.file, config)?;
    ctx.interrupt().writing();
    let s = db.settings();
    if args.json {
        json(
            &json!({"created": args.file.to_string_lossy(), "settings": crate::render::settings_json(s)}),
        );
        return Ok(Outcome::Ok);
    }
    line(format_args!(
        "created {}: {}",
        args.file.display(),
        crate::render::settings_text(s)
    ));
    Ok(Outcome::Ok)
}

/// Show documents, size on disk and configuration; bucket sizes with
/// --deep.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  lshdb stats pages.lshdb --json\n  \
                        lshdb stats pages.lshdb --deep   # also bucket sizes (walks every posting)")]
pub struct StatsArgs {
    /// The database file.
    file: PathBuf,
    /// Also the bucket-size histogram, the largest buckets, the postings
    /// and the mean shingles per document: reads every signature and
    /// posting (seconds at millions of documents).
    #[arg(long, alias = "histogram")]
    deep: bool,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn stats(args: &StatsArgs, ctx: &Context) -> CmdResult {
    let db = open_read_only(&args.file, ctx)?;
    let stats = if args.deep {
        db.stats_deep()?
    } else {
        db.stats()?
    };
    let s = db.settings();
    let per_doc = if stats.documents > 0 {
        stats.allocated_bytes as f64 / stats.documents as f64
    } else {
        0.0
    };
    if args.json {
        json(&crate::render::stats_json(&stats, s, per_doc));
        return Ok(Outcome::Ok);
    }
    line(format_args!("file        {}", args.file.display()));
    line(format_args!(
        "documents   {} ({} bytes on disk, {per_doc:.0} per document; file length {}{})",
        stats.documents,
        stats.allocated_bytes,
        stats.file_bytes,
        stats.deep.as_ref().map_or(String::new(), |d| format!(
            "; {:.1} shingles on average",
            d.mean_shingles
        ))
    ));
    line(format_args!(
        "config      {}",
        crate::render::settings_text(s)
    ));
    let buckets = stats
        .deep
        .as_ref()
        .map_or("not counted (--deep reads every posting)".to_owned(), |d| {
            format!("{} non-empty, {} postings", d.buckets, d.postings)
        });
    line(format_args!(
        "buckets     {buckets}, {} SimHash postings{}",
        stats.simhash_postings,
        if s.containment.is_some() {
            format!(", {} containment postings", stats.containment_postings)
        } else {
            String::new()
        }
    ));
    line(format_args!(
        "storage     {} posting run(s) holding {} postings, {} fresh postings",
        stats.runs, stats.run_postings, stats.fresh_postings
    ));
    if let Some(deep) = &stats.deep {
        bucket_lines(deep);
    }
    Ok(Outcome::Ok)
}

/// The bucket-size histogram and the largest buckets, as text.
fn bucket_lines(deep: &lshdb::DeepStats) {
    for (i, n) in deep.histogram.iter().enumerate() {
        let (lo, hi) = (1u64 << i, (1u64 << (i + 1)) - 1);
        line(format_args!("  size {lo:>6}..{hi:<6} {n:>10} buckets"));
    }
    if !deep.largest.is_empty() {
        line("largest buckets (band, key, documents):");
        for (band, key, size) in &deep.largest {
            line(format_args!("  {band:>3}  {key:016x}  {size}"));
        }
    }
}

/// The error of a `check --pages` whose repair could not be written.
fn unsaved(file: &std::path::Path, err: lshdb::Error) -> crate::CliError {
    if !matches!(err, lshdb::Error::Io { .. }) {
        return err.into();
    }
    crate::CliError::Message(format!(
        "{}; the repair is not saved, and the file still needs one: run `lshdb check --pages {}` \
         again once it can be written",
        crate::CliError::Lib(err),
        crate::output::shell_arg(&file.to_string_lossy())
    ))
}

/// Full integrity check, read-only; exit code 3 when damage is found.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb check pages.lshdb || echo damaged\n  \
                        lshdb check --pages pages.lshdb   # also verify every page; repairs a crashed file"
)]
pub struct CheckArgs {
    /// The database file.
    file: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also verify every page checksum with the storage engine. This opens
    /// the file for writing (no other writer may have it open): the engine
    /// rebuilds its allocator state, and repairs a file whose writer crashed.
    #[arg(long)]
    pages: bool,
    #[command(flatten)]
    wait: Wait,
}

pub fn check(args: &CheckArgs, ctx: &Context) -> CmdResult {
    let bar = crate::output::spinner("checking");
    let checked = if args.pages {
        open_waiting(&args.file, &args.wait, ctx).and_then(|mut db| {
            let report = db.check_pages().map_err(|err| unsaved(&args.file, err))?;
            // The repair is saved as the file closes: a failure there (a full
            // disk) is this command's failure, before any verdict is printed.
            db.close().map_err(|err| unsaved(&args.file, err))?;
            Ok(report)
        })
    } else {
        open_read_only(&args.file, ctx).and_then(|db| Ok(db.check()?))
    };
    // A file too damaged to open (a cut one) is damage found, not a failure.
    let report = checked.map_err(|err| match err {
        crate::CliError::Lib(err @ lshdb::Error::Corrupted(_)) => crate::CliError::Damaged(err),
        other => other,
    })?;
    bar.finish_and_clear();
    if args.json {
        json(&crate::render::check_json(&report));
    } else {
        for problem in &report.problems {
            line(format_args!("problem: {problem}"));
        }
        line(format_args!(
            "{}: {} documents, {} postings, {} SimHash postings, {}, {} problem(s)",
            if report.is_clean() {
                "clean"
            } else {
                "DAMAGED"
            },
            report.documents,
            report.postings,
            report.simhash_postings,
            match report.storage_ok {
                Some(true) => "pages ok",
                Some(false) => "pages damaged",
                None => "pages not verified (--pages)",
            },
            report.problem_count
        ));
    }
    Ok(if report.is_clean() {
        Outcome::Ok
    } else {
        Outcome::Damaged
    })
}

/// Reclaim the space of removed documents.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb compact pages.lshdb")]
pub struct CompactArgs {
    /// The database file.
    file: PathBuf,
    /// One JSON object: {"bytes_before": N, "bytes_after": N}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

pub fn compact(args: &CompactArgs, ctx: &Context) -> CmdResult {
    let mut db = open_waiting(&args.file, &args.wait, ctx)?;
    let size = || {
        std::fs::metadata(&args.file)
            .map(|m| m.len())
            .map_err(crate::io_context("cannot read the size of", &args.file))
    };
    let before = size()?;
    let bar = crate::output::spinner("compacting");
    db.compact()?;
    bar.finish_and_clear();
    drop(db);
    let after = size()?;
    if args.json {
        json(&json!({"bytes_before": before, "bytes_after": after}));
        return Ok(Outcome::Ok);
    }
    line(format_args!("compacted: {before} → {after} bytes"));
    Ok(Outcome::Ok)
}

/// Re-band the index for a new threshold, and build or drop the
/// containment index, from the stored signatures.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  lshdb rebuild pages.lshdb --threshold 0.6\n  \
                  lshdb rebuild pages.lshdb --containment      # build the containment index\n  \
                  lshdb rebuild pages.lshdb --no-containment   # drop it\n  \
                  lshdb rebuild pages.lshdb --clusters         # maintain clusters from now on\n  \
                  lshdb rebuild pages.lshdb --timestamps       # build the time index, for `expire`"
)]
#[command(group = clap::ArgGroup::new("what").required(true).multiple(true)
    .args(["threshold", "containment", "no_containment", "clusters", "no_clusters",
        "timestamps", "no_timestamps"]))]
pub struct RebuildArgs {
    /// The database file.
    file: PathBuf,
    /// The new index threshold.
    #[arg(long, value_parser = parse_threshold)]
    threshold: Option<f64>,
    /// Build (or rebuild) the containment index for `query --containment`
    /// (and `query --top`).
    #[arg(long, conflicts_with = "no_containment")]
    containment: bool,
    /// Drop the containment index (containment queries then scan).
    #[arg(long)]
    no_containment: bool,
    /// Build (or rebuild, with new ids) the maintained clusters.
    #[arg(long, conflicts_with = "no_clusters")]
    clusters: bool,
    /// The clusters' representative (with --clusters): first, longest,
    /// smallest-key or priority (rebuilding a file of another policy as
    /// priority gives its documents priority 0).
    #[arg(long, value_parser = parse_representative, requires = "clusters")]
    representative: Option<lshdb::Representative>,
    /// Drop the maintained clusters.
    #[arg(long)]
    no_clusters: bool,
    /// Build the time index, for `expire` and `dedup --window`: the
    /// documents stored so far are stamped with the time of the rebuild
    /// (a file that has it keeps its stamps).
    #[arg(long, conflicts_with = "no_timestamps")]
    timestamps: bool,
    /// Drop the time index (every timestamp is lost).
    #[arg(long)]
    no_timestamps: bool,
    /// Number of bands (with --threshold and --rows; otherwise tuned).
    #[arg(long, requires_all = ["rows", "threshold"])]
    bands: Option<usize>,
    /// Rows per band (with --bands).
    #[arg(long, requires = "bands")]
    rows: Option<usize>,
    /// One JSON object: {"threshold": T, "bands": B, "rows": R,
    /// "containment": bool, "clusters": POLICY or null, "timestamps": bool}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    wait: Wait,
}

pub fn rebuild(args: &RebuildArgs, ctx: &Context) -> CmdResult {
    let mut db = open_waiting(&args.file, &args.wait, ctx)?;
    if let Some(threshold) = args.threshold {
        let bar = crate::output::spinner("rebanding");
        db.reband(threshold, args.bands.zip(args.rows))?;
        bar.finish_and_clear();
    }
    if args.containment {
        let bar = crate::output::spinner("building the containment index");
        db.build_containment_index()?;
        bar.finish_and_clear();
    } else if args.no_containment {
        db.drop_containment_index()?;
    }
    if args.clusters {
        let bar = crate::output::spinner("building the clusters");
        db.build_clusters(args.representative.unwrap_or_default())?;
        bar.finish_and_clear();
    } else if args.no_clusters {
        db.drop_clusters()?;
    }
    if args.timestamps {
        db.build_time_index(crate::support::when::now())?;
    } else if args.no_timestamps {
        db.drop_time_index()?;
    }
    let s = db.settings();
    if args.json {
        json(&crate::render::rebuilt_json(s));
        return Ok(Outcome::Ok);
    }
    line(format_args!("rebuilt: {}", crate::render::banding_text(s)));
    Ok(Outcome::Ok)
}

/// A representative policy's name (`first`, `longest`, `smallest-key`,
/// `priority`).
fn parse_representative(name: &str) -> Result<lshdb::Representative, String> {
    lshdb::Representative::from_name(name).ok_or_else(|| {
        format!("`{name}` is not a policy: use first, longest, smallest-key or priority")
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unsaved_repair_names_the_cause_and_what_to_do() {
        let err = lshdb::Error::Io {
            op: "close",
            path: "my db.lshdb".into(),
            source: std::io::Error::from_raw_os_error(28),
        };
        let text = super::unsaved(std::path::Path::new("my db.lshdb"), err).to_string();
        for part in [
            "cannot close my db.lshdb",
            "No space left on device",
            "the repair is not saved",
            "`lshdb check --pages 'my db.lshdb'`",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }
}
