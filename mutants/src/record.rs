//! What a run found, as values: one [`Row`] per mutant and the [`RunReport`] around them.
//!
//! This is the interface between the engine ([`crate::run`]) and everything that shows results
//! ([`crate::output`], [`crate::html`], progress lines): the engine produces rows, the renderers
//! consume them. `mutants.json` is exactly this struct serialized, which is also what `merge`
//! reads back, so a field added here reaches every output and survives a merge.

use serde::{Deserialize, Serialize};

use report::{Counts, Timestamp};

use crate::anchor::Span;
use crate::verdict::Verdict;

/// One suite run with a mutant in place: the mutant's own suite or a comparison suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteRun {
    pub suite: String,
    /// The verdict as this suite alone would give it.
    pub verdict: Verdict,
    /// `exit 1`, `hang`, `SIGSEGV`, `not started (...)`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub start: Timestamp,
    pub end: Timestamp,
    /// The suite's run alone, in seconds (0 when its `build` step failed and it never ran).
    pub duration_secs: f64,
    /// The suite's `build` step, in seconds; `None` when the suite has none.
    pub build_secs: Option<f64>,
    pub timeout_secs: f64,
    /// The suite's counts on the unmutated baseline, and with the mutant.
    pub baseline_counts: Option<Counts>,
    pub counts: Option<Counts>,
    /// Tests the runner named as failed (Stryker's `killedBy`).
    pub failed_tests: Vec<String>,
    /// Processes left behind that the runner had to kill.
    pub strays_killed: u32,
    /// The log, relative to the output folder.
    pub log: String,
}

impl SuiteRun {
    /// `196 pass -> 8 failed`, or empty when the runner printed no counts.
    pub fn counts_text(&self) -> String {
        let after = match self.counts {
            Some(c) if c.failed > 0 => format!("{} failed", c.failed),
            Some(c) => format!("{} pass", c.passed),
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Position in the spec, from 0.
    pub index: usize,
    pub name: String,
    pub site: Option<String>,
    pub file: String,
    pub undoes: Option<String>,
    pub control: bool,
    pub anchor: String,
    pub replace: String,
    /// Decided by the mutant's own suite alone.
    pub verdict: Verdict,
    /// How many times the anchor occurred.
    pub matches: usize,
    pub span: Option<Span>,
    /// The mutant's own suite; absent when skipped.
    pub run: Option<SuiteRun>,
    /// Comparison suites, for the table only.
    pub also: Vec<SuiteRun>,
    /// The swap as a small unified diff.
    pub diff: Option<String>,
    /// When the row was judged again by `--only`/`--from` into an existing report (the time is
    /// its run's start); `None` for a row of the run that made the report.
    #[serde(default)]
    pub rerun: Option<Timestamp>,
}

/// The `[worktree]` setup of a run: the command, the linked paths, and the seconds it took in
/// each working copy (its time is reported apart from the suites').
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetupFacts {
    /// Empty when the table only links.
    pub command: String,
    pub linked: Vec<String>,
    pub secs: Vec<f64>,
}

/// A suite run unmutated, before any mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub suite: String,
    pub status: String,
    pub passed: bool,
    pub duration_secs: f64,
    /// The `build` step, in seconds; `None` when the suite has none.
    pub build_secs: Option<f64>,
    pub counts: Option<Counts>,
    pub strays_killed: u32,
    /// The timeout each mutant then gets under this suite, and where it came from.
    pub mutant_timeout_secs: f64,
    pub timeout_source: String,
    pub log: String,
}

/// The candidate a run worked on (`--candidate gate.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateFacts {
    pub config: String,
    pub base: String,
    /// `git write-tree` of the candidate's index: the content every mutant was run against.
    pub tree: String,
    /// The patch and manifest files as read, hashed: two shards of one candidate agree on both.
    pub patch_sha256: String,
    pub manifest_sha256: String,
    pub manifest_before: String,
    /// Checked again after the last mutant: proof that every mutant was restored.
    pub manifest_after: Option<String>,
}

/// A deterministic share of a spec: the K-th of N, from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

