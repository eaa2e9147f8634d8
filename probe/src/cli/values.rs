//! The values of probe's flags, parsed by clap: sizes bounded so no arithmetic on them can
//! overflow, durations, percentages, point lists and ranges, the client, regexes and JSON. Each
//! parser returns the typed value, so no code after clap reads a flag's text.

use crate::client::Cap;
use crate::presets::Preset;
use crate::units::Measure;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use mcp::emit::{Fill, MAX_N};
use regex::Regex;
use serde_json::{Map, Value};
use std::time::Duration;

/// The most points one `--points` may list: a run per point, so more is surely a mistake.
pub(crate) const MAX_POINTS: usize = 1000;
/// The largest `--count-tokens` answer: far over any context window, far under any overflow.
pub(crate) const MAX_TOKENS: u64 = 1_000_000_000_000;
/// The largest `--cap`: a size in UTF-16 units, bounded so arithmetic on it cannot overflow.
pub(crate) const MAX_CAP: u64 = 1_000_000_000_000;

/// `--fill`'s values, listed in help and completions.
pub(crate) fn fill_parser() -> impl clap::builder::TypedValueParser<Value = Fill> {
    PossibleValuesParser::new(Fill::NAMES).map(|s| Fill::parse(&s).expect("a listed value"))
}

/// `probe model --api`'s values, each with the clients that speak it in help.
pub(crate) fn api_parser() -> impl clap::builder::TypedValueParser<Value = standin::Api> {
    let values = standin::Api::ALL
        .map(|api| clap::builder::PossibleValue::new(api.name()).help(api.speakers()));
    PossibleValuesParser::new(values).try_map(|s| s.parse::<standin::Api>())
}

/// A whole number with optional `_` separators, at most `max`.
fn whole(text: &str, max: u64) -> Result<u64, String> {
    let t = text.trim().replace('_', "");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not a whole number"));
    }
    match t.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("{t} is over the maximum {max}")),
    }
}

/// A size for `emit`: 0 to [`MAX_N`] UTF-16 units.
pub(crate) fn units_parser(text: &str) -> Result<u64, String> {
    whole(text, MAX_N)
}

/// `--turn K`: how many results one turn asks for, 2 to the stand-in's bound.
pub(crate) fn calls_parser(text: &str) -> Result<u64, String> {
    let max = crate::bracket::MAX_CALLS;
    match whole(text, max)? {
        0 | 1 => Err(format!("a turn of results is 2 to {max} calls")),
        k => Ok(k),
    }
}

pub(crate) fn step_parser(text: &str) -> Result<u64, String> {
    match units_parser(text)? {
        0 => Err("the step must be at least 1".into()),
        step => Ok(step),
    }
}

/// `--expect N[unit]`: a threshold, in the unit the client counts (`50000`, `51200bytes`,
/// `2000lines`, `25000tokens`); no unit leaves the unit unchecked (n as `emit` counts it,
/// UTF-16 units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expect {
    pub n: u64,
    pub unit: Option<Measure>,
}

pub(crate) fn expect_parser(text: &str) -> Result<Expect, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = match unit {
        "" => None,
        u => Some(Measure::parse(u).ok_or_else(|| {
            format!(
                "unknown unit `{u}` (one of {})",
                Measure::ALL.map(Measure::name).join(", ")
            )
        })?),
    };
    // N+1 is run too, and must be a size emit serves.
    Ok(Expect {
        n: whole(number, MAX_N - 1)?,
        unit,
    })
}

/// A unit a limit counts in: utf16, bytes, codepoints, lines or tokens.
pub(crate) fn measure_parser(text: &str) -> Result<Measure, String> {
    Measure::parse(text.trim()).ok_or_else(|| {
        format!(
            "unknown unit `{text}` (one of {})",
            Measure::ALL.map(Measure::name).join(", ")
        )
    })
}

pub(crate) fn tokens_parser(text: &str) -> Result<u64, String> {
    whole(text, MAX_TOKENS)
}

