//! The words a check reports and their counts: a [`Status`] per entry (`OK`, `FAILED`,
//! `MISSING`) and the [`Summary`] of them, each with one exact text form that it is written as
//! and read back from, so a record that holds them reads back as the values it was written from.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The verdict on one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The file is there and has the digest.
    Ok,
    /// Something is there but it does not have the digest or cannot be read.
    Failed,
    /// Nothing is there.
    Missing,
}

impl Status {
    /// The word printed for it: `OK`, `FAILED` or `MISSING`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Failed => "FAILED",
            Status::Missing => "MISSING",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = ReadError;

    /// The word [`Status::as_str`] prints, exactly.
    fn from_str(word: &str) -> Result<Status, ReadError> {
        [Status::Ok, Status::Failed, Status::Missing]
            .into_iter()
            .find(|s| s.as_str() == word)
            .ok_or_else(|| ReadError::Status(word.to_string()))
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Reads the word back, so a report that records statuses can be read as it was written.
impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Status, D::Error> {
        let word = String::deserialize(deserializer)?;
        word.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Status {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Status".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let words: Vec<&str> = [Status::Ok, Status::Failed, Status::Missing]
            .iter()
            .map(|s| s.as_str())
            .collect();
        schemars::json_schema!({ "type": "string", "enum": words })
    }
}

/// A status word or a summary line that is not one this crate writes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// Not `OK`, `FAILED` or `MISSING`.
    #[error("not a manifest status: {0:?} (OK, FAILED or MISSING)")]
    Status(String),
    /// Not `N/N OK` with its optional `, N FAILED` and `, N MISSING`, adding up.
    #[error("not a manifest summary: {0:?} (`12/12 OK`, or `10/12 OK, 1 FAILED, 1 MISSING`)")]
    Summary(String),
}

/// Counts of each status: what a check's result is, as records hold it.
///
/// Its one text form is the summary line, `12/12 OK` or `10/12 OK, 1 FAILED, 1 MISSING`
/// ([`Display`](fmt::Display)); it serializes as that line and reads back from exactly that
/// line ([`FromStr`], [`Deserialize`]), the counts adding up, or not at all. So a report that
/// records it keeps the words it always had, and no reader parses them its own way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Entries checked.
    pub total: usize,
    /// Entries OK.
    pub ok: usize,
    /// Entries FAILED.
    pub failed: usize,
    /// Entries MISSING.
    pub missing: usize,
}

impl Summary {
    /// True when every entry is OK.
    pub fn all_ok(&self) -> bool {
        self.ok == self.total
    }
}

/// `12/12 OK`, or `10/12 OK, 1 FAILED, 1 MISSING` (a zero count is left out).
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} OK", self.ok, self.total)?;
        if self.failed > 0 {
            write!(f, ", {} FAILED", self.failed)?;
        }
        if self.missing > 0 {
            write!(f, ", {} MISSING", self.missing)?;
        }
        Ok(())
    }
}

/// Reads exactly what [`Summary`]'s `Display` writes (a zero count left out, the counts adding
/// up), so a recorded summary reads back as the counts it was written from.
impl FromStr for Summary {
    type Err = ReadError;

