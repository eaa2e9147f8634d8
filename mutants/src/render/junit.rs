//! `junit.xml`: the run as JUnit XML, so GitHub, GitLab and Jenkins show each mutant as a test.
//!
//! One testcase per mutant (classname the site, or the file when the mutant names no site; name
//! the mutant's name). The mapping is by what a CI reader must act on: a survivor and a killed
//! control are failures (the suite missed a claim, or is brittle), with the verdict and the
//! claim it undoes as the message and the suite log's tail as the body; `killed` and
//! `killed (hang)` pass (the suite noticed); a control that held passes; `error` (the suite could
//! not start) is an error element, never a pass; `skipped (N matches)` is skipped, and so is
//! `unviable` (a generated mutant that does not build: no finding); a mutant the
//! run was cut short before (no verdict) is an error too, never a pass or a skip. A red
//! baseline, which judges no mutant, is a failed testcase of its own so the file is never an
//! empty green; so is each canary (a canary the suite did not notice fails, one it noticed
//! passes). The report's exit code goes with the file ([`report::junit::Ending`]): a run that
//! did not exit 0 never renders green, whatever else it holds.

use std::path::Path;

use report::junit::{self, Ending, Status, TestCase, TestSuite, TestSuites};

use crate::record::{CanaryVerdict, Row, RunReport, SuiteRun};
use crate::verdict::Verdict;

/// How much of a log a failure's body carries.
const TAIL_LINES: usize = 80;
const TAIL_BYTES: usize = 16 * 1024;

/// The report as JUnit XML; `out` is the folder the logs are relative to.
pub(crate) fn render(report: &RunReport, out: &Path) -> String {
    let mut cases = Vec::new();
    if let Some(why) = &report.precondition {
        let mut case = TestCase::new("setup", "mutants.setup", 0.0);
        case.status = Status::Errored {
            message: format!("SETUP FAILED: {why}; no mutant was judged"),
            kind: "precondition".into(),
            body: String::new(),
        };
        cases.push(case);
    }
    if report.baseline_failed {
        for b in report.baseline.iter().filter(|b| !b.passed) {
            let mut case = TestCase::new(
                format!("baseline: {}", b.suite),
                "mutants.baseline",
                b.duration_secs,
            );
            case.status = Status::Failed {
                message: format!(
                    "BASELINE FAILED: suite {} {} without any mutant, so no mutant was judged",
                    b.suite, b.status
                ),
                kind: "baseline".into(),
                body: log_tail(out, &b.log),
            };
            cases.push(case);
        }
    }
    for c in &report.canaries {
        let mut case = TestCase::new(
            format!("canary: {} without {}", c.suite, c.file),
            "mutants.canary",
            c.duration_secs,
        );
        case.system_out = Some(format!("status: {}\nlog: {}", c.status, c.log));
        if c.verdict == CanaryVerdict::Survived {
            case.status = Status::Failed {
                message: format!(
                    "CANARY SURVIVED: suite {} passed with {} made unloadable ({}), so it does \
                     not read the checkout and no mutant was judged",
                    c.suite, c.file, c.status
                ),
                kind: "canary survived".into(),
                body: log_tail(out, &c.log),
            };
        }
        cases.push(case);
    }
    cases.extend(report.mutants.iter().map(|r| case(r, out)));
    // A mutant the run was cut short before is an error, never a pass or a skip a CI view
    // hides: the file of a run killed halfway can never read as green.
    if let Some(cut) = report.cut_short_text() {
        for u in &report.unjudged {
            let mut case = TestCase::new(u.name.clone(), u.file.clone(), 0.0);
            case.status = Status::Errored {
                message: format!("not judged: the run was {cut}"),
                kind: "not judged".into(),
                body: String::new(),
            };
            cases.push(case);
        }
    }
    let why = match report.cut_short_text() {
        Some(cut) => format!("{}: {cut}", report.verdict()),
        None => report.verdict().to_string(),
    };
    TestSuites {
        name: "mutants".into(),
        suites: vec![TestSuite {
            name: format!("mutants {}", report.spec),
            timestamp: Some(report.start),
            cases,
        }],
    }
    .render(&Ending::new(report.exit_code, why))
}