/// `--cap N[unit]`: a size in UTF-16 units (`40000`), or in another unit a client counts
/// (`51200bytes`, `2000lines`, `12000codepoints`, `25000tokens`).
pub(crate) fn cap_parser(text: &str) -> Result<Cap, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = match unit {
        "" => Measure::Utf16,
        u => Measure::parse(u).ok_or_else(|| {
            format!(
                "unknown unit `{u}` (one of {})",
                Measure::ALL.map(Measure::name).join(", ")
            )
        })?,
    };
    Ok(Cap {
        n: whole(number, MAX_CAP)?,
        unit,
    })
}

pub(crate) use cmdline::cli::{percent as margin_parser, timeout as timeout_parser};

/// A delay: any duration `report::duration` reads, zero included.
pub(crate) fn delay_parser(text: &str) -> Result<Duration, String> {
    report::duration::parse(text).map_err(|e| e.to_string())
}

/// `--points`: distinct sizes in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Points(pub Vec<u64>);

pub(crate) fn points_parser(text: &str) -> Result<Points, String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > MAX_POINTS {
        return Err(format!(
            "{} points is over the maximum {MAX_POINTS}",
            parts.len()
        ));
    }
    let mut points = parts
        .into_iter()
        .map(units_parser)
        .collect::<Result<Vec<_>, _>>()?;
    points.sort_unstable();
    points.dedup();
    Ok(Points(points))
}

/// `--bisect LO..HI`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub lo: u64,
    pub hi: u64,
}

pub(crate) fn range_parser(text: &str) -> Result<Range, String> {
    let (lo, hi) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not LO..HI"))?;
    let (lo, hi) = (units_parser(lo)?, units_parser(hi)?);
    if lo >= hi {
        return Err(format!("LO ({lo}) must be below HI ({hi})"));
    }
    Ok(Range { lo, hi })
}

/// `--client`: a preset's name, or a command line for the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClientKind {
    Preset(Preset),
    Command(String),
}

pub(crate) fn client_parser(text: &str) -> Result<ClientKind, String> {
    if let Some(preset) = Preset::parse(text) {
        return Ok(ClientKind::Preset(preset));
    }
    let presets = Preset::ALL.map(Preset::name).join(", ");
    if text.trim().is_empty() {
        return Err(format!(
            "--client must be a preset ({presets}) or a command"
        ));
    }
    // A bare name that is no preset, holds no `{mcp_config}` and names no program on PATH is a
    // preset mistyped far more often than a command: run through the shell it would only fail
    // at every point (or run something else of that name), so it is refused here.
    let word = text.trim();
    if is_bare_name(word) && !on_path(word) {
        let nearest = Preset::ALL
            .into_iter()
            .min_by_key(|p| edit_distance(word, p.name()))
            .expect("there are presets");
        return Err(format!(
            "not a preset, and no program of that name is on PATH; did you mean {:?}? (presets: \
             {presets}; a command runs with {{mcp_config}} and {{n}})",
            nearest.name()
        ));
    }
    Ok(ClientKind::Command(text.to_string()))
}

/// A name as a program or a preset is written: letters, digits, `-`, `_`, `.` and `+` only.
fn is_bare_name(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
}

/// Whether an executable file named `name` is in a folder of `$PATH`.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// The Levenshtein distance between `a` and `b`: the fewest one-character edits between them.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// `--only`: a preset's name.
pub(crate) fn preset_parser(text: &str) -> Result<Preset, String> {
    Preset::parse(text).ok_or_else(|| {
        format!(
            "not a preset (one of {})",
            Preset::ALL.map(Preset::name).join(", ")
        )
    })
}

/// `--spill-pattern`: a regex.
pub(crate) fn regex_parser(text: &str) -> Result<Regex, String> {
    Regex::new(text).map_err(|e| format!("not a regex: {e}"))
}

