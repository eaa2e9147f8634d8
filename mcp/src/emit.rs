//! The `emit` tool: text of exactly n UTF-16 code units, framed by markers.
//!
//! Lengths are UTF-16 units because that is what the clients measure: they are JavaScript, and a
//! JS string's `.length` counts UTF-16 units, so one emoji (a surrogate pair) counts 2 and 'é'
//! counts 1, whatever its UTF-8 byte length. A threshold "at 50,000 characters" means 50,000 of
//! those.
//!
//! The text is `<<probe n=N nonce=X start>>`, then fill, then `<<probe n=N nonce=X end>>`. The
//! whole text is a function of (n, fill, blocks, nonce), so a driver that has the server's log
//! rebuilds exactly what was sent and compares it with what came back, unit by unit: the fill
//! carries position stamps derived from the nonce, so no cut, insertion, repeat or substitution
//! can leave text that still matches. When n is too small for both
//! markers, the text keeps only the end marker (right-aligned, so it is still the last thing
//! delivered); when n is too small even for that, it is fill alone and carries no marker.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest n the tool accepts: 10,000,000 units (at most ~20 MB of text with astral fill), so
/// a typo cannot make the server exhaust memory.
pub const MAX_N: u64 = 10_000_000;
/// The most text blocks one reply may be split over.
pub const MAX_BLOCKS: u64 = 10_000;

/// What the text between the markers is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fill {
    /// `x`s with a position stamp every 64 units (`@OFFSET:CC`): one unit, one char, one byte
    /// each.
    Ascii,
    /// Emoji outside the Basic Multilingual Plane: two units (a surrogate pair), one char, four
    /// bytes each. With an odd number of units to fill, the fill ends with one `x`, so the total
    /// is still exact.
    Astral,
    /// Lines of 80 units: an 8-digit line number, two hex digits of check, `x`s, and `\n`. The
    /// last line is cut to fit.
    Lines,
}

impl Fill {
    pub const NAMES: [&'static str; 3] = ["ascii", "astral", "lines"];

    pub fn parse(name: &str) -> Option<Fill> {
        match name {
            "ascii" => Some(Fill::Ascii),
            "astral" => Some(Fill::Astral),
            "lines" => Some(Fill::Lines),
            _ => None,
        }
    }
}

impl fmt::Display for Fill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fill::Ascii => "ascii",
            Fill::Astral => "astral",
            Fill::Lines => "lines",
        })
    }
}

/// Validated arguments of one `emit` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmitArgs {
    pub n: u64,
    pub fill: Fill,
    pub blocks: u64,
}

/// Arguments the tool refuses; the message is what the caller sees in the `isError` result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

impl EmitArgs {
    /// Reads and checks the `arguments` of a `tools/call`.
    pub fn from_json(args: Option<&Value>) -> Result<EmitArgs, ArgError> {
        let empty = Map::new();
        let obj = match args {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(obj)) => obj,
            Some(_) => return Err(ArgError("arguments must be an object".into())),
        };
        if let Some(key) = obj
            .keys()
            .find(|k| !["n", "fill", "blocks"].contains(&k.as_str()))
        {
            return Err(ArgError(format!(
                "unknown argument `{key}` (emit takes n, fill, blocks)"
            )));
        }
        let n = match obj.get("n") {
            None => return Err(ArgError("missing argument `n`".into())),
            Some(v) => whole_number("n", v)?,
        };
        if n > MAX_N {
            return Err(ArgError(format!("n = {n} is over the maximum {MAX_N}")));
        }
        let fill = match obj.get("fill") {
            None | Some(Value::Null) => Fill::Ascii,
            Some(Value::String(s)) => Fill::parse(s).ok_or_else(|| {
                ArgError(format!(
                    "fill must be one of {}, not `{s}`",
                    Fill::NAMES.join(", ")
                ))
            })?,
            Some(other) => return Err(ArgError(format!("fill must be a string, not {other}"))),
        };
        let blocks = match obj.get("blocks") {
            None | Some(Value::Null) => 1,
            Some(v) => whole_number("blocks", v)?,
        };
        if blocks == 0 || blocks > MAX_BLOCKS {
            return Err(ArgError(format!(
                "blocks must be between 1 and {MAX_BLOCKS}, not {blocks}"
            )));
        }
        if blocks > n.max(1) {
            return Err(ArgError(format!(
                "blocks = {blocks} is more than n = {n}: a block would be empty"
            )));
        }
        Ok(EmitArgs { n, fill, blocks })
    }
}

