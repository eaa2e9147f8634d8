//! Counts read from real runners' closing lines.
//!
//! Each case is a small project with a known mix of outcomes (passing, failing, skipped, and
//! where the runner has them: todo, xfail, xpass, errors, warnings, deselected), the command
//! that runs it, and the counts gatekit must read from its output. Two tests use them:
//! - `checked_in_fixtures_give_their_counts` reads the output each runner really printed,
//!   captured into `tests/fixtures/counts/` (always runs, needs no runner);
//! - `live_runners_give_the_same_counts` runs every runner that is installed
//!   (`scripts/install-runners.sh`) on its project now, and fails if the counts differ, so a
//!   runner's new version that changes its summary is noticed. With `GATEKIT_CAPTURE=1` it
//!   rewrites the fixtures from what the runners printed.

use std::fs;
use std::process::Command;

use report::{counts, failures};

use crate::counts_cases::{counts, fixture_path, runners_dir, Case};

/// Every case: the first runners' and the later ones'.
fn cases() -> Vec<Case> {
    let mut all = crate::counts_cases::cases();
    all.extend(crate::results_cases::cases());
    all
}

#[test]
fn checked_in_fixtures_give_their_counts() {
    let mut missing = Vec::new();
    for case in cases() {
        let path = fixture_path(case.name);
        let Ok(log) = fs::read_to_string(&path) else {
            missing.push(case.name);
            continue;
        };
        assert_eq!(
            counts::read(&log),
            Some(case.expect),
            "{}: the counts read from {}",
            case.name,
            path.display()
        );
        assert_eq!(
            failures::failed_tests(&log),
            case.failed,
            "{}: the failed tests named in {}",
            case.name,
            path.display()
        );
    }
    // Every runner the machine had when they were captured left a fixture; those it lacked
    // are named in the README. Deno and Bun may be absent where their npm packages cannot be
    // fetched.
    let allowed: &[&str] = &["deno", "bun"];
    let unexpected: Vec<_> = missing.iter().filter(|m| !allowed.contains(m)).collect();
    assert!(unexpected.is_empty(), "fixtures missing: {unexpected:?}");
}

#[test]
fn live_runners_give_the_same_counts() {
    // `GATEKIT_CAPTURE=1` rewrites every fixture; `GATEKIT_CAPTURE=pytest-q,vitest` only those.
    let capture_list = std::env::var("GATEKIT_CAPTURE").unwrap_or_default();
    let capture =
        |name: &str| capture_list == "1" || capture_list.split(',').any(|n| n.trim() == name);
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
        // The runner's own temp files (jest's cache, pytest's) stay in the fixture too.
        let tmp = dir.path().join("tmp");
        fs::create_dir(&tmp).unwrap();
        let out = Command::new(&program)
            .args(case.args)
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .env("NO_COLOR", "1")
            .env("FORCE_COLOR", "0")
            .env("CI", "1")
            // tape's test files `require('tape')` from where the runners are installed.
            .env("NODE_PATH", runners_dir().join("node_modules"))
            .env("CARGO_TARGET_DIR", dir.path().join("target"))
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap();
        let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        // Make the fixture independent of where it ran.
        let log = log.replace(&dir.path().display().to_string(), "/tmp/sample");
        if capture(case.name) {
            let path = fixture_path(case.name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &log).unwrap();
        }
        let got = counts::read(&log);
        let names = failures::failed_tests(&log);
        if got != Some(case.expect) || names != case.failed {
            wrong.push(format!(
                "{}: read {got:?} {names:?}, expected {:?} {:?}; {program:?} {:?} printed:\n{log}",
                case.name, case.expect, case.failed, case.args
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    if !skipped.is_empty() {
        testkit::skip(
            "runners",
            &format!(
                "runners not installed, live counts not checked: {skipped:?} \
                 (scripts/install-runners.sh)"
            ),
        );
    }
}

#[test]
fn a_scripts_own_tally_never_hides_the_runners_count() {
    // A suite script that prints its own summary beside the runner's.
    let log = "checking fixtures... 2 passed, 0 failed\n\
        ============ 584 passed, 1 skipped in 6.90s ============\n";
    assert_eq!(counts::read(log), Some(counts(584, 0, 1)));
    let log = "smoke: 1 passed, 0 failed\n584 passed, 1 skipped in 6.90s\n";
    assert_eq!(counts::read(log), Some(counts(584, 0, 1)));
}

#[test]
fn a_failed_suite_says_why_with_each_failed_tests_first_error_lines() {
    let why = |name: &str| report::results::why(&fs::read_to_string(fixture_path(name)).unwrap());
    assert_eq!(
        why("node-missing-package"),
        ["/tmp/sample/a.test.mjs: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'no-such-package' imported from /tmp/sample/a.test.mjs"]
    );
    assert_eq!(
        why("pytest-default"),
        [
            "test_sample.py::test_fails: assert 1 == 2",
            "test_sample.py::test_error: RuntimeError: fixture",
        ]
    );
    assert_eq!(
        why("unittest"),
        [
            "test_sample.T.test_error: RuntimeError: boom",
            "test_sample.T.test_fails: AssertionError: 1 != 2",
        ]
    );
    assert_eq!(
        why("vitest-describe"),
        [
            "sample.test.mjs > fails: AssertionError: expected 1 to be 2 // Object.is equality",
            "sample.test.mjs > math > adds: AssertionError: expected 2 to be 3 // Object.is equality",
        ]
    );
    assert_eq!(
        why("node-tap"),
        ["fails: AssertionError: Expected values to be strictly equal:"]
    );
    assert_eq!(
        why("cargo-test"),
        ["tests::fails: thread 'tests::fails' (10132) panicked at src/lib.rs:6:26: assertion `left == right` failed"]
    );
}

#[test]
fn a_kill_by_a_crash_reads_apart_from_one_by_an_assertion_and_a_chain_gives_its_cause() {
    let why = |name: &str| report::results::why(&fs::read_to_string(fixture_path(name)).unwrap());
    assert_eq!(
        why("pytest-ids"),
        [
            "test_ids.py::test_param[a b]: AssertionError: assert 'a b' == 'plain'",
            "test_ids.py::test_param[x - y]: AssertionError: assert 'x - y' == 'plain'",
            "test_ids.py::test_param[two  spaces]: AssertionError: assert 'two  spaces' == 'plain'",
            "test_ids.py::test_named[other thing]: assert 2 == 1",
            "test_ids.py::test_crash: TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
        ]
    );
    // pytest heads it `ImportError while importing test module`; the cause is further down.
    assert_eq!(
        why("pytest-package-missing"),
        ["test_lib.py: importlib.metadata.PackageNotFoundError: No package metadata was found for mylib-not-installed"]
    );
    // node 20 prints why a file did not load as `#` lines above its point.
    assert_eq!(
        why("node-missing-nested"),
        [
            "math > crashes: TypeError: Cannot read properties of null (reading 'y')",
            "math > compares: AssertionError: Expected values to be strictly equal:",
            "cause: outer",
            "/tmp/sample/test/version.test.mjs: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'semver' imported from /tmp/sample/src/version.mjs",
        ]
    );
    assert_eq!(
        why("tape"),
        [
            "subs > three minus one: equal: expected 1, actual 2",
            "throws inside > no throw: TypeError: Cannot read properties of null (reading 'y')",
        ]
    );
}
