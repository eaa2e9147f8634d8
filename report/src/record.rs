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

use runner::{Ended, Finished, Job, Outcome, Status};
use serde::{Deserialize, Serialize};

use crate::counts::Counts;
use crate::results::{self, Source};
use crate::time::Timestamp;

/// How much of a log's end is read for its counts: summaries are at the end, logs can be huge.
const LOG_TAIL: u64 = 1 << 20;

/// Everything known about one finished run: what the runner saw of the process (its own
/// [`Finished`], held as it came, with how the run ended as one [`runner::Ended`]), and what
/// its log or its runner's report says.
///
/// Written and read as the flat record every report has always held (the `RunRecord` of the
/// JSON Schemas: `exit_code`, `signal`, `hang`, `interrupted`, `spawn_error` side by side), so
/// no report changes; read back, those fields become one `Ended` again, by the precedence the
/// judge has always used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "RunRecordWire", from = "RunRecordWire")]
pub struct RunRecord {
    /// What the runner saw.
    pub run: Finished,
    /// Pass/fail/skip counts read from the log's closing lines.
    pub counts: Option<Counts>,
    /// Tests the runner named as failed.
    pub failed_tests: Vec<String>,
    /// The line that says why the run failed (see the wire record's field of the same name).
    pub first_error: Option<String>,
    /// Why the run failed, a line each.
    pub why: Vec<String>,
    /// The runner's own report the counts and names were read from.
    pub results_from: Option<String>,
    /// Why the report the suite names was not read.
    pub results_missing: Option<String>,
}

/// Everything known about one finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields, rename = "RunRecord")]
struct RunRecordWire {
    argv: Vec<String>,
    dir: PathBuf,
    start: Timestamp,
    end: Timestamp,
    /// Wall time, in seconds.
    #[schemars(range(min = 0.0))]
    duration_secs: f64,
    /// The exit code, when the child exited on its own.
    exit_code: Option<i32>,
    /// The signal that ended the child (e.g. `SIGKILL`), when one did.
    signal: Option<String>,
    /// The timeout passed and the group was killed.
    hang: bool,
    /// The tool was interrupted while this ran.
    interrupted: bool,
    /// Its observer stopped it (mutants' first failure: the suite had failed, the rest was not
    /// run); absent for every other run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(extend("x-optional" = true))]
    stopped: bool,
    /// Processes still alive after the child ended (in its group, escaped from it, or
    /// descended from either) that the runner had to kill.
    strays_killed: u32,
    /// Why the child could not be started, if it could not.
    spawn_error: Option<String>,
    /// Pass/fail/skip counts read from the log's closing lines.
    counts: Option<Counts>,
    /// Tests the runner named as failed.
    failed_tests: Vec<String>,
    /// The line that says why the run failed: its first failed test's first error line
    /// (`TypeError: ...` for a crash, `AssertionError: ...` for an assertion; a chained error's
    /// innermost cause), or the log's first when no test is named. `None` for a run that passed.
    #[serde(default)]
    first_error: Option<String>,
    /// Why the run failed, a line each: the failed tests named with their first error lines (at
    /// most five, then how many more), or the log's first error lines.
    #[serde(default)]
    why: Vec<String>,
    /// The runner's own report the counts and names were read from (`reports/junit.xml`,
    /// `TAP`); `None` when they come from the log's closing lines.
    #[serde(default)]
    results_from: Option<String>,
    /// Why the report the suite names was not read (`reports/junit.xml was not written by this
    /// run: counts and names from the log`).
    #[serde(default)]
    results_missing: Option<String>,
    log: PathBuf,
}

impl From<RunRecord> for RunRecordWire {
    fn from(r: RunRecord) -> RunRecordWire {
        let f = r.run;
        let status = f.ended.status().clone();
        RunRecordWire {
            argv: f.argv,
            dir: f.dir,
            start: Timestamp::from(f.start),
            end: Timestamp::from(f.end),
            duration_secs: f.duration_secs,
            exit_code: status.exit_code,
            signal: status.signal,
            hang: f.ended.is_hang(),
            interrupted: f.ended.is_interrupted(),
            stopped: f.ended.is_stopped(),
            strays_killed: f.strays_killed,
            spawn_error: f.ended.could_not_start().map(str::to_string),
            counts: r.counts,
            failed_tests: r.failed_tests,
            first_error: r.first_error,
            why: r.why,
            results_from: r.results_from,
            results_missing: r.results_missing,
            log: f.log,
        }
    }
}

impl From<RunRecordWire> for RunRecord {
    fn from(w: RunRecordWire) -> RunRecord {
        let status = Status {
            exit_code: w.exit_code,
            signal: w.signal,
        };
        RunRecord {
            run: Finished {
                argv: w.argv,
                dir: w.dir,
                start: w.start.into(),
                end: w.end.into(),
                duration_secs: w.duration_secs,
                ended: Ended::from_fields(w.interrupted, w.hang, w.stopped, w.spawn_error, status),
                strays_killed: w.strays_killed,
                log: w.log,
            },
            counts: w.counts,
            failed_tests: w.failed_tests,
            first_error: w.first_error,
            why: w.why,
            results_from: w.results_from,
            results_missing: w.results_missing,
        }
    }
}