/// A non-negative integer; a JSON number with no fractional part counts (`5e4`), since clients
/// written in JavaScript have no integer type.
fn whole_number(name: &str, v: &Value) -> Result<u64, ArgError> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    match v {
        Value::Number(num) => {
            let f = num.as_f64().unwrap_or(f64::NAN);
            if f < 0.0 {
                Err(ArgError(format!("{name} must not be negative, got {num}")))
            } else if f.fract() != 0.0 || !f.is_finite() {
                Err(ArgError(format!("{name} must be an integer, got {num}")))
            } else if f > MAX_N as f64 * 10.0 {
                Err(ArgError(format!(
                    "{name} = {num} is over the maximum {MAX_N}"
                )))
            } else {
                Ok(f as u64)
            }
        }
        other => Err(ArgError(format!(
            "{name} must be an integer, got {}",
            report::json::kind_of(other)
        ))),
    }
}

/// The start marker for n and nonce.
pub fn start_marker(n: u64, nonce: &str) -> String {
    format!("<<probe n={n} nonce={nonce} start>>")
}

/// The end marker for n and nonce: its presence at the end of what a client delivered proves the
/// whole text arrived.
pub fn end_marker(n: u64, nonce: &str) -> String {
    format!("<<probe n={n} nonce={nonce} end>>")
}

/// One reply's text, as blocks, and what it carries.
#[derive(Debug, Clone)]
pub struct Emission {
    pub args: EmitArgs,
    pub nonce: String,
    pub blocks: Vec<String>,
    pub start_marker: bool,
    pub end_marker: bool,
}

impl Emission {
    /// Total UTF-16 units over all blocks (always `args.n`).
    pub fn units(&self) -> u64 {
        self.blocks.iter().map(|b| utf16_len(b)).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.blocks.iter().map(|b| b.len() as u64).sum()
    }
}

/// Builds the text for `args`, with a fresh nonce.
pub fn emit(args: EmitArgs) -> Emission {
    emit_with_nonce(args, &fresh_nonce())
}

/// Builds the text for `args` with the given (ASCII) nonce.
pub fn emit_with_nonce(args: EmitArgs, nonce: &str) -> Emission {
    let n = args.n as usize;
    let start = start_marker(args.n, nonce);
    let end = end_marker(args.n, nonce);
    let (with_start, with_end) = if n >= start.len() + end.len() {
        (true, true)
    } else {
        (false, n >= end.len())
    };
    let mut text = String::with_capacity(n * if args.fill == Fill::Astral { 2 } else { 1 } + 8);
    let mut marks = 0;
    if with_start {
        text.push_str(&start);
        marks += start.len();
    }
    if with_end {
        marks += end.len();
    }
    let at = text.len();
    push_fill(&mut text, args.fill, n - marks, at, nonce);
    if with_end {
        text.push_str(&end);
    }
    Emission {
        args,
        nonce: nonce.to_string(),
        blocks: split_blocks(&text, args.n, args.blocks),
        start_marker: with_start,
        end_marker: with_end,
    }
}

/// Every how many units the `ascii` fill carries a position stamp.
pub const STAMP_EVERY: usize = 64;

/// A byte derived from the nonce and a position: the check a stamp carries, and the choice of
/// each `astral` character. It makes the fill of one reply unlike the fill of any other, so text
/// from an earlier run, or a chunk of this one moved elsewhere, cannot pass for it.
fn stamp_check(nonce: &str, position: u64) -> u8 {
    // FNV-1a over the nonce, then splitmix64's finaliser with the position mixed in.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in nonce.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut x = h ^ position.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u8
}