/// Counts of each verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub total: usize,
    pub killed: usize,
    pub killed_hang: usize,
    pub survived: usize,
    pub skipped: usize,
    pub control_held: usize,
    pub control_killed: usize,
    pub error: usize,
}

impl Tally {
    pub fn of(rows: &[Row]) -> Tally {
        let mut t = Tally {
            total: rows.len(),
            ..Tally::default()
        };
        for r in rows {
            match r.verdict {
                Verdict::Killed => t.killed += 1,
                Verdict::KilledHang => t.killed_hang += 1,
                Verdict::Survived => t.survived += 1,
                Verdict::Skipped { .. } => t.skipped += 1,
                Verdict::ControlHeld => t.control_held += 1,
                Verdict::ControlKilled => t.control_killed += 1,
                Verdict::Error => t.error += 1,
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    /// `12 mutants: 9 killed, 1 killed (hang), 1 control held, 1 SURVIVED`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = [
            (self.killed, "killed"),
            (self.killed_hang, "killed (hang)"),
            (self.control_held, "control held"),
            (self.survived, "SURVIVED"),
            (self.control_killed, "CONTROL KILLED"),
            (self.skipped, "skipped"),
            (self.error, "error"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
        write!(f, "{} mutants: {}", self.total, parts.join(", "))
    }
}

/// The version of `mutants.json`'s layout, bumped when a field changes meaning or goes away
/// (docs/schema/mutants.schema.json describes it); `merge` refuses reports of another version.
pub const REPORT_VERSION: u32 = 1;

/// The whole run: `mutants.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// [`REPORT_VERSION`]: what a consumer checks before reading the rest.
    pub version: u32,
    pub tool: String,
    /// The version of the `mutants` binary that wrote the report.
    pub tool_version: String,
    pub spec: String,
    pub spec_sha256: String,
    /// The repository the run worked from, and the commit its worktrees started at.
    pub dir: String,
    pub commit: String,
    /// The git tree id of the content every mutant was judged against (HEAD with DIR's carried
    /// changes, or the candidate's tree): the one tree a merged report judges.
    pub tree: String,
    /// What of DIR's uncommitted state was carried into the worktrees.
    pub carried: Option<String>,
    pub candidate: Option<CandidateFacts>,
    pub start: Timestamp,
    pub end: Timestamp,
    pub jobs: usize,
    pub shard: Option<Shard>,
    /// How many mutants this run set out to judge.
    pub planned: usize,
    /// The `[worktree]` table's setup as it ran in each working copy, before its baseline.
    #[serde(default)]
    pub setup: Option<SetupFacts>,
    pub baseline: Vec<Baseline>,
    /// A suite failed or hung unmutated: no verdicts were given.
    pub baseline_failed: bool,
    pub interrupted: bool,
    pub mutants: Vec<Row>,
    pub tally: Tally,
    pub exit_code: u8,
}

impl RunReport {
    /// Whether everything held: every planned mutant judged, every one killed or held, and the
    /// candidate's manifest still OK after the last one.
    pub fn held(&self) -> bool {
        !self.baseline_failed
            && !self.interrupted
            && self.mutants.len() == self.planned
            && self.mutants.iter().all(|r| r.verdict.holds())
            && self.candidate.as_ref().map_or(true, |c| {
                c.manifest_after.as_deref().is_some_and(ok_summary)
            })
    }

    /// Recomputes the tally and keeps rows in spec order.
    pub fn settle(&mut self) {
        self.mutants.sort_by_key(|r| r.index);
        self.tally = Tally::of(&self.mutants);
    }
}

/// Whether a manifest summary (`12/12 OK`) says every entry is OK.
pub fn ok_summary(s: &str) -> bool {
    s.split_once(" OK")
        .map(|(frac, rest)| {
            rest.is_empty()
                && frac
                    .split_once('/')
                    .is_some_and(|(a, b)| a == b && a != "0")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_summaries_read_ok_only_when_whole() {
        assert!(ok_summary("12/12 OK"));
        assert!(!ok_summary("11/12 OK, 1 FAILED"));
        assert!(!ok_summary("0/0 OK"));
    }
}
