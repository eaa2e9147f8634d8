//! The record of one run of a child command: what the [`runner`] saw of the process, with what
//! its log or its runner's own report says (the tests' [`counts`](crate::counts) and the
//! failures named, [`results`]), and the one rule every tool
//! judges a run by ([`RunRecord::outcome`]).
//!
//! The runner does not read logs: it returns a [`runner::Finished`], and [`RunRecord::read`]
//! (or [`run`], which does both) turns it into this record.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use runner::{Finished, Job, Outcome};
use serde::{Deserialize, Serialize};

use crate::counts::Counts;
use crate::results::{self, Source};
use crate::time::Timestamp;

/// How much of a log's end is read for its counts: summaries are at the end, logs can be huge.
const LOG_TAIL: u64 = 1 << 20;

/// Everything known about one finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunRecord {
    pub argv: Vec<String>,
    pub dir: PathBuf,
    pub start: Timestamp,
    pub end: Timestamp,
    /// Wall time, in seconds.
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// The exit code, when the child exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended the child (e.g. `SIGKILL`), when one did.
    pub signal: Option<String>,
    /// The timeout passed and the group was killed.
    pub hang: bool,
    /// The tool was interrupted while this ran.
    pub interrupted: bool,
    /// Processes still alive after the child ended (in its group, escaped from it, or
    /// descended from either) that the runner had to kill.
    pub strays_killed: u32,
    /// Why the child could not be started, if it could not.
    pub spawn_error: Option<String>,
    /// Pass/fail/skip counts read from the log's closing lines.
    pub counts: Option<Counts>,
    /// Tests the runner named as failed.
    pub failed_tests: Vec<String>,
    /// The line that says why the run failed: its first failed test's first error line
    /// (`TypeError: ...` for a crash, `AssertionError: ...` for an assertion; a chained error's
    /// innermost cause), or the log's first when no test is named. `None` for a run that passed.
    #[serde(default)]
    pub first_error: Option<String>,
    /// Why the run failed, a line each: the failed tests named with their first error lines (at
    /// most five, then how many more), or the log's first error lines.
    #[serde(default)]
    pub why: Vec<String>,
    /// The runner's own report the counts and names were read from (`reports/junit.xml`,
    /// `TAP`); `None` when they come from the log's closing lines.
    #[serde(default)]
    pub results_from: Option<String>,
    /// Why the report the suite names was not read (`reports/junit.xml was not written by this
    /// run: counts and names from the log`).
    #[serde(default)]
    pub results_missing: Option<String>,
    pub log: PathBuf,
}

/// Runs `job` to the end (see [`runner::run`]) and returns its record, its log read.
///
/// Errors only when the log cannot be created; a command that cannot start is a record with
/// `spawn_error` set, because for a judge that is an outcome ("could not start"), not a crash.
pub fn run(job: &Job) -> io::Result<RunRecord> {
    runner::run(job).map(RunRecord::read)
}

/// [`run`], with the counts and failed tests read from `source` (the log, the runner's JUnit
/// file relative to the job's folder, or TAP on its stdout).
pub fn run_reading(job: &Job, source: &Source) -> io::Result<RunRecord> {
    runner::run(job).map(|finished| RunRecord::read_from(finished, source))
}

impl RunRecord {
    /// The record of a finished run: what the runner saw, with the pass/fail counts and the
    /// failed tests read off the end of its log (none when the log cannot be read).
    pub fn read(finished: Finished) -> RunRecord {
        RunRecord::read_from(finished, &Source::Log)
    }

