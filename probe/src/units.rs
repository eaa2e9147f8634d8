//! The unit a client counts its limit in, inferred from thresholds measured with different
//! fills. Pure: given where each fill stopped coming back whole, which unit makes them agree.
//!
//! `emit`'s n is UTF-16 units, but clients count in their own units: JavaScript `.length`
//! (UTF-16 units), UTF-8 bytes, code points, or lines (and some estimate tokens from bytes). One
//! fill cannot tell these apart: `ascii` is one unit, one byte and one code point a character.
//! `astral` is two UTF-16 units, four bytes and one code point a character, so it separates
//! those three; `lines` separates lines from the rest. In the right unit, the largest text that
//! came back whole measures the same under every fill (to within one character), so the
//! inference measures each fill's last inline and first over text in every unit and keeps the
//! units where the intervals they allow overlap. A wrapper the client adds before counting (a
//! tag, a JSON envelope) takes the same share of the limit under every fill, so it shows as a
//! limit a little under a round number: the gap is reported as the offset.

use mcp::emit::{emit_with_nonce, EmitArgs, Fill, MAX_N};
use serde::Serialize;
use std::fmt;

/// A unit a client may count text in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    /// UTF-16 code units (JavaScript `.length`).
    Utf16,
    /// UTF-8 bytes.
    Bytes,
    /// Unicode code points.
    Codepoints,
    /// Lines.
    Lines,
}

