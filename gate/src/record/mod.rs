//! The gate's record: the typed report that `gate.json` serializes, and the verdict judged
//! from it. Every rendering (`text`, `markdown`, `junit`) is made from this record alone, so
//! the file and the words a reviewer reads can never disagree.
//!
//! The verdict is PASS only when every suite the gate.toml names (`planned`) passed at its
//! latest run, every run was on the summary's one tree, and the manifest held each time: a
//! suite never run, or failed at its latest run, is a finding. Manifest results and the verdict
//! are typed values here (serialized as the words and the `12/12 OK` line they always were),
//! so nothing reads a verdict back from its word.
//!
//! A run writes this record before its first suite and after each one with `complete: false`
//! (verdict `INCOMPLETE`, exit code 130) and sets `complete` only in its last write, so the
//! file a killed run leaves says it was cut short.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use report::Timestamp;

use crate::suite::SuiteResult;

mod candidate_facts;
mod finding;
mod verdict;

pub(crate) use candidate_facts::{first_few, CandidateFacts, DeletedFact, EntryFact};
pub(crate) use finding::{joined, of_canaries, Finding};
pub use verdict::Verdict;

/// The version of the gate.json layout; bumped when a field changes meaning or goes away.
pub(crate) const REPORT_VERSION: u32 = 1;

/// A later run of some suites on the same candidate.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Rerun {
    pub at: Timestamp,
    /// The manifest's counts at that moment, written as `12/12 OK`.
    pub manifest: manifests::Summary,
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub tree: String,
    pub suites: Vec<SuiteResult>,
}

/// `gate.json`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(
    deny_unknown_fields,
    title = "gate.json",
    description = "The report `gate run` writes to OUT/gate.json (and prints with --format json). `version` is bumped when a field changes meaning or goes away; new optional fields may appear within a version only by a schema update."
)]
pub struct GateReport {
    #[schemars(extend("const" = 1))]
    pub(crate) version: u32,
    #[schemars(extend("const" = "gate"))]
    pub(crate) tool: String,
    pub(crate) started: Timestamp,
    pub(crate) finished: Timestamp,
    pub(crate) candidate: CandidateFacts,
    /// Every suite the gate.toml names, in order (a glob expanded): the suites a PASS needs.
    #[serde(default)]
    pub(crate) planned: Vec<String>,
    pub(crate) suites: Vec<SuiteResult>,
    #[serde(default)]
    pub(crate) reruns: Vec<Rerun>,
    pub interrupted: bool,
    /// Whether the run that last wrote this report reached its end. A run writes the report
    /// as incomplete before its first suite and after each one, and marks it complete only in
    /// its last write, so a run cut short (SIGKILL, a full disk, an interrupt) never leaves a
    /// report that claims it finished.
    #[serde(default)]
    pub complete: bool,
    /// The suites the latest run (the first, or the last rerun) set out to run, in order:
    /// while `complete` is false, those without a result were not run.
    #[serde(default)]
    pub(crate) scheduled: Vec<String>,
    pub verdict: Verdict,
    /// The exit code `gate run` gives this report: 0 PASS, 1 FAIL, 4 FAIL on a failed
    /// precondition (a `[worktree]` setup that failed, a canary no suite noticed), 74 a PASS
    /// whose attestation or other owed file could not be written, 130 INTERRUPTED or
    /// INCOMPLETE (never 0 for a report that is not complete).
    #[serde(default = "unfinished_exit")]
    #[schemars(extend("enum" = [0, 1, 4, 74, 130]))]
    pub exit_code: u8,
    // Each reason the verdict is not PASS, written as its line (see `Finding`); judged again
    // from the facts whenever a report is read back, never parsed (and no description in the
    // schema, which has never had one for this field).
    #[serde(deserialize_with = "finding::judged_again")]
    #[schemars(with = "Vec<String>")]
    pub(crate) findings: Vec<Finding>,
    /// The `[worktree]` setup step, run once in the checkout before the first suite.
    #[serde(default)]
    pub(crate) setup: Option<SetupFact>,
    /// A precondition that failed before any suite ran (the `[worktree]` setup, a link it
    /// names), in a line: nothing was judged, the verdict is FAIL and the exit code 4.
    #[serde(default)]
    pub(crate) precondition: Option<String>,
    /// What the run reused instead of building (build outputs restored from the cache), one
    /// line each; empty: everything was built in the checkout.
    #[serde(default)]
    pub(crate) reused: Vec<String>,
    /// `--canary`: each source path made unloadable and the suites run until one noticed;
    /// `None` when not asked.
    #[serde(default)]
    pub(crate) canaries: Option<Vec<crate::canary::CanaryRun>>,
    /// `--canary`: the candidate's code no canary was written into, each with the
    /// `[canary] skip` glob that left it out.
    #[serde(default)]
    pub(crate) canary_left_out: Vec<crate::canary::LeftOut>,
    /// A `[worktree] link` folder of the user's checkout that changed while the run went (see
    /// `candidate::linked`): one line each, a failed precondition.
    #[serde(default)]
    pub(crate) linked_changed: Vec<String>,
}

