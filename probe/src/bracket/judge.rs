//! Judging one point: what the server sent (its log) against what the client handed on (its
//! output, or what the model stand-in received) gives the point's [`Verdict`].
//!
//! Only the end marker with the logged nonce proves a full delivery: a nonce from an earlier
//! run, or the marker of another n, proves nothing. A spill message proves a save; the start
//! marker without the end marker is a cut. A run that hung or could not start gives no verdict
//! at all (`error`), whatever its output says.

use crate::emit::{end_marker, start_marker};
use crate::model::{text_of, ModelEvent};
use crate::server::LoggedCall;
use regex::Regex;
use report::runner::{Outcome, RunRecord};
use report::text::clip;
use serde::Serialize;
use std::fmt;

/// What happened to one point's tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Verdict {
    /// The end marker (with the logged nonce) came back: the whole text was passed on.
    #[serde(rename = "inline")]
    Inline,
    /// A spill message came back instead of the text.
    #[serde(rename = "saved")]
    Saved,
    /// The text came back cut: start marker, no end marker, no spill message.
    #[serde(rename = "truncated")]
    Truncated,
    /// The client ran to the end without calling the tool.
    #[serde(rename = "not called")]
    NotCalled,
    /// The run failed, hung, or could not start: no judgment.
    #[serde(rename = "error")]
    Error,
}

impl Verdict {
    /// Saved or truncated: the result did not come back whole.
    pub(crate) fn is_over(self) -> bool {
        matches!(self, Verdict::Saved | Verdict::Truncated)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Inline => "inline",
            Verdict::Saved => "saved",
            Verdict::Truncated => "truncated",
            Verdict::NotCalled => "not called",
            Verdict::Error => "error",
        })
    }
}