fn case(r: &Row, out: &Path) -> TestCase {
    let classname = r.site.clone().unwrap_or_else(|| r.file.clone());
    let run = r.run.as_ref();
    let mut case = TestCase::new(
        r.name.clone(),
        classname,
        run.map_or(0.0, |s| s.duration_secs),
    );
    case.system_out = Some(system_out(r));
    let claim = match (&r.undoes, r.control) {
        _ if !r.claim_named => format!("{} ({:?})", crate::origin::NOT_NAMED, r.name),
        (Some(u), _) => u.clone(),
        (None, true) => "a control: an edit the suite must not notice".into(),
        (None, false) => format!("the mutant {:?}", r.name),
    };
    let body = || run.map(|s| log_tail(out, &s.log)).unwrap_or_default();
    case.status = match r.verdict {
        Verdict::Killed | Verdict::KilledHang | Verdict::ControlHeld => Status::Passed,
        Verdict::Survived => Status::Failed {
            message: format!(
                "SURVIVED: the suite passed with the mutant in place; nothing defends: {claim}"
            ),
            kind: "survived".into(),
            body: body(),
        },
        Verdict::NotCovered => Status::Failed {
            message: format!(
                "not covered: no test runs the mutated lines, and the whole suite passed with \
                 the mutant in place; nothing defends: {claim}"
            ),
            kind: "not covered".into(),
            body: body(),
        },
        Verdict::ControlKilled => Status::Failed {
            message: format!(
                "CONTROL KILLED: the suite noticed an edit it must not notice ({claim}){}",
                run.map(|s| format!(": {}", s.status)).unwrap_or_default()
            ),
            kind: "control killed".into(),
            body: body(),
        },
        Verdict::Error => Status::Errored {
            message: format!(
                "error: the suite could not start{}",
                run.map(|s| format!(": {}", s.status)).unwrap_or_default()
            ),
            kind: "error".into(),
            body: body(),
        },
        // No finding: the generated mutant does not compile, so it proves nothing either way.
        Verdict::Unviable => Status::Skipped {
            message: format!(
                "unviable: the generated mutant does not build{}; not a finding ({claim})",
                run.map(|s| format!(" ({})", s.status)).unwrap_or_default()
            ),
        },
        Verdict::Skipped { matches } => Status::Skipped {
            message: format!(
                "skipped ({matches} matches): the anchor must occur exactly once in {}",
                r.file
            ),
        },
    };
    case
}

/// What a reader wants beside the verdict: the suite's result and counts, the log, the diff.
fn system_out(r: &Row) -> String {
    let mut lines = vec![
        format!("verdict: {}", r.verdict_text()),
        format!("file: {}", r.file),
    ];
    match &r.undoes {
        Some(_) if !r.claim_named => lines.push(format!("undoes: {}", crate::origin::NOT_NAMED)),
        Some(u) => lines.push(format!("undoes: {u}")),
        None => {}
    }
    if let Some(op) = &r.operator {
        lines.push(format!("operator: {op}"));
    }
    for s in r.run.iter().chain(r.also.iter()) {
        lines.push(suite_line(s));
    }
    if let Some(d) = &r.diff {
        lines.push(d.trim_end().to_string());
    }
    lines.join("\n")
}

fn suite_line(s: &SuiteRun) -> String {
    let counts = s.counts_text();
    let failed = s.failed_text(usize::MAX);
    format!(
        "suite {}: {} ({}) in {:.2}s{}{}, log {}{}",
        s.suite,
        s.verdict,
        s.status,
        s.duration_secs,
        if counts.is_empty() {
            String::new()
        } else {
            format!(", {counts}")
        },
        if s.strays_killed > 0 {
            format!(", {} strays killed", s.strays_killed)
        } else {
            String::new()
        },
        s.log,
        if failed.is_empty() {
            String::new()
        } else {
            format!("\nfailed: {failed}")
        }
    )
}

fn log_tail(out: &Path, log: &str) -> String {
    match runner::read_tail(&out.join(log), 64 * 1024) {
        Ok(text) => junit::tail(&text, TAIL_LINES, TAIL_BYTES),
        Err(e) => format!("(log {log} unavailable: {e})"),
    }
}