/// The `[worktree]` setup step as it ran: its time is reported on its own, apart from suites'.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SetupFact {
    pub command: String,
    pub status: String,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// Relative to the output folder.
    pub log: String,
    /// The ignored paths linked from the user's checkout.
    pub linked: Vec<String>,
}
impl GateReport {
    pub(crate) fn new(
        started: Timestamp,
        candidate: CandidateFacts,
        planned: Vec<String>,
        suites: Vec<SuiteResult>,
        interrupted: bool,
    ) -> GateReport {
        let mut r = GateReport {
            version: REPORT_VERSION,
            tool: "gate".into(),
            started,
            finished: Timestamp::now(),
            candidate,
            planned,
            suites,
            reruns: Vec::new(),
            interrupted,
            complete: !interrupted,
            scheduled: Vec::new(),
            verdict: Verdict::Fail,
            exit_code: unfinished_exit(),
            findings: Vec::new(),
            setup: None,
            precondition: None,
            reused: Vec::new(),
            canaries: None,
            canary_left_out: Vec::new(),
            linked_changed: Vec::new(),
        };
        r.judge();
        r
    }

    /// Recomputes the verdict and findings from the facts. The latest result of each suite
    /// counts (a rerun that passes clears that suite's earlier failure), but only on the
    /// summary's one tree, with the manifest holding at every run, and with every planned
    /// suite run at least once.
    pub(crate) fn judge(&mut self) {
        let mut findings = self.candidate.findings();
        findings.extend(self.precondition.clone().map(Finding::Precondition));
        for rerun in &self.reruns {
            if rerun.tree != self.candidate.tree {
                findings.push(Finding::RerunOtherTree {
                    at: rerun.at,
                    tree: rerun.tree.clone(),
                    summary_tree: self.candidate.tree.clone(),
                });
            }
            if !rerun.manifest.all_ok() {
                findings.push(Finding::RerunManifest(rerun.manifest));
            }
        }
        let latest = self.latest_suites();
        for name in self.planned.iter().filter(|_| self.precondition.is_none()) {
            if !latest.iter().any(|s| &s.name == name) {
                findings.push(Finding::NeverRan(name.clone()));
            }
        }
        for suite in latest {
            if !suite.passed() {
                findings.push(Finding::SuiteFailed {
                    name: suite.name.clone(),
                    result: suite.result_text(),
                });
            }
        }
        if let Some(runs) = &self.canaries {
            findings.extend(finding::of_canaries(runs, &self.planned));
        }
        findings.extend(
            self.linked_changed
                .iter()
                .cloned()
                .map(Finding::LinkedChanged),
        );
        self.verdict = if self.complete || self.interrupted {
            Verdict::of(self.interrupted, &findings)
        } else {
            Verdict::Incomplete
        };
        self.findings = findings;
        self.exit_code = self.exit(&[]).code();
    }

    /// The suites of the latest run (the first, or the last rerun), as far as it got.
    pub(crate) fn latest_run(&self) -> &[SuiteResult] {
        self.reruns.last().map_or(&self.suites, |r| &r.suites)
    }

    /// The latest run's result for a suite, appended (to the first run's suites, or the last
    /// rerun's), with the verdict judged again.
    pub(crate) fn record(&mut self, result: SuiteResult) {
        match self.reruns.last_mut() {
            Some(rerun) => rerun.suites.push(result),
            None => self.suites.push(result),
        }
        self.finished = Timestamp::now();
        self.judge();
    }

    /// `cut short after 1 of 3 suites (...)` for a report that is not complete; `None` when
    /// it is.
    pub(crate) fn cut_short_text(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let latest = self.latest_run();
        let ran = |name: &str| {
            latest
                .iter()
                .any(|s| s.name == name && s.outcome != report::Outcome::Interrupted)
        };
        let done = latest.iter().filter(|s| ran(&s.name)).count();
        let of = self.scheduled.len().max(latest.len());
        let not_run: Vec<&str> = self
            .scheduled
            .iter()
            .map(String::as_str)
            .filter(|name| !ran(name))
            .collect();
        let rest = if not_run.is_empty() {
            String::new()
        } else {
            format!("; not run: {}", not_run.join(", "))
        };
        Some(format!(
            "cut short after {done} of {of} suites{rest} (the run was stopped, killed, or could \
             not write its report: no verdict on the candidate)"
        ))
    }

