//! Comparing what came back with what was sent, unit by unit: whether the text came back
//! exactly, and if not, where it first differs and what shape the change has.
//!
//! The sent text is rebuilt from the server's log (n, fill, blocks, nonce), and every fill is a
//! function of the nonce and each position, so "came back exactly" is a plain comparison, not a
//! count: a cut, an inserted note, a repeated chunk or a substitution of the same length all
//! leave text that differs. A client may hand the text on escaped (a JSON string in its output,
//! `\n` for a newline, `\ud83d\ude00` for an emoji), so each comparison is made in the raw form
//! and in those escaped forms, and positions are always counted in the units of what was sent.
//! Blocks may come back joined by a separator: each block exactly, in order, is exact.

use mcp::emit::utf16_len;
use schemars::JsonSchema;
use serde::Serialize;

/// How a client may have written the text it handed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// As sent.
    Raw,
    /// As inside a JSON string (JavaScript's `JSON.stringify`, serde_json).
    Json,
    /// As inside a JSON string with every non-ASCII character as `\uXXXX` (Python's default).
    JsonAscii,
}

impl Escape {
    const ALL: [Escape; 3] = [Escape::Raw, Escape::Json, Escape::JsonAscii];

    /// `c` as this form writes it, into `out` (cleared first).
    fn write(self, c: char, out: &mut String) {
        out.clear();
        if self == Escape::Raw {
            out.push(c);
            return;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if self == Escape::JsonAscii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }

    fn apply(self, s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 8);
        let mut one = String::new();
        for c in s.chars() {
            self.write(c, &mut one);
            out.push_str(&one);
        }
        out
    }
}

/// Where the text that came back first differs from what was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Where {
    /// The head came back exactly, the tail did not.
    End,
    /// The head and the tail came back exactly, the middle did not.
    Middle,
    /// The tail came back exactly, the head did not.
    Start,
    /// No part of the text came back.
    Whole,
}

/// What took the place of the part that did not come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Change {
    /// Removed, with nothing (or only the client's note) in its place.
    Removed,
    /// Replaced by other text of exactly the same length.
    Substituted,
    /// A piece of the text came back twice.
    Repeated,
    /// Text was inserted and nothing of the sent text is missing.
    Inserted,
}

/// How the text that came back differs from what was sent, in the units of what was sent
/// (UTF-16 units).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Shape {
    /// Where the change is.
    #[serde(rename = "where")]
    pub place: Where,
    /// What took the place of what did not come back.
    pub change: Change,
    /// The first unit of what was sent that did not come back as sent.
    pub first_difference: u64,
    /// Units from the start of what was sent that came back exactly.
    pub head_units: u64,
    /// Units from the end of what was sent that came back exactly.
    pub tail_units: u64,
    /// Units of what was sent that came back exactly, head and tail together (a repeat counted
    /// once).
    pub kept_units: u64,
    /// What the client put where the text was, quoted and escaped (at most 200 characters), when
    /// it put anything.
    pub note: Option<String>,
}

impl Shape {
    /// The shape in words, for a message and a table.
    pub(crate) fn describe(&self, sent: u64) -> String {
        let note = self
            .note
            .as_deref()
            .map(|n| format!(", in its place {n}"))
            .unwrap_or_default();
        let at = self.first_difference;
        match (self.place, self.change) {
            (Where::Whole, _) => format!("none of the {sent} units sent came back{note}"),
            (_, Change::Repeated) if self.head_units + self.tail_units > sent => format!(
                "units {}..{} came back twice ({} of {sent} units sent)",
                sent - self.tail_units,
                self.head_units,
                self.kept_units
            ),
            (_, Change::Repeated) => format!(
                "units {at}..{} replaced by a repeat of other units of the text",
                sent - self.tail_units
            ),
            (_, Change::Inserted) => {
                format!("all {sent} units came back with text inserted at unit {at}{note}")
            }
            (_, Change::Substituted) => format!(
                "units {at}..{} replaced by other text of the same length{note}",
                sent - self.tail_units
            ),
            (Where::End, _) => {
                format!("cut at the end: the first {at} of {sent} units came back{note}")
            }
            (Where::Start, _) => format!(
                "cut at the start: the last {} of {sent} units came back{note}",
                self.tail_units
            ),
            (Where::Middle, _) => format!(
                "cut in the middle: units {at}..{} of {sent} are missing ({} head, {} tail \
                 came back){note}",
                sent - self.tail_units,
                self.head_units,
                self.tail_units
            ),
        }
    }
}

/// The longest a quoted note may be, in characters.
pub(crate) const NOTE_MAX: usize = 200;

