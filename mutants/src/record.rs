//! What a run found, as values: one [`Row`] per mutant and the [`RunReport`] around them.
//!
//! This is the interface between the engine ([`crate::run`]) and everything that shows results
//! ([`crate::render`]: the files, the tables, the progress lines): the engine produces rows, the
//! renderers consume them. Values that reach a reader as words (a verdict, a manifest check)
//! are typed here and written as their words only when serialized or rendered. `mutants.json` is exactly this struct serialized, which is also what `merge`
//! reads back, so a field added here reaches every output and survives a merge.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use report::{Counts, Timestamp};

use crate::anchor::Span;
use crate::verdict::Verdict;

/// One suite run with a mutant in place: the mutant's own suite or a comparison suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SuiteRun {
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
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// The suite's `build` step, in seconds; `None` when the suite has none.
    #[schemars(range(min = 0.0))]
    pub build_secs: Option<f64>,
    #[schemars(range(min = 0.0))]
    pub timeout_secs: f64,
    /// The suite's counts on the unmutated baseline, and with the mutant.
    pub baseline_counts: Option<Counts>,
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

/// The result of one mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Row {
    /// Position in the spec, from 0.
    pub index: usize,
    #[schemars(length(min = 1))]
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
    /// What of the working copy was not the tree under review when this mutant was about to
    /// start (left by a setup, a baseline or an earlier suite), and was put back first.
    #[serde(default)]
    pub restored_before: Option<String>,
    /// What this mutant's suite changed in the working copy besides the mutated file, put back
    /// (or, when it could not be, the copy made again) before the next mutant.
    #[serde(default)]
    pub restored_after: Option<String>,
}

/// A canary: one mutated file made unloadable, one suite run (see `run::canary`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
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

/// The `[worktree]` setup of a run: the command, the linked paths, and the seconds it took in
/// each working copy (its time is reported apart from the suites').
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SetupFacts {
    /// Empty when the table only links.
    pub command: String,
    pub linked: Vec<String>,
    #[schemars(inner(range(min = 0.0)))]
    pub secs: Vec<f64>,
}

/// A suite run unmutated, before any mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Baseline {
    pub suite: String,
    pub status: String,
    pub passed: bool,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// The `build` step, in seconds; `None` when the suite has none.
    #[schemars(range(min = 0.0))]
    pub build_secs: Option<f64>,
    pub counts: Option<Counts>,
    pub strays_killed: u32,
    /// The timeout each mutant then gets under this suite, and where it came from.
    #[schemars(range(min = 0.0))]
    pub mutant_timeout_secs: f64,
    pub timeout_source: String,
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
}

/// The candidate a run worked on (`--candidate gate.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct CandidateFacts {
    pub config: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub base: String,
    /// `git write-tree` of the candidate's index: the content every mutant was run against.
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub tree: String,
    /// The patch and manifest files as read, hashed: two shards of one candidate agree on both.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub patch_sha256: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub manifest_sha256: String,
    pub manifest_before: ManifestCheck,
    /// Checked again after the last mutant: proof that every mutant was restored.
    pub manifest_after: Option<ManifestCheck>,
}

impl CandidateFacts {
    /// The check after the last mutant as the reports show it, `not checked` when it was not
    /// reached.
    pub fn manifest_after_text(&self) -> String {
        self.manifest_after
            .map_or_else(|| "not checked".to_string(), |c| c.to_string())
    }
}

/// A candidate's manifest checked in a working copy: its counts, written in the report as
/// `gate` words them (`12/12 OK`, or `10/12 OK, 1 FAILED, 1 MISSING`) and read back strictly
/// by manifests' own [`manifests::Summary`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(
    description = "The manifest checked in a working copy, as gate words it: `12/12 OK`, or what failed."
)]
pub(crate) struct ManifestCheck(pub manifests::Summary);

impl ManifestCheck {
    /// Whether every entry of a manifest that has entries is OK: proof the tree is the reviewed
    /// one (an empty manifest proves nothing).
    pub fn holds(self) -> bool {
        self.0.total > 0 && self.0.all_ok()
    }
}

