//! One mutant's result ([`Row`]), the suite runs it holds ([`SuiteRun`]), and a canary's
//! ([`Canary`]): what the engine emits as each one ends.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::strict::required;

use report::{Counts, Timestamp};

use crate::anchor::Span;
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
    /// Processes left behind that the runner had to kill.
    pub strays_killed: u32,
    /// The log, relative to the output folder.
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
}

impl SuiteRun {
    /// `196 pass -> 188 passed, 8 failed`: the baseline's passes, then every count the runner
    /// gave with the mutant (what passed beside what failed), or `unknown`.
    pub fn counts_text(&self) -> String {
        let after = match self.counts {
            Some(c) => c.to_string(),
            // No runner summary could be read: unknown, never a number that hides the suite.
            None => return "unknown".to_string(),
        };
        match self.baseline_counts {
            Some(b) => format!("{} pass -> {after}", b.passed),
            None => after,
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
    pub control: bool,
    pub anchor: String,
    pub replace: String,
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
    /// What of the working copy was not the tree under review when this mutant was about to
    /// start (left by a setup, a baseline or an earlier suite), and was put back first.
    #[serde(deserialize_with = "required")]
    pub restored_before: Option<String>,
    /// What this mutant's suite changed in the working copy besides the mutated file, put back
    /// (or, when it could not be, the copy made again) before the next mutant.
    #[serde(deserialize_with = "required")]
    pub restored_after: Option<String>,
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
            control: false,
            anchor: "a".into(),
            replace: "b".into(),
            verdict,
            matches: 1,
            span: None,
            run: None,
            also: Vec::new(),
            diff: None,
            rerun: None,
            restored_before: None,
            restored_after: None,
        }
    }
}