impl schemars::JsonSchema for RunRecord {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        RunRecordWire::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        RunRecordWire::json_schema(generator)
    }
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
        // A run cut short (stopped at its first failure, a hang) never finished its JUnit
        // report: what a runner flushes as it is killed counts nothing. Its log says what it
        // got to.
        let cut = !matches!(finished.ended, Ended::Exited(_));
        let source = match source {
            Source::Junit(_) if cut => &Source::Log,
            other => other,
        };
        let mut results = results::read(source, &text, &finished.dir, finished.start);
        // A declared TAP stream that ended on its own must have kept its plan; one the run
        // cut (a hang, a stop at the first failure) or one longer than the tail read is not
        // judged by it.
        let whole = std::fs::metadata(&finished.log).is_ok_and(|m| m.len() < LOG_TAIL);
        if *source == Source::Tap && whole && !cut {
            results.hold_to_tap_plan(&text);
        }
        let mut record = RunRecord {
            counts: results.counts,
            failed_tests: results.names(),
            first_error: None,
            why: Vec::new(),
            results_from: results.from.clone(),
            results_missing: results.missing.clone(),
            run: finished,
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
        let now = std::time::SystemTime::now();
        RunRecord {
            run: Finished {
                argv,
                dir,
                start: now,
                end: now,
                duration_secs: 0.0,
                ended: Ended::Exited(Status::default()),
                strays_killed: 0,
                log,
            },
            counts: None,
            failed_tests: Vec::new(),
            first_error: None,
            why: Vec::new(),
            results_from: None,
            results_missing: None,
        }
    }

    /// How the run ended, as every tool judges it. The one place the rule lives: how the
    /// process ended ([`Ended::outcome`]), except that exit 0 is a pass only when the
    /// runner's own closing lines do not say tests failed. A suite whose runner reports
    /// failures while its command exits 0 (a `| tee` pipeline, a wrapper that swallows the
    /// code) has failed: the exit code was lost on the way, the failures were not.
    pub fn outcome(&self) -> Outcome {
        match self.run.ended.outcome() {
            Outcome::Passed if self.failures_despite_exit_0().is_some() => Outcome::Failed,
            outcome => outcome,
        }
    }

    /// How many tests the runner's closing lines say failed, when the command still exited 0:
    /// the counts and the exit disagree, and the run is not a pass (see [`RunRecord::outcome`]).
    pub fn failures_despite_exit_0(&self) -> Option<u64> {
        match (self.run.ended.exit_code(), self.counts) {
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

    /// When the run started, as reports write it (whole seconds, UTC).
    pub fn start(&self) -> Timestamp {
        Timestamp::from(self.run.start)
    }

    /// When the run ended, as reports write it.
    pub fn end(&self) -> Timestamp {
        Timestamp::from(self.run.end)
    }

    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.run.duration_secs.max(0.0))
    }

    /// How it ended in a few words: `exit 0`, `exit 1`, `SIGSEGV`, `hang`, `stopped` (at its first
    /// failed test), `not started`.
    pub fn status_text(&self) -> String {
        let ended = &self.run.ended;
        match ended {
            Ended::Hang(_) => "hang".to_string(),
            Ended::Interrupted(_) => "interrupted".to_string(),
            Ended::Stopped(_) => "stopped".to_string(),
            Ended::CouldNotStart { why, .. } => format!("not started ({why})"),
            Ended::Exited(status) => {
                if let Some(failed) = self.failures_despite_exit_0() {
                    format!("exit 0 but {failed} failed: the counts and the exit disagree")
                } else if let Some(code) = status.exit_code {
                    format!("exit {code}")
                } else if let Some(sig) = &status.signal {
                    sig.clone()
                } else {
                    "unknown".to_string()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ended: Ended) -> RunRecord {
        let mut r = RunRecord::not_yet_run(vec!["sh".into()], "wt".into(), "log".into());
        r.run.ended = ended;
        // Whole seconds, as reports write times.
        r.run.start = Timestamp::from(r.run.start).into();
        r.run.end = r.run.start;
        r
    }

    #[test]
    fn a_record_is_written_flat_and_read_back_whole_for_every_way_a_run_ends() {
        let status = |code, signal: Option<&str>| Status {
            exit_code: code,
            signal: signal.map(str::to_string),
        };
        for (ended, flat) in [
            (Ended::exited(1), (Some(1), None, false, false, None)),
            (
                Ended::Hang(status(None, Some("SIGKILL"))),
                (None, Some("SIGKILL"), true, false, None),
            ),
            (
                Ended::Interrupted(status(None, None)),
                (None, None, false, true, None),
            ),
            (
                Ended::CouldNotStart {
                    why: "build failed (exit 3)".into(),
                    status: status(Some(3), None),
                },
                (Some(3), None, false, false, Some("build failed (exit 3)")),
            ),
        ] {
            let r = record(ended);
            let json = serde_json::to_value(&r).unwrap();
            let (code, signal, hang, interrupted, why) = flat;
            assert_eq!(json["exit_code"], serde_json::json!(code), "{json}");
            assert_eq!(json["signal"], serde_json::json!(signal), "{json}");
            assert_eq!(json["hang"], hang, "{json}");
            assert_eq!(json["interrupted"], interrupted, "{json}");
            assert_eq!(json["spawn_error"], serde_json::json!(why), "{json}");
            assert!(
                json.get("run").is_none() && json.get("ended").is_none(),
                "{json}"
            );
            // Every ending but a stop is written as it always was, without the new field.
            assert!(json.get("stopped").is_none(), "{json}");
            let back: RunRecord = serde_json::from_value(json).unwrap();
            assert_eq!(back, r);
        }
        let stopped = record(Ended::Stopped(status(None, Some("SIGTERM"))));
        let json = serde_json::to_value(&stopped).unwrap();
        assert_eq!(json["stopped"], true, "{json}");
        assert_eq!(json["hang"], false, "{json}");
        let back: RunRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, stopped);
        assert_eq!(back.outcome(), Outcome::Failed);
    }
}