impl std::fmt::Display for ManifestCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A deterministic share of a spec: the K-th of N, from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Shard {
    #[schemars(range(min = 1))]
    pub k: usize,
    #[schemars(range(min = 1))]
    pub n: usize,
}

/// Counts of each verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Tally {
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

impl Tally {
    /// Each kind of verdict with its count, in the order every report lists them (good news
    /// first), as (count, the tally's word, a verdict of that kind): a skip is counted as
    /// `skipped`, whatever its number of matches.
    pub fn counts(&self) -> [(usize, &'static str, Verdict); 7] {
        [
            (self.killed, "killed", Verdict::Killed),
            (self.killed_hang, "killed (hang)", Verdict::KilledHang),
            (self.control_held, "control held", Verdict::ControlHeld),
            (self.survived, "SURVIVED", Verdict::Survived),
            (
                self.control_killed,
                "CONTROL KILLED",
                Verdict::ControlKilled,
            ),
            (self.skipped, "skipped", Verdict::Skipped { matches: 0 }),
            (self.error, "error", Verdict::Error),
        ]
    }
}

impl std::fmt::Display for Tally {
    /// `12 mutants: 9 killed, 1 killed (hang), 1 control held, 1 SURVIVED`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .counts()
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, word, _)| format!("{n} {word}"))
            .collect();
        write!(f, "{} mutants: {}", self.total, parts.join(", "))
    }
}

/// The version of `mutants.json`'s layout, bumped when a field changes meaning or goes away
/// (docs/schema/mutants.schema.json describes it); `merge` refuses reports of another version.
pub(crate) const REPORT_VERSION: u32 = 1;

/// The whole run: `mutants.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    deny_unknown_fields,
    title = "mutants.json",
    description = "The report `mutants run` writes to OUT/mutants.json (and `mutants merge` writes for joined shards; both print it with --format json). `version` is bumped when a field changes meaning or goes away; `tool_version` is the version of the binary that wrote it. Rows are in spec order; `index` is the mutant's position in the spec, from 0."
)]
pub(crate) struct RunReport {
    /// [`REPORT_VERSION`]: what a consumer checks before reading the rest.
    #[schemars(extend("const" = 1))]
    pub version: u32,
    #[schemars(extend("const" = "mutants"))]
    pub tool: String,
    /// The version of the `mutants` binary that wrote the report.
    #[schemars(length(min = 1))]
    pub tool_version: String,
    pub spec: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub spec_sha256: String,
    /// The repository the run worked from, and the commit its worktrees started at.
    pub dir: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub commit: String,
    /// The git tree id of the content every mutant was judged against (HEAD with DIR's carried
    /// changes, or the candidate's tree): the one tree a merged report judges.
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub tree: String,
    /// What of DIR's uncommitted state was carried into the worktrees.
    pub carried: Option<String>,
    pub candidate: Option<CandidateFacts>,
    pub start: Timestamp,
    pub end: Timestamp,
    #[schemars(range(min = 1))]
    pub jobs: usize,
    pub shard: Option<Shard>,
    /// How many mutants this run set out to judge.
    pub planned: usize,
    /// The `[worktree]` table's setup as it ran in each working copy, before its baseline.
    #[serde(default)]
    pub setup: Option<SetupFacts>,
    /// What the run reused instead of building: build outputs restored from the cache into the
    /// first copy, and handed from it to the others; one line each.
    #[serde(default)]
    pub reused: Vec<String>,
    pub baseline: Vec<Baseline>,
    /// A suite failed or hung unmutated: no verdicts were given.
    pub baseline_failed: bool,
    /// The canaries run before the first mutant of each mutated file, in spec order.
    #[serde(default)]
    pub canaries: Vec<Canary>,
    /// `--no-canary`: no canary ran, so nothing proved the suites read the working copy.
    #[serde(default)]
    pub canaries_skipped: bool,
    pub interrupted: bool,
    /// Whether every planned mutant has its verdict from a run that reached its end (or the
    /// baseline failed, which judges none by design). A run writes its report incomplete from
    /// the start (`exit_code` 130, the code of a run cut short) and marks it complete only in
    /// its last write, so a run killed, interrupted or unable to write never leaves a report
    /// that claims it finished. A merged report is complete only when every shard is.
    #[serde(default)]
    pub complete: bool,
    /// The planned mutants with no verdict yet, in spec order: while the run goes, and after
    /// it when it was cut short (an `--only` rerun that judges them takes them off).
    #[serde(default)]
    pub unjudged: Vec<Unjudged>,
    pub mutants: Vec<Row>,
    pub tally: Tally,
    /// The run's exit code; 130 while the report is not complete (never 0 then).
    #[schemars(extend("enum" = [0, 1, 2, 4, 130]))]
    pub exit_code: u8,
}

