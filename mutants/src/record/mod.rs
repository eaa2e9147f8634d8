//! What a run found, as values: one [`Row`] per mutant and the [`RunReport`] around them.
//!
//! This is the interface between the engine (`run`) and everything that shows results
//! (`render`: the files, the tables, the progress lines): the engine produces rows, the
//! renderers consume them. Values that reach a reader as words (a verdict, a manifest check)
//! are typed here and written as their words only when serialized or rendered.
//! `mutants.json` is exactly this struct serialized, which is also what `merge` and an
//! `--only` rerun read back, strictly: every field present (see `strict`), none unknown
//! (`deny_unknown_fields`), so a field added here reaches every output and survives a merge.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use strict::required;

use report::Timestamp;

mod facts;
mod row;
mod selection;
mod strict;
mod tally;

pub(crate) use facts::{Baseline, CandidateFacts, Floor, ManifestCheck, SetupFacts, Shard};
pub(crate) use row::{
    Canary, CanaryLeftOut, CanaryVerdict, Reused, Row, SuiteRun, WarmOutcome, WarmRerun,
};
pub(crate) use selection::{Alone, Covering, Selection, NAMED};
pub(crate) use tally::Tally;

/// The version of `mutants.json`'s layout, bumped when a field changes meaning or goes away
/// (docs/schema/mutants.schema.json describes it); `merge` and an `--only` rerun refuse reports
/// of another version. 2: each suite run records `hang`, `not_started` and `file_changed`, which
/// merge judges its verdict by. 3: a row names its `operator` (a generated mutant, `unviable`
/// when its build fails: each suite run records `build_failed`), `claim_named` and `context`.
pub(crate) const REPORT_VERSION: u32 = 4;

/// The whole run: `mutants.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "mutants.json",
    description = "The report `mutants run` writes to OUT/mutants.json (and `mutants merge` writes for joined shards; both print it with --format json). `version` is bumped when a field changes meaning or goes away; `tool_version` is the version of the binary that wrote it. Rows are in spec order; `index` is the mutant's position in the spec, from 0."
)]
pub(crate) struct RunReport {
    /// [`REPORT_VERSION`]: what a consumer checks before reading the rest.
    #[schemars(extend("const" = REPORT_VERSION))]
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
    /// `tree` with the spec file left out when the spec lives in it (else `tree` itself): the
    /// code the mutants judge. `--only`/`--from` keep a report's rows while this is unchanged,
    /// so editing one mutant in a committed mutants.toml does not make the others another
    /// tree's verdicts.
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub code_tree: String,
    /// For each suite that declares `inputs`, the sha256 of its globs and of every file of the
    /// tree they match (path and blob id): `--incremental` keeps a verdict while it and the
    /// mutated file's blob are unchanged, whatever else changed.
    pub inputs: std::collections::BTreeMap<String, String>,
    /// The blob id of each mutated file in the tree under review.
    pub file_blobs: std::collections::BTreeMap<String, String>,
    /// The blob id of each lockfile in the tree under review, by path: `--incremental` judges
    /// again every mutant a changed lockfile concerns (one in a folder its mutated file or its
    /// suites' `inputs` are in), whatever its suites declare. Absent in a report written
    /// before it was recorded: then every row whose code changed is judged again.
    #[serde(default)]
    pub lockfiles: std::collections::BTreeMap<String, String>,
    /// The version of each toolchain the suites run on (`node`, `python3`, `pytest`, `rustc`,
    /// `cargo`, `go`...: those their commands name or a manifest in the tree names), as it
    /// answered in the checkout before the baseline: `--incremental` judges again every mutant
    /// whose toolchain answers otherwise. Absent in a report written before it was recorded:
    /// then every such row is judged again.
    #[serde(default)]
    pub toolchains: std::collections::BTreeMap<String, String>,
    /// What of DIR's uncommitted state was carried into the worktrees.
    #[serde(deserialize_with = "required")]
    pub carried: Option<String>,
    #[serde(deserialize_with = "required")]
    pub candidate: Option<CandidateFacts>,
    pub start: Timestamp,
    pub end: Timestamp,
    #[schemars(range(min = 1))]
    pub jobs: usize,
    #[serde(deserialize_with = "required")]
    pub shard: Option<Shard>,
    /// How many mutants this run set out to judge.
    pub planned: usize,
    /// The `[worktree]` table's setup as it ran in each working copy, before its baseline.
    #[serde(deserialize_with = "required")]
    pub setup: Option<SetupFacts>,
    /// What the run reused instead of building: build outputs restored from the cache into the
    /// first copy, and handed from it to the others; one line each.
    pub reused: Vec<String>,
    pub baseline: Vec<Baseline>,
    /// A suite failed or hung unmutated: no verdicts were given.
    pub baseline_failed: bool,
    /// A precondition that failed before any baseline (the `[worktree]` setup, a link it
    /// names), in a line: no mutant was judged, exit 4. `null` when none did.
    #[serde(default)]
    pub precondition: Option<String>,
    /// The canaries run before the first mutant of each mutated file, in spec order.
    pub canaries: Vec<Canary>,
    /// `--no-canary`: no canary ran, so nothing proved the suites read the working copy.
    pub canaries_skipped: bool,
    /// Mutated files no canary was written into, each with the `[canary] skip` glob that left
    /// it out.
    #[serde(default)]
    pub canaries_left_out: Vec<CanaryLeftOut>,
    /// A `[worktree] link` folder of the user's checkout that changed while the run went (see
    /// `candidate::linked`): one line each; the run's precondition failed (exit 4).
    #[serde(default)]
    pub linked_changed: Vec<String>,
    pub interrupted: bool,
    /// Whether every planned mutant has its verdict from a run that reached its end (or the
    /// baseline failed, which judges none by design). A run writes its report incomplete from
    /// the start (`exit_code` 130, the code of a run cut short) and marks it complete only in
    /// its last write, so a run killed, interrupted or unable to write never leaves a report
    /// that claims it finished. A merged report is complete only when every shard is.
    pub complete: bool,
    /// The planned mutants with no verdict yet, in spec order: while the run goes, and after
    /// it when it was cut short (an `--only` rerun that judges them takes them off).
    pub unjudged: Vec<Unjudged>,
    pub mutants: Vec<Row>,
    pub tally: Tally,
    /// The run's exit code; 130 while the report is not complete (never 0 then): a run that
    /// stops on an error after it began writes the code it ends with, 74 for an I/O failure or
    /// 70 for gatekit's own bug, when the report can still be written.
    #[schemars(extend("enum" = [0, 1, 2, 4, 70, 74, 130]))]
    pub exit_code: u8,
}