/// Appends exactly `units` UTF-16 units of fill, starting `at` units into the text.
///
/// Every fill proves itself: it is a function of the nonce and of each position, never a run of
/// one repeated piece, so a cut, an inserted note, a repeated chunk or a substitution of the same
/// length anywhere leaves text that differs from what was sent, and the judge, which rebuilds
/// the text from the nonce, finds where. The unit counts stay exact.
fn push_fill(text: &mut String, fill: Fill, units: usize, at: usize, nonce: &str) {
    match fill {
        Fill::Ascii => {
            // `x`s with a stamp every STAMP_EVERY units: `@` and the stamp's own unit offset in
            // the text, `:` and two hex digits of check, so a human reading a cut sees where each
            // piece came from. A stamp that would not fit whole is left out (`x`s instead).
            let mut done = 0;
            while done < units {
                let period = (units - done).min(STAMP_EVERY);
                let pos = at + done;
                let stamp = format!("@{pos}:{:02x}", stamp_check(nonce, pos as u64));
                let stamp = if stamp.len() < period {
                    stamp.as_str()
                } else {
                    ""
                };
                text.push_str(stamp);
                for _ in stamp.len()..period {
                    text.push('x');
                }
                done += period;
            }
        }
        Fill::Astral => {
            // Emoji from U+1F600..U+1F64F, each chosen by the nonce and its position: every
            // character is its own stamp.
            for i in 0..units / 2 {
                let k = u32::from(stamp_check(nonce, (at + 2 * i) as u64)) % 80;
                let c = char::from_u32(0x1F600 + k).expect("emoji range is valid");
                text.push(c);
            }
            if units % 2 == 1 {
                text.push('x');
            }
        }
        Fill::Lines => {
            // Lines of 80 units: an 8-digit line number and two hex digits of check, then `x`s
            // and `\n`. The last line is cut to fit.
            const WIDTH: usize = 80;
            let mut left = units;
            let mut line_no = 1u64;
            let mut line = String::with_capacity(WIDTH);
            while left > 0 {
                line.clear();
                line.push_str(&format!(
                    "{line_no:08} {:02x} ",
                    stamp_check(nonce, line_no)
                ));
                while line.len() < WIDTH - 1 {
                    line.push('x');
                }
                line.push('\n');
                let take = left.min(WIDTH);
                text.push_str(&line[..take]);
                left -= take;
                line_no += 1;
            }
        }
    }
}

/// Splits `text` (of `n` units) into `k` blocks as equal as they can be. A boundary that would
/// fall inside a surrogate pair moves one unit later, so a block never holds half a character.
fn split_blocks(text: &str, n: u64, k: u64) -> Vec<String> {
    if k <= 1 {
        return vec![text.to_string()];
    }
    let mut blocks = Vec::with_capacity(k as usize);
    let mut units = 0u64;
    let mut begin = 0usize;
    let mut chars = text.char_indices().peekable();
    for i in 1..k {
        let target = n * i / k;
        while units < target {
            let (_, c) = chars.next().expect("targets stay within the text");
            units += c.len_utf16() as u64;
        }
        let cut = chars.peek().map(|&(at, _)| at).unwrap_or(text.len());
        blocks.push(text[begin..cut].to_string());
        begin = cut;
    }
    blocks.push(text[begin..].to_string());
    blocks
}

/// The length JavaScript's `.length` reports.
pub fn utf16_len(s: &str) -> u64 {
    s.chars().map(|c| c.len_utf16() as u64).sum()
}