/// Why a run gives no verdict at all, if it does not.
fn failed_run(record: &RunRecord) -> Option<String> {
    match record.outcome() {
        Outcome::Hang => Some(format!(
            "hang: killed after the timeout ({:.0}s)",
            record.duration_secs
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

/// Judges a command client from the server's log and the client's output.
pub(crate) fn judge_output(
    record: &RunRecord,
    calls: &[LoggedCall],
    output: &str,
    spill: &[Regex],
) -> (Verdict, Option<String>) {
    if let Some(why) = failed_run(record) {
        return (Verdict::Error, Some(why));
    }
    let Some(call) = calls.last() else {
        return if record.outcome() == Outcome::Passed {
            (Verdict::NotCalled, None)
        } else {
            (
                Verdict::Error,
                Some(format!("{} without calling the tool", record.status_text())),
            )
        };
    };
    judge_text(call, output, record, spill)
}

pub(crate) fn judge_text(
    call: &LoggedCall,
    text: &str,
    record: &RunRecord,
    spill: &[Regex],
) -> (Verdict, Option<String>) {
    if call.end_marker && text.contains(&end_marker(call.n, &call.nonce)) {
        return (Verdict::Inline, None);
    }
    if let Some(line) = spill_line(text, spill) {
        return (Verdict::Saved, Some(line));
    }
    if !call.end_marker {
        // Too small for markers: nothing to tell a cut by, and nothing was spilled.
        return (
            Verdict::Inline,
            Some("n too small for markers; no spill message".into()),
        );
    }
    if call.start_marker && text.contains(&start_marker(call.n, &call.nonce)) {
        return (
            Verdict::Truncated,
            Some("the start marker came back, the end marker did not".into()),
        );
    }
    if record.outcome() != Outcome::Passed {
        return (
            Verdict::Error,
            Some(format!("{} after calling the tool", record.status_text())),
        );
    }
    (
        Verdict::Truncated,
        Some("the tool was called, but neither its text nor a spill message came back".into()),
    )
}

/// Judges the Claude preset from what the stand-in received.
pub(crate) fn judge_stand_in(
    record: &RunRecord,
    calls: &[LoggedCall],
    events: &[ModelEvent],
    n: u64,
    spill: &[Regex],
) -> (Verdict, Option<String>, Option<u64>) {
    if let Some(why) = failed_run(record) {
        return (Verdict::Error, Some(why), None);
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
                Verdict::NotCalled,
                Some(format!(
                    "the client did not call the tool ({})",
                    record.status_text()
                )),
                None,
            );
        } else {
            format!(
                "the tool ran but no result reached the stand-in ({})",
                record.status_text()
            )
        };
        return (Verdict::Error, Some(why), None);
    };
    let text = text_of(content);
    let received = Some(units);
    let Some(call) = calls.last() else {
        return (
            Verdict::Error,
            Some(format!(
                "a tool result reached the stand-in, but the server logged no call: {}",
                clip(&text, 200)
            )),
            received,
        );
    };
    let (verdict, message) = judge_text(call, &text, record, spill);
    // For a save, the client's own words are the message (its first lines), not just the line
    // the pattern matched.
    let message = match verdict {
        Verdict::Saved => Some(clip(text.trim(), 300)),
        _ => message,
    };
    (verdict, message, received)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::Fill;
    use std::path::PathBuf;

    fn record(exit: i32) -> RunRecord {
        let mut r = RunRecord::not_yet_run(vec!["client".into()], PathBuf::new(), PathBuf::new());
        r.exit_code = Some(exit);
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

    fn spill() -> Vec<Regex> {
        vec![Regex::new("Output has been saved to").unwrap()]
    }

    #[test]
    fn only_the_end_marker_with_the_logged_nonce_is_inline() {
        let c = call(500, true);
        let full = format!(
            "{} ... {}",
            start_marker(500, "n0nce"),
            end_marker(500, "n0nce")
        );
        let (v, _) = judge_text(&c, &full, &record(0), &spill());
        assert_eq!(v, Verdict::Inline);
        let stale = format!(
            "{} ... {}",
            start_marker(500, "n0nce"),
            end_marker(500, "other")
        );
        let (v, m) = judge_text(&c, &stale, &record(0), &spill());
        assert_eq!(v, Verdict::Truncated, "{m:?}");
        let other_n = end_marker(499, "n0nce");
        let (v, _) = judge_text(&c, &other_n, &record(0), &spill());
        assert_ne!(v, Verdict::Inline);
    }

    #[test]
    fn a_spill_message_is_saved_with_its_line_as_the_message() {
        let text = "first line\nError: big. Output has been saved to /tmp/x.txt\nmore";
        let (v, m) = judge_text(&call(500, true), text, &record(0), &spill());
        assert_eq!(v, Verdict::Saved);
        assert_eq!(
            m.as_deref(),
            Some("Error: big. Output has been saved to /tmp/x.txt")
        );
    }

    #[test]
    fn a_failed_run_after_the_call_is_an_error_but_a_cut_is_still_a_cut() {
        let c = call(500, true);
        let (v, _) = judge_text(&c, "nothing", &record(1), &spill());
        assert_eq!(v, Verdict::Error);
        let (v, _) = judge_text(&c, "nothing", &record(0), &spill());
        assert_eq!(v, Verdict::Truncated);
        let head = start_marker(500, "n0nce");
        let (v, _) = judge_text(&c, &head, &record(1), &spill());
        assert_eq!(v, Verdict::Truncated);
    }

    #[test]
    fn without_markers_and_without_a_spill_the_text_counts_as_inline() {
        let (v, m) = judge_text(&call(5, false), "xxxxx", &record(0), &spill());
        assert_eq!(v, Verdict::Inline);
        assert!(m.is_some());
    }

    #[test]
    fn a_run_that_hung_or_never_called_the_tool_gives_no_verdict_on_the_text() {
        let mut hung = record(0);
        hung.exit_code = None;
        hung.hang = true;
        let full = end_marker(500, "n0nce");
        let (v, m) = judge_output(&hung, &[call(500, true)], &full, &spill());
        assert_eq!(v, Verdict::Error);
        assert!(m.unwrap().starts_with("hang"));
        assert_eq!(
            judge_output(&record(0), &[], "hi", &spill()).0,
            Verdict::NotCalled
        );
        assert_eq!(
            judge_output(&record(2), &[], "hi", &spill()).0,
            Verdict::Error
        );
        let mut missing = record(127);
        missing.exit_code = Some(127);
        assert_eq!(judge_output(&missing, &[], "", &spill()).0, Verdict::Error);
    }
}
