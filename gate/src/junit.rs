//! The report as JUnit XML (`gate run --junit FILE`), for CI test views: rendered from the
//! [record](crate::record) alone, one testcase for the candidate's own checks, one per
//! suite at its latest result, and one per canary finding. The run's exit code goes with it
//! ([`report::junit::Ending`]), so a run that did not exit 0 never renders green.

use report::junit::{self, Ending, Status, TestCase, TestSuite, TestSuites};
use runner::Outcome;

use crate::record::{joined, GateReport};
use crate::text::render_candidate;

/// The JUnit file of `report`, for a run that ends with the report's own exit code.
pub(crate) fn render(report: &GateReport) -> String {
    render_ending(report, &ending(report))
}

/// The JUnit file of `report` for a run that ends as `ending` says (a report that could not
/// be written whole, or an attestation that could not, ends a PASS with exit 2).
pub(crate) fn render_ending(report: &GateReport, ending: &Ending) -> String {
    testsuites(report).render(ending)
}

/// How the run of `report` ends: its exit code, and why in a line (its findings, or how it
/// was cut short).
pub(crate) fn ending(report: &GateReport) -> Ending {
    let why = match report.cut_short_text() {
        Some(cut) => format!("{}: {cut}", report.verdict),
        None if report.findings.is_empty() => report.verdict.to_string(),
        None => format!("{}: {}", report.verdict, joined(&report.findings)),
    };
    Ending::new(report.exit_code, why)
}

/// The report as JUnit testcases: one for the candidate's own checks (manifest, deletions,
/// drift) and one per suite, at its latest result (a rerun replaces the first run). A failed or
/// hung suite is a failure whose body is its log's tail; one that could not start, one cut short
/// by an interrupt, and one never run (a run cut short before it) are errors.
fn testsuites(report: &GateReport) -> TestSuites {
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
            message: joined(&findings),
            kind: "candidate".into(),
            body: render_candidate(c),
        };
    }
    cases.push(candidate);
    // A failed precondition (the `[worktree]` setup): the run's exit 4, with the setup's log.
    if let Some(why) = &report.precondition {
        let mut case = TestCase::new("worktree setup", "gate.setup", 0.0);
        let log = report.setup.as_ref().map(|f| f.log.as_str()).unwrap_or("");
        case.status = Status::Errored {
            message: why.clone(),
            kind: "precondition".into(),
            body: String::new(),
        };
        if !log.is_empty() {
            case.system_out = Some(format!("log: {log}"));
        }
        cases.push(case);
    }
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
        let mut case = TestCase::new(suite.name.clone(), "gate.suite", r.run.duration_secs);
        let mut out = format!(
            "command: {}\nresult: {}\ncounts: {}\nlog: {}",
            suite.command,
            suite.result_text(),
            suite.counts_text(),
            r.run.log.display()
        );
        for line in r.why_lines(&r.run.log.display().to_string()) {
            out.push_str(&format!("\nwhy: {line}"));
        }
        case.system_out = Some(out);
        let tail = || {
            let text = runner::read_tail(&r.run.log, 64 * 1024).unwrap_or_default();
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
        let why = match (&cut, &report.precondition) {
            (Some(cut), _) => format!("the run was {cut}"),
            (None, Some(why)) => format!("the run stopped before it: {why}"),
            (None, None) => "no run of this summary ran it".to_string(),
        };
        case.status = Status::Errored {
            message: format!("suite {name} was not run: {why}"),
            kind: "not run".into(),
            body: String::new(),
        };
        cases.push(case);
    }
    // Each canary finding (a path no suite noticed made unloadable, a suite that noticed none):
    // the run's exit 4, said where a CI view shows it.
    if let Some(runs) = &report.canaries {
        for finding in crate::record::of_canaries(runs, &report.planned) {
            let mut case = TestCase::new(finding.to_string(), "gate.canary", 0.0);
            case.status = Status::Failed {
                message: format!("{finding}: the suites do not prove they read the checkout"),
                kind: "canary".into(),
                body: String::new(),
            };
            cases.push(case);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures::{report, suite};

    /// The counts line of a rendered file: `(failures, errors)` of the root.
    fn failing(xml: &str) -> (usize, usize) {
        let root = xml.lines().nth(1).unwrap();
        let count = |key: &str| -> usize {
            let at = root.find(&format!(" {key}=\"")).unwrap() + key.len() + 3;
            root[at..].split('"').next().unwrap().parse().unwrap()
        };
        (count("failures"), count("errors"))
    }

    #[test]
    fn a_report_left_by_a_run_stopped_after_its_suites_is_never_green() {
        // Every suite passed, then the run stopped (an error after the suites): the report on
        // disk is the incomplete one, and its JUnit file says the run did not finish.
        let mut r = report(&["a", "b"], vec![suite("a", 0), suite("b", 0)]);
        r.scheduled = vec!["a".into(), "b".into()];
        r.complete = false;
        r.judge();
        assert_eq!(r.exit_code, 130);
        let xml = render(&r);
        assert_ne!(failing(&xml), (0, 0), "{xml}");
        assert!(xml.contains("the run exited 130: INCOMPLETE"), "{xml}");
        // The same report complete and green is green.
        r.complete = true;
        r.judge();
        assert_eq!(failing(&render(&r)), (0, 0));
        // A pass that ends with exit 2 (its attestation could not be written) is not.
        let ending = Ending::new(2, "writing the attestation: disk full");
        let xml = render_ending(&r, &ending);
        assert_eq!(failing(&xml), (0, 1), "{xml}");
        assert!(xml.contains("disk full"), "{xml}");
    }

    #[test]
    fn a_failed_setup_is_an_error_and_the_suites_it_stopped_say_so() {
        let mut r = report(&["a"], Vec::new());
        r.precondition = Some("worktree.setup failed (exit 3)".into());
        r.judge();
        assert_eq!(r.exit_code, 4);
        let xml = render(&r);
        assert!(
            xml.contains(
                "<error message=\"worktree.setup failed (exit 3)\" type=\"precondition\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("suite a was not run: the run stopped before it: worktree.setup failed"),
            "{xml}"
        );
    }
}