/// The result of comparing: `None` when the text came back exactly, else its shape.
pub(crate) fn compare(blocks: &[String], got: &str) -> Option<Shape> {
    let whole: String = blocks.concat();
    let sent = utf16_len(&whole);
    if sent == 0 {
        return None;
    }
    for form in Escape::ALL {
        if exact(blocks, &whole, got, form) {
            return None;
        }
    }
    let best = Escape::ALL
        .into_iter()
        .map(|form| align(&whole, got, form))
        .max_by_key(|a| (a.head + a.tail, std::cmp::Reverse(a.form_rank)))
        .expect("three forms");
    Some(best.shape(&whole, got))
}

/// Whether `got` holds the whole text, or every block in order, in `form`.
fn exact(blocks: &[String], whole: &str, got: &str, form: Escape) -> bool {
    if got.contains(&form.apply(whole)) {
        return true;
    }
    if blocks.len() < 2 {
        return false;
    }
    let mut rest = got;
    for block in blocks {
        let block = form.apply(block);
        match rest.find(&block) {
            Some(i) => rest = &rest[i + block.len()..],
            None => return false,
        }
    }
    true
}

/// Where the sent text lies in `got` under one escape form.
struct Alignment {
    form_rank: usize,
    /// Units of the sent text matched from its start, and the byte in `got` where that match
    /// ends.
    head: u64,
    head_end: Option<usize>,
    /// Units matched from its end, and the byte in `got` where that match begins.
    tail: u64,
    tail_begin: Option<usize>,
}

/// The fewest characters of the sent text that count as a piece of it having come back: more
/// than the start and end markers share (`<<probe n=10000000 nonce=abcdef01 `, 34), so the end
/// marker alone never passes for a head, and more than any `x`s or `<` a client writes itself.
const ANCHOR_CHARS: usize = 40;

/// The longest start (or, `from_end`, end) of the sent text that `got` holds in `form`, as
/// (units, byte in `got` where it ends or begins). A piece shorter than [`ANCHOR_CHARS`] does
/// not count, unless it is the whole text.
fn longest_piece(
    whole: &str,
    bounds: &[usize],
    got: &str,
    form: Escape,
    from_end: bool,
) -> (u64, Option<usize>) {
    let chars = bounds.len() - 1;
    let piece = |k: usize| {
        if from_end {
            &whole[bounds[chars - k]..]
        } else {
            &whole[..bounds[k]]
        }
    };
    let find = |k: usize| {
        let p = form.apply(piece(k));
        let at = if from_end {
            got.rfind(&p)
        } else {
            got.find(&p)
        };
        at.map(|i| if from_end { i } else { i + p.len() })
    };
    // A marker is piece enough: its nonce and its `start>>` or `end>>` make it this reply's.
    let marker = if from_end {
        whole
            .ends_with(">>")
            .then(|| whole.rfind("<<probe ").map(|i| whole.len() - i))
            .flatten()
    } else {
        whole
            .starts_with("<<probe ")
            .then(|| whole.find(">>").map(|i| i + 2))
            .flatten()
    };
    let min = marker.unwrap_or(ANCHOR_CHARS).min(ANCHOR_CHARS).min(chars);
    let Some(mut found) = find(min) else {
        return (0, None);
    };
    // Holding a piece implies holding every shorter one: search for the longest.
    let (mut lo, mut hi) = (min, chars);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        match find(mid) {
            Some(at) => {
                lo = mid;
                found = at;
            }
            None => hi = mid - 1,
        }
    }
    (utf16_len(piece(lo)), Some(found))
}

fn align(whole: &str, got: &str, form: Escape) -> Alignment {
    let rank = Escape::ALL.iter().position(|f| *f == form).unwrap_or(0);
    let bounds: Vec<usize> = whole
        .char_indices()
        .map(|(i, _)| i)
        .chain([whole.len()])
        .collect();
    let (head, head_end) = longest_piece(whole, &bounds, got, form, false);
    let (tail, tail_begin) = longest_piece(whole, &bounds, got, form, true);
    Alignment {
        form_rank: rank,
        head,
        head_end,
        tail,
        tail_begin,
    }
}

