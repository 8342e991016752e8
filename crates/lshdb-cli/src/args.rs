//! Argument types and helpers shared by several commands.

use crate::interrupt::Interrupt;
use crate::records::{detect, Extra, ExtraKind, Fields, Format, Keyed, Source};
use crate::support::context::Context;
use crate::CliError;
use lshdb::shingle::ShingleKind;
use lshdb::Database;
use std::path::Path;
use std::time::Duration;

/// Parses `char:K`, `word:K` or `stopword:K` (K optional: 5, 2 and 3).
pub fn parse_shingle(s: &str) -> Result<ShingleKind, String> {
    let (kind, k) = match s.split_once(':') {
        Some((kind, k)) => (kind, Some(k)),
        None => (s, None),
    };
    let k = match k {
        Some(k) => Some(
            k.parse::<usize>()
                .map_err(|_| format!("`{k}` is not a shingle length; write for example char:5"))?,
        ),
        None => None,
    };
    match kind {
        "char" | "chars" => Ok(ShingleKind::Chars(k.unwrap_or(5))),
        "word" | "words" => Ok(ShingleKind::Words(k.unwrap_or(2))),
        "stopword" | "stopwords" => Ok(ShingleKind::StopWords(k.unwrap_or(3))),
        other => Err(format!(
            "unknown shingle kind `{other}`; use char:K, word:K or stopword:K"
        )),
    }
}

/// Parses a similarity threshold strictly between 0 and 1.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let t: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number; a threshold is for example 0.8"))?;
    if t > 0.0 && t < 1.0 {
        Ok(t)
    } else {
        Err(format!(
            "threshold must be strictly between 0 and 1, got {s}"
        ))
    }
}

/// Parses `--duplicate-of`: `first` or `best`.
pub fn parse_duplicate_of(s: &str) -> Result<lshdb::DuplicateOf, String> {
    lshdb::DuplicateOf::from_name(s).ok_or_else(|| {
        format!("`{s}` is not a choice; use first (the first near-duplicate found) or best (the most similar)")
    })
}

/// Parses an amount of memory: bytes, or a number with K, M or G (powers
/// of 1024; `1G`, `512M`, `1.5G`).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let scale: f64 = match unit {
        'B' => 1.0,
        'K' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "`{s}`: the unit is K, M or G (for example 1G, 512M)"
            ))
        }
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not an amount of memory; for example 1G or 512M"))?;
    let bytes = n * scale;
    if !(64.0 * 1024.0 * 1024.0..1e18).contains(&bytes) {
        return Err(format!("`{s}`: give at least 64M"));
    }
    Ok(bytes as usize)
}

/// Opens an existing database for writing; while another process writes
/// it, waits up to `wait` (the `--wait SECONDS` of write commands).
pub fn open_waiting(path: &Path, wait: &Wait, ctx: &Context) -> Result<Database, CliError> {
    let mut builder = Database::builder();
    if let Some(seconds) = wait.wait {
        builder = builder.wait(Duration::from_secs_f64(seconds));
    }
    open_with(path, builder, ctx).map_err(|err| match err {
        CliError::Lib(lshdb::Error::AlreadyOpen { path, .. }) => already_open(&path, wait.wait),
        other => other,
    })
}

/// [`lshdb::Error::AlreadyOpen`] in the CLI's words: how to wait, or, when
/// `--wait` ran out, that it did.
fn already_open(path: &Path, waited: Option<f64>) -> CliError {
    let path = path.display();
    CliError::Message(match waited {
        Some(seconds) => format!(
            "{path} is still open for writing in another process after waiting {seconds} \
             seconds, and lshdb allows one writer per file; read-only commands work \
             meanwhile — close the other writer, or try again later"
        ),
        None => format!(
            "{path} is open for writing in another process, and lshdb allows one writer per \
             file; read-only commands work meanwhile — close the other writer, or wait for \
             it with `--wait SECONDS`"
        ),
    })
}

/// Opens an existing database read-only: the file's bytes never change,
/// a file the user may only read works, and another process may be
/// writing it meanwhile (every command that only reads opens this way).
pub fn open_read_only(path: &Path, ctx: &Context) -> Result<Database, CliError> {
    open_with(path, Database::builder().read_only(true), ctx)
}

fn open_with(path: &Path, builder: lshdb::Builder, ctx: &Context) -> Result<Database, CliError> {
    if !path.exists() {
        return crate::fail(format!("{} does not exist; check the path", path.display()));
    }
    ctx.opened(path);
    let db = builder.open(path).map_err(|err| match err {
        lshdb::Error::NeedsRepair { .. } => CliError::Message(format!(
            "{err}: `lshdb check --pages {}`",
            crate::output::shell_arg(&path.to_string_lossy())
        )),
        other => CliError::Lib(other),
    })?;
    if !db.is_read_only() {
        ctx.interrupt().writing();
    }
    Ok(db)
}