    /// [`RunRecord::read`], with the counts and failed tests read from `source`.
    pub fn read_from(finished: Finished, source: &Source) -> RunRecord {
        let text = runner::read_tail(&finished.log, LOG_TAIL).unwrap_or_default();
        let results = results::read(source, &text, &finished.dir, finished.start);
        let mut record = RunRecord {
            argv: finished.argv,
            dir: finished.dir,
            start: Timestamp::from(finished.start),
            end: Timestamp::from(finished.end),
            duration_secs: finished.duration_secs,
            exit_code: finished.exit_code,
            signal: finished.signal,
            hang: finished.hang,
            interrupted: finished.interrupted,
            strays_killed: finished.strays_killed,
            spawn_error: finished.spawn_error,
            counts: results.counts,
            failed_tests: results.names(),
            first_error: None,
            why: Vec::new(),
            results_from: results.from.clone(),
            results_missing: results.missing.clone(),
            log: finished.log,
        };
        if record.outcome() != Outcome::Passed {
            record.first_error = results.first_error();
            record.why = results.why();
        }
        record
    }

    /// A record of a command not run yet (or never, with `spawn_error` set by the caller), stamped
    /// now: the one place a record starts, so every field has its neutral value.
    pub fn not_yet_run(argv: Vec<String>, dir: PathBuf, log: PathBuf) -> RunRecord {
        let now = Timestamp::now();
        RunRecord {
            argv,
            dir,
            start: now,
            end: now,
            duration_secs: 0.0,
            exit_code: None,
            signal: None,
            hang: false,
            interrupted: false,
            strays_killed: 0,
            spawn_error: None,
            counts: None,
            failed_tests: Vec::new(),
            first_error: None,
            why: Vec::new(),
            results_from: None,
            results_missing: None,
            log,
        }
    }

    /// How the run ended, as every tool judges it. The one place the rule lives: how the
    /// process ended ([`Outcome::of_process`]), except that exit 0 is a pass only when the
    /// runner's own closing lines do not say tests failed. A suite whose runner reports
    /// failures while its command exits 0 (a `| tee` pipeline, a wrapper that swallows the
    /// code) has failed: the exit code was lost on the way, the failures were not.
    pub fn outcome(&self) -> Outcome {
        match Outcome::of_process(
            self.interrupted,
            self.hang,
            self.spawn_error.is_some(),
            self.exit_code,
        ) {
            Outcome::Passed if self.failures_despite_exit_0().is_some() => Outcome::Failed,
            outcome => outcome,
        }
    }

    /// How many tests the runner's closing lines say failed, when the command still exited 0:
    /// the counts and the exit disagree, and the run is not a pass (see [`RunRecord::outcome`]).
    pub fn failures_despite_exit_0(&self) -> Option<u64> {
        match (self.exit_code, self.counts) {
            (Some(0), Some(c)) if c.failed > 0 => Some(c.failed),
            _ => None,
        }
    }

    /// Why the run failed, as a summary shows it under the run's line: [`RunRecord::why`]
    /// (each failed test named with its first error line), then [`RunRecord::notes`].
    pub fn why_lines(&self, log: &str) -> Vec<String> {
        let mut lines = self.why.clone();
        lines.extend(self.notes(log));
        lines
    }

    /// What a reader of its failed tests must also know: how many failed tests are not named
    /// and where the log is (`log` as the summary names it), and a report the suite names that
    /// was not read.
    pub fn notes(&self, log: &str) -> Vec<String> {
        let mut lines = Vec::new();
        let failed = self.counts.map(|c| c.failed);
        if let Some(note) = results::unnamed_text(self.failed_tests.len() as u64, failed, log) {
            lines.push(note);
        }
        if let Some(missing) = &self.results_missing {
            lines.push(missing.clone());
        }
        lines
    }

    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_secs.max(0.0))
    }

    /// How it ended in a few words: `exit 0`, `exit 1`, `SIGSEGV`, `hang`, `not started`.
    pub fn status_text(&self) -> String {
        if self.hang {
            "hang".to_string()
        } else if self.interrupted {
            "interrupted".to_string()
        } else if let Some(e) = &self.spawn_error {
            format!("not started ({e})")
        } else if let Some(failed) = self.failures_despite_exit_0() {
            format!("exit 0 but {failed} failed: the counts and the exit disagree")
        } else if let Some(code) = self.exit_code {
            format!("exit {code}")
        } else if let Some(sig) = &self.signal {
            sig.clone()
        } else {
            "unknown".to_string()
        }
    }
}