/// `--args`: a JSON object.
pub(crate) fn json_object_parser(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("must be a JSON object".into()),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever is typed, a value parser answers without panicking, and what it accepts is
        /// in bounds.
        #[test]
        fn value_parsers_accept_only_bounded_values(text in "[0-9_.,%a-z -]{0,24}|\\PC{0,12}") {
            if let Ok(n) = units_parser(&text) {
                prop_assert!(n <= MAX_N);
            }
            if let Ok(step) = step_parser(&text) {
                prop_assert!((1..=MAX_N).contains(&step));
            }
            if let Ok(e) = expect_parser(&text) {
                prop_assert!(e.n < MAX_N);
            }
            if let Ok(Points(p)) = points_parser(&text) {
                prop_assert!(p.len() <= MAX_POINTS && p.iter().all(|n| *n <= MAX_N));
                prop_assert!(p.windows(2).all(|w| w[0] < w[1]));
            }
            if let Ok(Range { lo, hi }) = range_parser(&text) {
                prop_assert!(lo < hi && hi <= MAX_N);
            }
            if let Ok(m) = margin_parser(&text) {
                prop_assert!((0.0..1.0).contains(&m));
            }
            if let Ok(d) = timeout_parser(&text) {
                prop_assert!(!d.is_zero() && d <= report::duration::MAX);
            }
        }
    }

    #[test]
    fn a_turn_is_two_calls_or_more_and_bounded() {
        assert_eq!(calls_parser("20"), Ok(20));
        assert!(calls_parser("1").is_err());
        assert!(calls_parser("1001").is_err());
    }

    #[test]
    fn sizes_take_separators_and_refuse_signs_and_exponents() {
        assert_eq!(units_parser("50_000"), Ok(50_000));
        assert_eq!(units_parser(" 7 "), Ok(7));
        for bad in [
            "",
            "-1",
            "+1",
            "1e3",
            "0x10",
            "1.5",
            "10000001",
            "18446744073709551616",
        ] {
            assert!(units_parser(bad).is_err(), "{bad}");
        }
        assert_eq!(margin_parser("20%"), Ok(0.2));
        assert_eq!(margin_parser("0.2"), Ok(0.2));
        assert_eq!(margin_parser("20"), Ok(0.2));
        assert_eq!(range_parser("1..2"), Ok(Range { lo: 1, hi: 2 }));
    }

    #[test]
    fn an_expected_threshold_takes_a_unit_and_refuses_unknown_ones() {
        let e = |n, unit| Ok(Expect { n, unit });
        assert_eq!(expect_parser("50000"), e(50_000, None));
        assert_eq!(
            expect_parser("51_200bytes"),
            e(51_200, Some(Measure::Bytes))
        );
        assert_eq!(expect_parser("2000lines"), e(2000, Some(Measure::Lines)));
        assert_eq!(expect_parser("50000utf16"), e(50_000, Some(Measure::Utf16)));
        assert_eq!(
            expect_parser("25000tokens"),
            e(25_000, Some(Measure::Tokens))
        );
        assert!(expect_parser("50000words")
            .unwrap_err()
            .contains("unknown unit"));
        assert_eq!(
            cap_parser("51200bytes"),
            Ok(crate::client::Cap {
                n: 51_200,
                unit: Measure::Bytes
            })
        );
        assert!(cap_parser("5parsecs").is_err());
        assert!(expect_parser("bytes").is_err());
        assert!(
            expect_parser("10000000").is_err(),
            "N+1 must be a size emit serves"
        );
        assert_eq!(
            client_parser("codex"),
            Ok(ClientKind::Preset(Preset::Codex))
        );
        assert_eq!(
            client_parser("codex exec"),
            Ok(ClientKind::Command("codex exec".into()))
        );
    }

    #[test]
    fn a_bare_name_that_is_no_preset_and_no_program_names_the_nearest_preset() {
        let e = client_parser("cladue").unwrap_err();
        assert!(e.contains("did you mean \"claude\""), "{e}");
        let e = client_parser("gemeni").unwrap_err();
        assert!(e.contains("did you mean \"gemini\""), "{e}");
        // A program on PATH, a command with arguments or a config stays a command.
        assert_eq!(client_parser("sh"), Ok(ClientKind::Command("sh".into())));
        assert!(matches!(
            client_parser("my-client {mcp_config}"),
            Ok(ClientKind::Command(_))
        ));
        assert_eq!(edit_distance("cladue", "claude"), 2);
        assert_eq!(edit_distance("", "qwen"), 4);
        assert_eq!(edit_distance("codex", "codex"), 0);
    }
}