impl Alignment {
    fn shape(&self, whole: &str, got: &str) -> Shape {
        let sent = utf16_len(whole);
        let (head, tail) = (self.head, self.tail);
        let place = match (head > 0, tail > 0) {
            (true, true) => Where::Middle,
            (true, false) => Where::End,
            (false, true) => Where::Start,
            (false, false) => Where::Whole,
        };
        // What lies in `got` where the text did not come back: between head and tail, after
        // the head, or before the tail.
        let between = match (self.head_end, self.tail_begin) {
            (Some(h), Some(t)) if head > 0 && tail > 0 => got.get(h..t.max(h)).unwrap_or(""),
            (Some(h), _) if head > 0 => &got[h..],
            (_, Some(t)) if tail > 0 => &got[..t],
            _ => got,
        };
        let between_units = utf16_len(between);
        // A piece of the text itself where the text should be: a repeat, even when it takes the
        // place of other units of the same length (which no count of units can see).
        let copy = place == Where::Middle
            && between.chars().count() >= ANCHOR_CHARS
            && whole.contains(between);
        let change = if place == Where::Middle && (head + tail > sent || copy) {
            Change::Repeated
        } else if place == Where::Middle && head + tail == sent && !between.is_empty() {
            Change::Inserted
        } else if place == Where::Middle && head + tail + between_units == sent {
            Change::Substituted
        } else {
            Change::Removed
        };
        let note = between.trim();
        Shape {
            place,
            change,
            first_difference: head.min(sent),
            head_units: head,
            tail_units: tail,
            kept_units: (head + tail).min(sent),
            note: (!note.is_empty()).then(|| quote(note)),
        }
    }
}

