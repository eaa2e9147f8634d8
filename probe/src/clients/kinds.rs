//! Every kind of limit a client has, as `probe clients` reports them: one result's size (in the
//! unit the client counts), its lines, its tokens, and the total of all results in one turn.
//!
//! A kind is `found` (with its value, unit and what happens above it), `none found` up to
//! where it was searched, `not reachable` (another limit stops every result first: a lines
//! limit behind a size limit, Claude Code's token limit behind its 50,000-unit save), or `not
//! measured`; each of the last three says why in words, so no kind is ever left out silently.
//! The per-turn budget is searched with turns of [`TURN_CALLS`] results, each far under the
//! size limit, so only the total can be over.

use crate::bracket::events::{Observer, Search};
use crate::bracket::{bisect_range, threshold, Driver, Point, Shape, UnitsRecord, Verdict};
use crate::presets::Preset;
use crate::units::{size_of, Unit};
use mcp::emit::{Fill, MAX_N};
use schemars::JsonSchema;
use serde::Serialize;

/// The results one turn asks for when `probe clients` looks for a per-turn budget.
pub(crate) const TURN_CALLS: u64 = 20;

/// A kind of limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LimitKind {
    /// One result's size, in the unit the client counts.
    Size,
    /// One result's lines.
    Lines,
    /// One result's tokens.
    Tokens,
    /// All results of one turn together.
    Turn,
}

impl LimitKind {
    pub(crate) fn word(self) -> &'static str {
        match self {
            LimitKind::Size => "size",
            LimitKind::Lines => "lines",
            LimitKind::Tokens => "tokens",
            LimitKind::Turn => "turn",
        }
    }
}

/// What the search for a kind found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Finding {
    /// The limit, exact or an estimate (see the note).
    Found,
    /// Everything came back whole up to where it was searched.
    NoneFound,
    /// Another limit stops every result first, so this one is never seen.
    NotReachable,
    /// Not searched (the note says why).
    NotMeasured,
}

impl Finding {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Finding::Found => "found",
            Finding::NoneFound => "none found",
            Finding::NotReachable => "not reachable",
            Finding::NotMeasured => "not measured",
        }
    }
}

/// One kind of limit of one client.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Limit {
    pub kind: LimitKind,
    pub found: Finding,
    /// The most that came back whole, in `unit`.
    pub limit: Option<u64>,
    pub unit: Option<String>,
    /// For the per-turn budget: the results asked for in one turn.
    pub calls: Option<u64>,
    /// How the first reply (or turn) over the limit came back.
    pub above: Option<Verdict>,
    /// What the client did to it, in its own words (for a turn: its first result over).
    pub above_shape: Option<Shape>,
    /// Why it was not found, or what to know about it.
    pub note: Option<String>,
}

impl Limit {
    fn of(kind: LimitKind, found: Finding, note: impl Into<String>) -> Limit {
        Limit {
            kind,
            found,
            limit: None,
            unit: None,
            calls: None,
            above: None,
            above_shape: None,
            note: Some(note.into()),
        }
    }
}

/// The point at `n` with `fill` and `calls`, if it was run.
fn point(points: &[Point], n: Option<u64>, fill: Fill, calls: u64) -> Option<&Point> {
    points
        .iter()
        .find(|p| Some(p.n) == n && p.fill == fill && p.calls == calls)
}

