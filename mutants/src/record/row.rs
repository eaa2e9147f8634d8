//! One mutant's result ([`Row`]), the suite runs it holds ([`SuiteRun`]), and a canary's
//! ([`Canary`]): what the engine emits as each one ends.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::selection::Selection;
use super::strict::required;

use std::path::PathBuf;

use report::first_failure::FirstFailure;
use report::{Counts, RunRecord, Timestamp};

use crate::anchor::Span;
use crate::spec::Expect;
use crate::verdict::Verdict;

/// One suite run with a mutant in place: the mutant's own suite or a comparison suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuiteRun {
    pub suite: String,
    /// The verdict as this suite alone would give it.
    pub verdict: Verdict,
    /// `exit 1`, `hang`, `SIGSEGV`, `not started (...)`.
    pub status: String,
    #[serde(deserialize_with = "required")]
    pub exit_code: Option<i32>,
    #[serde(deserialize_with = "required")]
    pub signal: Option<String>,
    /// The suite ran past its timeout and its process group was killed.
    pub hang: bool,
    /// Why the suite could not start (its `build` step failed or timed out, or the command
    /// could not be spawned); `None` when it started.
    #[serde(deserialize_with = "required")]
    pub not_started: Option<String>,
    /// Its `build` step failed or timed out, so the suite never ran (`not_started` says how):
    /// a generated mutant is then `unviable`, a hand-written one `error`.
    pub build_failed: bool,
    /// How the suite changed the mutated file itself (deleted or replaced it), which makes the
    /// run prove nothing whatever it exited with; `None` when it left the file alone.
    #[serde(deserialize_with = "required")]
    pub file_changed: Option<String>,
    pub start: Timestamp,
    pub end: Timestamp,
    /// The suite's run alone, in seconds (0 when its `build` step failed and it never ran).
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// The suite's `build` step, in seconds; `None` when the suite has none.
    #[schemars(range(min = 0.0))]
    #[serde(deserialize_with = "required")]
    pub build_secs: Option<f64>,
    #[schemars(range(min = 0.0))]
    pub timeout_secs: f64,
    /// The suite's counts on the unmutated baseline, and with the mutant.
    #[serde(deserialize_with = "required")]
    pub baseline_counts: Option<Counts>,
    #[serde(deserialize_with = "required")]
    pub counts: Option<Counts>,
    /// Tests the runner named as failed (Stryker's `killedBy`).
    pub failed_tests: Vec<String>,
    /// The first error line of its first failed test (`TypeError: ...` for a kill by a crash,
    /// `AssertionError: ...` for one by an assertion; a chained error's innermost cause), or
    /// the log's first when no test is named; `None` when the suite passed. Absent in reports
    /// written before it was recorded.
    #[serde(default)]
    pub first_error: Option<String>,
    /// Where the suite was stopped (`fail_fast`): its first failed test as the runner named
    /// it, that test's first error line when printed by then, and the seconds to the stop.
    /// Absent for a run that ran whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-optional" = true))]
    pub first_failure: Option<FirstFailure>,
    /// Which tests ran first, when the suite has a `select` template and the run a coverage
    /// map; `None` when the whole suite ran as it always did. Absent in reports written before
    /// it was recorded, and written only when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-optional" = true))]
    pub selection: Option<Selection>,
    /// Processes left behind that the runner had to kill.
    pub strays_killed: u32,
    /// The log, relative to the output folder.
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
    /// The suite's warm runner (its `watch`), when it reran this mutant first: a kill it saw is
    /// this run's verdict; otherwise the rest of this record is the cold run that judged it.
    /// `None` for a suite without one, a control, and reports written before it was recorded.
    #[schemars(extend("x-optional" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmRerun>,
}

