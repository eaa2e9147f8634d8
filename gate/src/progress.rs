//! What `gate run` shows on stderr while its loops go: the suite loop (`run`) and the canary
//! loop (`canary`) emit [`Event`]s, and [`Lines`] turns each into its line.
//!
//! `report::progress` owns the line on screen (redrawn on a terminal, plain lines elsewhere);
//! this module only says what the lines read, so a loop never formats output and a change of
//! wording is made here once.

use cmdline::progress::Progress;

use crate::suite::SuiteResult;

/// Something a run loop did, as it happened.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// A suite is about to run (a live line while it does).
    SuiteStarted { name: &'a str },
    /// Suite `index` of `total` ended with `result`.
    SuiteFinished {
        index: usize,
        total: usize,
        name: &'a str,
        result: &'a SuiteResult,
    },
    /// `path` is unloadable and `suite` is about to run (a live line while it does).
    CanaryStarted { path: &'a str, suite: &'a str },
    /// The suite ran with `path` unloadable: it failed (`noticed`) or passed.
    CanaryFinished {
        path: &'a str,
        suite: &'a str,
        noticed: bool,
    },
}

/// The progress lines of one loop: each event rendered, on `report::progress`'s line.
pub(crate) struct Lines {
    bar: Progress,
}

impl Lines {
    /// Lines for `total` steps; `quiet` (`--json`) shows none.
    pub fn new(total: usize, quiet: bool) -> Lines {
        Lines {
            bar: Progress::new(total, quiet),
        }
    }

    /// Runs `work` under the live line of `started` (a step that starts).
    pub fn during<T>(&mut self, started: &Event, work: impl FnOnce() -> T) -> T {
        self.bar.during(&line(started), work)
    }

    /// Says `event` (a step that ended) on its own line.
    pub fn emit(&mut self, event: &Event) {
        self.bar.finished(&line(event));
    }

    /// Takes the live line off the screen.
    pub fn clear(&mut self) {
        self.bar.clear();
    }
}

/// The line an event reads as. Names and paths come from gate.toml and the manifest, so every
/// one is escaped before it is shown.
fn line(event: &Event) -> String {
    match event {
        Event::SuiteStarted { name } => format!("suite {} running", files::escape::text(name)),
        Event::SuiteFinished {
            index,
            total,
            name,
            result,
        } => format!(
            "[{}/{total}] {:<24} {:<12} {:>8}  {}",
            index + 1,
            files::escape::text(name),
            result.result_text(),
            report::duration::human(result.record.duration()),
            result.counts_text()
        ),
        Event::CanaryStarted { path, suite } => canary(path, suite),
        Event::CanaryFinished {
            path,
            suite,
            noticed,
        } => format!(
            "{}: {}",
            canary(path, suite),
            if *noticed { "noticed" } else { "NOT NOTICED" }
        ),
    }
}

/// `canary: PATH unloadable, suite NAME`.
fn canary(path: &str, suite: &str) -> String {
    format!(
        "canary: {} unloadable, suite {}",
        files::escape::text(path),
        files::escape::text(suite)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::suite;

    #[test]
    fn each_event_reads_as_the_line_gate_has_always_printed_with_outside_text_escaped() {
        assert_eq!(
            line(&Event::SuiteStarted { name: "a\nb" }),
            "suite a\\nb running"
        );
        let failed = suite("unit", 1);
        assert_eq!(
            line(&Event::SuiteFinished {
                index: 0,
                total: 2,
                name: "unit",
                result: &failed,
            }),
            "[1/2] unit                     exit 1          0.00s  unknown"
        );
        let started = Event::CanaryStarted {
            path: "src/a\rb.py",
            suite: "unit",
        };
        assert_eq!(
            line(&started),
            "canary: src/a\\rb.py unloadable, suite unit"
        );
        for (noticed, word) in [(true, "noticed"), (false, "NOT NOTICED")] {
            let finished = Event::CanaryFinished {
                path: "lib.sh",
                suite: "unit",
                noticed,
            };
            assert_eq!(
                line(&finished),
                format!("canary: lib.sh unloadable, suite unit: {word}")
            );
        }
    }
}