/// A planned mutant that has no verdict: the run was cut short before it was judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
            && self.precondition.is_none()
            && !self.canary_survived()
            && self.linked_changed.is_empty()
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
        } else if self.precondition.is_some() {
            RunVerdict::SetupFailed
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
        self.measure_against_floors();
    }

    /// Each floor's `per_mutant_secs` and `multiple`, from the rows judged in this run.
    fn measure_against_floors(&mut self) {
        for b in &mut self.baseline {
            let Some(floor) = b.floor.as_mut() else {
                continue;
            };
            let costs: Vec<f64> = self
                .mutants
                .iter()
                .filter(|r| r.reused.is_none())
                .flat_map(|r| r.suite_runs())
                .filter(|s| s.suite == b.suite)
                .map(SuiteRun::cost_secs)
                .collect();
            floor.per_mutant_secs =
                (!costs.is_empty()).then(|| costs.iter().sum::<f64>() / costs.len() as f64);
            floor.multiple = match (floor.per_mutant_secs, floor.secs) {
                (Some(each), Some(least)) if least > 0.0 => Some(each / least),
                _ => None,
            };
        }
    }

    /// Whether every planned mutant has a verdict (or a red baseline judged none by design):
    /// what a finished run needs to call its report complete.
    pub fn all_judged(&self) -> bool {
        // A red baseline and a surviving canary judge none by design: the run is over.
        self.baseline_failed
            || self.precondition.is_some()
            || self.canary_survived()
            || (self.unjudged.is_empty() && self.mutants.len() >= self.planned)
    }

    /// `cut short after 2 of 5 mutants judged; not judged: a, b` for a report that is not
    /// complete (a red baseline, which judges none by design, is said otherwise); `None`
    /// when it is.
    pub fn cut_short_text(&self) -> Option<String> {
        if self.complete
            || self.baseline_failed
            || self.precondition.is_some()
            || self.canary_survived()
        {
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
    /// The `[worktree]` setup failed: no baseline ran, no mutant was judged (exit 4).
    SetupFailed,
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
            RunVerdict::SetupFailed => "SETUP FAILED",
            RunVerdict::CanarySurvived => "CANARY SURVIVED",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    fn row(index: usize, verdict: Verdict) -> Row {
        Row::sample(index, &format!("m{index}"), verdict)
    }

    #[test]
    fn a_settled_report_is_in_spec_order_with_its_tally_recounted() {
        let sample = include_str!("../../tests/data/shard-report.json");
        let mut report = serde_json::from_str::<RunReport>(sample).unwrap();
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
        let sample = include_str!("../../tests/data/shard-report.json");
        let mut report = serde_json::from_str::<RunReport>(sample).unwrap();
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