/// The lines limit, read off the lines fill's bisection: found when the unit the fills agree
/// in is lines; else not reachable when the lines fill stopped where the size limit is.
pub(crate) fn lines(record: &UnitsRecord, hi: u64) -> Limit {
    let inference = record.inference.as_ref();
    let obs = record.observations.iter().find(|o| o.fill == Fill::Lines);
    match (inference, obs) {
        (Some(i), _) if i.unit == Unit::Lines => Limit {
            limit: Some(i.limit),
            unit: Some("lines".into()),
            note: None,
            ..Limit::of(LimitKind::Lines, Finding::Found, "")
        },
        (_, Some(o)) if o.first_over.is_some() => {
            let lines = size_of(o.last_inline, Fill::Lines, Unit::Lines);
            let size = inference.map_or("size".to_string(), |i| {
                format!("{} {} size", i.limit, i.unit.name())
            });
            Limit::of(
                LimitKind::Lines,
                Finding::NotReachable,
                format!(
                    "the {size} limit comes first: the lines fill stopped at {} units, {lines} lines",
                    o.last_inline
                ),
            )
        }
        (_, Some(o)) => Limit::of(
            LimitKind::Lines,
            Finding::NoneFound,
            format!(
                "the lines fill came back whole up to {hi} units ({} lines)",
                size_of(o.last_inline, Fill::Lines, Unit::Lines)
            ),
        ),
        (_, None) => Limit::of(
            LimitKind::Lines,
            Finding::NotMeasured,
            "no lines-fill bisection (the ascii one found no limit to search near)",
        ),
    }
}

/// The token limit, from what the runs show: a bytes limit is the client's estimate of tokens
/// (four bytes a token); a client that asks the token counter only above its size limit has a
/// token limit the stand-in never reaches; one that never asks has none to reach here.
pub(crate) fn tokens(record: &UnitsRecord, points: &[Point]) -> Limit {
    let inference = record.inference.as_ref();
    if let Some((i, t)) = inference.and_then(|i| i.tokens_estimate.map(|t| (i, t))) {
        return Limit {
            limit: Some(t),
            unit: Some("tokens".into()),
            note: Some(format!(
                "the {} bytes limit read at four bytes a token: a client estimating tokens from \
                 bytes and one counting bytes stop at the same size",
                i.limit
            )),
            ..Limit::of(LimitKind::Tokens, Finding::Found, "")
        };
    }
    let counted = points
        .iter()
        .filter(|p| p.count_tokens_calls.unwrap_or(0) > 0)
        .map(|p| p.n)
        .min();
    let size = inference.and_then(|i| i.first_over.map(|_| i.limit));
    match (counted, size) {
        (Some(from), Some(limit)) if from > limit => Limit::of(
            LimitKind::Tokens,
            Finding::NotReachable,
            format!(
                "the client asks the token counter only from n={from}, above its size limit \
                 ({limit}), where the result is already over it"
            ),
        ),
        (Some(from), _) => Limit::of(
            LimitKind::Tokens,
            Finding::NotMeasured,
            format!(
                "the client asks the token counter from n={from}: bracket with --count-tokens \
                 to find where its answer matters"
            ),
        ),
        (None, _) => Limit::of(
            LimitKind::Tokens,
            Finding::NotReachable,
            "the client never asked the token counter and no limit counts bytes as tokens",
        ),
    }
}

