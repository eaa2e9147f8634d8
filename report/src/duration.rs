//! Durations as people write them in config files and flags: `300s`, `15m`, `1h30m`, `500ms`.
//!
//! A bare number is refused rather than guessed at: "30" could mean seconds or minutes, and a
//! timeout off by 60x is a silent failure.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad duration {text:?}: {why} (write it like 300s, 15m, 1h30m or 500ms)")]
pub struct DurationError {
    pub text: String,
    pub why: &'static str,
}

/// The longest duration accepted: 30 days. Longer is surely a typo, and a bound this far below
/// `Duration::MAX` means any accepted duration can be added to an `Instant` (a deadline)
/// without overflowing, which would panic.
pub const MAX: Duration = Duration::from_secs(30 * 86_400);

/// The longest text a duration may be, and the most digits one number of it may have: far
/// more than any real duration needs (`29d23h59m59s999ms` is 17), and small enough that
/// parsing stays cheap and an error quoting the text stays one short line.
pub const MAX_LEN: usize = 64;
const MAX_DIGITS: usize = 12;

/// The text as an error quotes it: at most [`MAX_LEN`] characters, then `…`.
fn shown(text: &str) -> String {
    match text.char_indices().nth(MAX_LEN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A timeout, the one rule for gate.toml's and mutants.toml's `timeout`s and every
/// `--timeout`: a duration ([`parse`]) of more than zero, since nothing could finish in none.
pub fn timeout(text: &str) -> Result<Duration, DurationError> {
    match parse(text)? {
        d if d.is_zero() => Err(DurationError {
            text: shown(text),
            why: "it is zero, and a timeout must be more than zero",
        }),
        d => Ok(d),
    }
}

/// Parses a sequence of `<number><unit>` parts, units `ms`, `s`, `m`, `h`, `d`; the total is at
/// most [`MAX`], the text at most [`MAX_LEN`] characters.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let err = |why| DurationError {
        text: shown(text),
        why,
    };
    let longest_number = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    if text.chars().count() > MAX_LEN || longest_number > MAX_DIGITS {
        return Err(err(
            "it is too long (at most 64 characters, and 12 digits to a number)",
        ));
    }
    let s = text.trim();
    if s.is_empty() {
        return Err(err("it is empty"));
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(err("expected a number"));
        }
        let value: f64 = rest[..digits]
            .parse()
            .map_err(|_| err("the number is malformed"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let secs = match unit {
            "ms" => value / 1000.0,
            "s" | "sec" | "secs" => value,
            "m" | "min" | "mins" => value * 60.0,
            "h" | "hr" | "hours" => value * 3600.0,
            "d" | "days" => value * 86_400.0,
            "" => return Err(err("a unit is missing")),
            _ => return Err(err("the unit is unknown")),
        };
        // Only digits reach here, so the one way to fail is a number too large for a Duration:
        // over the maximum, as the sum's bound just below says of everything else.
        let part = Duration::try_from_secs_f64(secs)
            .map_err(|_| err("it is over the maximum of 30 days"))?;
        total = total
            .checked_add(part)
            .filter(|t| *t <= MAX)
            .ok_or_else(|| err("it is over the maximum of 30 days"))?;
    }
    Ok(total)
}

/// A compact human form: `0.31s`, `12.4s`, `2m05s`, `1h02m`.
pub fn human(d: Duration) -> String {
    HumanDuration(d).to_string()
}

/// Display wrapper for [`human`].
#[derive(Clone, Copy, Debug)]
pub struct HumanDuration(pub Duration);

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs_f64();
        if secs < 10.0 {
            write!(f, "{secs:.2}s")
        } else if secs < 60.0 {
            write!(f, "{secs:.1}s")
        } else if secs < 3600.0 {
            let whole = secs.round() as u64;
            write!(f, "{}m{:02}s", whole / 60, whole % 60)
        } else {
            let whole = secs.round() as u64;
            write!(f, "{}h{:02}m", whole / 3600, whole % 3600 / 60)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_people_write() {
        assert_eq!(parse("300s").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse(" 2m 5s ").unwrap(), Duration::from_secs(125));
    }

    #[test]
    fn refuses_bare_numbers_and_unknown_units() {
        for bad in ["30", "", "m", "5 fortnights", "1..2s", "-5s", "s5"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse("30")
            .unwrap_err()
            .to_string()
            .contains("unit is missing"));
    }

    #[test]
    fn refuses_durations_past_the_maximum_instead_of_overflowing() {
        assert_eq!(parse("30d").unwrap(), MAX);
        assert_eq!(parse("29d23h59m59s1000ms").unwrap(), MAX);
        for huge in [
            "31d",
            "30d1ms",
            "720h1s",
            "18446744073709551615s",
            "18446744073709551615s18446744073709551615s",
            "99999999999999999999999999999999999999d",
            "29d29d",
            "1e400s",
        ] {
            let e = parse(huge).expect_err(huge);
            assert!(
                ["maximum", "unit", "too long"]
                    .iter()
                    .any(|w| e.to_string().contains(w)),
                "{huge}: {e}"
            );
        }
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            /// Any text: no panic, and whatever is accepted can be a deadline.
            #[test]
            fn any_text_parses_to_a_bounded_duration_or_an_error(text in "[0-9.smhdinrsecay ]{0,24}|\\PC{0,16}") {
                if let Ok(d) = parse(&text) {
                    prop_assert!(d <= MAX);
                    prop_assert!(std::time::Instant::now().checked_add(d).is_some());
                }
            }

            /// Whole numbers of a unit parse to exactly that many, up to the maximum.
            #[test]
            fn whole_parts_add_up_exactly(parts in proptest::collection::vec((0u64..5_000_000, 0usize..5), 1..4)) {
                const UNITS: [(&str, u64); 5] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)];
                let text: String = parts.iter().map(|(v, u)| format!("{v}{}", UNITS[*u].0)).collect();
                let millis: u128 = parts.iter().map(|(v, u)| *v as u128 * UNITS[*u].1 as u128).sum();
                match parse(&text) {
                    Ok(d) => prop_assert_eq!(d.as_millis(), millis),
                    Err(e) => {
                        prop_assert!(millis > MAX.as_millis(), "{} refused: {}", text, e);
                    }
                }
            }
        }
    }

    #[test]
    fn text_too_long_is_refused_before_it_is_parsed_and_quoted_short() {
        let long = format!("{}1s", " ".repeat(MAX_LEN));
        let e = parse(&long).unwrap_err();
        assert!(e.why.contains("too long"), "{e}");
        assert_eq!(e.text.chars().count(), MAX_LEN + 1, "{e}");
        assert!(parse("1234567890123s")
            .unwrap_err()
            .why
            .contains("too long"));
        assert_eq!(parse("000000000001s").unwrap(), Duration::from_secs(1));
        assert!(timeout(&"1s ".repeat(1000))
            .unwrap_err()
            .why
            .contains("too long"));
    }

    #[test]
    fn a_timeout_is_more_than_zero() {
        assert_eq!(timeout("90s"), Ok(Duration::from_secs(90)));
        assert!(timeout("0s").unwrap_err().to_string().contains("zero"));
        assert!(timeout("31d").unwrap_err().to_string().contains("30 days"));
    }

    #[test]
    fn human_form_is_compact() {
        assert_eq!(human(Duration::from_millis(310)), "0.31s");
        assert_eq!(human(Duration::from_millis(12_400)), "12.4s");
        assert_eq!(human(Duration::from_secs(125)), "2m05s");
        assert_eq!(human(Duration::from_secs(3720)), "1h02m");
    }
}
