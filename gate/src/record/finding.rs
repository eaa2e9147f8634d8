//! A finding: one reason the gate does not pass, as a typed value. The judge makes them from the
//! record's facts; each has one [`Display`](std::fmt::Display), the line gate.json's `findings`,
//! the summary, the Markdown and the JUnit copy all quote, so no two renderings word it apart.
//!
//! gate.json holds findings as those lines and never reads them back: a report loaded to be
//! appended to is judged again from its facts (see [`judged_again`]).

use std::fmt;

use report::text::{plural, short_id};
use report::Timestamp;

use crate::canary::CanaryRun;

/// One reason the gate does not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Finding {
    /// The manifest did not hold on the checkout (`manifest 11/12 OK, 1 FAILED`).
    Manifest(manifests::Summary),
    /// Paths the patch deletes that are still there, how many.
    DeletedPresent(usize),
    /// Files the patch adds or changes that the manifest does not name.
    NotInManifest(Vec<String>),
    /// The base is not in the head's history: the tree gated is not the head plus the
    /// candidate. `base_side` and `head_side` count the commits on each side that touch
    /// candidate paths.
    BaseNotAncestor {
        base: String,
        head: String,
        base_side: usize,
        head_side: usize,
    },
    /// Commits since the base that touch candidate paths, how many.
    Drift(usize),
    /// A precondition that failed before any suite ran (the `[worktree]` setup, a link), in a
    /// line.
    Precondition(String),
    /// A rerun that ran on another tree than the summary's.
    RerunOtherTree {
        at: Timestamp,
        tree: String,
        summary_tree: String,
    },
    /// A rerun at which the manifest did not hold.
    RerunManifest(manifests::Summary),
    /// A planned suite with no result in any run.
    NeverRan(String),
    /// A suite whose latest result is not a pass, and that result in words (`exit 1`, `hang`).
    SuiteFailed { name: String, result: String },
    /// `--canary` found no source path to make unloadable.
    CanaryNoSource,
    /// A source path every suite passed without.
    CanaryUnread(String),
    /// A suite that passed with each source path made unloadable.
    CanaryReadsNone(String),
    /// A `[worktree] link` folder of the user's checkout changed while the run went.
    LinkedChanged(String),
}

impl Finding {
    /// Whether this finding is a failed precondition (exit 4, not 1): the setup, a canary that
    /// proved a suite does not read the checkout, a linked folder of the user's that changed.
    pub(crate) fn is_precondition(&self) -> bool {
        self.is_canary() || matches!(self, Finding::Precondition(_) | Finding::LinkedChanged(_))
    }

    /// Whether a canary made this finding.
    pub(crate) fn is_canary(&self) -> bool {
        matches!(
            self,
            Finding::CanaryNoSource | Finding::CanaryUnread(_) | Finding::CanaryReadsNone(_)
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Manifest(summary) => write!(f, "manifest {summary}"),
            Finding::DeletedPresent(n) => write!(f, "{n} deleted path(s) still present"),
            Finding::NotInManifest(paths) => write!(
                f,
                "the manifest does not name {} the patch changes: {}",
                plural(paths.len(), "file"),
                super::first_few(paths)
            ),
            Finding::BaseNotAncestor {
                base,
                head,
                base_side,
                head_side,
            } => write!(
                f,
                "base {} is not in the history of head {}: the tree gated is not the head plus \
                 the candidate ({} in head..base and {} in base..head touch candidate paths)",
                short_id(base),
                short_id(head),
                plural(*base_side, "commit"),
                plural(*head_side, "commit")
            ),
            Finding::Drift(n) => write!(f, "drift: {n} commit(s) since base touch candidate paths"),
            Finding::Precondition(line) => f.write_str(line),
            Finding::RerunOtherTree {
                at,
                tree,
                summary_tree,
            } => write!(
                f,
                "rerun at {at} was on tree {tree}, not the summary's {summary_tree}"
            ),
            Finding::RerunManifest(summary) => write!(f, "manifest at rerun {summary}"),
            Finding::NeverRan(name) => write!(f, "suite {name} never ran"),
            Finding::SuiteFailed { name, result } => write!(f, "suite {name} {result}"),
            Finding::CanaryNoSource => f.write_str(
                "canary: the candidate has no source path to make unloadable, so nothing proves \
                 the suites read the checkout (name its code in a suite's command, or take it out \
                 of [canary] skip)",
            ),
            Finding::CanaryUnread(path) => write!(
                f,
                "canary: every suite passed with {path} made unloadable (no suite reads it)"
            ),
            Finding::CanaryReadsNone(suite) => write!(
                f,
                "canary: suite {suite} passed with each source path made unloadable (it reads \
                 none of them)"
            ),
            Finding::LinkedChanged(line) => f.write_str(line),
        }
    }
}

