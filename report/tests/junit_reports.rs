//! JUnit XML reports as real runners write them (pytest `--junitxml`, node's junit reporter,
//! vitest's, jest-junit), read for counts, full ids and first error lines; and a suite's named
//! report read into its record only when this run wrote it.
//!
//! The files were captured into `tests/fixtures/junit/`;
//! `live_junit_reports_read_as_their_fixtures` reruns each runner that is installed and checks
//! the same reading (`GATEKIT_CAPTURE=pytest-junit,...` rewrites those fixtures).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use report::counts::Counts;
use report::errors::Failed;
use report::results::Source;
use report::{junit_read, record};
use runner::{Job, Outcome};

use crate::common::within;
use crate::counts_cases::{counts, npm_bin, on_path, pytest, runners_dir};
use crate::results_cases::{NODE_NESTED, PYTEST_IDS};

struct JunitCase {
    name: &'static str,
    program: fn() -> Option<PathBuf>,
    files: &'static [(&'static str, &'static str)],
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    expect: Counts,
    /// Each failed test's id and the line that says why.
    failed: &'static [(&'static str, Option<&'static str>)],
}

const VITEST: &str = r#"import { test, describe, expect } from 'vitest';
test('passes', () => { expect(1).toBe(1); });
test('fails', () => { expect(1).toBe(2); });
describe('math', () => {
  test('adds', () => { expect(1 + 1).toBe(3); });
  test('crashes', () => { const x = null; x.y(); });
  test.skip('later', () => {});
});
test('with "quotes" & <angle>', () => { expect('a').toBe('b'); });
"#;

const JEST: &str = r#"describe('math', () => {
  test('adds', () => { expect(1 + 1).toBe(3); });
  test('crashes', () => { const x = null; x.y(); });
  test('works', () => { expect(1).toBe(1); });
});
test.skip('later', () => {});
"#;

fn cases() -> Vec<JunitCase> {
    vec![
        JunitCase {
            name: "pytest-junit",
            program: pytest,
            files: &[("test_ids.py", PYTEST_IDS)],
            args: &[
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--junitxml=reports/junit.xml",
            ],
            env: &[],
            expect: counts(3, 5, 1),
            failed: &[
                (
                    "test_ids.test_param[a b]",
                    Some("AssertionError: assert 'a b' == 'plain'"),
                ),
                (
                    "test_ids.test_param[x - y]",
                    Some("AssertionError: assert 'x - y' == 'plain'"),
                ),
                (
                    "test_ids.test_param[two  spaces]",
                    Some("AssertionError: assert 'two  spaces' == 'plain'"),
                ),
                ("test_ids.test_named[other thing]", Some("assert 2 == 1")),
                (
                    "test_ids.test_crash",
                    Some("TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"),
                ),
            ],
        },
        JunitCase {
            name: "node-junit",
            program: || on_path("node"),
            files: &[
                ("package.json", "{\"type\":\"module\",\"private\":true}\n"),
                ("test/other.test.mjs", NODE_NESTED),
                // node does not make the report's folder.
                ("reports/.keep", ""),
            ],
            args: &[
                "--test",
                "--test-reporter=junit",
                "--test-reporter-destination=reports/junit.xml",
                "test/",
            ],
            env: &[],
            expect: counts(1, 3, 1),
            failed: &[
                (
                    "math > crashes",
                    Some("TypeError [Error]: Cannot read properties of null (reading 'y')"),
                ),
                (
                    "math > compares",
                    Some("AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:"),
                ),
                // The innermost cause of a chained error.
                ("cause", Some("TypeError [Error]: inner reason")),
            ],
        },
        JunitCase {
            name: "vitest-junit",
            program: || npm_bin("vitest"),
            files: &[
                ("package.json", "{\"type\":\"module\",\"private\":true}\n"),
                ("sample.test.mjs", VITEST),
            ],
            args: &[
                "run",
                "--reporter=default",
                "--reporter=junit",
                "--outputFile.junit=reports/junit.xml",
            ],
            env: &[],
            expect: counts(1, 4, 1),
            failed: &[
                (
                    "sample.test.mjs > fails",
                    Some("AssertionError: expected 1 to be 2 // Object.is equality"),
                ),
                (
                    "sample.test.mjs > math > adds",
                    Some("AssertionError: expected 2 to be 3 // Object.is equality"),
                ),
                (
                    "sample.test.mjs > math > crashes",
                    Some("TypeError: Cannot read properties of null (reading 'y')"),
                ),
                (
                    "sample.test.mjs > with \"quotes\" & <angle>",
                    Some("AssertionError: expected 'a' to be 'b' // Object.is equality"),
                ),
            ],
        },
        JunitCase {
            name: "jest-junit",
            program: || npm_bin("jest"),
            files: &[("sample.test.js", JEST), ("package.json", "{}\n")],
            args: &[
                "--ci",
                "--colors=false",
                "--reporters=default",
                "--reporters=jest-junit",
            ],
            env: &[("JEST_JUNIT_OUTPUT_FILE", "reports/junit.xml")],
            expect: counts(1, 2, 1),
            failed: &[
                (
                    "math adds",
                    Some("Error: expect(received).toBe(expected) // Object.is equality"),
                ),
                (
                    "math crashes",
                    Some("TypeError: Cannot read properties of null (reading 'y')"),
                ),
            ],
        },
    ]
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/junit")
        .join(format!("{name}.xml"))
}

