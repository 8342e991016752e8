//! Times on the command line: durations (`30d`, `12h`, `90m`, `45s`) for
//! `expire --older-than` and `dedup --window`, absolute times (RFC 3339,
//! `2026-01-31T00:00:00Z`, or seconds since the Unix epoch), and the
//! RFC 3339 rendering of a timestamp. Timestamps are seconds since the
//! Unix epoch, as the library stores them.

/// A point in time given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// This many seconds before now.
    Ago(u64),
    /// Seconds since the Unix epoch.
    At(u64),
}

impl When {
    /// The timestamp, seconds since the Unix epoch, with `now` the current
    /// time (a duration longer than the time since 1970 gives 0).
    pub fn resolve(self, now: u64) -> u64 {
        match self {
            When::Ago(secs) => now.saturating_sub(secs),
            When::At(at) => at,
        }
    }
}

/// The current time, seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Parses a duration: a whole number with a unit, `s`, `m`, `h` or `d`.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let bad =
        || format!("`{s}` is not a duration; give a whole number and a unit: 45s, 90m, 12h or 30d");
    let unit = match s.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3_600,
        Some('d') => 86_400,
        _ => return Err(bad()),
    };
    let number: u64 = s[..s.len() - 1].parse().map_err(|_| bad())?;
    number.checked_mul(unit).ok_or_else(bad)
}

/// Parses a time: a duration before now (`30d`), seconds since the Unix
/// epoch (`1767225600`), or an RFC 3339 time (`2026-01-01T00:00:00Z`).
pub fn parse_when(s: &str) -> Result<When, String> {
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(When::At(secs));
    }
    if s.contains('-') && s.len() >= 20 {
        return parse_rfc3339(s)
            .map(When::At)
            .ok_or_else(|| format!("`{s}` is not an RFC 3339 time such as 2026-01-31T00:00:00Z"));
    }
    parse_duration(s).map(When::Ago).map_err(|_| {
        format!(
            "`{s}` is not a time; give a duration before now (30d, 12h, 90m, 45s), an RFC 3339 \
             time (2026-01-31T00:00:00Z) or seconds since the Unix epoch"
        )
    })
}

/// A timestamp: seconds since the Unix epoch (`1767225600`) or an RFC 3339
/// time (`2026-01-01T00:00:00Z`); `None` for anything else.
pub fn parse_timestamp(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().or_else(|| parse_rfc3339(s))
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` → seconds since the Unix epoch
/// (fractions dropped); `None` for anything else or a time before 1970.
fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            let at = s.len() - 5;
            if !sep(at + 2, b":") {
                return None;
            }
            sign * (num(at, 2)? * 3_600 + num(at + 3, 2)? * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3_600 + minute * 60 + second - offset;
    u64::try_from(secs).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A timestamp as RFC 3339 in UTC: `2026-01-31T00:00:00Z`.
pub fn rfc3339(at: u64) -> String {
    let (days, secs) = ((at / 86_400) as i64, at % 86_400);
    // Howard Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_times_parse() {
        assert_eq!(parse_duration("30d"), Ok(30 * 86_400));
        assert_eq!(parse_duration("12h"), Ok(12 * 3_600));
        assert_eq!(parse_duration("90m"), Ok(5_400));
        assert_eq!(parse_duration("45s"), Ok(45));
        for bad in ["", "d", "30", "3.5d", "-1d", "30w", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_when("7d"), Ok(When::Ago(7 * 86_400)));
        assert_eq!(parse_when("1767225600"), Ok(When::At(1_767_225_600)));
        assert_eq!(
            parse_when("2026-01-01T00:00:00Z"),
            Ok(When::At(1_767_225_600))
        );
        assert_eq!(
            parse_when("2026-01-01T02:30:00.25+02:30"),
            Ok(When::At(1_767_225_600))
        );
        assert!(parse_when("2026-13-01T00:00:00Z").is_err());
        assert!(parse_when("2026-01-01 00:00:00").is_err());
        assert!(parse_when("yesterday").unwrap_err().contains("RFC 3339"));
        assert_eq!(When::Ago(10).resolve(100), 90);
        assert_eq!(When::Ago(1000).resolve(100), 0);
    }

    #[test]
    fn timestamps_render_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_767_225_600), "2026-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
        for at in [0, 59, 86_399, 951_782_400, 1_700_000_000, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&rfc3339(at)), Some(at));
        }
    }
}
