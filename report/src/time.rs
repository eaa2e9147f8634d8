//! UTC timestamps, always written as RFC 3339 with a `Z` (`2026-10-12T20:13:35Z`).
//!
//! Reviewers paste these into reviews and compare them across machines, so they carry no local
//! offset and no sub-second noise. The calendar arithmetic is done here (days since the epoch to
//! a civil date) rather than pulling a date crate in for one format.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A moment in UTC, at whole-second precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    secs: i64,
}

impl Timestamp {
    pub fn now() -> Timestamp {
        Timestamp::from(SystemTime::now())
    }

    pub fn from_unix(secs: i64) -> Timestamp {
        Timestamp { secs }
    }

    pub fn unix(&self) -> i64 {
        self.secs
    }

    /// Parses the exact form this type writes (`YYYY-MM-DDTHH:MM:SSZ`).
    pub fn parse(text: &str) -> Option<Timestamp> {
        let b = text.as_bytes();
        if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
            return None;
        }
        if b[16] != b':' || b[19] != b'Z' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = text.get(r)?;
            s.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| s.parse().ok())?
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        Some(Timestamp {
            secs: days_from_civil(y, mo as u32, d as u32) * 86_400 + h * 3600 + mi * 60 + s,
        })
    }
}

impl From<SystemTime> for Timestamp {
    fn from(t: SystemTime) -> Timestamp {
        let secs = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_secs() as i64,
            Err(e) => -(e.duration().as_secs_f64().ceil() as i64),
        };
        Timestamp { secs }
    }
}

impl From<Timestamp> for SystemTime {
    fn from(t: Timestamp) -> SystemTime {
        if t.secs >= 0 {
            UNIX_EPOCH + Duration::from_secs(t.secs as u64)
        } else {
            UNIX_EPOCH - Duration::from_secs(t.secs.unsigned_abs())
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not an RFC 3339 UTC time: {text}")))
    }
}

impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::schema::string_with_pattern(
            "UTC, RFC 3339, with a Z.",
            "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$",
        )
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
///
/// Works in 400-year eras (146097 days each) shifted to start in March, so the leap day is the
/// last day of the shifted year and needs no special case.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_moments_format_as_rfc3339_utc() {
        assert_eq!(Timestamp::from_unix(0).to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Timestamp::from_unix(1_760_300_015).to_string(),
            "2025-10-12T20:13:35Z"
        );
        // A leap day, and the day after it.
        assert_eq!(
            Timestamp::from_unix(951_782_400).to_string(),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            Timestamp::from_unix(951_868_800).to_string(),
            "2000-03-01T00:00:00Z"
        );
        assert_eq!(Timestamp::from_unix(-1).to_string(), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn parse_inverts_display_over_centuries() {
        let mut secs = -4_000_000_000i64;
        while secs < 8_000_000_000 {
            let t = Timestamp::from_unix(secs);
            assert_eq!(Timestamp::parse(&t.to_string()), Some(t), "{t}");
            secs += 86_400 * 37 + 3_671;
        }
    }

    #[test]
    fn parse_refuses_other_forms() {
        for bad in [
            "2026-10-12T20:13:35",
            "2026-10-12 20:13:35Z",
            "2026-13-12T20:13:35Z",
            "2026-10-12T20:13:35+00:00",
            "",
        ] {
            assert_eq!(Timestamp::parse(bad), None, "{bad}");
        }
    }
}