/// Written as its line: the words gate.json's `findings` and `gate apply --json` have always
/// held.
impl serde::Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The findings canaries make: no source path at all, each source path no suite noticed, each
/// suite that noticed none.
pub(crate) fn of_canaries(runs: &[CanaryRun], suites: &[String]) -> Vec<Finding> {
    let mut out = Vec::new();
    if runs.is_empty() {
        out.push(Finding::CanaryNoSource);
    }
    let mut paths: Vec<&str> = Vec::new();
    for r in runs {
        if !paths.contains(&r.path.as_str()) {
            paths.push(&r.path);
        }
    }
    for p in &paths {
        if !runs.iter().any(|r| r.path == *p && r.noticed) {
            out.push(Finding::CanaryUnread(p.to_string()));
        }
    }
    if !paths.is_empty() {
        for s in suites {
            let tried = runs.iter().any(|r| &r.suite == s);
            if tried && !runs.iter().any(|r| &r.suite == s && r.noticed) {
                out.push(Finding::CanaryReadsNone(s.clone()));
            }
        }
    }
    out
}

/// Findings as a list's text: `; `-separated, as every rendering quotes them.
pub(crate) fn joined(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(Finding::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// gate.json's `findings` as read back: a list of lines, checked to be one and then left
/// aside, because findings are never parsed back from their words; the report is judged again
/// from its facts (`GateReport::judge`) before anything reads them.
pub(crate) fn judged_again<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<Finding>, D::Error> {
    <Vec<String> as serde::Deserialize>::deserialize(d)?;
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind reads as the very line gate has always written, so gate.json, the summary,
    /// the Markdown and the JUnit copy keep their bytes.
    #[test]
    fn each_kind_reads_as_the_line_gate_has_always_written() {
        let failed: manifests::Summary = "0/1 OK, 1 FAILED".parse().unwrap();
        let at: Timestamp = serde_json::from_str("\"2026-10-12T20:13:35Z\"").unwrap();
        let cases = [
            (Finding::Manifest(failed), "manifest 0/1 OK, 1 FAILED"),
            (
                Finding::DeletedPresent(2),
                "2 deleted path(s) still present",
            ),
            (
                Finding::NotInManifest(vec!["b.txt".into()]),
                "the manifest does not name 1 file the patch changes: b.txt",
            ),
            (
                Finding::NotInManifest((1..=5).map(|i| format!("f{i}")).collect()),
                "the manifest does not name 5 files the patch changes: f1, f2, f3 and 2 more",
            ),
            (
                Finding::BaseNotAncestor {
                    base: "a".repeat(40),
                    head: "b".repeat(40),
                    base_side: 1,
                    head_side: 0,
                },
                "base aaaaaaaaaaaa is not in the history of head bbbbbbbbbbbb: the tree gated is \
                 not the head plus the candidate (1 commit in head..base and 0 commits in \
                 base..head touch candidate paths)",
            ),
            (
                Finding::Drift(3),
                "drift: 3 commit(s) since base touch candidate paths",
            ),
            (
                Finding::Precondition("worktree setup failed (exit 1)".into()),
                "worktree setup failed (exit 1)",
            ),
            (
                Finding::RerunOtherTree {
                    at,
                    tree: "c".into(),
                    summary_tree: "a".into(),
                },
                "rerun at 2026-10-12T20:13:35Z was on tree c, not the summary's a",
            ),
            (
                Finding::RerunManifest(failed),
                "manifest at rerun 0/1 OK, 1 FAILED",
            ),
            (Finding::NeverRan("unit".into()), "suite unit never ran"),
            (
                Finding::SuiteFailed {
                    name: "unit".into(),
                    result: "exit 1".into(),
                },
                "suite unit exit 1",
            ),
            (
                Finding::CanaryNoSource,
                "canary: the candidate has no source path to make unloadable, so nothing proves \
                 the suites read the checkout (name its code in a suite's command, or take it \
                 out of [canary] skip)",
            ),
            (
                Finding::CanaryUnread("src/a.py".into()),
                "canary: every suite passed with src/a.py made unloadable (no suite reads it)",
            ),
            (
                Finding::CanaryReadsNone("unit".into()),
                "canary: suite unit passed with each source path made unloadable (it reads none \
                 of them)",
            ),
            (
                Finding::LinkedChanged("node_modules changed".into()),
                "node_modules changed",
            ),
        ];
        for (finding, line) in &cases {
            assert_eq!(finding.to_string(), *line, "{finding:?}");
            assert_eq!(
                serde_json::to_value(finding).unwrap(),
                serde_json::Value::String(line.to_string())
            );
        }
        let all: Vec<Finding> = cases.iter().map(|(f, _)| f.clone()).collect();
        assert_eq!(
            joined(&all[..2]),
            "manifest 0/1 OK, 1 FAILED; 2 deleted path(s) still present"
        );
    }

    #[test]
    fn only_the_setup_a_canary_and_a_changed_linked_folder_are_preconditions() {
        let precondition = [
            Finding::Precondition("x".into()),
            Finding::LinkedChanged("x".into()),
            Finding::CanaryNoSource,
            Finding::CanaryUnread("x".into()),
            Finding::CanaryReadsNone("x".into()),
        ];
        for f in &precondition {
            assert!(f.is_precondition(), "{f:?}");
        }
        let canaries: Vec<&Finding> = precondition.iter().filter(|f| f.is_canary()).collect();
        assert_eq!(canaries.len(), 3);
        for f in [
            Finding::Drift(1),
            Finding::DeletedPresent(1),
            Finding::NeverRan("x".into()),
            Finding::SuiteFailed {
                name: "x".into(),
                result: "exit 1".into(),
            },
        ] {
            assert!(!f.is_precondition() && !f.is_canary(), "{f:?}");
        }
    }

    #[test]
    fn canaries_find_no_source_each_path_no_suite_read_and_each_suite_that_read_none() {
        let run = |path: &str, suite: &str, noticed: bool| CanaryRun {
            path: path.into(),
            suite: suite.into(),
            noticed,
            status: if noticed { "exit 1" } else { "exit 0" }.into(),
            duration_secs: 0.1,
            log: "logs/canary-01.log".into(),
        };
        let suites = ["unit".to_string(), "lint".to_string()];
        assert_eq!(of_canaries(&[], &suites), [Finding::CanaryNoSource]);
        let runs = [
            run("a.py", "unit", true),
            run("a.py", "lint", false),
            run("b.py", "unit", false),
            run("b.py", "lint", false),
        ];
        assert_eq!(
            of_canaries(&runs, &suites),
            [
                Finding::CanaryUnread("b.py".into()),
                Finding::CanaryReadsNone("lint".into())
            ]
        );
        let proved = [run("a.py", "unit", true), run("a.py", "lint", true)];
        assert_eq!(of_canaries(&proved, &suites), []);
    }
}
