//! Output helpers: lines to standard output that end quietly on a closed
//! pipe, JSON values, and progress bars that only draw on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
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
/// terminal, so pipes and logs stay clean. With a known total it shows the
/// position, the total and the time left; without, a spinner. Rates are
/// whole numbers per second.
pub fn progress(len: Option<u64>, message: &'static str) -> ProgressBar {
    styled(
        len,
        message,
        "{msg:>10} [{bar:40}] {pos}/{len} ({rate}/s, {eta} left)",
        "{msg:>10} {spinner} {pos} ({rate}/s, {elapsed})",
    )
}

/// A spinner for a phase whose length is not known, kept moving by a
/// timer (the work itself reports nothing until it ends).
pub fn spinner(message: &'static str) -> ProgressBar {
    let bar = styled(None, message, "", "{msg:>10} {spinner} {elapsed}");
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

fn styled(len: Option<u64>, message: &'static str, known: &str, unknown: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    let template = if len.is_some() { known } else { unknown };
    if let Ok(style) = ProgressStyle::with_template(template) {
        let style = style
            .with_key(
                "rate",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&whole_rate(state.per_sec()));
                },
            )
            .progress_chars("=> ");
        bar.set_style(style);
    }
    bar.set_message(message);
    bar
}

/// A rate per second as a whole number with thousands separators
/// (`12,345`); `0` for anything not finite or below one half.
pub fn whole_rate(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec < 0.5 {
        return "0".to_owned();
    }
    let digits = format!("{:.0}", per_sec);
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A user-given text (a key) shortened for a message: at most 60
/// characters, then `…` and its length, so a 4 KB key does not flood the
/// terminal; escaped as [`escaped`] does.
pub fn short(text: &str) -> String {
    const KEEP: usize = 60;
    match text.char_indices().nth(KEEP) {
        None => escaped(text).into_owned(),
        Some((cut, _)) => format!("{}… ({} bytes)", escaped(&text[..cut]), text.len()),
    }
}

/// A key (or a file name) as every text output prints it, so that no key
/// can break a line or a column, or forge one: unchanged when it is plain;
/// quoted as a JSON string when it holds a control character (tab, line
/// break, escape, …), a Unicode line separator or a bidirectional
/// control, or when it begins with `"` (so a printed `"` always opens a
/// quoted key). Quoted keys escape `"` and `\` and those characters
/// (`\t`, `\n`, `\r`, `\u001b`, …); any JSON parser reads them back.
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.starts_with('"') && !text.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    std::borrow::Cow::Owned(out)
}

/// Characters a printed key must not hold raw: control characters (C0,
/// DEL, C1), the Unicode line and paragraph separators, and the
/// bidirectional controls that reorder what a terminal shows.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// A similarity as the human outputs print it.
pub fn similarity(s: f64) -> String {
    format!("{s:.3}")
}

/// A word as a POSIX shell reads it back: unchanged when it is plain,
/// single-quoted otherwise, so hints can be pasted.
pub fn shell_arg(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@+,=%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_whole_numbers() {
        assert_eq!(whole_rate(0.0), "0");
        assert_eq!(whole_rate(0.4), "0");
        assert_eq!(whole_rate(f64::NAN), "0");
        assert_eq!(whole_rate(f64::INFINITY), "0");
        assert_eq!(whole_rate(0.6), "1");
        assert_eq!(whole_rate(7.49), "7");
        assert_eq!(whole_rate(999.6), "1,000");
        assert_eq!(whole_rate(12_345.678), "12,346");
        assert_eq!(whole_rate(1_234_567.0), "1,234,567");
    }

    #[test]
    fn long_keys_are_shortened() {
        assert_eq!(short("abc"), "abc");
        let exact = "k".repeat(60);
        assert_eq!(short(&exact), exact);
        let long = "k".repeat(4096);
        assert_eq!(short(&long), format!("{}… (4096 bytes)", "k".repeat(60)));
        let wide = "é".repeat(100);
        assert_eq!(short(&wide), format!("{}… (200 bytes)", "é".repeat(60)));
    }

    #[test]
    fn odd_keys_are_quoted_as_json_strings() {
        assert_eq!(escaped("plain key/é.txt"), "plain key/é.txt");
        assert_eq!(escaped(r"C:\dir\file"), r"C:\dir\file");
        assert_eq!(escaped(""), "");
        let forged = "evil\n0.999\tforged-key";
        assert_eq!(escaped(forged), r#""evil\n0.999\tforged-key""#);
        for key in [
            forged,
            "a\rb",
            "tab\there",
            "\"quoted\"",
            "back\\slash\n",
            "esc\u{1b}[31m",
            "del\u{7f}",
            "c1\u{85}",
            "sep\u{2028}",
            "bidi\u{202e}",
            "astral 😀\n",
        ] {
            let shown = escaped(key);
            assert!(shown.starts_with('"'), "{shown}");
            assert!(!shown.chars().any(needs_escape), "{shown:?}");
            let back: String = serde_json::from_str(&shown).unwrap();
            assert_eq!(back, key);
        }
        assert_eq!(short("a\nb"), r#""a\nb""#);
        let long = format!("a\n{}", "k".repeat(100));
        let shown = format!("\"a\\n{}\"… (102 bytes)", "k".repeat(58));
        assert_eq!(short(&long), shown);
    }

    #[test]
    fn shell_args_paste_back() {
        assert_eq!(shell_arg("db.lshdb"), "db.lshdb");
        assert_eq!(shell_arg("/tmp/a-b_c.lshdb"), "/tmp/a-b_c.lshdb");
        assert_eq!(shell_arg("my db.lshdb"), "'my db.lshdb'");
        assert_eq!(shell_arg("it's"), r"'it'\''s'");
        assert_eq!(shell_arg(""), "''");
    }
}