/// A warm runner's rerun of one mutant (see `crate::watch`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WarmRerun {
    /// Which start of its checkout's warm runner reran it (1 for the first); `None` when no
    /// warm runner was live (its first run was not green, or it could not start).
    #[serde(deserialize_with = "required")]
    pub runner_start: Option<u32>,
    /// From the swap to the end of the rerun's report (or to the doubt), in seconds.
    #[schemars(range(min = 0.0))]
    pub secs: f64,
    pub outcome: WarmOutcome,
    /// Why the warm runner could not decide, so a cold run did; `None` when it decided.
    #[serde(deserialize_with = "required")]
    pub doubt: Option<String>,
}

/// What a warm rerun decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WarmOutcome {
    /// It ran after the swap and named a failed test: the mutant is killed, no cold run.
    Killed,
    /// It ran after the swap and passed: a cold run of the whole suite confirmed the survivor.
    Passed,
    /// It could not decide (no rerun seen in time, a report that does not read, the runner
    /// gone): the cold run judged, and the runner was restarted.
    Doubt,
}

impl SuiteRun {
    /// What this run cost its job slot, in seconds: the suite's run and its build step (and a
    /// warm rerun before a cold one, see [`crate::watch`], or the covering tests' run before
    /// the whole suite's, see [`crate::record::Selection`]).
    pub fn cost_secs(&self) -> f64 {
        let warm = match &self.warm {
            Some(w) if w.outcome != WarmOutcome::Killed => w.secs,
            _ => 0.0,
        };
        let covering = self
            .selection
            .as_ref()
            .and_then(|s| s.covering.as_ref())
            .map_or(0.0, |c| c.duration_secs);
        self.duration_secs + self.build_secs.unwrap_or(0.0) + warm + covering
    }

    /// The verdict this run's own record gives a mutant that expects `expect`: the one judge
    /// ([`Verdict::judge_record`]) on the record's facts (exit code, signal, hang, a start that
    /// failed, the counts), `error` when the suite changed the mutated file, and `unviable`
    /// when a `generated` mutant (not a control) failed its `build` step. The run writes every
    /// verdict through here, and `merge` holds a shard's verdicts to it.
    pub fn judged(&self, expect: Expect, generated: bool) -> Verdict {
        if self.file_changed.is_some() {
            return Verdict::Error;
        }
        // A rerun after this swap that named a failed test is a failed suite run; the warm
        // runner never judges anything else (see `crate::watch`).
        if self
            .warm
            .as_ref()
            .is_some_and(|w| w.outcome == WarmOutcome::Killed)
        {
            return Verdict::judge(expect, report::Outcome::Failed).unwrap_or(Verdict::Error);
        }
        // A failed build never started the suite, so it has a reason not to start and did not
        // exit 0: anything else is a record that contradicts itself, an `error`.
        let unbuilt = self.build_failed
            && self.not_started.is_some()
            && !(self.exit_code == Some(0) && self.signal.is_none());
        if generated && expect == Expect::Kill && unbuilt {
            return Verdict::Unviable;
        }
        let mut record = RunRecord::not_yet_run(Vec::new(), PathBuf::new(), PathBuf::new());
        record.run.ended = runner::Ended::from_fields(
            false,
            self.hang,
            self.first_failure.is_some(),
            self.not_started.clone(),
            runner::Status {
                exit_code: self.exit_code,
                signal: self.signal.clone(),
            },
        );
        record.counts = self.counts;
        let judged = Verdict::judge_record(expect, &record).unwrap_or(Verdict::Error);
        match &self.selection {
            Some(selection) => selection.verdict(judged),
            None => judged,
        }
    }

    /// The failed tests as every rendering shows them: the first `shown` names, how many more,
    /// how many the runner did not name and the log that holds them
    /// ([`report::results::names_text`]), then the first error line.
    pub fn failed_text(&self, shown: usize) -> String {
        let mut text = report::results::names_text(
            &self.failed_tests,
            self.counts.map(|c| c.failed),
            shown,
            &self.log,
        );
        if let Some(e) = &self.first_error {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str("first error: ");
            text.push_str(e);
        }
        text
    }