/// `s` quoted, with control characters escaped, capped at [`NOTE_MAX`] characters.
pub(crate) fn quote(s: &str) -> String {
    let clipped = report::text::clip(s, NOTE_MAX);
    format!("\"{}\"", files::escape::text(&clipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp::emit::{emit_with_nonce, EmitArgs, Fill};
    use proptest::prelude::*;

    fn sent(n: u64, fill: Fill, blocks: u64) -> Vec<String> {
        emit_with_nonce(EmitArgs { n, fill, blocks }, "a1b2c3d4").blocks
    }

    /// Byte offset of the char holding UTF-16 unit `u` (rounded down to a char boundary).
    fn at_unit(s: &str, u: u64) -> usize {
        let mut units = 0;
        for (i, c) in s.char_indices() {
            if units >= u {
                return i;
            }
            units += c.len_utf16() as u64;
        }
        s.len()
    }

    #[test]
    fn the_exact_text_is_exact_raw_escaped_and_wrapped() {
        for fill in [Fill::Ascii, Fill::Astral, Fill::Lines] {
            let b = sent(5000, fill, 1);
            assert_eq!(compare(&b, &b[0]), None, "{fill}");
            assert_eq!(compare(&b, &format!("<tool>{}</tool>", b[0])), None);
            let json = serde_json::to_string(&b[0]).unwrap();
            assert_eq!(compare(&b, &json), None, "{fill} json");
            let ascii = Escape::JsonAscii.apply(&b[0]);
            assert_eq!(compare(&b, &ascii), None, "{fill} ascii json");
        }
        let b = sent(5000, Fill::Astral, 4);
        assert_eq!(compare(&b, &b.join("\n\n")), None);
    }

    #[test]
    fn a_middle_cut_with_a_note_is_located_and_the_note_quoted() {
        let b = sent(50_000, Fill::Ascii, 1);
        let w = &b[0];
        let got = format!(
            "{}\n...30000 tokens truncated...\n{}",
            &w[..10_000],
            &w[40_000..]
        );
        let s = compare(&b, &got).unwrap();
        assert_eq!(s.place, Where::Middle);
        assert_eq!(s.change, Change::Removed);
        assert_eq!((s.head_units, s.tail_units), (10_000, 10_000));
        assert_eq!(s.first_difference, 10_000);
        assert_eq!(s.note.as_deref(), Some("\"...30000 tokens truncated...\""));
        assert!(s
            .describe(50_000)
            .contains("units 10000..40000 of 50000 are missing"));
    }

    #[test]
    fn more_units_than_were_sent_between_the_markers_is_still_not_exact() {
        // The case a count alone called inline: head and tail kept, a note longer than the gap.
        let b = sent(1000, Fill::Ascii, 1);
        let w = &b[0];
        let note = "x".repeat(200);
        let got = format!("{}{note}{}", &w[..450], &w[550..]);
        let s = compare(&b, &got).unwrap();
        assert_eq!(s.place, Where::Middle);
        assert!(s.first_difference <= 450 + 64);
    }

    #[test]
    fn a_same_length_substitution_and_a_repeat_are_found() {
        for fill in [Fill::Ascii, Fill::Astral, Fill::Lines] {
            let b = sent(20_000, fill, 1);
            let w = &b[0];
            let (i, j) = (at_unit(w, 8_000), at_unit(w, 8_400));
            let same = "y".repeat(utf16_len(&w[i..j]) as usize);
            let s = compare(&b, &format!("{}{same}{}", &w[..i], &w[j..])).unwrap();
            assert_eq!(s.change, Change::Substituted, "{fill}");
            assert_eq!(s.first_difference, utf16_len(&w[..i]), "{fill}");
            // A chunk repeated in place of one of the same length: no count could tell.
            let k = at_unit(w, 9_000);
            let repeated = format!("{}{}{}", &w[..k], &w[i..j], &w[k + (j - i)..]);
            assert_eq!(repeated.len(), w.len());
            let s = compare(&b, &repeated).unwrap();
            assert_eq!(
                (s.place, s.change),
                (Where::Middle, Change::Repeated),
                "{fill}"
            );
            assert!(
                s.first_difference >= utf16_len(&w[..k]) - 80,
                "{fill} {s:?}"
            );
            // A chunk repeated with nothing removed.
            let s = compare(&b, &format!("{}{}{}", &w[..j], &w[i..j], &w[j..])).unwrap();
            assert_eq!(s.change, Change::Repeated, "{fill} {s:?}");
        }
    }

    #[test]
    fn cuts_at_either_end_and_nothing_at_all() {
        let b = sent(3000, Fill::Lines, 1);
        let w = &b[0];
        let s = compare(&b, &format!("{}\n[output truncated]", &w[..1200])).unwrap();
        assert_eq!((s.place, s.head_units, s.tail_units), (Where::End, 1200, 0));
        assert_eq!(s.note.as_deref(), Some("\"[output truncated]\""));
        let s = compare(&b, &w[1200..]).unwrap();
        assert_eq!(
            (s.place, s.head_units, s.tail_units),
            (Where::Start, 0, 1800)
        );
        let s = compare(&b, "Error: too big").unwrap();
        assert_eq!(s.place, Where::Whole);
        assert_eq!(s.note.as_deref(), Some("\"Error: too big\""));
    }

    #[test]
    fn a_note_is_escaped_and_capped() {
        let b = sent(1000, Fill::Ascii, 1);
        let got = format!("{}\n\u{1b}[31m{}", &b[0][..500], "z".repeat(1000));
        let note = compare(&b, &got).unwrap().note.unwrap();
        assert!(note.starts_with("\"\\u{1b}[31m"), "{note}");
        assert!(note.chars().count() <= NOTE_MAX + 8, "{}", note.len());
    }

    #[test]
    fn text_from_another_nonce_is_not_this_text() {
        let b = sent(2000, Fill::Astral, 1);
        let other = emit_with_nonce(
            EmitArgs {
                n: 2000,
                fill: Fill::Astral,
                blocks: 1,
            },
            "ffffffff",
        );
        assert!(compare(&b, &other.blocks[0]).is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any single edit anywhere (remove a span, insert text, replace a span, repeat a span)
        /// is found, and the first difference is never after the edit.
        #[test]
        fn any_edit_is_found_and_located(
            fill in prop_oneof![Just(Fill::Ascii), Just(Fill::Astral), Just(Fill::Lines)],
            n in 100u64..4000,
            a in 0.0f64..1.0,
            len in 1u64..300,
            kind in 0u8..4,
        ) {
            let b = sent(n, fill, 1);
            let w = &b[0];
            let i = at_unit(w, (a * n as f64) as u64);
            let j = at_unit(w, utf16_len(&w[..i]) + len).max(i + 1).min(w.len());
            let got = match kind {
                0 => format!("{}{}", &w[..i], &w[j..]),
                1 => format!("{}[note]{}", &w[..i], &w[i..]),
                2 => format!("{}{}{}", &w[..i], "q".repeat(utf16_len(&w[i..j]) as usize), &w[j..]),
                _ => format!("{}{}{}", &w[..j], &w[i..j], &w[j..]),
            };
            // Text before or after the whole is a wrapper, not a change.
            prop_assume!(!got.contains(w.as_str()));
            let s = compare(&b, &got);
            prop_assert!(s.is_some(), "edit {kind} at {i}..{j} not found");
            let s = s.unwrap();
            // Where the texts really part: at the edit, or further on when the text after it
            // repeats what was cut (a fill of lines is periodic). A repeat may match a little
            // further than where it was inserted, never before it.
            let same: usize = w
                .char_indices()
                .zip(got.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((k, a), _)| k + a.len_utf8());
            let edit_at = utf16_len(&w[..same.max(if kind == 3 { j } else { i })]);
            prop_assert!(s.first_difference <= edit_at + 80 * u64::from(kind == 3) + 64,
                "{kind}: first difference {} past the edit at {edit_at}", s.first_difference);
        }
    }
}