/// A planned mutant that has no verdict: the run was cut short before it was judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Unjudged {
    /// Position in the spec, from 0.
    pub index: usize,
    #[schemars(length(min = 1))]
    pub name: String,
    pub file: String,
}

impl RunReport {
    /// Whether everything held: every planned mutant judged, every one killed or held, and the
    /// candidate's manifest still OK after the last one.
    pub fn held(&self) -> bool {
        !self.baseline_failed
            && !self.canary_survived()
            && !self.interrupted
            && self.unjudged.is_empty()
            && self.mutants.len() == self.planned
            && self.mutants.iter().all(|r| r.verdict.holds())
            && self
                .candidate
                .as_ref()
                .is_none_or(|c| c.manifest_after.is_some_and(ManifestCheck::holds))
    }

    /// Whether a canary passed: the suites do not read the working copy, nothing was judged.
    pub fn canary_survived(&self) -> bool {
        self.canaries
            .iter()
            .any(|c| c.verdict == CanaryVerdict::Survived)
    }

    /// The run's verdict in a word: interrupted, a red baseline, a canary survived, not
    /// complete (a run still going, or one killed or unable to finish its report), everything
    /// held, or not.
    pub fn verdict(&self) -> RunVerdict {
        if self.interrupted {
            RunVerdict::Interrupted
        } else if self.baseline_failed {
            RunVerdict::BaselineFailed
        } else if self.canary_survived() {
            RunVerdict::CanarySurvived
        } else if !self.complete {
            RunVerdict::Incomplete
        } else if self.held() {
            RunVerdict::Pass
        } else {
            RunVerdict::Fail
        }
    }

    /// Recomputes the tally and keeps rows in spec order; a mutant with a row is no longer
    /// unjudged.
    pub fn settle(&mut self) {
        self.mutants.sort_by_key(|r| r.index);
        let judged: std::collections::BTreeSet<usize> =
            self.mutants.iter().map(|r| r.index).collect();
        self.unjudged.retain(|u| !judged.contains(&u.index));
        self.unjudged.sort_by_key(|u| u.index);
        self.unjudged.dedup_by_key(|u| u.index);
        self.tally = Tally::of(&self.mutants);
    }

    /// Whether every planned mutant has a verdict (or a red baseline judged none by design):
    /// what a finished run needs to call its report complete.
    pub fn all_judged(&self) -> bool {
        // A red baseline and a surviving canary judge none by design: the run is over.
        self.baseline_failed
            || self.canary_survived()
            || (self.unjudged.is_empty() && self.mutants.len() >= self.planned)
    }

    /// `cut short after 2 of 5 mutants judged; not judged: a, b` for a report that is not
    /// complete (a red baseline, which judges none by design, is said otherwise); `None`
    /// when it is.
    pub fn cut_short_text(&self) -> Option<String> {
        if self.complete || self.baseline_failed || self.canary_survived() {
            return None;
        }
        let names: Vec<&str> = self.unjudged.iter().map(|u| u.name.as_str()).collect();
        Some(format!(
            "cut short after {} of {} mutants judged{}",
            self.mutants.len(),
            self.planned.max(self.mutants.len()),
            if names.is_empty() {
                String::new()
            } else {
                format!("; not judged: {}", names.join(", "))
            }
        ))
    }
}

/// The run's verdict, as the reports head it: `mutants PASS`, `FAIL`, `INTERRUPTED`,
/// `INCOMPLETE` or `BASELINE FAILED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunVerdict {
    Pass,
    Fail,
    Interrupted,
    /// Not every planned mutant has a verdict from a run that finished.
    Incomplete,
    BaselineFailed,
    CanarySurvived,
}