    /// `196 pass -> 188 passed, 8 failed`: the baseline's passes, then every count the runner
    /// gave with the mutant (what passed beside what failed), `stopped at its first failed
    /// test` for a run stopped before the runner could count, or `unknown`.
    pub fn counts_text(&self) -> String {
        let counts = match (self.counts, self.baseline_counts) {
            (Some(c), Some(b)) => format!("{} pass -> {c}", b.passed),
            (Some(c), None) => c.to_string(),
            // A run stopped at its first failure never printed the runner's summary: say
            // why there is none, beside the baseline's passes.
            (None, b) if self.first_failure.is_some() => {
                let before = b.map(|b| format!("{} pass -> ", b.passed));
                format!(
                    "{}stopped at its first failed test",
                    before.unwrap_or_default()
                )
            }
            // No runner summary could be read: unknown, never a number that hides the suite.
            (None, _) => "unknown".to_string(),
        };
        // Which tests ran first, where the row's every rendering shows its counts.
        match &self.selection {
            Some(s) => format!("{counts}; {}", s.text_of(self.hang)),
            None => counts,
        }
    }
}

/// The result of one mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Row {
    /// Position in the spec, from 0.
    pub index: usize,
    #[schemars(length(min = 1))]
    pub name: String,
    #[serde(deserialize_with = "required")]
    pub site: Option<String>,
    pub file: String,
    #[serde(deserialize_with = "required")]
    pub undoes: Option<String>,
    /// False while `undoes` still says `TODO:` (a proposal whose claim nobody named yet):
    /// every rendering then says "claim not named".
    pub claim_named: bool,
    /// The operator that generated the mutant (`mutants suggest`'s proposals); `None` for a
    /// hand-written one. A generated mutant whose build fails is `unviable`, not `error`.
    #[serde(deserialize_with = "required")]
    pub operator: Option<String>,
    /// What a front end shows beside a finding (`run --suggested`: the diff hunk the mutant
    /// came from); `None` for a mutant of a spec.
    #[serde(deserialize_with = "required")]
    pub context: Option<String>,
    pub control: bool,
    pub anchor: String,
    pub replace: String,
    /// What the mutant is (`spec::identity`): the sha256 of everything that decides its
    /// verdict. An in-place update or a merge keeps a row only while its mutant's identity
    /// is unchanged.
    #[schemars(length(min = 64, max = 64))]
    pub identity: String,
    /// Decided by the mutant's own suite alone.
    pub verdict: Verdict,
    /// How many times the anchor occurred.
    pub matches: usize,
    #[serde(deserialize_with = "required")]
    pub span: Option<Span>,
    /// The mutant's own suite; absent when skipped.
    #[serde(deserialize_with = "required")]
    pub run: Option<SuiteRun>,
    /// Comparison suites, for the table only.
    pub also: Vec<SuiteRun>,
    /// The swap as a small unified diff.
    #[serde(deserialize_with = "required")]
    pub diff: Option<String>,
    /// When the row was judged again by `--only`/`--from` into an existing report (the time is
    /// its run's start); `None` for a row of the run that made the report.
    #[serde(deserialize_with = "required")]
    pub rerun: Option<Timestamp>,
    /// Set when an `--incremental` run kept this row from the report it found: the tree the
    /// verdict was judged on and when. `None` for a row judged by the run that wrote the report.
    #[serde(deserialize_with = "required")]
    pub reused: Option<Reused>,
    /// What of the working copy was not the tree under review when this mutant was about to
    /// start (left by a setup, a baseline or an earlier suite), and was put back first.
    #[serde(deserialize_with = "required")]
    pub restored_before: Option<String>,
    /// What this mutant's suite changed in the working copy besides the mutated file, put back
    /// (or, when it could not be, the copy made again) before the next mutant.
    #[serde(deserialize_with = "required")]
    pub restored_after: Option<String>,
}