    fn from_str(text: &str) -> Result<Summary, ReadError> {
        let bad = || ReadError::Summary(text.to_string());
        let count = |digits: &str| -> Result<usize, ReadError> {
            // No sign, no leading zero: one way to write each number, as Display writes it.
            if digits.is_empty()
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || (digits.len() > 1 && digits.starts_with('0'))
            {
                return Err(bad());
            }
            digits.parse().map_err(|_| bad())
        };
        let mut parts = text.split(", ");
        let head = parts.next().ok_or_else(bad)?;
        let (ok, total) = head
            .strip_suffix(" OK")
            .and_then(|counts| counts.split_once('/'))
            .ok_or_else(bad)?;
        let mut summary = Summary {
            total: count(total)?,
            ok: count(ok)?,
            ..Summary::default()
        };
        let mut failed = None;
        let mut missing = None;
        for part in parts {
            if let (Some(n), None, None) = (part.strip_suffix(" FAILED"), failed, missing) {
                failed = Some(count(n)?);
            } else if let (Some(n), None) = (part.strip_suffix(" MISSING"), missing) {
                missing = Some(count(n)?);
            } else {
                return Err(bad());
            }
        }
        summary.failed = failed.unwrap_or(0);
        summary.missing = missing.unwrap_or(0);
        let written_zero = failed == Some(0) || missing == Some(0);
        let adds_up = summary
            .ok
            .checked_add(summary.failed)
            .and_then(|n| n.checked_add(summary.missing))
            == Some(summary.total);
        if written_zero || !adds_up {
            return Err(bad());
        }
        Ok(summary)
    }
}

/// The summary line, as [`Display`](fmt::Display) writes it.
impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Exactly the summary line [`Serialize`] writes, through [`FromStr`]; anything else is refused.
impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Summary, D::Error> {
        let line = String::deserialize(deserializer)?;
        line.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Summary {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Summary".into()
    }

    /// Inline: a record's field shows the line's shape where it is used.
    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A manifest check's counts as its summary line: `12/12 OK`, or \
                            what failed (`10/12 OK, 1 FAILED, 1 MISSING`).",
            "type": "string",
            "pattern": SUMMARY_PATTERN,
        })
    }
}

/// The summary lines [`Summary`] writes, as a regular expression (a schema's `pattern`); the
/// counts adding up is more than a pattern can say, and [`FromStr`] checks it too.
const SUMMARY_PATTERN: &str = "^[0-9]+/[0-9]+ OK(, [0-9]+ FAILED)?(, [0-9]+ MISSING)?$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_are_exact() {
        assert_eq!(Status::Ok.to_string(), "OK");
        assert_eq!(Status::Failed.to_string(), "FAILED");
        assert_eq!(Status::Missing.to_string(), "MISSING");
    }

    #[test]
    fn a_summary_is_its_line_in_json_and_reads_back_from_exactly_that_line() {
        let summary = Summary {
            total: 12,
            ok: 10,
            failed: 1,
            missing: 1,
        };
        let json = serde_json::to_value(summary).unwrap();
        assert_eq!(json, "10/12 OK, 1 FAILED, 1 MISSING");
        assert_eq!(serde_json::from_value::<Summary>(json).unwrap(), summary);
        for bad in [
            serde_json::json!("11/12 OK"),
            serde_json::json!("12/12 OK "),
            serde_json::json!({"total": 12, "ok": 12, "failed": 0, "missing": 0}),
            serde_json::json!(12),
        ] {
            assert!(
                serde_json::from_value::<Summary>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn statuses_and_summaries_read_back_as_written_and_nothing_else() {
        for status in [Status::Ok, Status::Failed, Status::Missing] {
            assert_eq!(status.as_str().parse::<Status>(), Ok(status));
        }
        assert!("ok".parse::<Status>().is_err());
        for (ok, failed, missing) in [(12, 0, 0), (10, 1, 1), (10, 2, 0), (0, 0, 3), (0, 0, 0)] {
            let summary = Summary {
                total: ok + failed + missing,
                ok,
                failed,
                missing,
            };
            assert_eq!(summary.to_string().parse::<Summary>(), Ok(summary));
        }
        for bad in [
            "",
            "x/x OK",
            "11/12 OK",
            "12/12 OK, 0 FAILED",
            "10/12 OK, 1 MISSING, 1 FAILED",
            "10/12 OK, 2 FAILED, 2 FAILED",
            "012/12 OK",
            "+1/1 OK",
            "1/1 ok",
            "1/1 OK ",
        ] {
            assert!(bad.parse::<Summary>().is_err(), "{bad:?}");
        }
    }
}