impl std::fmt::Display for RunVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunVerdict::Pass => "PASS",
            RunVerdict::Fail => "FAIL",
            RunVerdict::Interrupted => "INTERRUPTED",
            RunVerdict::Incomplete => "INCOMPLETE",
            RunVerdict::BaselineFailed => "BASELINE FAILED",
            RunVerdict::CanarySurvived => "CANARY SURVIVED",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ok: usize, total: usize, failed: usize, missing: usize) -> ManifestCheck {
        ManifestCheck(manifests::Summary {
            total,
            ok,
            failed,
            missing,
        })
    }

    #[test]
    fn manifest_checks_hold_only_when_whole_and_read_back_as_written() {
        assert!(check(12, 12, 0, 0).holds());
        assert!(!check(11, 12, 1, 0).holds());
        assert!(!check(0, 0, 0, 0).holds());
        for c in [
            check(12, 12, 0, 0),
            check(10, 12, 1, 1),
            check(11, 12, 0, 1),
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{c}\""));
            assert_eq!(serde_json::from_str::<ManifestCheck>(&json).unwrap(), c);
        }
        assert_eq!(
            serde_json::to_value(check(10, 12, 1, 1)).unwrap(),
            "10/12 OK, 1 FAILED, 1 MISSING"
        );
        for bad in [
            "",
            "12/12",
            "12/12 OK, 0 FAILED",
            "12/12 OK, 1 BROKEN",
            "a/b OK",
            "12/12 OK ",
        ] {
            let json = serde_json::Value::from(bad);
            assert!(
                serde_json::from_value::<ManifestCheck>(json).is_err(),
                "{bad:?}"
            );
        }
    }

    fn row(index: usize, verdict: Verdict) -> Row {
        Row::sample(index, &format!("m{index}"), verdict)
    }

    #[test]
    fn a_settled_report_is_in_spec_order_with_its_tally_recounted() {
        let sample = include_str!("../tests/data/shard-report.json");
        let mut report = crate::merge::shard::parse(sample.as_bytes()).unwrap();
        report.mutants = vec![
            row(2, Verdict::Survived),
            row(0, Verdict::Killed),
            row(1, Verdict::KilledHang),
        ];
        report.settle();
        let order: Vec<usize> = report.mutants.iter().map(|r| r.index).collect();
        assert_eq!(order, [0, 1, 2]);
        let t = &report.tally;
        assert_eq!((t.total, t.killed, t.killed_hang, t.survived), (3, 1, 1, 1));
        assert_eq!(
            t.to_string(),
            "3 mutants: 1 killed, 1 killed (hang), 1 SURVIVED"
        );
    }

    #[test]
    fn a_run_holds_only_when_every_planned_row_holds() {
        let sample = include_str!("../tests/data/shard-report.json");
        let mut report = crate::merge::shard::parse(sample.as_bytes()).unwrap();
        report.planned = 2;
        report.mutants = vec![row(0, Verdict::Killed), row(1, Verdict::ControlHeld)];
        report.candidate = None;
        assert!(report.held());
        assert_eq!(report.verdict(), RunVerdict::Pass);
        report.planned = 3;
        assert_eq!(report.verdict(), RunVerdict::Fail, "a row missing");
        report.planned = 2;
        report.mutants[1].verdict = Verdict::Error;
        assert_eq!(report.verdict(), RunVerdict::Fail);
        report.interrupted = true;
        assert_eq!(report.verdict(), RunVerdict::Interrupted);
        report.interrupted = false;
        report.baseline_failed = true;
        assert_eq!(report.verdict(), RunVerdict::BaselineFailed);
    }

    #[test]
    fn the_committed_schema_is_the_one_the_record_types_generate() {
        let schema = report::schema::generate::<RunReport>(
            "https://example.invalid/gatekit/schema/mutants.schema.json",
        );
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/schema/mutants.schema.json");
        if let Err(why) = report::schema::check_committed(&path, &schema) {
            panic!("{why}");
        }
    }
}
