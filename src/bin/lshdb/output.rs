//! Output helpers: lines to standard output that end quietly on a closed
//! pipe, JSON values, and progress bars that only draw on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;

/// Writes one line to standard output. A closed pipe (`lshdb pairs | head`)
/// ends the program quietly with success instead of a panic.
pub fn line(text: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    if let Err(err) = writeln!(out, "{text}") {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("lshdb: cannot write to standard output: {err}");
        std::process::exit(1);
    }
}

/// Writes one JSON value as one line.
pub fn json(value: &serde_json::Value) {
    line(value);
}

/// A progress bar on standard error; hidden when standard error is not a
/// terminal, so pipes and logs stay clean.
pub fn progress(len: Option<u64>, message: &'static str) -> ProgressBar {
    let bar = match len {
        Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = if len.is_some() {
        "{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, {eta})"
    } else {
        "{msg:>10} {spinner} {pos} ({per_sec})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// A similarity as the human outputs print it.
pub fn similarity(s: f64) -> String {
    format!("{s:.3}")
}
