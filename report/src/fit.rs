//! Text reports within [`TEXT_WIDTH`] columns, whatever they quote: one pass over a rendered
//! report (gate-summary.txt, mutants.txt, what a run prints) that wraps every line wider than
//! that, so a long path, name or list of findings never makes a line a review would wrap.
//!
//! A line `LABEL     value` (a word, then a run of spaces, as the summaries align their
//! values) continues under its value; any other line continues two spaces further in than it
//! starts. Every continuation is indented, so a wrapped value can never start a line of its
//! own (a quoted `verdict   PASS` stays inside the line that quotes it). Lines break at a
//! space, or after a `/` of a path, and only where neither is within reach, anywhere. Width
//! is counted in `char`s, and an ANSI colour sequence counts nothing and is never cut, so a
//! painted report wraps exactly where its plain twin does.

use crate::table::TEXT_WIDTH;

/// `text` with every line wider than [`TEXT_WIDTH`] wrapped (see the module).
pub fn lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let pieces = wrap(body, TEXT_WIDTH);
        let last = pieces.len() - 1;
        for (k, piece) in pieces.into_iter().enumerate() {
            out.push_str(&piece);
            out.push_str(if k < last { "\n" } else { end });
        }
    }
    out
}

/// One unit of a line: a char (one column) or a whole colour sequence (none).
#[derive(Clone, Debug)]
struct Unit {
    text: String,
    width: usize,
}

fn units(line: &str) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            let mut seq = String::from(c);
            for d in chars.by_ref() {
                seq.push(d);
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            out.push(Unit {
                text: seq,
                width: 0,
            });
        } else {
            out.push(Unit {
                text: c.to_string(),
                width: 1,
            });
        }
    }
    out
}

/// The column a continuation of `line` starts at: under the value of a `LABEL   value` line,
/// else two past the line's own indent; never so far in that little room is left.
fn indent(line: &[Unit], width: usize) -> usize {
    let is = |u: &Unit, c: char| u.text.len() == 1 && u.text.starts_with(c);
    let lead = line.iter().take_while(|u| is(u, ' ')).count();
    let word = line[lead..]
        .iter()
        .take_while(|u| !is(u, ' ') && u.width > 0)
        .count();
    let gap = line[lead + word..]
        .iter()
        .take_while(|u| is(u, ' '))
        .count();
    let value = lead + word + gap;
    let at = if word > 0 && gap >= 2 && value < line.len() {
        value
    } else {
        lead + 2
    };
    at.min(width / 3)
}

/// `line` cut into pieces of at most `width` columns, each after the first indented (see the
/// module); one piece when it fits.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    let all = units(line);
    let cols = |u: &[Unit]| u.iter().map(|u| u.width).sum::<usize>();
    if cols(&all) <= width {
        return vec![line.to_string()];
    }
    let pad = indent(&all, width);
    let mut pieces: Vec<String> = Vec::new();
    let mut rest: &[Unit] = &all;
    let mut room = width;
    let is_space = |u: &Unit| u.text == " ";
    while cols(rest) > room {
        // The furthest unit that still fits on this line.
        let mut used = 0;
        let mut fit = 0;
        while fit < rest.len() && used + rest[fit].width <= room {
            used += rest[fit].width;
            fit += 1;
        }
        // Break at the last space in reach, or after the last `/`, keeping something here.
        let cut = (1..=fit.min(rest.len() - 1))
            .rev()
            .find(|&i| is_space(&rest[i]) || rest[i - 1].text == "/")
            .filter(|&i| rest[..i].iter().any(|u| u.width > 0 && !is_space(u)))
            .unwrap_or(fit.max(1));
        let piece: String = rest[..cut].iter().map(|u| u.text.as_str()).collect();
        pieces.push(piece.trim_end_matches(' ').to_string());
        let skip = rest[cut..].iter().take_while(|u| is_space(u)).count();
        rest = &rest[cut + skip..];
        room = width - pad;
    }
    if !rest.is_empty() || pieces.is_empty() {
        pieces.push(rest.iter().map(|u| u.text.as_str()).collect());
    }
    pieces
        .into_iter()
        .enumerate()
        .map(|(k, p)| {
            if k == 0 {
                p
            } else {
                format!("{}{p}", " ".repeat(pad))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(text: &str) -> usize {
        text.lines()
            .map(|l| crate::color::strip(l).chars().count())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_short_line_is_kept_and_a_long_labelled_one_continues_under_its_value() {
        assert_eq!(
            lines("patch     a.patch  sha256 00\n"),
            "patch     a.patch  sha256 00\n"
        );
        let path = format!("/tmp/{}/build.patch", "deep/".repeat(30));
        let line = format!("patch     {path}  sha256 {}\n", "0".repeat(64));
        let text = lines(&line);
        assert!(widest(&text) <= TEXT_WIDTH, "{text}");
        for l in text.lines().skip(1) {
            assert!(
                l.starts_with("          ") && !l.starts_with("           "),
                "{l:?}"
            );
        }
        // Nothing lost but the spaces it broke at.
        let joined: String = text
            .lines()
            .map(str::trim_start)
            .collect::<Vec<_>>()
            .join("");
        assert_eq!(joined.replace(' ', ""), line.trim_end().replace(' ', ""));
        // A word that fits on a line of its own is never cut (a digest stays whole).
        assert!(
            text.lines().any(|l| l.trim_start() == "0".repeat(64)),
            "{text}"
        );
    }

    #[test]
    fn a_word_longer_than_the_room_is_cut_and_a_quoted_verdict_never_starts_a_line() {
        let text = lines(&format!(
            "verdict   FAIL: {}verdict   PASS\n",
            "x".repeat(300)
        ));
        assert!(widest(&text) <= TEXT_WIDTH, "{text}");
        assert!(
            text.lines().skip(1).all(|l| l.starts_with("          ")),
            "{text}"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("verdict   PASS")),
            "{text}"
        );
    }

    #[test]
    fn a_painted_line_wraps_where_its_plain_twin_does_and_keeps_its_colour_whole() {
        let findings = "suite a failed; ".repeat(12);
        let plain = format!("verdict   FAIL: {findings}\n");
        let painted = format!("verdict   \x1b[1;31mFAIL\x1b[0m: {findings}\n");
        let (p, c) = (lines(&plain), lines(&painted));
        assert_eq!(crate::color::strip(&c), p);
        assert!(c.contains("\x1b[1;31mFAIL\x1b[0m"), "{c:?}");
        assert!(widest(&p) <= TEXT_WIDTH);
    }

    #[test]
    fn an_unlabelled_line_continues_two_further_in() {
        let line = format!("  {}", "word ".repeat(40));
        let text = lines(&line);
        assert!(widest(&text) <= TEXT_WIDTH, "{text}");
        assert!(
            text.lines().skip(1).all(|l| l.starts_with("    ")),
            "{text}"
        );
    }
}