/// Eight hex digits, different per call and per process: enough that a marker in a client's
/// output can only have come from this very reply. Not cryptographic, and need not be.
pub fn fresh_nonce() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x = nanos
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64's finaliser, to spread nearby inputs.
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    format!("{:08x}", x as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(n: u64, fill: Fill, blocks: u64) -> EmitArgs {
        EmitArgs { n, fill, blocks }
    }

    #[test]
    fn every_fill_gives_exactly_n_units() {
        for fill in [Fill::Ascii, Fill::Astral, Fill::Lines] {
            for n in [
                0, 1, 2, 3, 30, 31, 35, 36, 69, 70, 71, 72, 73, 1000, 50_000, 50_001,
            ] {
                let e = emit_with_nonce(args(n, fill, 1), "abcd1234");
                assert_eq!(e.units(), n, "{fill} n={n}");
            }
        }
    }

    #[test]
    fn markers_frame_the_text_when_there_is_room() {
        let e = emit_with_nonce(args(200, Fill::Ascii, 1), "abcd1234");
        let text = &e.blocks[0];
        assert!(text.starts_with("<<probe n=200 nonce=abcd1234 start>>"));
        assert!(text.ends_with("<<probe n=200 nonce=abcd1234 end>>"));
        assert!(e.start_marker && e.end_marker);
    }

    #[test]
    fn small_n_keeps_the_end_marker_then_nothing() {
        let end = end_marker(40, "abcd1234").len() as u64;
        let e = emit_with_nonce(args(40, Fill::Ascii, 1), "abcd1234");
        assert!(!e.start_marker && e.end_marker);
        assert!(e.blocks[0].ends_with("end>>"));
        let e = emit_with_nonce(args(end - 1, Fill::Ascii, 1), "abcd1234");
        assert!(!e.start_marker && !e.end_marker);
        assert_eq!(utf16_len(&e.blocks[0]), end - 1);
        assert!(e.blocks[0].starts_with("@0:"), "{}", e.blocks[0]);
        // Too short for a stamp: `x`s alone.
        let e = emit_with_nonce(args(4, Fill::Ascii, 1), "abcd1234");
        assert_eq!(e.blocks[0], "xxxx");
    }

    #[test]
    fn every_fill_is_a_function_of_the_nonce_and_stamps_carry_their_offset() {
        for fill in [Fill::Ascii, Fill::Astral, Fill::Lines] {
            let a = emit_with_nonce(args(5000, fill, 1), "abcd1234")
                .blocks
                .concat();
            let b = emit_with_nonce(args(5000, fill, 1), "abcd1235")
                .blocks
                .concat();
            let again = emit_with_nonce(args(5000, fill, 1), "abcd1234")
                .blocks
                .concat();
            assert_eq!(a, again, "{fill}");
            // Past the markers the fills differ, and not only in one place.
            let differ = a.chars().zip(b.chars()).filter(|(x, y)| x != y).count();
            assert!(differ > 40, "{fill}: {differ}");
        }
        let a = emit_with_nonce(args(5000, Fill::Ascii, 1), "abcd1234")
            .blocks
            .concat();
        let stamps: Vec<usize> = a.match_indices('@').map(|(i, _)| i).collect();
        assert!(stamps.len() >= 5000 / STAMP_EVERY - 2);
        for i in stamps {
            let digits: String = a[i + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            assert_eq!(digits, i.to_string());
        }
        let lines = emit_with_nonce(args(5000, Fill::Lines, 1), "abcd1234")
            .blocks
            .concat();
        assert!(lines.contains("\n00000002 "));
    }

    #[test]
    fn astral_with_odd_fill_ends_with_one_ascii_char() {
        let e = emit_with_nonce(args(101, Fill::Astral, 1), "abcd1234");
        let fill_units =
            101 - start_marker(101, "abcd1234").len() - end_marker(101, "abcd1234").len();
        assert_eq!(fill_units % 2, 1);
        let body = e.blocks[0].trim_start_matches(|c: char| c.is_ascii());
        assert!(body
            .chars()
            .take_while(|c| !c.is_ascii())
            .all(|c| ('\u{1F600}'..='\u{1F64F}').contains(&c)));
        assert!(e.blocks[0].contains("x<<probe"));
    }

    #[test]
    fn blocks_split_the_total_and_never_a_pair() {
        for fill in [Fill::Ascii, Fill::Astral, Fill::Lines] {
            for (n, k) in [(1000, 3), (1001, 7), (71, 71), (50_000, 2)] {
                let e = emit_with_nonce(args(n, fill, k), "abcd1234");
                assert_eq!(e.blocks.len() as u64, k);
                assert_eq!(e.units(), n);
                let max = e.blocks.iter().map(|b| utf16_len(b)).max().unwrap();
                let min = e.blocks.iter().map(|b| utf16_len(b)).min().unwrap();
                assert!(max - min <= 2, "{fill} {n}/{k}: {min}..{max}");
            }
        }
    }

    #[test]
    fn arguments_are_checked() {
        let ok = |v: Value| EmitArgs::from_json(Some(&v));
        assert_eq!(ok(json!({"n": 5})).unwrap(), args(5, Fill::Ascii, 1));
        assert_eq!(ok(json!({"n": 5e4})).unwrap().n, 50_000);
        assert_eq!(
            ok(json!({"n": 9, "fill": "lines", "blocks": 3})).unwrap(),
            args(9, Fill::Lines, 3)
        );
        for bad in [
            json!({}),
            json!({"n": -1}),
            json!({"n": 1.5}),
            json!({"n": "5"}),
            json!({"n": MAX_N + 1}),
            json!({"n": 1e300}),
            json!({"n": 5, "fill": "utf8"}),
            json!({"n": 5, "blocks": 0}),
            json!({"n": 5, "blocks": 6}),
            json!({"n": 5, "nn": 1}),
            json!([5]),
        ] {
            assert!(ok(bad.clone()).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(fresh_nonce(), fresh_nonce());
        assert_eq!(fresh_nonce().len(), 8);
    }
}
