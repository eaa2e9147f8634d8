//! The report as JUnit XML (`gate run --junit FILE`), for CI test views: rendered from the
//! [record](crate::record) alone, one testcase for the candidate's own checks and one per
//! suite at its latest result.

use report::junit::{self, Status, TestCase, TestSuite, TestSuites};
use runner::Outcome;

use crate::record::GateReport;
use crate::text::render_candidate;

/// The report as JUnit XML: a testcase for the candidate's own checks (manifest, deletions,
/// drift) and one per suite, at its latest result (a rerun replaces the first run). A failed or
/// hung suite is a failure whose body is its log's tail; one that could not start, one cut short
/// by an interrupt, and one never run (a run cut short before it) are errors.
pub(crate) fn junit(report: &GateReport) -> TestSuites {
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
    // A run cut short before a suite it set out to run leaves that suite without a result of
    // its own: an earlier pass of it (a rerun killed midway) is not its answer now.
    let cut = report.cut_short_text();
    let pending = |name: &String| {
        cut.is_some()
            && report.scheduled.contains(name)
            && !report.latest_run().iter().any(|s| &s.name == name)
    };
    let latest: Vec<_> = report
        .latest_suites()
        .into_iter()
        .filter(|s| !pending(&s.name))
        .collect();
    for suite in &latest {
        let r = &suite.record;
        let mut case = TestCase::new(suite.name.clone(), "gate.suite", r.duration_secs);
        let mut out = format!(
            "command: {}\nresult: {}\ncounts: {}\nlog: {}",
            suite.command,
            suite.result_text(),
            suite.counts_text(),
            r.log.display()
        );
        for line in r.why_lines(&r.log.display().to_string()) {
            out.push_str(&format!("\nwhy: {line}"));
        }
        case.system_out = Some(out);
        let tail = || {
            let text = runner::read_tail(&r.log, 64 * 1024).unwrap_or_default();
            junit::tail(&text, 80, 16 * 1024)
        };
        let mut counts = r.counts.map(|c| format!(" ({c})")).unwrap_or_default();
        if let Some(e) = &r.first_error {
            // A crash (`TypeError`) reads apart from an assertion in the CI's list of failures.
            counts.push_str(&format!(": {e}"));
        }
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
            // Cut short mid-run: no result, so never a pass, and not a skip a CI view hides.
            Outcome::Interrupted => Status::Errored {
                message: format!(
                    "suite {} was cut short by an interrupt: it has no result",
                    suite.name
                ),
                kind: "cut short".into(),
                body: tail(),
            },
        };
        cases.push(case);
    }
    // Every suite the gate.toml names but no run has a result for: an error, so a run cut short
    // (or an `--only` summary missing a suite) can never read as green.
    let mut unrun: Vec<&String> = Vec::new();
    for name in report.planned.iter().chain(&report.scheduled) {
        if !latest.iter().any(|s| &s.name == name) && !unrun.contains(&name) {
            unrun.push(name);
        }
    }
    for name in unrun {
        let mut case = TestCase::new(name.clone(), "gate.suite", 0.0);
        let why = match &cut {
            Some(cut) => format!("the run was {cut}"),
            None => "no run of this summary ran it".to_string(),
        };
        case.status = Status::Errored {
            message: format!("suite {name} was not run: {why}"),
            kind: "not run".into(),
            body: String::new(),
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
