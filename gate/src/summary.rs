//! The gate's report: one record (`gate.json`) and its rendering for people
//! (`gate-summary.txt`, the text a reviewer pastes into a review).
//!
//! The record is built from the applied candidate and the suite results; the text is rendered
//! from the record alone, so the two can never disagree. A rerun (`gate run --only`) appends a
//! section to both, with the manifest result and tree id at that moment.
//!
//! The verdict is PASS only when every suite the gate.toml names (`planned`) passed at its
//! latest run, every run was on the summary's one tree, and the manifest held each time: a
//! suite never run, or failed at its latest run, is a finding. The text renderings quote
//! outside text (paths, commit subjects, suite names, findings) through [`report::escape`],
//! so nothing a candidate names can forge a line such as `verdict   PASS`.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use report::escape::text as esc;
use report::junit::{self, Status, TestCase, TestSuite, TestSuites};
use report::markdown::{self, code};
use report::runner::Outcome;
use report::{Painter, Table, Timestamp};

use crate::suite::SuiteResult;
use candidate::apply::Applied;
use candidate::git::Commit;
use report::text::short_id as short;

/// The version of the gate.json layout; bumped when a field changes meaning or goes away.
pub const REPORT_VERSION: u32 = 1;

/// One manifest entry's result, as reported.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EntryFact {
    pub path: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
}

/// The manifest check, as reported.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ManifestFacts {
    pub file: String,
    /// `12/12 OK`, or what failed.
    pub summary: String,
    pub all_ok: bool,
    pub entries: Vec<EntryFact>,
}

/// A path the patch deletes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeletedFact {
    pub path: String,
    pub gone: bool,
}

/// Everything known about the candidate, independent of its suites.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CandidateFacts {
    pub base_rev: String,
    pub base: String,
    pub head_rev: String,
    pub head: String,
    pub patch: String,
    pub patch_sha256: String,
    /// The sha256 of the manifest file itself, so a rerun can prove it is the same manifest.
    #[serde(default)]
    pub manifest_sha256: String,
    pub manifest: ManifestFacts,
    pub deleted: Vec<DeletedFact>,
    pub drift: Vec<Commit>,
    pub commits_since_base: usize,
    pub tree: String,
    pub worktree: String,
    pub worktree_kept: bool,
    /// Whether the run's checkout was really removed at its end (never claimed, only seen).
    #[serde(default)]
    pub worktree_removed: bool,
}

impl CandidateFacts {
    pub fn from_applied(a: &Applied, manifest_sha256: &str) -> CandidateFacts {
        let p = &a.prepared;
        CandidateFacts {
            base_rev: p.candidate.base.clone(),
            base: p.base.clone(),
            head_rev: p.candidate.head.clone(),
            head: p.head.clone(),
            patch: p.candidate.patch.display().to_string(),
            patch_sha256: p.patch_sha256.clone(),
            manifest_sha256: manifest_sha256.to_string(),
            manifest: manifest_facts(&p.candidate.manifest.display().to_string(), &a.verification),
            deleted: a
                .deleted
                .iter()
                .map(|d| DeletedFact {
                    path: String::from_utf8_lossy(&d.path).into_owned(),
                    gone: d.gone,
                })
                .collect(),
            drift: a.drift.clone(),
            commits_since_base: a.commits_since_base,
            tree: a.tree.clone(),
            worktree: a.worktree.path().display().to_string(),
            worktree_kept: a.worktree.kept(),
            worktree_removed: false,
        }
    }

    /// Reasons the candidate itself (not its suites) does not hold.
    pub fn findings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.manifest.all_ok {
            out.push(format!("manifest {}", self.manifest.summary));
        }
        let present = self.deleted.iter().filter(|d| !d.gone).count();
        if present > 0 {
            out.push(format!("{present} deleted path(s) still present"));
        }
        if !self.drift.is_empty() {
            out.push(format!(
                "drift: {} commit(s) since base touch candidate paths",
                self.drift.len()
            ));
        }
        out
    }
}

pub fn manifest_facts(file: &str, v: &manifests::Verification) -> ManifestFacts {
    ManifestFacts {
        file: file.to_string(),
        summary: v.summary().to_string(),
        all_ok: v.all_ok(),
        entries: v
            .entries
            .iter()
            .map(|e| EntryFact {
                path: String::from_utf8_lossy(&e.path).into_owned(),
                status: e.status.to_string(),
                detail: e.detail.clone(),
            })
            .collect(),
    }
}

