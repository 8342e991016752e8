//! What a record carries besides its key and text: a timestamp
//! (`--time-field`, for the time index) and a priority (`--priority-field`,
//! for clusters whose representative is the member of highest priority).
//! The readers capture these fields' raw values ([`Extra`]); this module
//! reads them as a timestamp or a priority, with a reason naming the field
//! and its flag when a value is missing or not one, and [`Carried`] hands
//! them to the library with the document.

use lshdb::{AsDocument, Document, DocumentBuf};
use serde_json::Value;

/// A field read besides the text and the id.
#[derive(Clone, Debug, PartialEq)]
pub struct Extra {
    /// The field (JSON: a path such as meta.rank; CSV, Parquet: a column).
    pub name: String,
    /// The flag that names it, for messages.
    pub flag: &'static str,
    /// What it holds.
    pub kind: ExtraKind,
}

/// What an extra field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtraKind {
    /// A priority, a signed 64-bit integer; `default` for records without
    /// the field (`None`: such a record is bad).
    Priority { default: Option<i64> },
    /// A timestamp: seconds since the Unix epoch, or an RFC 3339 time.
    Time,
}

/// A record's timestamp and priority, read from its extra fields' values
/// (`values`, in the order of `extras`; `None`: the field is missing or
/// null). `Err` says why the record is bad.
pub fn read_extras(
    extras: &[Extra],
    values: &[Option<Value>],
) -> Result<(Option<u64>, Option<i64>), String> {
    let (mut at, mut priority) = (None, None);
    for (i, extra) in extras.iter().enumerate() {
        let value = values.get(i).and_then(Option::as_ref);
        match extra.kind {
            ExtraKind::Priority { default } => {
                priority = Some(match (value, default) {
                    (None, Some(default)) => default,
                    (value, _) => read_priority(extra, value)?,
                });
            }
            ExtraKind::Time => at = Some(read_time(extra, value)?),
        }
    }
    Ok((at, priority))
}

/// A value as a priority: a JSON integer, or text holding one (CSV).
fn read_priority(extra: &Extra, value: Option<&Value>) -> Result<i64, String> {
    let Extra { name, flag, .. } = extra;
    let parsed = match value {
        None => return Err(format!("missing field `{name}` ({flag})")),
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        Some(_) => None,
    };
    parsed.ok_or_else(|| {
        format!(
            "field `{name}` ({flag}) is not an integer from {} to {}: {}",
            i64::MIN,
            i64::MAX,
            shown(value)
        )
    })
}

/// A value as a timestamp: a JSON integer of seconds since the Unix
/// epoch, or text holding one or an RFC 3339 time.
fn read_time(extra: &Extra, value: Option<&Value>) -> Result<u64, String> {
    let Extra { name, flag, .. } = extra;
    let parsed = match value {
        None => return Err(format!("missing field `{name}` ({flag})")),
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => crate::support::when::parse_timestamp(s.trim()),
        Some(_) => None,
    };
    parsed.ok_or_else(|| {
        format!(
            "field `{name}` ({flag}) is not a time: give seconds since the Unix epoch or an \
             RFC 3339 time such as 2026-01-31T00:00:00Z, not {}",
            shown(value)
        )
    })
}

/// A value as a message shows it: JSON, cut short.
fn shown(value: Option<&Value>) -> String {
    let text = value.map_or_else(String::new, Value::to_string);
    crate::output::short(&text)
}

/// A document with the timestamp and priority its record carried.
#[derive(Debug, Clone)]
pub struct Carried {
    pub doc: DocumentBuf,
    pub at: Option<u64>,
    pub priority: Option<i64>,
}

impl AsDocument for Carried {
    fn as_document(&self) -> Document<'_> {
        self.doc.as_document()
    }

    fn timestamp(&self) -> Option<u64> {
        self.at
    }

    fn priority(&self) -> Option<i64> {
        self.priority
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn extras(default: Option<i64>) -> Vec<Extra> {
        vec![
            Extra {
                name: "rank".into(),
                flag: "--priority-field",
                kind: ExtraKind::Priority { default },
            },
            Extra {
                name: "seen".into(),
                flag: "--time-field",
                kind: ExtraKind::Time,
            },
        ]
    }

    #[test]
    fn priorities_and_times_are_read_from_json_and_text() {
        let read = |p: Value, t: Value| read_extras(&extras(None), &[Some(p), Some(t)]);
        assert_eq!(
            read(json!(-3), json!(1_700_000_000)),
            Ok((Some(1_700_000_000), Some(-3)))
        );
        assert_eq!(
            read(json!(" 7 "), json!("1700000000")),
            Ok((Some(1_700_000_000), Some(7)))
        );
        let rfc = read(json!(0), json!("2026-01-31T00:00:00Z")).unwrap();
        assert_eq!(rfc, (Some(1_769_817_600), Some(0)));
    }

    #[test]
    fn missing_and_bad_values_say_which_field_and_flag() {
        let err = read_extras(&extras(None), &[None, Some(json!(1))]).unwrap_err();
        assert_eq!(err, "missing field `rank` (--priority-field)");
        assert_eq!(
            read_extras(&extras(Some(4)), &[None, Some(json!(1))]),
            Ok((Some(1), Some(4)))
        );
        for bad in [json!(1.5), json!("high"), json!(true), json!(1u64 << 63)] {
            let err = read_extras(&extras(None), &[Some(bad), Some(json!(1))]).unwrap_err();
            assert!(
                err.starts_with("field `rank` (--priority-field) is not an integer"),
                "{err}"
            );
        }
        for bad in [json!(-1), json!("yesterday"), json!(2.5)] {
            let err = read_extras(&extras(None), &[Some(json!(1)), Some(bad)]).unwrap_err();
            assert!(
                err.starts_with("field `seen` (--time-field) is not a time"),
                "{err}"
            );
        }
        let err = read_extras(&extras(Some(0)), &[None, None]).unwrap_err();
        assert_eq!(err, "missing field `seen` (--time-field)");
    }
}