    /// Each suite's most recent result.
    pub(crate) fn latest_suites(&self) -> Vec<&SuiteResult> {
        let mut latest: Vec<&SuiteResult> = self.suites.iter().collect();
        for rerun in &self.reruns {
            for s in &rerun.suites {
                match latest.iter_mut().find(|l| l.name == s.name) {
                    Some(slot) => *slot = s,
                    None => latest.push(s),
                }
            }
        }
        latest
    }

    /// Whether the verdict is PASS.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// Whether a precondition failed (exit 4): the `[worktree]` setup, a canary that proved a
    /// suite does not read the checkout, or a folder of the user's linked into it that changed
    /// while it ran, whatever the suites said.
    pub fn precondition_failed(&self) -> bool {
        self.findings.iter().any(Finding::is_precondition)
    }

    /// Whether a canary proved a suite does not read the checkout: the run's precondition
    /// failed (exit 4), whatever the suites said.
    pub fn canary_failed(&self) -> bool {
        self.findings.iter().any(Finding::is_canary)
    }
}

/// A report's exit code until its run says otherwise: that of a run cut short (a report that
/// does not state its code is not a finished one).
fn unfinished_exit() -> u8 {
    cmdline::Exit::Interrupted.code()
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Reports built from small facts, for the tests of the record and of each rendering.
    use super::candidate_facts::ManifestFacts;
    use super::*;
    use candidate::git::Commit;
    use report::RunRecord;

    pub(crate) fn suite(name: &str, exit: i32) -> SuiteResult {
        let mut record = RunRecord::not_yet_run(vec!["sh".into()], "wt".into(), "log".into());
        record.run.ended = runner::Ended::exited(exit);
        SuiteResult {
            name: name.into(),
            command: "true".into(),
            timeout_secs: 1.0,
            outcome: record.outcome(),
            record,
            refused: None,
            build: None,
        }
    }

    pub(crate) fn report(planned: &[&str], suites: Vec<SuiteResult>) -> GateReport {
        let candidate = CandidateFacts {
            base_rev: "base".into(),
            base: "b".repeat(40),
            head_rev: "HEAD".into(),
            head: "b".repeat(40),
            patch: "build.patch".into(),
            patch_sha256: "0".repeat(64),
            manifest_sha256: "1".repeat(64),
            manifest: ManifestFacts {
                file: "m".into(),
                summary: "1/1 OK".parse().unwrap(),
                all_ok: true,
                entries: Vec::new(),
            },
            deleted: Vec::new(),
            drift: Vec::new(),
            landed: Vec::new(),
            commits_since_base: 0,
            base_off_head: false,
            base_side: Vec::new(),
            base_side_count: 0,
            unnamed: Vec::new(),
            submodules: Vec::new(),
            filtered: Vec::new(),
            tree: "a".repeat(40),
            worktree: "wt".into(),
            worktree_kept: false,
            worktree_removed: true,
        };
        let planned = planned.iter().map(|s| s.to_string()).collect();
        GateReport::new(Timestamp::now(), candidate, planned, suites, false)
    }

    pub(crate) fn rerun(r: &mut GateReport, tree: &str, manifest: &str, suites: Vec<SuiteResult>) {
        r.reruns.push(Rerun {
            at: Timestamp::now(),
            manifest: manifest.parse().expect("a summary line"),
            tree: tree.into(),
            suites,
        });
        r.judge();
    }

    /// A report whose every outside text is `name`: suite, paths, subject, detail, revs.
    pub(crate) fn hostile(name: &str) -> GateReport {
        let mut r = report(&[name, "b"], vec![suite(name, 1)]);
        let c = &mut r.candidate;
        c.base_rev = name.into();
        c.patch = name.into();
        c.manifest.file = name.into();
        c.manifest.summary = "0/1 OK, 1 FAILED".parse().unwrap();
        c.manifest.all_ok = false;
        c.manifest.entries.push(EntryFact {
            path: name.into(),
            status: manifests::Status::Failed,
            detail: Some(name.into()),
        });
        c.deleted.push(DeletedFact {
            path: name.into(),
            gone: false,
        });
        c.drift.push(Commit {
            sha: "d".repeat(40),
            subject: name.into(),
            merge: false,
            paths: vec![name.into()],
        });
        r.judge();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;
    use candidate::git::Commit;

    #[test]
    fn pass_needs_every_planned_suite_passed_at_its_latest_run() {
        let r = report(&["a", "b"], vec![suite("a", 0)]);
        assert_eq!(r.verdict, Verdict::Fail);
        assert_eq!(r.findings, vec![Finding::NeverRan("b".into())]);
        let mut r = report(&["a", "b"], vec![suite("a", 0), suite("b", 1)]);
        assert_eq!(r.verdict, Verdict::Fail);
        let tree = r.candidate.tree.clone();
        rerun(&mut r, &tree, "1/1 OK", vec![suite("a", 0)]);
        assert_eq!(
            r.verdict,
            Verdict::Fail,
            "b's failure stands: {:?}",
            r.findings
        );
        rerun(&mut r, &tree, "1/1 OK", vec![suite("b", 0)]);
        assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.findings);
        rerun(&mut r, &tree, "1/1 OK", vec![suite("a", 1)]);
        assert_eq!(r.verdict, Verdict::Fail, "a rerun that fails flips it back");
    }

    #[test]
    fn a_rerun_on_another_tree_or_with_a_broken_manifest_is_no_pass() {
        let mut r = report(&["a"], vec![suite("a", 1)]);
        rerun(&mut r, &"c".repeat(40), "1/1 OK", vec![suite("a", 0)]);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(
            matches!(&r.findings[0], Finding::RerunOtherTree { tree, .. } if *tree == "c".repeat(40)),
            "{:?}",
            r.findings
        );
        let mut r = report(&["a"], vec![suite("a", 0)]);
        let tree = r.candidate.tree.clone();
        rerun(&mut r, &tree, "0/1 OK, 1 FAILED", vec![suite("a", 0)]);
        assert_eq!(r.verdict, Verdict::Fail);
        rerun(&mut r, &tree, "1/1 OK", vec![suite("a", 0)]);
        assert_eq!(
            r.verdict,
            Verdict::Fail,
            "an earlier broken manifest stays on record"
        );
    }

    #[test]
    fn only_an_all_ok_manifest_summary_holds() {
        // A rerun's manifest is read back from gate.json as the counts it was written from.
        let held = |line: &str| -> Option<bool> {
            let json = format!(
                r#"{{"at":"2026-10-12T20:13:35Z","manifest":{line:?},"tree":"t","suites":[]}}"#
            );
            let rerun = serde_json::from_str::<Rerun>(&json).ok()?;
            // ... and written again as the very line it was read from.
            assert_eq!(serde_json::to_value(&rerun).unwrap()["manifest"], line);
            Some(rerun.manifest.all_ok())
        };
        assert_eq!(held("12/12 OK"), Some(true));
        assert_eq!(held("11/12 OK, 1 FAILED"), Some(false));
        assert_eq!(held("0/1 OK, 1 MISSING"), Some(false));
        for unreadable in ["11/12 OK", "x/x OK", ""] {
            assert_eq!(held(unreadable), None, "{unreadable}");
        }
    }

    #[test]
    fn each_candidate_finding_fails_the_gate() {
        let clean = report(&["a"], vec![suite("a", 0)]);
        assert_eq!(clean.verdict, Verdict::Pass, "{:?}", clean.findings);
        let mut broken = clean.clone();
        broken.candidate.manifest.summary = "0/1 OK, 1 FAILED".parse().unwrap();
        broken.candidate.manifest.all_ok = false;
        broken.judge();
        assert_eq!(
            broken.findings,
            vec![Finding::Manifest("0/1 OK, 1 FAILED".parse().unwrap())]
        );
        let mut present = clean.clone();
        present.candidate.deleted.push(DeletedFact {
            path: "old".into(),
            gone: false,
        });
        present.judge();
        assert_eq!(present.findings, vec![Finding::DeletedPresent(1)]);
        let mut drifted = clean.clone();
        drifted.candidate.drift.push(Commit {
            sha: "d".repeat(40),
            subject: "touches it".into(),
            merge: false,
            paths: vec!["p".into()],
        });
        drifted.judge();
        assert_eq!(drifted.findings, vec![Finding::Drift(1)]);
        for r in [&broken, &present, &drifted] {
            assert_eq!(r.verdict, Verdict::Fail);
        }
        let mut hung = report(&["a"], vec![suite("a", 0)]);
        hung.suites[0].outcome = runner::Outcome::Hang;
        hung.judge();
        assert_eq!(hung.verdict, Verdict::Fail, "a hang is never a pass");
    }

    #[test]
    fn the_committed_schema_is_the_one_the_record_types_generate() {
        let schema = report::schema::generate::<GateReport>(
            "https://example.invalid/gatekit/schema/gate.schema.json",
        );
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/schema/gate.schema.json");
        if let Err(why) = report::schema::check_committed(&path, &schema) {
            panic!("{why}");
        }
    }
}