/// A later run of some suites on the same candidate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rerun {
    pub at: Timestamp,
    pub manifest: String,
    pub tree: String,
    pub suites: Vec<SuiteResult>,
}

/// `gate.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateReport {
    pub version: u32,
    pub tool: String,
    pub started: Timestamp,
    pub finished: Timestamp,
    pub candidate: CandidateFacts,
    /// Every suite the gate.toml names, in order (a glob expanded): the suites a PASS needs.
    #[serde(default)]
    pub planned: Vec<String>,
    pub suites: Vec<SuiteResult>,
    #[serde(default)]
    pub reruns: Vec<Rerun>,
    pub interrupted: bool,
    /// `PASS`, `FAIL` or `INTERRUPTED`.
    pub verdict: String,
    pub findings: Vec<String>,
    /// The `[worktree]` setup step, run once in the checkout before the first suite.
    #[serde(default)]
    pub setup: Option<SetupFact>,
}

/// The `[worktree]` setup step as it ran: its time is reported on its own, apart from suites'.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetupFact {
    pub command: String,
    pub status: String,
    pub duration_secs: f64,
    /// Relative to the output folder.
    pub log: String,
    /// The ignored paths linked from the user's checkout.
    pub linked: Vec<String>,
}

impl GateReport {
    pub fn new(
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
            verdict: String::new(),
            findings: Vec::new(),
            setup: None,
        };
        r.judge();
        r
    }

    /// Recomputes the verdict and findings from the facts. The latest result of each suite
    /// counts (a rerun that passes clears that suite's earlier failure), but only on the
    /// summary's one tree, with the manifest holding at every run, and with every planned
    /// suite run at least once.
    pub fn judge(&mut self) {
        let mut findings = self.candidate.findings();
        for rerun in &self.reruns {
            if rerun.tree != self.candidate.tree {
                findings.push(format!(
                    "rerun at {} was on tree {}, not the summary's {}",
                    rerun.at, rerun.tree, self.candidate.tree
                ));
            }
            if !manifest_held(&rerun.manifest) {
                findings.push(format!("manifest at rerun {}", rerun.manifest));
            }
        }
        let latest = self.latest_suites();
        for name in &self.planned {
            if !latest.iter().any(|s| &s.name == name) {
                findings.push(format!("suite {name} never ran"));
            }
        }
        for suite in latest {
            if !suite.passed() {
                findings.push(format!("suite {} {}", suite.name, suite.result_text()));
            }
        }
        self.verdict = if self.interrupted {
            "INTERRUPTED"
        } else if findings.is_empty() {
            "PASS"
        } else {
            "FAIL"
        }
        .to_string();
        self.findings = findings;
    }

    /// Each suite's most recent result.
    pub fn latest_suites(&self) -> Vec<&SuiteResult> {
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

    pub fn passed(&self) -> bool {
        self.verdict == "PASS"
    }

    /// The whole summary text.
    pub fn render(&self) -> String {
        self.render_painted(Painter::plain())
    }

    /// The summary text with its verdict words painted (for a terminal; `render` is the same
    /// text unpainted, for files).
    pub fn render_painted(&self, paint: Painter) -> String {
        let verdict = paint.verdict(&self.verdict);
        let mut out = format!("gate {verdict}  {} .. {}\n", self.started, self.finished);
        out.push_str(&render_candidate(&self.candidate));
        if let Some(setup) = &self.setup {
            let linked = if setup.linked.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = setup.linked.iter().map(|l| esc(l).into_owned()).collect();
                format!(", linked {}", names.join(", "))
            };
            if setup.command.is_empty() {
                let _ = writeln!(out, "setup     none{linked}");
            } else {
                let _ = writeln!(
                    out,
                    "setup     {}  {}  {}{linked} ({})",
                    esc(&setup.command),
                    esc(&setup.status),
                    report::duration::human(std::time::Duration::from_secs_f64(
                        setup.duration_secs.max(0.0)
                    )),
                    esc(&setup.log)
                );
            }
        }
        out.push('\n');
        out.push_str(&suite_table(&self.suites).render_text());
        out.push_str(&total_line(&self.suites));
        for rerun in &self.reruns {
            out.push('\n');
            out.push_str(&render_rerun(rerun));
        }
        out.push('\n');
        if self.findings.is_empty() {
            let _ = writeln!(out, "verdict   {verdict}: every check held");
        } else {
            let _ = writeln!(
                out,
                "verdict   {verdict}: {}",
                esc(&self.findings.join("; "))
            );
        }
        out
    }

    /// The summary as GitHub-flavoured Markdown, for a pull request: the verdict as a heading,
    /// the candidate's facts as a table, the suites as a table, each rerun after them.
    pub fn render_markdown(&self) -> String {
        let c = &self.candidate;
        let mut out = format!("## gate {}\n\n", markdown::escape(&self.verdict));
        let verdict = if self.findings.is_empty() {
            format!("**{}**: every check held", markdown::escape(&self.verdict))
        } else {
            format!(
                "**{}**: {}",
                markdown::escape(&self.verdict),
                markdown::escape(&self.findings.join("; "))
            )
        };
        let deleted = if c.deleted.is_empty() {
            "none".to_string()
        } else {
            let gone = c.deleted.iter().filter(|d| d.gone).count();
            let names: Vec<String> = c
                .deleted
                .iter()
                .map(|d| {
                    if d.gone {
                        code(&d.path)
                    } else {
                        format!("{} (**STILL PRESENT**)", code(&d.path))
                    }
                })
                .collect();
            format!("{gone}/{} gone: {}", c.deleted.len(), names.join(", "))
        };
        out.push_str(&markdown::facts([
            ("verdict", verdict),
            ("base", format!("{} ({})", code(&c.base), code(&c.base_rev))),
            ("head", format!("{} ({})", code(&c.head), code(&c.head_rev))),
            (
                "patch",
                format!("{} sha256 {}", code(&c.patch), code(&c.patch_sha256)),
            ),
            (
                "manifest",
                format!(
                    "{} {}",
                    code(&c.manifest.file),
                    markdown::escape(&c.manifest.summary)
                ),
            ),
            ("deleted", deleted),
            ("drift", markdown::escape(&drift_text(c))),
            ("tree", code(&c.tree)),
            ("time", format!("{} .. {}", self.started, self.finished)),
        ]));
        let bad: Vec<&EntryFact> = c
            .manifest
            .entries
            .iter()
            .filter(|e| e.status != "OK")
            .collect();
        if !bad.is_empty() {
            out.push_str("\nManifest entries that did not check OK:\n\n");
            for e in bad {
                let detail = e
                    .detail
                    .as_ref()
                    .map(|d| format!(" ({})", markdown::escape(d)))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "- {}: **{}**{detail}",
                    code(&e.path),
                    markdown::escape(&e.status)
                );
            }
        }
        if !c.drift.is_empty() {
            out.push_str("\nCommits since the base that touch candidate paths:\n\n");
            for commit in &c.drift {
                let paths: Vec<String> = commit.paths.iter().map(|p| code(p)).collect();
                let _ = writeln!(
                    out,
                    "- {} {}{}{}",
                    code(short(&commit.sha)),
                    markdown::escape(&commit.subject),
                    if commit.merge { " (merge)" } else { "" },
                    if paths.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", paths.join(", "))
                    }
                );
            }
        }
        out.push_str("\n### Suites\n\n");
        out.push_str(&suite_table_markdown(&self.suites).render_markdown());
        let _ = writeln!(
            out,
            "\n{}",
            total_line(&self.suites).trim_start_matches("total").trim()
        );
        for rerun in &self.reruns {
            let _ = writeln!(
                out,
                "\n### Rerun {}\n\nmanifest {}, tree {}\n",
                rerun.at,
                markdown::escape(&rerun.manifest),
                code(&rerun.tree)
            );
            out.push_str(&suite_table_markdown(&rerun.suites).render_markdown());
            let _ = writeln!(
                out,
                "\n{}",
                total_line(&rerun.suites).trim_start_matches("total").trim()
            );
        }
        out
    }
}

