//! `lshdb inspect`: what a text becomes — shingles, signature, band keys,
//! SimHash — for understanding and debugging.

use crate::args::{parse_shingle, parse_threshold};
use crate::output::line;
use lshdb::shingle::{normalize, ShingleConfig, ShingleKind, Shingler};
use lshdb::sketch::lsh::{tune, TuneGoal};
use lshdb::sketch::minhash::{MinHashConfig, MinHasher};
use lshdb::sketch::simhash::{self, Weighting};

/// Show the shingles, signature, band keys and SimHash of a text.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb inspect --text 'The quick brown fox' --shingle word:2")]
pub struct Args {
    /// The text to inspect.
    #[arg(long)]
    text: String,
    /// Shingling: char:K, word:K or stopword:K.
    #[arg(long, default_value = "char:5", value_parser = parse_shingle)]
    shingle: ShingleKind,
    /// Signature length.
    #[arg(long, default_value_t = 128)]
    num_perm: usize,
    /// Threshold whose tuned banding gives the band keys.
    #[arg(long, default_value = "0.8", value_parser = parse_threshold)]
    threshold: f64,
}

pub fn run(args: &Args) -> lshdb::Result<()> {
    let shingler = Shingler::new(ShingleConfig {
        kind: args.shingle,
        ..Default::default()
    })?;
    let mut normalized = String::new();
    normalize(&args.text, shingler.config().whitespace, &mut normalized);
    line(format_args!("normalised: {normalized:?}"));
    let shingles = shingler.shingles(&normalized);
    let set = shingler.set(&args.text);
    line(format_args!(
        "shingles: {} ({} distinct)",
        shingles.len(),
        set.len()
    ));
    for shingle in &shingles {
        line(format_args!(
            "  {:>10}  {shingle:?}",
            shingler.hash(shingle)
        ));
    }
    let hasher = MinHasher::new(MinHashConfig {
        num_perm: args.num_perm,
        ..Default::default()
    })?;
    let signature = hasher.signature(set.as_slice());
    line(format_args!(
        "signature ({}, {} values):",
        hasher.config().scheme,
        signature.len()
    ));
    for row in signature.chunks(8) {
        let values: Vec<String> = row.iter().map(|v| format!("{v:>10}")).collect();
        line(format_args!("  {}", values.join(" ")));
    }
    let tuned = tune(&TuneGoal::new(args.threshold, args.num_perm))?;
    let mut keys = Vec::new();
    tuned.banding.band_keys(&signature, &mut keys);
    line(format_args!(
        "band keys ({} bands × {} rows):",
        tuned.banding.bands(),
        tuned.banding.rows()
    ));
    for (band, key) in keys.iter().enumerate() {
        line(format_args!("  {band:>3}  {key:016x}"));
    }
    let fingerprint = simhash::from_bag(
        shingler.bag(&args.text).as_slice(),
        Weighting::TermFrequency,
    );
    line(format_args!("simhash: {fingerprint:016x}"));
    Ok(())
}
