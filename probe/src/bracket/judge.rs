//! Judging one point: what the server sent (its log) against what the client handed on (its
//! output, or what the model stand-in received) gives the point's [`Verdict`].
//!
//! Only the exact text proves a full delivery: the server's log names n, fill, blocks and nonce,
//! the text is rebuilt from them and compared unit by unit ([`super::compare`]), so a count of
//! what lies between the markers never stands in for the text. A difference is named by where it
//! is (end, middle, start) and what took its place; a spill message proves a save. A run that
//! hung or could not start gives no verdict at all (`error`), whatever its output says.

use super::compare::{compare, Shape, Where};
use mcp::emit::{emit_with_nonce, EmitArgs};
use mcp::server::LoggedCall;
use regex::Regex;
use report::text::clip;
use report::RunRecord;
use runner::Outcome;
use serde::Serialize;
use standin::{text_of, ModelEvent};
use std::fmt;
use std::time::Duration;

/// What happened to one point's tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) enum Verdict {
    /// The whole text came back exactly as sent (rebuilt from the logged nonce and compared).
    #[serde(rename = "inline")]
    Inline,
    /// Replaced by a note or a short preview; the client says the full text is in a file.
    #[serde(rename = "saved")]
    Saved,
    /// The head came back (the start marker, not the end marker), and no save note.
    #[serde(rename = "truncated")]
    Truncated,
    /// Head and tail came back (both markers) with the middle removed.
    #[serde(rename = "cut")]
    Cut,
    /// The head came back and the full text was also saved to a file.
    #[serde(rename = "truncated+saved")]
    TruncatedSaved,
    /// Head and tail came back, the middle removed, and the full text was also saved.
    #[serde(rename = "cut+saved")]
    CutSaved,
    /// The client ran to the end without calling the tool.
    #[serde(rename = "not called")]
    NotCalled,
    /// The run failed, hung, or could not start: no judgment.
    #[serde(rename = "error")]
    Error,
}

impl Verdict {
    /// Every kind of "did not come back whole": the result is over the client's limit.
    pub(crate) fn is_over(self) -> bool {
        matches!(
            self,
            Verdict::Saved
                | Verdict::Truncated
                | Verdict::Cut
                | Verdict::TruncatedSaved
                | Verdict::CutSaved
        )
    }

    /// Inline or over: the run placed its n on one side of the threshold.
    pub(crate) fn is_judged(self) -> bool {
        self == Verdict::Inline || self.is_over()
    }

    /// The colour the verdict is shown in.
    pub(crate) fn style(self) -> report::color::Style {
        use report::color::Style;
        match self {
            Verdict::Inline => Style::Good,
            Verdict::Error => Style::Bad,
            _ => Style::Warn,
        }
    }

    /// The verdict for what came back: `kept` is how much of the text, `saved` whether the
    /// client says it stored the whole in a file.
    fn of(kept: Kept, saved: bool) -> Verdict {
        match (kept, saved) {
            (Kept::HeadAndTail, false) => Verdict::Cut,
            (Kept::HeadAndTail, true) => Verdict::CutSaved,
            (Kept::Head, false) => Verdict::Truncated,
            (Kept::Head, true) => Verdict::TruncatedSaved,
            (Kept::Preview | Kept::Nothing, true) => Verdict::Saved,
            // A preview with no save note is a head like any other.
            (Kept::Preview, false) => Verdict::Truncated,
            (Kept::Nothing, false) => Verdict::Truncated,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Inline => "inline",
            Verdict::Saved => "saved",
            Verdict::Truncated => "truncated",
            Verdict::Cut => "cut",
            Verdict::TruncatedSaved => "truncated+saved",
            Verdict::CutSaved => "cut+saved",
            Verdict::NotCalled => "not called",
            Verdict::Error => "error",
        })
    }
}

/// How much of the emitted text came back, when not all of it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// Head and tail, the middle changed.
    HeadAndTail,
    /// One end: at least half of what was sent, or more than a preview holds.
    Head,
    /// The head, a little of it: a preview beside a note.
    Preview,
    /// Nothing of it.
    Nothing,
}

/// The most UTF-16 units a preview holds: a head at most this long, and under half of what was
/// sent, is a preview beside a save note (Claude Code's is 2 KB), not a truncation.
const PREVIEW_MAX: u64 = 16 * 1024;

