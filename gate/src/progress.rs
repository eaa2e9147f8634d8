//! What `gate run` says on stderr while it goes, and its words: the run (the suite loop, the
//! canary loop, the setup, the cache, the report's writes, the attestation) emits [`Event`]s to
//! the one [`cmdline::Reporter`], and [`Words`], gate's renderer, says what each reads as.
//!
//! The reporter owns the screen (the live line on a terminal, plain lines elsewhere, notes
//! above the live line); this module only says what the lines read, so the run never formats
//! or prints output and a change of wording is made here once.

use cmdline::{Render, Reporter, Shown};

use crate::suite::SuiteResult;

/// The one writer of `gate run`'s output, with gate's words.
pub(crate) type Shows = Reporter<Words>;

/// Something the run did, as it happened.
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
    /// A suite failed in the checkout, which lacks what git ignores in the user's tree: these
    /// paths (`candidate::ignored`), the first suspect.
    IgnoredMissing { paths: &'a [String] },
    /// The `[worktree]` setup passed in `secs`, its log at `log` below `--out`.
    SetupPassed { secs: f64, log: &'a str },
    /// A precondition failed (the setup, a link), said whole: its first line, then the log's
    /// tail (escaped when it was made).
    PreconditionFailed { why: &'a str },
    /// A `[worktree] link` folder of the user's changed while the run went (from
    /// `candidate::linked`).
    LinkedChanged { what: &'a str },
    /// The build cache was restored: what, from where, how much.
    CacheRestored { said: &'a str },
    /// The build cache could not be used (`why`): the build starts cold.
    CacheDiscarded { why: &'a str },
    /// The build cache could not be saved after the suites.
    CacheNotSaved { error: &'a std::io::Error },
    /// A write of the report while the run went failed (said once; the last write decides).
    ReportNotWritten { error: &'a anyhow::Error },
    /// The attestation was written, as `attest::written_text` says.
    Attested { text: &'a str },
    /// A file the finished run owed (the report, the attestation) could not be written; the
    /// verdict stands, and the report on stdout is complete unless `stdout_closed`.
    OwedNotWritten {
        error: &'a anyhow::Error,
        verdict: crate::record::Verdict,
        stdout_closed: bool,
    },
    /// Rewriting `path` with the code the run ended with failed.
    RewriteFailed {
        path: &'a std::path::Path,
        error: &'a std::io::Error,
    },
}

/// gate's renderer: the words of every line `gate run` says while it goes.
#[derive(Debug, Default)]
pub(crate) struct Words;

impl Render<Event<'_>> for Words {
    fn render(&self, event: &Event) -> Shown {
        match event {
            Event::SuiteStarted { .. } | Event::CanaryStarted { .. } => Shown::Status(line(event)),
            Event::SuiteFinished { .. } | Event::CanaryFinished { .. } => Shown::Step(line(event)),
            _ => Shown::Note(line(event)),
        }
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
        Event::SetupPassed { secs, log } => {
            format!("gate: worktree setup passed in {secs:.1}s ({log})")
        }
        Event::IgnoredMissing { paths } => {
            format!("gate: {}", candidate::ignored::describe(paths))
        }
        Event::PreconditionFailed { why } => format!("gate: {why}"),
        Event::LinkedChanged { what } => format!("gate: {what}"),
        Event::CacheRestored { said } => format!("gate: cache: {}", files::escape::text(said)),
        Event::CacheDiscarded { why } => format!("gate: cache: discarded ({why}); building cold"),
        Event::CacheNotSaved { error } => format!("gate: cache: not saved ({error})"),
        Event::ReportNotWritten { error } => format!(
            "gate: warning: {} (the run goes on; its last write decides)",
            cmdline::exit::one_line(error.as_ref())
        ),
        Event::Attested { text } => format!("gate: {}", files::escape::text(text)),
        Event::OwedNotWritten {
            error,
            verdict,
            stdout_closed,
        } => format!(
            "gate: error: {} (the verdict {verdict} stands{})",
            cmdline::exit::one_line(error.as_ref()),
            if *stdout_closed {
                ""
            } else {
                "; the report on stdout is complete"
            }
        ),
        Event::RewriteFailed { path, error } => {
            format!("gate: error: writing {}: {error}", path.display())
        }
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
            Words.render(&Event::SuiteStarted { name: "a\nb" }),
            Shown::Status("suite a\\nb running".into())
        );
        let failed = suite("unit", 1);
        assert_eq!(
            Words.render(&Event::SuiteFinished {
                index: 0,
                total: 2,
                name: "unit",
                result: &failed,
            }),
            Shown::Step("[1/2] unit                     exit 1          0.00s  unknown".into())
        );
        let started = Event::CanaryStarted {
            path: "src/a\rb.py",
            suite: "unit",
        };
        assert_eq!(
            Words.render(&started),
            Shown::Status("canary: src/a\\rb.py unloadable, suite unit".into())
        );
        for (noticed, word) in [(true, "noticed"), (false, "NOT NOTICED")] {
            let finished = Event::CanaryFinished {
                path: "lib.sh",
                suite: "unit",
                noticed,
            };
            assert_eq!(
                Words.render(&finished),
                Shown::Step(format!("canary: lib.sh unloadable, suite unit: {word}"))
            );
        }
    }

    #[test]
    fn each_note_reads_as_the_line_gate_has_always_printed() {
        let note = |e: Event| match Words.render(&e) {
            Shown::Note(text) => text,
            other => panic!("{e:?} is not a note: {other:?}"),
        };
        assert_eq!(
            note(Event::SetupPassed {
                secs: 1.26,
                log: "logs/00-setup.log"
            }),
            "gate: worktree setup passed in 1.3s (logs/00-setup.log)"
        );
        assert_eq!(
            note(Event::PreconditionFailed {
                why: "worktree.setup failed (exit 1) in 0.1s; the last lines of x:\n  | boom"
            }),
            "gate: worktree.setup failed (exit 1) in 0.1s; the last lines of x:\n  | boom"
        );
        assert_eq!(
            note(Event::CacheRestored {
                said: "target\u{1b}[2J restored"
            }),
            "gate: cache: target\\u{1b}[2J restored"
        );
        assert_eq!(
            note(Event::CacheDiscarded { why: "corrupt" }),
            "gate: cache: discarded (corrupt); building cold"
        );
        let full = anyhow::Error::new(std::io::Error::other("No space left on device"))
            .context("writing out/gate.json");
        assert_eq!(
            note(Event::ReportNotWritten { error: &full }),
            "gate: warning: writing out/gate.json: No space left on device (the run goes on; \
             its last write decides)"
        );
        for (closed, tail) in [(false, "; the report on stdout is complete"), (true, "")] {
            assert_eq!(
                note(Event::OwedNotWritten {
                    error: &full,
                    verdict: crate::record::Verdict::Pass,
                    stdout_closed: closed,
                }),
                format!(
                    "gate: error: writing out/gate.json: No space left on device (the verdict \
                     PASS stands{tail})"
                )
            );
        }
        assert_eq!(
            note(Event::RewriteFailed {
                path: std::path::Path::new("out/gate.json"),
                error: &std::io::Error::other("disk full")
            }),
            "gate: error: writing out/gate.json: disk full"
        );
        assert_eq!(
            note(Event::LinkedChanged {
                what: "node_modules changed"
            }),
            "gate: node_modules changed"
        );
        assert_eq!(
            note(Event::Attested {
                text: "attestation\nwritten"
            }),
            "gate: attestation\\nwritten"
        );
    }
}
