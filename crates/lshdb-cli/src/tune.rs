//! `lshdb tune`: the bands and rows chosen for a threshold, with the S-curve.

use crate::args::parse_threshold;
use crate::output::line;
use lshdb::sketch::lsh::{tune, TuneGoal};

/// Choose LSH bands and rows for a similarity threshold and draw the S-curve.
///
/// Example: lshdb tune --threshold 0.8 --num-perm 128
#[derive(clap::Args)]
#[command(after_help = "Example:\n  lshdb tune --threshold 0.8 --num-perm 128")]
pub struct Args {
    /// Similarity threshold the index should catch (0 < T < 1).
    #[arg(long, value_parser = parse_threshold)]
    threshold: f64,
    /// Signature length.
    #[arg(long, default_value_t = 128)]
    num_perm: usize,
    /// Weight of the false-positive area (candidates below the threshold).
    #[arg(long, default_value_t = TuneGoal::DEFAULT_FALSE_POSITIVE_WEIGHT)]
    fp_weight: f64,
    /// Weight of the false-negative area (missed pairs above the threshold).
    #[arg(long, default_value_t = TuneGoal::DEFAULT_FALSE_NEGATIVE_WEIGHT)]
    fn_weight: f64,
}

pub fn run(args: &Args) -> lshdb::Result<()> {
    let goal = TuneGoal {
        threshold: args.threshold,
        num_perm: args.num_perm,
        false_positive_weight: args.fp_weight,
        false_negative_weight: args.fn_weight,
    };
    let tuned = tune(&goal)?;
    let banding = tuned.banding;
    line(format_args!(
        "bands {} × rows {} (S-curve threshold {:.3}); {} of {} signature values unused by banding",
        banding.bands(),
        banding.rows(),
        banding.threshold(),
        tuned.unused,
        args.num_perm
    ));
    line(format_args!(
        "false-positive area {:.5}, false-negative area {:.5}",
        tuned.false_positive_area, tuned.false_negative_area
    ));
    line("");
    let curve = s_curve(|s| banding.probability(s), args.threshold);
    line(curve.trim_end_matches('\n'));
    Ok(())
}

/// The S-curve P(candidate | similarity) drawn in 61 columns × 16 rows, with
/// the threshold marked.
fn s_curve(p: impl Fn(f64) -> f64, threshold: f64) -> String {
    const WIDTH: usize = 61;
    const HEIGHT: usize = 16;
    let column_of = |s: f64| ((s * (WIDTH - 1) as f64).round() as usize).min(WIDTH - 1);
    let heights: Vec<usize> = (0..WIDTH)
        .map(|c| (p(c as f64 / (WIDTH - 1) as f64) * HEIGHT as f64).round() as usize)
        .collect();
    let mark = column_of(threshold);
    let mut out = String::new();
    for row in (1..=HEIGHT).rev() {
        let label = if row == HEIGHT {
            "1.0 "
        } else if row == HEIGHT / 2 {
            "0.5 "
        } else {
            "    "
        };
        out.push_str(label);
        out.push('|');
        for (c, &h) in heights.iter().enumerate() {
            out.push(if h >= row {
                '#'
            } else if c == mark {
                ':'
            } else {
                ' '
            });
        }
        out.push('\n');
    }
    out.push_str("    +");
    out.push_str(&"-".repeat(WIDTH));
    out.push('\n');
    let mut axis = vec![b' '; WIDTH + 5];
    for (s, text) in [(0.0, "0"), (0.5, "0.5"), (1.0, "1")] {
        let at = 5 + column_of(s);
        let at = at.min(axis.len() - text.len());
        axis[at..at + text.len()].copy_from_slice(text.as_bytes());
    }
    out.push_str(String::from_utf8_lossy(&axis).trim_end());
    out.push_str(&format!("   similarity (: marks {threshold})\n"));
    out
}