fn check(case: &JunitCase, text: &str) -> Result<(), String> {
    let report = junit_read::read(text).map_err(|e| format!("{}: {e}", case.name))?;
    let want: Vec<Failed> = case
        .failed
        .iter()
        .map(|(n, e)| Failed {
            name: n.to_string(),
            error: e.map(str::to_string),
        })
        .collect();
    if report.counts != case.expect || report.failed != want {
        return Err(format!(
            "{}: read {:?} {:#?}, expected {:?} {want:#?}",
            case.name, report.counts, report.failed, case.expect
        ));
    }
    Ok(())
}

#[test]
fn checked_in_junit_reports_give_counts_full_ids_and_first_error_lines() {
    for case in cases() {
        let text =
            fs::read_to_string(fixture(case.name)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        check(&case, &text).unwrap();
    }
}

#[test]
fn live_junit_reports_read_as_their_fixtures() {
    let capture_list = std::env::var("GATEKIT_CAPTURE").unwrap_or_default();
    let mut skipped = Vec::new();
    let mut wrong = Vec::new();
    for case in cases() {
        let Some(program) = (case.program)() else {
            skipped.push(case.name);
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in case.files {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        let tmp = dir.path().join("tmp");
        fs::create_dir(&tmp).unwrap();
        let mut cmd = Command::new(&program);
        cmd.args(case.args)
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .env("NO_COLOR", "1")
            .env("FORCE_COLOR", "0")
            .env("CI", "1")
            .env("NODE_PATH", runners_dir().join("node_modules"));
        for (k, v) in case.env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let Ok(text) = fs::read_to_string(dir.path().join("reports/junit.xml")) else {
            wrong.push(format!(
                "{}: no report written; it printed:\n{}{}",
                case.name,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        };
        let text = text.replace(&dir.path().display().to_string(), "/tmp/sample");
        if capture_list.split(',').any(|n| n.trim() == case.name) {
            fs::create_dir_all(fixture(case.name).parent().unwrap()).unwrap();
            fs::write(fixture(case.name), &text).unwrap();
        }
        if let Err(e) = check(&case, &text) {
            wrong.push(e);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    if !skipped.is_empty() {
        testkit::skip(
            "runners",
            &format!("runners not installed, live JUnit reports not checked: {skipped:?}"),
        );
    }
}

/// The record of `script` run in `dir`, its results read from `source`.
fn run(dir: &Path, script: &str, source: &Source) -> report::RunRecord {
    let job = Job::shell(script, dir, dir.join("out.log"));
    let source = source.clone();
    within(30, move || record::run_reading(&job, &source).unwrap())
}

#[test]
fn a_suites_junit_report_gives_its_record_every_count_name_and_first_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture("pytest-junit");
    let source = Source::junit("reports/junit.xml").unwrap();
    // The runner writes the report during the run: it is read, and the log's lines are not.
    let script = format!(
        "mkdir -p reports && cp '{}' reports/junit.xml && echo '9 passed, 0 failed'; exit 1",
        fixture.display()
    );
    let rec = run(dir.path(), &script, &source);
    assert_eq!(rec.counts, Some(counts(3, 5, 1)));
    assert_eq!(rec.failed_tests.len(), 5);
    assert_eq!(rec.failed_tests[0], "test_ids.test_param[a b]");
    assert_eq!(
        rec.first_error.as_deref(),
        Some("AssertionError: assert 'a b' == 'plain'")
    );
    assert_eq!(rec.results_from.as_deref(), Some("reports/junit.xml"));
    assert_eq!(rec.results_missing, None);
    assert_eq!(
        rec.why[4],
        "test_ids.test_crash: TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"
    );
}

#[test]
fn a_report_this_run_did_not_write_is_said_so_and_the_counts_come_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let source = Source::junit("reports/junit.xml").unwrap();
    fs::create_dir_all(dir.path().join("reports")).unwrap();
    // Left by an earlier run: older than this one, never read as its report.
    fs::copy(
        fixture("pytest-junit"),
        dir.path().join("reports/junit.xml"),
    )
    .unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(dir.path().join("reports/junit.xml"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let rec = run(dir.path(), "echo '2 passed, 0 failed'", &source);
    assert_eq!(rec.counts, Some(counts(2, 0, 0)));
    assert_eq!(rec.outcome(), Outcome::Passed);
    assert_eq!(rec.results_from, None);
    assert_eq!(
        rec.results_missing.as_deref(),
        Some("reports/junit.xml was not written by this run (it is older than the run): counts and names from the log")
    );
    // None at all; and a link, even to a fresh report, is not read.
    fs::remove_file(dir.path().join("reports/junit.xml")).unwrap();
    let rec = run(dir.path(), "echo '2 passed, 0 failed'", &source);
    assert!(rec
        .results_missing
        .unwrap()
        .contains("was not written by this run"));
    let script = format!(
        "cp '{}' elsewhere.xml && ln -s ../elsewhere.xml reports/junit.xml; exit 1",
        fixture("pytest-junit").display()
    );
    let rec = run(dir.path(), &script, &source);
    assert_eq!(rec.counts, None);
    assert!(rec.results_missing.unwrap().contains("is a link"));
}

#[test]
fn tap_on_stdout_counts_the_leaves_and_names_each_with_its_parents() {
    let dir = tempfile::tempdir().unwrap();
    let log = crate::counts_cases::fixture_path("node-missing-nested");
    let rec = run(
        dir.path(),
        &format!("cat '{}'; exit 1", log.display()),
        &Source::Tap,
    );
    assert_eq!(rec.counts, Some(counts(1, 4, 1)));
    assert_eq!(rec.results_from.as_deref(), Some("TAP"));
    assert_eq!(rec.failed_tests[0], "math > crashes");
    assert_eq!(
        rec.first_error.as_deref(),
        Some("TypeError: Cannot read properties of null (reading 'y')")
    );
    // tape: assertions counted by their points, a failing todo as skipped, not as a pass.
    let log = crate::counts_cases::fixture_path("tape");
    let rec = run(
        dir.path(),
        &format!("cat '{}'; exit 1", log.display()),
        &Source::Tap,
    );
    assert_eq!(rec.counts, Some(counts(3, 2, 2)));
    assert_eq!(
        rec.failed_tests,
        ["subs > three minus one", "throws inside > no throw"]
    );
}

#[test]
fn a_junit_path_that_leaves_the_checkout_is_refused() {
    for bad in [
        "/tmp/junit.xml",
        "../junit.xml",
        "a/../b.xml",
        "reports/",
        "",
    ] {
        assert!(Source::junit(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        Source::junit("./reports//junit.xml").unwrap(),
        Source::Junit(PathBuf::from("reports/junit.xml"))
    );
}

#[test]
fn a_declared_tap_stream_that_stops_part_way_with_exit_0_failed() {
    let dir = tempfile::tempdir().unwrap();
    // The producer exited 0 after two of its points, before its plan.
    let cut = "printf 'TAP version 13\\n# adds\\nok 1 one\\nok 2 two\\n'; exit 0";
    let rec = run(dir.path(), cut, &Source::Tap);
    assert_eq!(rec.outcome(), runner::Outcome::Failed);
    assert_eq!(rec.counts, Some(counts(2, 1, 0)));
    assert_eq!(rec.failed_tests, ["TAP plan"]);
    assert!(
        rec.first_error
            .as_deref()
            .unwrap()
            .contains("it ended after 2 test points with no plan"),
        "{:?}",
        rec.first_error
    );
    // With its plan, the same points pass.
    let whole = "printf 'TAP version 13\\n# adds\\nok 1 one\\nok 2 two\\n\\n1..2\\n'; exit 0";
    let rec = run(dir.path(), whole, &Source::Tap);
    assert_eq!(rec.outcome(), runner::Outcome::Passed);
    assert_eq!(rec.counts, Some(counts(2, 0, 0)));
    // Read from the log (no `tap = true`), a stream is not held to its plan.
    let rec = run(dir.path(), cut, &Source::Log);
    assert_eq!(rec.outcome(), runner::Outcome::Passed);
}

#[test]
fn a_run_cut_short_reads_no_counts_from_the_junit_report_it_left() {
    let dir = tempfile::tempdir().unwrap();
    let source = Source::junit("reports/junit.xml").unwrap();
    // A runner that flushes an empty report as it starts (or as it is killed), then hangs.
    let script = "mkdir -p reports && printf '<testsuites tests=\"0\" failures=\"0\"></testsuites>' > reports/junit.xml && sleep 30";
    let mut job = Job::shell(script, dir.path(), dir.path().join("out.log"));
    job.timeout = std::time::Duration::from_secs(1);
    let rec = within(30, move || record::run_reading(&job, &source).unwrap());
    assert_eq!(rec.outcome(), runner::Outcome::Hang);
    assert_eq!(rec.counts, None, "{:?}", rec.results_from);
}