/// `--wait SECONDS` of the commands that write.
#[derive(clap::Args)]
pub struct Wait {
    /// When another process is writing the database, wait up to this many
    /// seconds for it to close instead of failing at once.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    wait: Option<f64>,
}

/// Parses a non-negative number of seconds.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && (0.0..=1e9).contains(&t) => Ok(t),
        _ => Err(format!(
            "`{s}` is not a number of seconds; write for example 30"
        )),
    }
}

/// The fields and the format records are read with (`add`, `query`):
/// the record model and reader `dedup` uses too.
#[derive(clap::Args)]
pub struct JsonFields {
    /// Field holding the key (JSON: a path such as meta.id; CSV, Parquet:
    /// a column).
    #[arg(long, default_value = "id", value_name = "F")]
    key_field: String,
    /// Field holding the text (JSON: a path such as meta.body; CSV,
    /// Parquet: a column).
    #[arg(long, default_value = "text", value_name = "F")]
    text_field: String,
    /// Record format (default: from the name, else the content).
    #[arg(long, value_enum)]
    format: Option<Format>,
}

impl JsonFields {
    /// The records of `path` (`-`: standard input) with these fields and
    /// `extra`, in the format given or told; reads the first chunk (a
    /// wrong field name fails here).
    pub fn open(
        &self,
        path: &str,
        extra: Vec<Extra>,
        interrupt: &Interrupt,
    ) -> Result<Keyed, CliError> {
        let fields = Fields {
            text: self.text_field.clone(),
            id: Some(self.key_field.clone()),
            score: None,
            flags: Some(("--text-field", "--key-field")),
            shingles: true,
            extra,
        };
        let source = Source::open(path, detect(path, self.format)?, &fields, interrupt)?;
        Keyed::new(source, &fields, interrupt)
    }
}

/// What records carry besides their key and text (`add`, `import`,
/// `dedup --db`): a timestamp for the time index and a priority for
/// clusters that choose their representatives by priority.
#[derive(clap::Args, Default)]
pub struct CarryArgs {
    /// Field holding each record's timestamp, kept by the time index (for
    /// `expire`): whole seconds since the Unix epoch, or an RFC 3339 time
    /// such as 2026-01-31T00:00:00Z (JSON: a path such as meta.seen; CSV,
    /// Parquet: a column). A record without it is bad.
    #[arg(long, value_name = "F")]
    pub time_field: Option<String>,
    /// Field holding each record's priority, an integer (-2^63 to 2^63-1),
    /// for a database whose clusters' representative is the member of
    /// highest priority (`create --clusters --representative priority`).
    /// A record without it is bad, unless --default-priority.
    #[arg(long, value_name = "F")]
    pub priority_field: Option<String>,
    /// The priority of records without the --priority-field.
    #[arg(
        long,
        value_name = "N",
        requires = "priority_field",
        allow_hyphen_values = true
    )]
    pub default_priority: Option<i64>,
}

impl CarryArgs {
    /// The fields to read besides the key and the text.
    pub fn extras(&self) -> Vec<Extra> {
        let mut out = Vec::new();
        if let Some(name) = &self.priority_field {
            out.push(Extra {
                name: name.clone(),
                flag: "--priority-field",
                kind: ExtraKind::Priority {
                    default: self.default_priority,
                },
            });
        }
        if let Some(name) = &self.time_field {
            out.push(Extra {
                name: name.clone(),
                flag: "--time-field",
                kind: ExtraKind::Time,
            });
        }
        out
    }

    /// Whether any field is asked for.
    pub fn any(&self) -> bool {
        self.time_field.is_some() || self.priority_field.is_some()
    }

    /// Fails unless `db` (the file `path`) can keep what the records carry:
    /// a time index for --time-field, the priority policy for
    /// --priority-field; says how to get them.
    pub fn check(&self, db: &Database, path: &Path) -> Result<(), CliError> {
        let shown = crate::output::shell_arg(&path.to_string_lossy());
        if self.time_field.is_some() && !db.has_time_index() {
            return crate::fail(format!(
                "{} keeps no time index, which --time-field needs; add it with `lshdb rebuild \
                 {shown} --timestamps` (the documents stored so far are stamped with the time \
                 of the rebuild)",
                path.display()
            ));
        }
        let policy = db.settings().clusters;
        if self.priority_field.is_some() && policy != Some(lshdb::Representative::Priority) {
            let now = match policy {
                Some(policy) => format!("its clusters' representative is `{}`", policy.name()),
                None => "it keeps no clusters".to_owned(),
            };
            return crate::fail(format!(
                "{} does not choose cluster representatives by priority, which \
                 --priority-field needs ({now}); turn it to that policy with `lshdb rebuild \
                 {shown} --clusters --representative priority` (the documents stored so far \
                 get priority 0), or create a file with `lshdb create FILE --clusters \
                 --representative priority`",
                path.display()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod size_tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("134217728"), Ok(128 << 20));
        assert!(parse_size("1T").unwrap_err().contains("K, M or G"));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("1M").unwrap_err().contains("at least 64M"));
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("NaNG").is_err());
    }
}