impl Row {
    /// The verdict as a reader sees it: `killed (first failure)` for a kill whose suite was
    /// stopped at its first failed test (the verdict is `killed` all the same), else the
    /// verdict's word.
    pub fn verdict_text(&self) -> String {
        let stopped = self.run.as_ref().is_some_and(|r| r.first_failure.is_some());
        match self.verdict {
            Verdict::Killed if stopped => "killed (first failure)".to_string(),
            v => v.to_string(),
        }
    }

    /// What the mutant expects of its suites: to be noticed, or (a control) not.
    pub fn expect(&self) -> Expect {
        if self.control {
            Expect::Survive
        } else {
            Expect::Kill
        }
    }

    /// Whether the mutant was generated (it names an operator): its failed build is `unviable`.
    pub fn generated(&self) -> bool {
        self.operator.is_some()
    }

    /// The row's verdict as its own records give it: `skipped (N matches)` when its anchor did
    /// not occur exactly once (no suite ran); `error` when any of its suites changed the
    /// mutated file (the checkout no longer held the tree under review); otherwise what the
    /// mutant's own suite's record judges ([`SuiteRun::judged`]).
    pub fn judged(&self) -> Verdict {
        match &self.run {
            None => Verdict::Skipped {
                matches: self.matches,
            },
            Some(_) if self.suite_runs().any(|s| s.file_changed.is_some()) => Verdict::Error,
            Some(run) => run.judged(self.expect(), self.generated()),
        }
    }

    /// The mutant's own suite run and its comparison runs, in order.
    pub fn suite_runs(&self) -> impl Iterator<Item = &SuiteRun> {
        self.run.iter().chain(self.also.iter())
    }
}

/// Where a reused row's verdict came from: the tree it was judged on, and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Reused {
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub tree: String,
    pub at: Timestamp,
}

/// A canary: one mutated file made unloadable, one suite run (see `run::canary`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Canary {
    pub file: String,
    pub suite: String,
    pub verdict: CanaryVerdict,
    /// `exit 1`, `hang`, `build failed (...)`.
    pub status: String,
    pub start: Timestamp,
    /// The suite's run and its build step, in seconds.
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
}

/// A mutated file no canary was written into, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CanaryLeftOut {
    pub file: String,
    /// `[canary] skip "dist/**"`.
    pub why: String,
}

/// What a canary proved: `canary killed` (the suite failed without the file: it reads the
/// working copy) or `CANARY SURVIVED` (it passed without it: the run stops, exit 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) enum CanaryVerdict {
    #[serde(rename = "canary killed")]
    Killed,
    #[serde(rename = "CANARY SURVIVED")]
    Survived,
}

impl std::fmt::Display for CanaryVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CanaryVerdict::Killed => "canary killed",
            CanaryVerdict::Survived => "CANARY SURVIVED",
        })
    }
}