/// How much of the sent text came back, read from the comparison's shape.
fn kept(shape: &Shape, units: u64) -> Kept {
    match shape.place {
        Where::Middle => Kept::HeadAndTail,
        Where::End if shape.head_units <= PREVIEW_MAX && shape.head_units * 2 < units => {
            Kept::Preview
        }
        // A kept tail is a truncation like a kept head; the shape says which end went.
        Where::End | Where::Start => Kept::Head,
        Where::Whole => Kept::Nothing,
    }
}

/// The text the server sent for `call`, rebuilt from its log: the fills are a function of
/// (n, fill, blocks, nonce), so this is byte for byte what the client was given.
pub(crate) fn sent_blocks(call: &LoggedCall) -> Vec<String> {
    let args = EmitArgs {
        n: call.n,
        fill: call.fill,
        blocks: call.blocks.max(1),
    };
    emit_with_nonce(args, &call.nonce).blocks
}

/// The file a client says it saved the full text to, when it names one: the first absolute
/// (or home-relative) path after "saved", "stored", "written" or "persisted".
pub(crate) fn saved_path(text: &str) -> Option<String> {
    static PATH: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = PATH.get_or_init(|| {
        Regex::new(r#"(?i)(?:saved|stored|written|persisted|full output)[^/~\n]{0,40}?((?:/|~/)[^\s"'<>)\]`]+)"#)
            .expect("valid regex")
    });
    re.captures(text)
        .map(|c| c[1].trim_end_matches(['.', ',', ':', ';']).to_string())
}

/// Why a run gives no verdict at all, if it does not. A hang names the timeout that was set
/// (`--timeout`), which is what a reader changes, not the time the kill took.
pub(crate) fn failed_run(record: &RunRecord, timeout: Duration) -> Option<String> {
    match record.outcome() {
        Outcome::Hang => Some(format!(
            "hang: killed after the timeout ({})",
            report::duration::HumanDuration(timeout)
        )),
        Outcome::CouldNotStart => Some(format!("could not start: {}", record.status_text())),
        _ => None,
    }
}

/// The line of `text` where a spill pattern matches, if one does.
fn spill_line(text: &str, spill: &[Regex]) -> Option<String> {
    spill.iter().find_map(|re| {
        re.find(text).map(|m| {
            let begin = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
            let end = text[m.end()..]
                .find('\n')
                .map_or(text.len(), |i| m.end() + i);
            text[begin..end].trim().to_string()
        })
    })
}

/// One point's judgment: the verdict, the client's words or why, and the file it saved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judgment {
    pub verdict: Verdict,
    pub message: Option<String>,
    /// The file the client says holds the full text, when it names one.
    pub saved_path: Option<String>,
    /// How what came back differs from what was sent (none when it came back exactly).
    pub shape: Option<Shape>,
}

impl Judgment {
    pub(crate) fn of(verdict: Verdict, message: Option<String>) -> Judgment {
        Judgment {
            verdict,
            message,
            saved_path: None,
            shape: None,
        }
    }
}

/// Judges a command client from the server's log and the client's output.
pub(crate) fn judge_output(
    record: &RunRecord,
    calls: &[LoggedCall],
    output: &str,
    spill: &[Regex],
    timeout: Duration,
) -> Judgment {
    if let Some(why) = failed_run(record, timeout) {
        return Judgment::of(Verdict::Error, Some(why));
    }
    let Some(call) = calls.last() else {
        return if record.outcome() == Outcome::Passed {
            Judgment::of(Verdict::NotCalled, None)
        } else {
            Judgment::of(
                Verdict::Error,
                Some(format!("{} without calling the tool", record.status_text())),
            )
        };
    };
    judge_text(call, output, record, spill)
}