/// The report as JUnit XML: a testcase for the candidate's own checks (manifest, deletions,
/// drift) and one per suite, at its latest result (a rerun replaces the first run). A failed or
/// hung suite is a failure whose body is its log's tail; one that could not start is an error;
/// one cut short by an interrupt is skipped.
pub fn junit(report: &GateReport) -> TestSuites {
    let mut cases = Vec::new();
    let c = &report.candidate;
    let mut candidate = TestCase::new("manifest, deletions and drift", "gate.candidate", 0.0);
    candidate.system_out = Some(format!(
        "base {}\nhead {}\nmanifest {}\ntree {}",
        c.base, c.head, c.manifest.summary, c.tree
    ));
    let findings = c.findings();
    if !findings.is_empty() {
        candidate.status = Status::Failed {
            message: findings.join("; "),
            kind: "candidate".into(),
            body: render_candidate(c),
        };
    }
    cases.push(candidate);
    for suite in report.latest_suites() {
        let r = &suite.record;
        let mut case = TestCase::new(suite.name.clone(), "gate.suite", r.duration_secs);
        case.system_out = Some(format!(
            "command: {}\nresult: {}\ncounts: {}\nlog: {}",
            suite.command,
            suite.result_text(),
            suite.counts_text(),
            r.log.display()
        ));
        let tail = || {
            let text = report::runner::read_tail(&r.log, 64 * 1024).unwrap_or_default();
            junit::tail(&text, 80, 16 * 1024)
        };
        let counts = r.counts.map(|c| format!(" ({c})")).unwrap_or_default();
        case.status = match suite.outcome {
            Outcome::Passed => Status::Passed,
            Outcome::Failed => Status::Failed {
                message: format!(
                    "suite {} failed: {}{counts}",
                    suite.name,
                    suite.result_text()
                ),
                kind: "failed".into(),
                body: tail(),
            },
            Outcome::Hang => Status::Failed {
                message: format!("suite {} hung: {}{counts}", suite.name, suite.result_text()),
                kind: "hang".into(),
                body: tail(),
            },
            Outcome::CouldNotStart => Status::Errored {
                message: format!(
                    "suite {} could not start: {}",
                    suite.name,
                    suite.result_text()
                ),
                kind: "could not start".into(),
                body: tail(),
            },
            Outcome::Interrupted => Status::Skipped {
                message: format!("suite {} was interrupted", suite.name),
            },
        };
        cases.push(case);
    }
    TestSuites {
        name: "gate".into(),
        suites: vec![TestSuite {
            name: "gate".into(),
            timestamp: Some(report.started),
            cases,
        }],
    }
}