#[cfg(test)]
impl Row {
    /// A row for unit tests: mutant `name` at `index`, with `verdict` and nothing else.
    pub(crate) fn sample(index: usize, name: &str, verdict: Verdict) -> Row {
        Row {
            index,
            name: name.into(),
            site: None,
            file: "f".into(),
            undoes: None,
            claim_named: true,
            operator: None,
            context: None,
            control: false,
            anchor: "a".into(),
            replace: "b".into(),
            identity: "0".repeat(64),
            verdict,
            matches: 1,
            span: None,
            run: None,
            also: Vec::new(),
            diff: None,
            rerun: None,
            reused: None,
            restored_before: None,
            restored_after: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample report's one row: `killed`, its suite `exit 1` with one test failed.
    fn sample() -> Row {
        let sample = include_str!("../../tests/data/shard-report.json");
        let report: crate::record::RunReport = serde_json::from_str(sample).unwrap();
        report.mutants[0].clone()
    }

    #[test]
    fn a_rows_verdict_is_the_one_its_own_records_give() {
        let row = sample();
        assert_eq!(row.judged(), Verdict::Killed);
        let judged = |edit: &dyn Fn(&mut Row)| {
            let mut r = sample();
            edit(&mut r);
            r.judged()
        };
        let passed = |r: &mut Row| {
            let run = r.run.as_mut().unwrap();
            run.exit_code = Some(0);
            run.counts = None;
        };
        assert_eq!(judged(&passed), Verdict::Survived);
        assert_eq!(
            judged(&|r| {
                passed(r);
                r.control = true;
            }),
            Verdict::ControlHeld
        );
        // Exit 0 with the runner's own counts saying a test failed: not a pass.
        assert_eq!(
            judged(&|r| r.run.as_mut().unwrap().exit_code = Some(0)),
            Verdict::Killed
        );
        assert_eq!(
            judged(&|r| r.run.as_mut().unwrap().not_started = Some("build failed".into())),
            Verdict::Error
        );
        // A failed build: `error` for a hand-written mutant and for a generated control,
        // `unviable` for a generated mutant; a record whose build "failed" with exit 0 and no
        // reason is a contradiction, an `error`.
        let unbuilt = |r: &mut Row| {
            let run = r.run.as_mut().unwrap();
            run.not_started = Some("build failed (exit 101)".into());
            run.build_failed = true;
            run.exit_code = Some(101);
        };
        assert_eq!(judged(&unbuilt), Verdict::Error);
        let generated = |r: &mut Row| {
            unbuilt(r);
            r.operator = Some("boundary".into());
        };
        assert_eq!(judged(&generated), Verdict::Unviable);
        assert_eq!(
            judged(&|r| {
                generated(r);
                r.control = true;
            }),
            Verdict::Error
        );
        assert_eq!(
            judged(&|r| {
                generated(r);
                r.run.as_mut().unwrap().exit_code = Some(0);
            }),
            Verdict::Error
        );
        assert_eq!(
            judged(&|r| {
                generated(r);
                r.run.as_mut().unwrap().not_started = None;
            }),
            Verdict::Killed
        );
        assert_eq!(
            judged(&|r| {
                passed(r);
                r.run.as_mut().unwrap().hang = true;
            }),
            Verdict::KilledHang
        );
        assert_eq!(
            judged(&|r| {
                let run = r.run.as_mut().unwrap();
                run.exit_code = None;
                run.signal = Some("SIGKILL".into());
            }),
            Verdict::Error
        );
        // A comparison suite that replaced the mutated file spoils the row, not only its run.
        assert_eq!(
            judged(&|r| {
                let mut also = r.run.clone().unwrap();
                also.file_changed = Some("the suite deleted the mutated file".into());
                r.also.push(also);
            }),
            Verdict::Error
        );
        assert_eq!(
            judged(&|r| {
                r.run = None;
                r.matches = 2;
            }),
            Verdict::Skipped { matches: 2 }
        );
    }

    #[test]
    fn a_runs_cost_holds_the_covering_run_before_the_whole_suite() {
        let mut run = sample().run.unwrap();
        run.warm = None;
        let alone = run.cost_secs();
        run.selection = Some(crate::record::Selection {
            items: "tests".into(),
            count: 1,
            tests: vec!["t.py::a".into()],
            every: false,
            covering: Some(crate::record::Covering {
                status: "exit 0".into(),
                duration_secs: 0.5,
                counts: None,
                log: "logs/001-a.select.log".into(),
            }),
            whole: true,
            unmutated: None,
            alone: None,
        });
        assert!((run.cost_secs() - alone - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_run_stopped_at_its_first_failure_says_so_where_its_counts_would_be() {
        let mut run = sample().run.unwrap();
        let baseline = run
            .baseline_counts
            .expect("the sample has baseline counts")
            .passed;
        run.counts = None;
        assert!(run.counts_text().starts_with("unknown"));
        run.first_failure = Some(FirstFailure {
            test: "tests/test_a.py::test_x".into(),
            error: None,
            secs: 0.5,
        });
        let text = run.counts_text();
        assert!(
            text.starts_with(&format!(
                "{baseline} pass -> stopped at its first failed test"
            )),
            "{text}"
        );
        run.baseline_counts = None;
        assert!(run
            .counts_text()
            .starts_with("stopped at its first failed test"));
    }
}