/// Searches the per-turn budget: turns of [`TURN_CALLS`] results from a total of `lo` to ten
/// times one result's limit (`size`, ascii n; the range's `hi` when none was found), so each
/// result stays at half that limit or less.
pub(crate) fn turn(
    driver: &mut Driver,
    preset: Preset,
    size: Option<u64>,
    lo: u64,
    hi: u64,
    observer: &mut dyn Observer,
) -> anyhow::Result<Limit> {
    let k = TURN_CALLS;
    let top = size.map_or(hi, |s| s.saturating_mul(10)).min(MAX_N);
    let lo = lo.max(k * k).min(top / 2);
    observer.search(Search::Turn(preset, k));
    driver.set_calls(k);
    let record = bisect_range(driver, lo, top, observer);
    driver.set_calls(1);
    let record = record?;
    let t = threshold(&driver.points, Fill::Ascii, k);
    let at = |n| point(&driver.points, Some(n), Fill::Ascii, k);
    let mut limit = Limit {
        calls: Some(k),
        unit: Some("utf16".into()),
        ..Limit::of(LimitKind::Turn, Finding::NotMeasured, "")
    };
    if record.held && t.exact {
        limit.found = Finding::Found;
        limit.limit = t.last_inline;
        limit.above = t.over_verdict;
        limit.above_shape =
            point(&driver.points, t.first_over, Fill::Ascii, k).and_then(|p| p.shape.clone());
        limit.note = Some(format!(
            "in a turn of {k} results (ascii fill: the same in bytes and code points)"
        ));
        return Ok(limit);
    }
    let why = |n: u64| at(n).and_then(|p| p.message.clone()).unwrap_or_default();
    let (found, note) = match (at(lo).map(|p| p.verdict), at(top).map(|p| p.verdict)) {
        (Some(Verdict::Inline), Some(Verdict::Inline)) => (
            Finding::NoneFound,
            format!("every result of a turn of {k} came back whole up to a total of {top}"),
        ),
        (Some(Verdict::NotCalled), _) | (_, Some(Verdict::NotCalled)) => (
            Finding::NotReachable,
            format!(
                "the client does not make {k} calls in one turn: {}",
                why(if at(lo).is_some_and(|p| p.verdict == Verdict::NotCalled) {
                    lo
                } else {
                    top
                })
            ),
        ),
        _ => (
            Finding::NotMeasured,
            record
                .why
                .clone()
                .unwrap_or_else(|| format!("no exact threshold: {}", t.text)),
        ),
    };
    limit.found = found;
    limit.unit = None;
    limit.note = Some(files::escape::text(&note).into_owned());
    Ok(limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{infer, Observation};

    fn record(obs: Vec<Observation>) -> UnitsRecord {
        UnitsRecord {
            inference: infer(&obs),
            observations: obs,
        }
    }

    fn over(fill: Fill, last_inline: u64) -> Observation {
        Observation {
            fill,
            last_inline,
            first_over: Some(last_inline + 1),
        }
    }

    #[test]
    fn a_lines_limit_behind_a_size_limit_is_not_reachable_and_says_where_it_stopped() {
        // A client that counts UTF-16 units: every fill stops at 50000.
        let r = record(vec![
            over(Fill::Ascii, 50_000),
            over(Fill::Astral, 50_000),
            over(Fill::Lines, 50_000),
        ]);
        let l = lines(&r, 1_000_000);
        assert_eq!(l.found, Finding::NotReachable, "{l:?}");
        let note = l.note.unwrap();
        assert!(
            note.starts_with(
                "the 50000 utf16 size limit comes first: the lines fill stopped at 50000 units"
            ),
            "{note}"
        );
        // A lines fill that never stopped: none found, with how far it was searched.
        let mut r = r;
        r.observations[2].first_over = None;
        assert_eq!(lines(&r, 1_000_000).found, Finding::NoneFound);
        assert_eq!(lines(&record(vec![]), 9).found, Finding::NotMeasured);
    }

    #[test]
    fn a_token_limit_is_an_estimate_of_bytes_or_not_reachable_when_asked_only_above() {
        // Counting bytes (12000 astral bytes are 6000 units): the estimate at four a token.
        let r = record(vec![over(Fill::Ascii, 12_000), over(Fill::Astral, 6_000)]);
        let t = tokens(&r, &[]);
        assert_eq!((t.found, t.limit), (Finding::Found, Some(3_000)), "{t:?}");
        // Counting UTF-16 units, the counter asked only above the limit.
        let r = record(vec![over(Fill::Ascii, 50_000), over(Fill::Astral, 50_000)]);
        let at = |n: u64, calls: u64| {
            let mut p = crate::bracket::point_for_test(n);
            p.count_tokens_calls = Some(calls);
            p
        };
        let t = tokens(&r, &[at(50_000, 0), at(50_002, 1)]);
        assert_eq!(t.found, Finding::NotReachable, "{t:?}");
        assert!(t
            .note
            .unwrap()
            .contains("only from n=50002, above its size limit (50000)"));
        let t = tokens(&r, &[at(40_000, 1)]);
        assert_eq!(t.found, Finding::NotMeasured);
        let t = tokens(&r, &[at(50_002, 0)]);
        assert_eq!(t.found, Finding::NotReachable);
        assert!(t.note.unwrap().contains("never asked the token counter"));
    }
}