impl Unit {
    /// In the order a tie is broken: the unit most clients count first.
    pub(crate) const ALL: [Unit; 4] = [Unit::Utf16, Unit::Bytes, Unit::Codepoints, Unit::Lines];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Unit::Utf16 => "utf16",
            Unit::Bytes => "bytes",
            Unit::Codepoints => "codepoints",
            Unit::Lines => "lines",
        }
    }

    /// How long `text` is in this unit.
    pub(crate) fn measure(self, text: &str) -> u64 {
        match self {
            Unit::Utf16 => mcp::emit::utf16_len(text),
            Unit::Bytes => text.len() as u64,
            Unit::Codepoints => text.chars().count() as u64,
            Unit::Lines => {
                let breaks = text.matches('\n').count() as u64;
                breaks + u64::from(!text.is_empty() && !text.ends_with('\n'))
            }
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A unit a cap is set in, or a limit counted in: the units a client counts text in, and
/// tokens, estimated as the clients estimate them before they ask a counter (one token per four
/// UTF-16 units, rounded up: [`standin::tokens_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Measure {
    Utf16,
    Bytes,
    Codepoints,
    Lines,
    Tokens,
}

impl Measure {
    pub(crate) const ALL: [Measure; 5] = [
        Measure::Utf16,
        Measure::Bytes,
        Measure::Codepoints,
        Measure::Lines,
        Measure::Tokens,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Measure::Tokens => "tokens",
            other => other.unit().map_or("tokens", Unit::name),
        }
    }

    /// What a person reads after a number: `units` for UTF-16 units, as probe always said.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Measure::Utf16 => "units",
            Measure::Bytes => "bytes",
            Measure::Codepoints => "code points",
            Measure::Lines => "lines",
            Measure::Tokens => "tokens (estimated)",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Measure> {
        Measure::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The unit of text this is, for all but tokens.
    pub(crate) fn unit(self) -> Option<Unit> {
        match self {
            Measure::Utf16 => Some(Unit::Utf16),
            Measure::Bytes => Some(Unit::Bytes),
            Measure::Codepoints => Some(Unit::Codepoints),
            Measure::Lines => Some(Unit::Lines),
            Measure::Tokens => None,
        }
    }

    /// The fill that measures n's size in this measure most directly: `lines` for lines,
    /// `ascii` for the rest.
    pub(crate) fn fill(self) -> Fill {
        match self {
            Measure::Lines => Fill::Lines,
            _ => Fill::Ascii,
        }
    }

    /// How long `text` is in this measure.
    pub(crate) fn measure(self, text: &str) -> u64 {
        match self.unit() {
            Some(unit) => unit.measure(text),
            None => standin::tokens_for(mcp::emit::utf16_len(text)),
        }
    }
}

impl From<Unit> for Measure {
    fn from(unit: Unit) -> Measure {
        match unit {
            Unit::Utf16 => Measure::Utf16,
            Unit::Bytes => Measure::Bytes,
            Unit::Codepoints => Measure::Codepoints,
            Unit::Lines => Measure::Lines,
        }
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `emit`'s text for n under `fill`, measured in `unit`.
pub(crate) fn size_of(n: u64, fill: Fill, unit: impl Into<Measure>) -> u64 {
    match unit.into() {
        Measure::Utf16 => n,
        Measure::Tokens => standin::tokens_for(n),
        unit => {
            // The nonce's digits do not change any measure: every nonce is eight ASCII
            // characters.
            let e = emit_with_nonce(EmitArgs { n, fill, blocks: 1 }, "00000000");
            unit.measure(&e.blocks.concat())
        }
    }
}

/// The largest n whose text under `fill` is at most `size` in `unit` (sizes only grow with n).
pub(crate) fn n_for(size: u64, fill: Fill, unit: impl Into<Measure> + Copy) -> u64 {
    let (mut lo, mut hi) = (0u64, MAX_N);
    if size_of(hi, fill, unit) <= size {
        return hi;
    }
    // size_of(lo) <= size < size_of(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if size_of(mid, fill, unit) <= size {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Where one fill's results stopped coming back whole, in `emit`'s n.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Observation {
    pub fill: Fill,
    /// The largest n that came back inline.
    pub last_inline: u64,
    /// The smallest n above it that did not, if one was found.
    pub first_over: Option<u64>,
}

/// What the thresholds say about the client's unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Inference {
    pub unit: Unit,
    /// The largest reply, in `unit`, that came back whole (under every fill, when not exact).
    pub limit: u64,
    /// One limit in `unit` explains every fill exactly; false when they miss by up to 1%
    /// (a client that estimates, e.g. tokens from bytes, rounds differently per fill).
    pub exact: bool,
    /// The smallest reply, in `unit`, that did not (when one was found under every fill).
    pub first_over: Option<u64>,
    /// The other units the thresholds also agree in (one fill alone cannot tell them apart).
    pub also: Vec<Unit>,
    /// The fills the inference rests on (`lines` is left out when no unit agrees with it:
    /// a client that escapes newlines before counting counts them twice).
    pub fills: Vec<Fill>,
    /// How far `limit` is under the round number the client's limit likely is: the size of a
    /// wrapper it adds before counting. `None` when the limit is round, or not near one.
    pub offset: Option<u64>,
    /// For a bytes limit, the tokens it is at four bytes a token (clients that estimate tokens
    /// from bytes count this way).
    pub tokens_estimate: Option<u64>,
}

/// The interval of limits, in `unit`, that `obs` allows: at least its last inline size, below
/// its first over size.
fn interval(o: &Observation, unit: Unit) -> (u64, Option<u64>) {
    let lo = size_of(o.last_inline, o.fill, unit);
    let hi = o.first_over.map(|f| size_of(f, o.fill, unit));
    (lo, hi)
}

/// The units in which every observation allows a common limit, with its bounds; failing that,
/// the one unit in which they come closest, when they miss by at most 1% (`exact` false).
fn agreeing(obs: &[Observation]) -> (Vec<(Unit, u64, Option<u64>)>, bool) {
    let exact = agreeing_exactly(obs);
    if !exact.is_empty() {
        return (exact, true);
    }
    let near = Unit::ALL
        .into_iter()
        .filter_map(|unit| {
            // Each fill on its own must stop somewhere in this unit (one line is never two).
            if obs.iter().any(|o| {
                let (lo, hi) = interval(o, unit);
                hi.is_some_and(|h| h <= lo)
            }) {
                return None;
            }
            let lows: Vec<u64> = obs.iter().map(|o| interval(o, unit).0).collect();
            let (lo, hi) = (*lows.iter().min()?, *lows.iter().max()?);
            // The smallest reply that did not come back whole, under any fill.
            let over = obs
                .iter()
                .map(|o| interval(o, unit).1)
                .collect::<Option<Vec<u64>>>()
                .and_then(|v| v.into_iter().min());
            // How far apart the fills put the largest whole reply, against its size.
            ((hi - lo) * 100 <= hi).then_some((hi - lo, unit, hi, over))
        })
        .min_by_key(|near| near.0);
    match near {
        Some((_, unit, limit, over)) => (vec![(unit, limit, over)], false),
        None => (Vec::new(), false),
    }
}

/// The units in which every observation allows one common limit.
fn agreeing_exactly(obs: &[Observation]) -> Vec<(Unit, u64, Option<u64>)> {
    Unit::ALL
        .into_iter()
        .filter_map(|unit| {
            let mut lo = 0;
            let mut hi: Option<u64> = None;
            for o in obs {
                let (l, h) = interval(o, unit);
                lo = lo.max(l);
                hi = match (hi, h) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            // Some limit L has every last inline at most L and every first over above it.
            hi.is_none_or(|h| lo < h).then_some((unit, lo, hi))
        })
        .collect()
}

/// Infers the unit from the thresholds under each fill; `None` when no unit makes them agree
/// (or nothing was observed).
pub(crate) fn infer(obs: &[Observation]) -> Option<Inference> {
    if obs.is_empty() {
        return None;
    }
    let mut used: Vec<Observation> = obs.to_vec();
    let (mut found, mut exact) = agreeing(&used);
    if found.is_empty() && used.iter().any(|o| o.fill == Fill::Lines) {
        used.retain(|o| o.fill != Fill::Lines);
        (found, exact) = if used.is_empty() {
            (Vec::new(), false)
        } else {
            agreeing(&used)
        };
    }
    let (unit, limit, first_over) = *found.first()?;
    let also = found[1..].iter().map(|f| f.0).collect();
    Some(Inference {
        unit,
        limit,
        exact,
        first_over,
        also,
        fills: used.iter().map(|o| o.fill).collect(),
        offset: offset_under_round(limit),
        tokens_estimate: (unit == Unit::Bytes).then_some(limit / 4),
    })
}

/// The gap between `limit` and the round number just above it (a multiple of 1000 or of 1024),
/// when the gap is small (at most 256 and 2% of the limit: a tag or a JSON envelope, not a
/// different limit): the room a wrapper takes.
pub(crate) fn offset_under_round(limit: u64) -> Option<u64> {
    if limit < 100 {
        return None;
    }
    [1000u64, 1024]
        .into_iter()
        .map(|step| limit.div_ceil(step) * step - limit)
        .filter(|&gap| gap <= 256 && gap * 50 <= limit)
        .min()
        .filter(|&gap| gap > 0)
        // A limit that is itself round (in either base) has no wrapper to report.
        .filter(|_| !limit.is_multiple_of(1000) && !limit.is_multiple_of(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a client with a limit of `limit` in `unit` (after adding `wrapper` units) shows
    /// under `fill`: the last n inline and the first over.
    fn client(limit: u64, unit: Unit, wrapper: u64, fill: Fill) -> Observation {
        let last = n_for(limit - wrapper, fill, unit);
        Observation {
            fill,
            last_inline: last,
            first_over: Some(last + 1),
        }
    }

    fn measured(limit: u64, unit: Unit, wrapper: u64) -> Inference {
        let obs: Vec<_> = [Fill::Ascii, Fill::Astral, Fill::Lines]
            .into_iter()
            .map(|f| client(limit, unit, wrapper, f))
            .collect();
        infer(&obs).expect("a unit agrees")
    }

    #[test]
    fn each_unit_is_told_apart_by_the_three_fills() {
        let i = measured(50_000, Unit::Utf16, 0);
        assert_eq!((i.unit, i.limit, i.offset), (Unit::Utf16, 50_000, None));
        assert!(i.also.is_empty(), "{:?}", i.also);
        let i = measured(51_200, Unit::Bytes, 0);
        assert_eq!((i.unit, i.limit), (Unit::Bytes, 51_200));
        assert_eq!(i.tokens_estimate, Some(12_800));
        let i = measured(40_000, Unit::Codepoints, 0);
        assert_eq!((i.unit, i.limit), (Unit::Codepoints, 40_000));
        assert_eq!(i.tokens_estimate, None);
    }

    #[test]
    fn a_lines_limit_shows_only_under_the_lines_fill() {
        let lines = client(2000, Unit::Lines, 0, Fill::Lines);
        // ascii and astral are one line at any size: inline up to whatever was tried.
        let one_line = |fill| Observation {
            fill,
            last_inline: 1_000_000,
            first_over: None,
        };
        let i = infer(&[one_line(Fill::Ascii), one_line(Fill::Astral), lines]).unwrap();
        assert_eq!((i.unit, i.limit), (Unit::Lines, 2000));
    }

    #[test]
    fn a_wrapper_counted_with_the_reply_shows_as_an_offset_under_a_round_limit() {
        let i = measured(50_000, Unit::Utf16, 37);
        assert_eq!((i.unit, i.limit, i.offset), (Unit::Utf16, 49_963, Some(37)));
        let i = measured(51_200, Unit::Bytes, 60);
        assert_eq!((i.unit, i.limit, i.offset), (Unit::Bytes, 51_140, Some(60)));
        assert_eq!(offset_under_round(50_000), None);
        assert_eq!(offset_under_round(51_200), None);
        assert_eq!(offset_under_round(37_400), None, "not near a round number");
    }

    #[test]
    fn one_fill_leaves_the_character_units_open_and_disagreeing_fills_give_none() {
        let i = infer(&[client(50_000, Unit::Utf16, 0, Fill::Ascii)]).unwrap();
        assert_eq!(i.unit, Unit::Utf16);
        assert_eq!(i.also, vec![Unit::Bytes, Unit::Codepoints]);
        // ascii over at 50001 but astral inline far past anything a unit allows.
        let astral = Observation {
            fill: Fill::Astral,
            last_inline: 500_000,
            first_over: Some(500_001),
        };
        assert!(
            infer(&[client(50_000, Unit::Utf16, 0, Fill::Ascii)])
                .unwrap()
                .exact
        );
        assert_eq!(
            infer(&[client(50_000, Unit::Utf16, 0, Fill::Ascii), astral]),
            None
        );
        assert_eq!(infer(&[]), None);
    }

    #[test]
    fn a_client_that_escapes_newlines_is_inferred_from_the_other_fills() {
        // JSON-escaping counts each newline twice: the lines fill stops early in every unit.
        let mut lines = client(50_000, Unit::Utf16, 0, Fill::Lines);
        lines.last_inline = lines.last_inline * 80 / 81;
        lines.first_over = Some(lines.last_inline + 1);
        let i = infer(&[
            client(50_000, Unit::Utf16, 0, Fill::Ascii),
            client(50_000, Unit::Utf16, 0, Fill::Astral),
            lines,
        ])
        .unwrap();
        assert_eq!((i.unit, i.limit), (Unit::Utf16, 50_000));
        assert_eq!(i.fills, vec![Fill::Ascii, Fill::Astral]);
    }

    #[test]
    fn sizes_follow_the_fill() {
        assert_eq!(size_of(1000, Fill::Astral, Unit::Utf16), 1000);
        let bytes = size_of(1000, Fill::Astral, Unit::Bytes);
        let points = size_of(1000, Fill::Astral, Unit::Codepoints);
        assert!(bytes > 1800 && points < 600, "{bytes} {points}");
        assert_eq!(size_of(8000, Fill::Lines, Unit::Lines), 100);
        assert_eq!(n_for(50_000, Fill::Ascii, Unit::Bytes), 50_000);
        assert_eq!(Measure::parse("bytes"), Some(Measure::Bytes));
        assert_eq!(Measure::parse("tokens"), Some(Measure::Tokens));
        assert_eq!(Measure::parse("words"), None);
        assert_eq!(size_of(8001, Fill::Ascii, Measure::Tokens), 2001);
        assert_eq!(n_for(25_000, Fill::Ascii, Measure::Tokens), 100_000);
    }

    #[test]
    fn codex_judged_exactly_counts_12000_bytes_with_a_36_byte_wrapper() {
        // Codex CLI 0.171.0 under the exact judge (`probe clients`): every fill agrees.
        let obs = |fill, last_inline: u64| Observation {
            fill,
            last_inline,
            first_over: Some(last_inline + 1),
        };
        let i = infer(&[
            obs(Fill::Ascii, 11_964),
            obs(Fill::Astral, 6018),
            obs(Fill::Lines, 11_964),
        ])
        .unwrap();
        assert_eq!((i.unit, i.limit, i.exact), (Unit::Bytes, 11_964, true));
        assert_eq!(i.offset, Some(36));
    }

    #[test]
    fn fills_that_miss_by_under_one_percent_in_one_unit_give_it_as_an_estimate() {
        // Codex CLI 0.171.0 as a count of units judged it (before the exact judge, which found
        // the note it puts in the middle): ascii inline up to 11984 bytes, astral up to 12001.
        let i = infer(&[
            Observation {
                fill: Fill::Ascii,
                last_inline: 11_984,
                first_over: Some(11_985),
            },
            Observation {
                fill: Fill::Astral,
                last_inline: 6037,
                first_over: Some(6038),
            },
        ])
        .unwrap();
        assert_eq!((i.unit, i.limit, i.exact), (Unit::Bytes, 12_001, false));
        assert_eq!(i.first_over, Some(11_985));
        // Fills 2% apart in every unit agree in none.
        let far = Observation {
            fill: Fill::Astral,
            last_inline: 6200,
            first_over: Some(6201),
        };
        let ascii = client(12_000, Unit::Bytes, 0, Fill::Ascii);
        assert_eq!(infer(&[ascii, far]), None);
    }
}
