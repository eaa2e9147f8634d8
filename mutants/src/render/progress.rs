//! The lines a run shows while it goes: one finished line per mutant and the live status, a
//! line per canary, and what the engine's events say of the checkouts after the first.
//!
//! `cmdline::progress` owns the line on screen (redrawn on a terminal, plain lines elsewhere);
//! this module only says what the lines read, from the rows and tally the engine produced.

use std::collections::BTreeMap;
use std::time::Instant;

use cmdline::progress::step_status;
use report::Painter;

use super::time_text;
use crate::record::{Canary, Row, Tally};
use crate::run::Event;

/// The live line's status: the tally so far and the mutant running longest, with its seconds
/// (`2 killed, 0 survived; running after inclusive (12s) +1 more`).
pub(crate) fn live_status(tally: &Tally, running: &BTreeMap<usize, (String, Instant)>) -> String {
    let mut s = format!(
        "{} killed, {} survived",
        tally.killed + tally.killed_hang,
        tally.survived + tally.not_covered
    );
    if let Some((name, since)) = running.values().min_by_key(|(_, since)| *since) {
        s.push_str("; running ");
        s.push_str(&step_status(&files::escape::text(name), since.elapsed()));
        if running.len() > 1 {
            s.push_str(&format!(" +{} more", running.len() - 1));
        }
    }
    s
}

/// `[3/12] killed          after inclusive (0.31s, 12 pass -> 11 passed, 1 failed)`
pub(crate) fn finished_line(row: &Row, done: usize, total: usize, paint: Painter) -> String {
    let detail = match &row.run {
        Some(run) => {
            let counts = run.counts_text();
            format!(
                " ({}{}{})",
                time_text(run.duration_secs, run.build_secs),
                if counts.is_empty() {
                    String::new()
                } else {
                    format!(", {counts}")
                },
                if run.strays_killed > 0 {
                    format!(", {} strays killed", run.strays_killed)
                } else {
                    String::new()
                }
            )
        }
        None => String::new(),
    };
    let word = row.verdict_text();
    // Padded before painting: escape sequences would count as width.
    let pad = " ".repeat(16usize.saturating_sub(word.chars().count()));
    format!(
        "[{done}/{total}] {}{pad} {}{detail}",
        paint.paint(&word, row.verdict.style()),
        files::escape::text(&row.name)
    )
}

/// What the engine says of a checkout after the first: it builds cold, or it is not green
/// unmutated and judges no mutant. Other events have no line of their own (empty).
pub(crate) fn checkout_line(event: &Event) -> String {
    match event {
        Event::ColdBuild { checkout, error } => format!(
            "mutants: checkout {checkout} builds cold: its build outputs could not be copied ({error})"
        ),
        Event::NotGreen {
            checkout,
            suite,
            status,
            log,
        } => format!(
            "mutants: checkout {checkout}: suite {suite:?} {} unmutated (log {}); that checkout judges no mutant",
            files::escape::text(status),
            files::escape::path(log)
        ),
        Event::Started { .. }
        | Event::Finished(_)
        | Event::SetupChanged { .. }
        | Event::Tick => String::new(),
    }
}

/// The live line while a canary runs: `canary: FILE unloadable under SUITE`.
pub(crate) fn canary_running(file: &str, suite: &str) -> String {
    format!(
        "canary: {} unloadable under {}",
        files::escape::text(file),
        files::escape::text(suite)
    )
}

/// A canary's line once it ran: `canary killed FILE (SUITE, exit 1)`.
pub(crate) fn canary_line(c: &Canary) -> String {
    format!(
        "{} {} ({}, {})",
        c.verdict,
        files::escape::text(&c.file),
        files::escape::text(&c.suite),
        files::escape::text(&c.status)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    fn row(name: &str, verdict: Verdict) -> Row {
        Row::sample(0, name, verdict)
    }

    #[test]
    fn a_finished_line_pads_before_painting_and_escapes_the_name() {
        let r = row("after\ninclusive", Verdict::Survived);
        let plain = finished_line(&r, 3, 12, Painter::plain());
        assert_eq!(plain, "[3/12] SURVIVED         after\\ninclusive");
        let painted = finished_line(&r, 3, 12, Painter::new(true));
        assert_ne!(painted, plain);
        assert_eq!(report::color::strip(&painted), plain);
    }

    #[test]
    fn the_live_status_names_the_longest_running_mutant() {
        let tally = Tally {
            killed: 2,
            killed_hang: 1,
            survived: 1,
            ..Tally::default()
        };
        let mut running = BTreeMap::new();
        assert_eq!(live_status(&tally, &running), "3 killed, 1 survived");
        let now = Instant::now();
        running.insert(4, ("later".to_string(), now));
        running.insert(
            2,
            ("first".to_string(), now - std::time::Duration::from_secs(5)),
        );
        let s = live_status(&tally, &running);
        assert!(s.starts_with("3 killed, 1 survived; running first"), "{s}");
        assert!(s.ends_with(" +1 more"), "{s}");
    }

    #[test]
    fn canary_and_later_checkout_lines_read_as_they_always_did_with_outside_text_escaped() {
        use crate::record::{Canary, CanaryVerdict};
        assert_eq!(
            canary_running("a\nb.sh", "unit"),
            "canary: a\\nb.sh unloadable under unit"
        );
        let c = Canary {
            file: "lib.sh".into(),
            suite: "unit".into(),
            verdict: CanaryVerdict::Killed,
            status: "exit 1".into(),
            start: report::Timestamp::now(),
            duration_secs: 0.5,
            log: "logs/canary.lib.sh.unit.log".into(),
        };
        assert_eq!(canary_line(&c), "canary killed lib.sh (unit, exit 1)");
        let cold = Event::ColdBuild {
            checkout: 2,
            error: "No space left on device".into(),
        };
        assert_eq!(
            checkout_line(&cold),
            "mutants: checkout 2 builds cold: its build outputs could not be copied (No space left on device)"
        );
        let red = Event::NotGreen {
            checkout: 1,
            suite: "unit".into(),
            status: "exit 1".into(),
            log: "/out/logs/baseline.unit.checkout1.log".into(),
        };
        assert_eq!(
            checkout_line(&red),
            "mutants: checkout 1: suite \"unit\" exit 1 unmutated (log /out/logs/baseline.unit.checkout1.log); that checkout judges no mutant"
        );
        assert_eq!(checkout_line(&Event::Tick), "");
    }
}