/// Judges what came back (`text`) against what the server sent (`call`): `inline` only when
/// the sent text is in it exactly; otherwise the shape of the difference names the verdict.
pub(crate) fn judge_text(
    call: &LoggedCall,
    text: &str,
    record: &RunRecord,
    spill: &[Regex],
) -> Judgment {
    let Some(shape) = compare(&sent_blocks(call), text) else {
        return Judgment::of(Verdict::Inline, None);
    };
    let kept = kept(&shape, call.units);
    let line = spill_line(text, spill);
    let path = saved_path(text);
    let saved = line.is_some() || path.is_some();
    let verdict = Verdict::of(kept, saved);
    let message = match kept {
        Kept::Nothing if !saved && record.outcome() != Outcome::Passed => {
            return Judgment {
                shape: Some(shape),
                ..Judgment::of(
                    Verdict::Error,
                    Some(format!("{} after calling the tool", record.status_text())),
                )
            };
        }
        Kept::Nothing if !saved => Some(format!(
            "the tool was called, but neither its text nor a spill message came back{}",
            shape
                .note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        )),
        _ if saved => line.or_else(|| path.clone().map(|p| format!("saved to {p}"))),
        _ => Some(shape.describe(call.units)),
    };
    Judgment {
        verdict,
        message,
        saved_path: if saved { path } else { None },
        shape: Some(shape),
    }
}