/// The candidate's header lines: base, head, patch, manifest, deletions, drift, tree. Every
/// value is outside text (revisions as typed, paths, subjects) and is escaped.
pub fn render_candidate(c: &CandidateFacts) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "base      {}  ({})", esc(&c.base), esc(&c.base_rev));
    let _ = writeln!(out, "head      {}  ({})", esc(&c.head), esc(&c.head_rev));
    let _ = writeln!(
        out,
        "patch     {}  sha256 {}",
        esc(&c.patch),
        esc(&c.patch_sha256)
    );
    let _ = writeln!(
        out,
        "manifest  {}  {}",
        esc(&c.manifest.file),
        esc(&c.manifest.summary)
    );
    for e in c.manifest.entries.iter().filter(|e| e.status != "OK") {
        let _ = writeln!(
            out,
            "          {}: {}{}",
            esc(&e.path),
            esc(&e.status),
            e.detail
                .as_ref()
                .map(|d| format!(" ({})", esc(d)))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(out, "deleted   {}", deleted_text(&c.deleted));
    let _ = writeln!(out, "drift     {}", drift_text(c));
    for commit in &c.drift {
        let _ = writeln!(
            out,
            "          {} {}{}",
            esc(short(&commit.sha)),
            esc(&commit.subject),
            if commit.merge { " (merge)" } else { "" }
        );
        if !commit.paths.is_empty() {
            let paths: Vec<String> = commit.paths.iter().map(|p| esc(p).into_owned()).collect();
            let _ = writeln!(out, "            touches {}", paths.join(", "));
        }
    }
    let _ = writeln!(out, "tree      {}", esc(&c.tree));
    let _ = writeln!(
        out,
        "worktree  {}{}",
        esc(&c.worktree),
        if c.worktree_kept {
            " (kept)"
        } else if c.worktree_removed {
            " (removed)"
        } else {
            " (NOT removed: still there; gate clean removes it)"
        }
    );
    out
}

/// The rerun section: a header with the manifest and tree at that moment, then the suites.
pub fn render_rerun(rerun: &Rerun) -> String {
    let mut out = format!(
        "rerun {}  manifest {}  tree {}\n",
        rerun.at,
        esc(&rerun.manifest),
        esc(&rerun.tree)
    );
    out.push_str(&suite_table(&rerun.suites).render_text());
    out.push_str(&total_line(&rerun.suites));
    out
}

pub fn suite_table(suites: &[SuiteResult]) -> Table {
    let mut t = Table::new(["suite", "start", "end", "time", "result", "counts"]);
    for s in suites {
        t.row([
            s.name.clone(),
            s.record.start.to_string(),
            s.record.end.to_string(),
            report::duration::human(s.record.duration()),
            s.result_text(),
            s.counts_text(),
        ]);
    }
    t
}

/// [`suite_table`] with its cells quoted for Markdown (a suite name from a glob is outside
/// text: `*` or `_` in it must not turn bold).
pub fn suite_table_markdown(suites: &[SuiteResult]) -> Table {
    let mut t = Table::new(["suite", "start", "end", "time", "result", "counts"]);
    for s in suites {
        t.row([
            markdown::escape(&s.name),
            s.record.start.to_string(),
            s.record.end.to_string(),
            report::duration::human(s.record.duration()),
            markdown::escape(&s.result_text()),
            s.counts_text(),
        ]);
    }
    t
}

/// Whether a manifest summary (`12/12 OK`, `11/12 OK, 1 FAILED`) says every entry held.
pub fn manifest_held(summary: &str) -> bool {
    summary
        .strip_suffix(" OK")
        .and_then(|counts| counts.split_once('/'))
        .is_some_and(|(ok, total)| ok == total && ok.parse::<usize>().is_ok())
}

fn total_line(suites: &[SuiteResult]) -> String {
    let passed = suites.iter().filter(|s| s.passed()).count();
    let secs: f64 = suites.iter().map(|s| s.record.duration_secs).sum();
    format!(
        "total     {passed}/{} suites passed in {}\n",
        suites.len(),
        report::duration::human(std::time::Duration::from_secs_f64(secs))
    )
}

fn deleted_text(deleted: &[DeletedFact]) -> String {
    if deleted.is_empty() {
        return "none".to_string();
    }
    let gone = deleted.iter().filter(|d| d.gone).count();
    let names: Vec<String> = deleted
        .iter()
        .map(|d| {
            if d.gone {
                esc(&d.path).into_owned()
            } else {
                format!("{} (STILL PRESENT)", esc(&d.path))
            }
        })
        .collect();
    format!("{gone}/{} gone: {}", deleted.len(), names.join(", "))
}

fn drift_text(c: &CandidateFacts) -> String {
    let range = format!("{}..{}", esc(short(&c.base)), esc(short(&c.head)));
    if c.commits_since_base == 0 {
        format!("none: head is the base ({range} holds no commit), nothing to compare")
    } else if c.drift.is_empty() {
        format!(
            "none: no commit in {range} ({} commits) touches a candidate path",
            c.commits_since_base
        )
    } else {
        format!(
            "{} of {} commits in {range} touch candidate paths:",
            c.drift.len(),
            c.commits_since_base
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::runner::RunRecord;

    fn suite(name: &str, exit: i32) -> SuiteResult {
        let mut record = RunRecord::not_yet_run(vec!["sh".into()], "wt".into(), "log".into());
        record.exit_code = Some(exit);
        SuiteResult {
            name: name.into(),
            command: "true".into(),
            timeout_secs: 1.0,
            outcome: record.outcome(),
            record,
            refused: None,
        }
    }

    fn report(planned: &[&str], suites: Vec<SuiteResult>) -> GateReport {
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
                summary: "1/1 OK".into(),
                all_ok: true,
                entries: Vec::new(),
            },
            deleted: Vec::new(),
            drift: Vec::new(),
            commits_since_base: 0,
            tree: "a".repeat(40),
            worktree: "wt".into(),
            worktree_kept: false,
            worktree_removed: true,
        };
        let planned = planned.iter().map(|s| s.to_string()).collect();
        GateReport::new(Timestamp::now(), candidate, planned, suites, false)
    }

    fn rerun(r: &mut GateReport, tree: &str, manifest: &str, suites: Vec<SuiteResult>) {
        r.reruns.push(Rerun {
            at: Timestamp::now(),
            manifest: manifest.into(),
            tree: tree.into(),
            suites,
        });
        r.judge();
    }

    #[test]
    fn removed_is_said_only_of_a_checkout_that_is_gone() {
        let mut r = report(&["a"], vec![suite("a", 0)]);
        assert!(render_candidate(&r.candidate).contains("wt (removed)"));
        r.candidate.worktree_removed = false;
        let text = render_candidate(&r.candidate);
        assert!(text.contains("wt (NOT removed"), "{text}");
        r.candidate.worktree_kept = true;
        assert!(render_candidate(&r.candidate).contains("wt (kept)"));
    }

    #[test]
    fn pass_needs_every_planned_suite_passed_at_its_latest_run() {
        let r = report(&["a", "b"], vec![suite("a", 0)]);
        assert_eq!(r.verdict, "FAIL");
        assert_eq!(r.findings, vec!["suite b never ran".to_string()]);
        let mut r = report(&["a", "b"], vec![suite("a", 0), suite("b", 1)]);
        assert_eq!(r.verdict, "FAIL");
        let tree = r.candidate.tree.clone();
        rerun(&mut r, &tree, "1/1 OK", vec![suite("a", 0)]);
        assert_eq!(r.verdict, "FAIL", "b's failure stands: {:?}", r.findings);
        rerun(&mut r, &tree, "1/1 OK", vec![suite("b", 0)]);
        assert_eq!(r.verdict, "PASS", "{:?}", r.findings);
        rerun(&mut r, &tree, "1/1 OK", vec![suite("a", 1)]);
        assert_eq!(r.verdict, "FAIL", "a rerun that fails flips it back");
    }

    #[test]
    fn a_rerun_on_another_tree_or_with_a_broken_manifest_is_no_pass() {
        let mut r = report(&["a"], vec![suite("a", 1)]);
        rerun(&mut r, &"c".repeat(40), "1/1 OK", vec![suite("a", 0)]);
        assert_eq!(r.verdict, "FAIL");
        assert!(
            r.findings[0].contains("not the summary's"),
            "{:?}",
            r.findings
        );
        let mut r = report(&["a"], vec![suite("a", 0)]);
        let tree = r.candidate.tree.clone();
        rerun(&mut r, &tree, "0/1 OK, 1 FAILED", vec![suite("a", 0)]);
        assert_eq!(r.verdict, "FAIL");
        rerun(&mut r, &tree, "1/1 OK", vec![suite("a", 0)]);
        assert_eq!(
            r.verdict, "FAIL",
            "an earlier broken manifest stays on record"
        );
    }

    #[test]
    fn only_an_all_ok_manifest_summary_holds() {
        assert!(manifest_held("12/12 OK"));
        for bad in [
            "11/12 OK, 1 FAILED",
            "0/1 OK, 1 MISSING",
            "11/12 OK",
            "x/x OK",
            "",
        ] {
            assert!(!manifest_held(bad), "{bad}");
        }
    }

    /// A report whose every outside text is `name`: suite, paths, subject, detail, revs.
    fn hostile(name: &str) -> GateReport {
        let mut r = report(&[name, "b"], vec![suite(name, 1)]);
        let c = &mut r.candidate;
        c.base_rev = name.into();
        c.patch = name.into();
        c.manifest.file = name.into();
        c.manifest.summary = "0/1 OK, 1 FAILED".into();
        c.manifest.all_ok = false;
        c.manifest.entries.push(EntryFact {
            path: name.into(),
            status: "FAILED".into(),
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Whatever a name holds, every rendering has exactly the lines of a plain name's, no
        /// control character but the line breaks gatekit writes, and one verdict line.
        #[test]
        fn no_outside_text_can_add_a_line_or_a_control_to_any_rendering(
            name in "(\\PC|[\n\r\t\u{1b}\u{7f}\u{85}\u{9b}\u{2028}\u{202e}])*"
        ) {
            let plain = hostile("plain");
            let evil = hostile(&name);
            for (ours, theirs) in [
                (plain.render(), evil.render()),
                (plain.render_markdown(), evil.render_markdown()),
                (render_candidate(&plain.candidate), render_candidate(&evil.candidate)),
            ] {
                proptest::prop_assert_eq!(ours.lines().count(), theirs.lines().count(), "{}", theirs);
                proptest::prop_assert!(
                    !theirs.chars().any(|c| c != '\n' && report::escape::is_unsafe(c)),
                    "{:?}", theirs
                );
                let verdicts = theirs.lines().filter(|l| l.starts_with("verdict")).count();
                proptest::prop_assert!(verdicts <= 1, "{}", theirs);
            }
        }
    }
}