/// Judges a preset from what the stand-in received.
pub(crate) fn judge_stand_in(
    record: &RunRecord,
    calls: &[LoggedCall],
    events: &[ModelEvent],
    n: u64,
    spill: &[Regex],
    timeout: Duration,
) -> (Judgment, Option<u64>) {
    if let Some(why) = failed_run(record, timeout) {
        return (Judgment::of(Verdict::Error, Some(why)), None);
    }
    let result = events.iter().rev().find_map(|e| match e {
        ModelEvent::ToolResult {
            n: Some(m),
            content,
            units,
            ..
        } if *m == n => Some((content, *units)),
        _ => None,
    });
    let Some((content, units)) = result else {
        let why = if events
            .iter()
            .any(|e| matches!(e, ModelEvent::NoTool { .. }))
        {
            "the client offered the model no emit tool (is tool search on, or did the server fail?)"
                .to_string()
        } else if events.is_empty() {
            format!(
                "the client never reached the stand-in ({})",
                record.status_text()
            )
        } else if calls.is_empty() {
            return (
                Judgment::of(
                    Verdict::NotCalled,
                    Some(format!(
                        "the client did not call the tool ({})",
                        record.status_text()
                    )),
                ),
                None,
            );
        } else {
            format!(
                "the tool ran but no result reached the stand-in ({})",
                record.status_text()
            )
        };
        return (Judgment::of(Verdict::Error, Some(why)), None);
    };
    let text = text_of(content);
    let received = Some(units);
    let Some(call) = calls.last() else {
        return (
            Judgment::of(
                Verdict::Error,
                Some(format!(
                    "a tool result reached the stand-in, but the server logged no call: {}",
                    clip(&text, 200)
                )),
            ),
            received,
        );
    };
    let mut judgment = judge_text(call, &text, record, spill);
    // For a save, the client's own words are the message (its first lines), not just the line
    // the pattern matched.
    if judgment.saved_path.is_some() || judgment.verdict == Verdict::Saved {
        judgment.message = Some(clip(text.trim(), 300));
    }
    (judgment, received)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp::emit::{end_marker, start_marker, utf16_len, Fill};
    use std::path::PathBuf;

    /// The timeout the tests' runs were given.
    const T: Duration = Duration::from_millis(1500);

    fn record(exit: i32) -> RunRecord {
        let mut r = RunRecord::not_yet_run(vec!["client".into()], PathBuf::new(), PathBuf::new());
        r.run.ended = runner::Ended::exited(exit);
        r
    }

    fn call(n: u64, markers: bool) -> LoggedCall {
        LoggedCall {
            n,
            fill: Fill::Ascii,
            blocks: 1,
            nonce: "n0nce".into(),
            units: n,
            bytes: n,
            start_marker: markers,
            end_marker: markers,
        }
    }

    /// The text `emit` sends for n with the test nonce.
    fn sent(n: u64, fill: Fill) -> String {
        let args = mcp::emit::EmitArgs { n, fill, blocks: 1 };
        mcp::emit::emit_with_nonce(args, "n0nce").blocks.concat()
    }

    fn spill() -> Vec<Regex> {
        vec![Regex::new("Output has been saved to").unwrap()]
    }

    #[test]
    fn only_the_end_marker_with_the_logged_nonce_is_inline() {
        let c = call(500, true);
        let full = sent(500, Fill::Ascii);
        let v = judge_text(&c, &full, &record(0), &spill()).verdict;
        assert_eq!(v, Verdict::Inline);
        let stale = format!(
            "{} ... {}",
            start_marker(500, "n0nce"),
            end_marker(500, "other")
        );
        let j = judge_text(&c, &stale, &record(0), &spill());
        let (v, m) = (j.verdict, j.message);
        assert_eq!(v, Verdict::Truncated, "{m:?}");
        let other_n = end_marker(499, "n0nce");
        let v = judge_text(&c, &other_n, &record(0), &spill()).verdict;
        assert_ne!(v, Verdict::Inline);
    }

    #[test]
    fn a_spill_message_is_saved_with_its_line_as_the_message() {
        let text = "first line\nError: big. Output has been saved to /tmp/x.txt\nmore";
        let j = judge_text(&call(500, true), text, &record(0), &spill());
        let (v, m) = (j.verdict, j.message);
        assert_eq!(v, Verdict::Saved);
        assert_eq!(
            m.as_deref(),
            Some("Error: big. Output has been saved to /tmp/x.txt")
        );
    }

    #[test]
    fn a_failed_run_after_the_call_is_an_error_but_a_cut_is_still_a_cut() {
        let c = call(500, true);
        let v = judge_text(&c, "nothing", &record(1), &spill()).verdict;
        assert_eq!(v, Verdict::Error);
        let v = judge_text(&c, "nothing", &record(0), &spill()).verdict;
        assert_eq!(v, Verdict::Truncated);
        let head = start_marker(500, "n0nce");
        let v = judge_text(&c, &head, &record(1), &spill()).verdict;
        assert_eq!(v, Verdict::Truncated);
    }

    #[test]
    fn a_text_too_short_for_markers_is_inline_only_when_it_came_back_exactly() {
        let j = judge_text(&call(5, false), "xxxxx", &record(0), &spill());
        assert_eq!((j.verdict, j.message), (Verdict::Inline, None));
        let j = judge_text(&call(5, false), "xxx", &record(0), &spill());
        assert_eq!(j.verdict, Verdict::Truncated, "{:?}", j.message);
    }

    #[test]
    fn both_markers_and_more_units_than_were_sent_is_a_cut_with_the_clients_note() {
        // What a counting judge called inline: the head and the tail kept, and a note longer
        // than what it replaced, so more units lie between the markers than were sent.
        let c = call(50_000, true);
        let whole = sent(50_000, Fill::Ascii);
        let note = format!("...{} tokens truncated...", "9".repeat(40_000));
        let got = format!("{}{note}{}", &whole[..20_000], &whole[30_000..]);
        assert!(utf16_len(&got) > 50_000);
        let j = judge_text(&c, &got, &record(0), &spill());
        assert_eq!(j.verdict, Verdict::Cut, "{:?}", j.message);
        let shape = j.shape.unwrap();
        assert_eq!(shape.place, Where::Middle);
        assert_eq!((shape.head_units, shape.tail_units), (20_000, 20_000));
        let quoted = shape.note.unwrap();
        assert!(
            quoted.starts_with("\"...") && quoted.chars().count() <= 203,
            "{quoted}"
        );
        // One unit changed anywhere is no longer inline either.
        let mut one = whole.clone().into_bytes();
        one[33_333] = b'y';
        let one = String::from_utf8(one).unwrap();
        let j = judge_text(&c, &one, &record(0), &spill());
        assert_eq!(j.verdict, Verdict::Cut);
        assert!(j.message.unwrap().contains("33333..33334"));
    }

    #[test]
    fn a_run_that_hung_or_never_called_the_tool_gives_no_verdict_on_the_text() {
        let mut hung = record(0);
        hung.run.ended = runner::Ended::Hang(runner::Status::default());
        let full = end_marker(500, "n0nce");
        let j = judge_output(&hung, &[call(500, true)], &full, &spill(), T);
        let (v, m) = (j.verdict, j.message);
        assert_eq!(v, Verdict::Error);
        assert_eq!(
            m.as_deref(),
            Some("hang: killed after the timeout (1.50s)"),
            "the timeout set, not the time taken"
        );
        assert_eq!(
            judge_output(&record(0), &[], "hi", &spill(), T).verdict,
            Verdict::NotCalled
        );
        assert_eq!(
            judge_output(&record(2), &[], "hi", &spill(), T).verdict,
            Verdict::Error
        );
        let mut missing = record(127);
        missing.run.ended = runner::Ended::exited(127);
        assert_eq!(
            judge_output(&missing, &[], "", &spill(), T).verdict,
            Verdict::Error
        );
    }

    #[test]
    fn head_and_tail_with_the_middle_gone_is_cut_and_a_save_note_makes_it_cut_saved() {
        let c = call(50_000, true);
        let whole = sent(50_000, Fill::Ascii);
        let cut = format!(
            "{}\n... 30000 characters removed ...\n{}",
            &whole[..10_000],
            &whole[40_000..]
        );
        let j = judge_text(&c, &cut, &record(0), &spill());
        assert_eq!(j.verdict, Verdict::Cut, "{:?}", j.message);
        assert_eq!(j.saved_path, None);
        let saved = format!("{cut}\nFull output saved to: /tmp/t/out-1.txt.");
        let j = judge_text(&c, &saved, &record(0), &spill());
        assert_eq!(j.verdict, Verdict::CutSaved);
        assert_eq!(j.saved_path.as_deref(), Some("/tmp/t/out-1.txt"));
        // Escaping only lengthens the text, so a JSON-escaped whole is still whole.
        let lines = sent(5000, Fill::Lines);
        let escaped = serde_json::to_string(&lines).unwrap();
        let lines_call = LoggedCall {
            fill: Fill::Lines,
            ..call(5000, true)
        };
        let j = judge_text(&lines_call, &escaped, &record(0), &spill());
        assert_eq!(j.verdict, Verdict::Inline);
    }

    #[test]
    fn a_long_head_with_a_save_note_is_truncated_saved_and_a_short_preview_is_saved() {
        let c = call(50_001, true);
        let whole = sent(50_001, Fill::Ascii);
        let head = format!(
            "{}\n[truncated; the whole is stored in /home/u/.cache/r.txt]",
            &whole[..49_000]
        );
        let j = judge_text(&c, &head, &record(0), &spill());
        assert_eq!(j.verdict, Verdict::TruncatedSaved, "{:?}", j.message);
        assert_eq!(j.saved_path.as_deref(), Some("/home/u/.cache/r.txt"));
        assert_eq!(
            judge_text(&c, &whole[..49_000], &record(0), &spill()).verdict,
            Verdict::Truncated
        );
        let claude = format!(
            "<persisted-output>\nOutput too large (48.9KB). Full output saved to: \
             /h/.claude/projects/w/s/tool-results/t1.json\n\nPreview (first 2KB): {}\n</persisted-output>",
            &whole[..2048]
        );
        let patterns = [Regex::new("persisted-output").unwrap()];
        let j = judge_text(&c, &claude, &record(0), &patterns);
        assert_eq!(j.verdict, Verdict::Saved);
        assert_eq!(
            j.saved_path.as_deref(),
            Some("/h/.claude/projects/w/s/tool-results/t1.json")
        );
        // A path in an inline text is no save.
        let j = judge_text(&c, &format!("saved to /x {whole}"), &record(0), &spill());
        assert_eq!((j.verdict, j.saved_path), (Verdict::Inline, None));
    }

    #[test]
    fn every_over_kind_is_judged_and_styled_apart_from_inline_and_errors() {
        use report::color::Style;
        for v in [
            Verdict::Saved,
            Verdict::Truncated,
            Verdict::Cut,
            Verdict::TruncatedSaved,
            Verdict::CutSaved,
        ] {
            assert!(v.is_over() && v.is_judged(), "{v}");
            assert_eq!(v.style(), Style::Warn);
        }
        assert!(!Verdict::Inline.is_over() && Verdict::Inline.is_judged());
        for v in [Verdict::NotCalled, Verdict::Error] {
            assert!(!v.is_over() && !v.is_judged(), "{v}");
        }
        assert_eq!(Verdict::Inline.style(), Style::Good);
        assert_eq!(Verdict::Error.style(), Style::Bad);
        assert_eq!(Verdict::CutSaved.to_string(), "cut+saved");
        assert_eq!(
            serde_json::to_value(Verdict::TruncatedSaved).unwrap(),
            "truncated+saved"
        );
    }
}
