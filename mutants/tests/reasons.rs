//! Why a mutant was killed and why a baseline is red, with real runners: the killed row's first
//! error line tells a crash (`TypeError`) from an assertion, its names and counts come from the
//! runner's JUnit report (pytest ids with spaces included), a list of names shorter than the
//! count says so, and a red baseline shows the innermost cause (pytest's
//! `PackageNotFoundError` behind `ImportError while importing test module`; node 20's missing
//! package printed as TAP comments above the test file's point).

use std::process::Command;

use crate::common::*;

fn have_pytest() -> bool {
    let ok = Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        testkit::skip("pytest", "python3 -m pytest is not installed");
    }
    ok
}

const CALC: &str = "def add(a, b):\n    return a + b\n";

const CALC_TEST: &str = r#"import pytest
from calc import add

@pytest.mark.parametrize("a,b,want", [(1, 2, 3), (2, 2, 4)], ids=["one plus two", "two - two"])
def test_add(a, b, want):
    assert add(a, b) == want
"#;

const PY_SUITE: &str = "[suites.py]\nrun = \"python3 -m pytest -q -p no:cacheprovider --junitxml=reports/junit.xml\"\njunit = \"reports/junit.xml\"\ntimeout = \"60s\"\n\n";

fn py_mutant(name: &str, replace: &str) -> String {
    format!("[[mutant]]\nname = \"{name}\"\nfile = \"calc.py\"\nanchor = \"a + b\"\nreplace = \"{replace}\"\nsuite = \"py\"\n\n")
}

/// A repository with `files` committed (and the runners' leftovers ignored).
fn repo_with(files: &[(&str, &str)]) -> Fixture {
    let fx = Fixture::new("");
    fx.repo
        .write(".gitignore", "reports/\n__pycache__/\n.pytest_cache/\n");
    for (path, text) in files {
        fx.repo.write(path, text);
    }
    fx.repo.commit_all("sample");
    fx
}

#[test]
fn a_killed_row_tells_a_crash_from_an_assertion_with_ids_and_counts_from_the_junit_report() {
    if !have_pytest() {
        return;
    }
    let spec = format!(
        "{PY_SUITE}{}{}",
        py_mutant("plus to minus", "a - b"),
        py_mutant("plus none", "a + None")
    );
    let fx = repo_with(&[
        ("calc.py", CALC),
        ("test_calc.py", CALC_TEST),
        ("mutants.toml", &spec),
    ]);
    let out = fx.run(&["--no-canary"]);
    out.assert_exit(0);
    let report = fx.report();
    let ids = serde_json::json!([
        "test_calc.test_add[one plus two]",
        "test_calc.test_add[two - two]"
    ]);
    let assertion = &row(&report, "plus to minus")["run"];
    let crash = &row(&report, "plus none")["run"];
    for run in [assertion, crash] {
        assert_eq!(run["failed_tests"], ids, "{run}");
        assert_eq!(
            run["counts"],
            serde_json::json!({"passed": 0, "failed": 2, "skipped": 0})
        );
    }
    assert_eq!(
        crash["first_error"],
        "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"
    );
    let first = assertion["first_error"].as_str().unwrap();
    assert!(first.starts_with("assert -1 == 3"), "{first}");
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains(
            "first error: TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"
        ),
        "{text}"
    );
    let stryker = std::fs::read_to_string(fx.out().join("mutation-report.json")).unwrap();
    assert!(
        stryker.contains("\"the suite failed: first error: TypeError: unsupported operand"),
        "{stryker}"
    );
}

#[test]
fn a_list_of_names_shorter_than_the_count_says_how_many_are_unnamed_and_where_the_log_is() {
    // The suite names none of its failures: its closing line says 7 failed.
    let spec = format!(
        "{SUITE}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    fx.repo.write(
        "test.sh",
        ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ] || { echo '0 passed, 7 failed'; exit 1; }\necho '7 passed, 0 failed'\n",
    );
    fx.repo.commit_all("unnamed failures");
    fx.run(&["--no-canary"]).assert_exit(0);
    let log = row(&fx.report(), "plus to minus")["run"]["log"]
        .as_str()
        .unwrap()
        .to_string();
    // Words only: the text table wraps a long cell, and a line past 120 columns breaks at a
    // space or after a path's `/`, going on indented on the next line.
    let words = |s: &str| {
        let mut joined = String::new();
        for line in s.lines() {
            if joined.ends_with('/') {
                joined.push_str(line.trim_start());
            } else {
                joined.push(' ');
                joined.push_str(line);
            }
        }
        joined.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let note = format!("7 failed tests, none named: see {log}");
    for file in [
        "mutants.txt",
        "mutants.html",
        "junit.xml",
        "mutation-report.json",
    ] {
        let text = std::fs::read_to_string(fx.out().join(file)).unwrap();
        let flat = words(&text.replace("\n    ", ""));
        assert!(flat.contains(&note), "{file} lacks {note:?}:\n{text}");
    }
}

#[test]
fn a_red_baseline_shows_the_innermost_cause_behind_pytests_import_error() {
    if !have_pytest() {
        return;
    }
    let spec = "[suites.py]\nrun = \"python3 -m pytest -q -p no:cacheprovider\"\ntimeout = \"60s\"\n\n[[mutant]]\nname = \"m\"\nfile = \"mylib/__init__.py\"\nanchor = \"version(\"\nreplace = \"(\"\nsuite = \"py\"\n";
    let fx = repo_with(&[
        (
            "mylib/__init__.py",
            "from importlib.metadata import version\n__version__ = version(\"mylib-not-installed\")\n",
        ),
        ("test_lib.py", "import mylib\n\ndef test_version():\n    assert mylib.__version__\n"),
        ("mutants.toml", spec),
    ]);
    let out = fx.run(&[]);
    out.assert_exit(4);
    assert!(
        out.stderr.contains("  test_lib.py: importlib.metadata.PackageNotFoundError: No package metadata was found for mylib-not-installed\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_red_node_baseline_shows_the_missing_package_node_20_prints_above_the_test() {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node {
        testkit::skip("node", "node is not installed");
        return;
    }
    let spec = "[suites.node]\nrun = \"node --test --test-reporter=tap test/\"\ntimeout = \"60s\"\n\n[[mutant]]\nname = \"m\"\nfile = \"src/version.mjs\"\nanchor = \"!== null\"\nreplace = \"=== null\"\nsuite = \"node\"\n";
    let fx = repo_with(&[
        ("package.json", "{\"type\":\"module\",\"private\":true}\n"),
        (
            "src/version.mjs",
            "import semver from 'semver';\nexport const ok = (v) => semver.valid(v) !== null;\n",
        ),
        (
            "test/version.test.mjs",
            "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { ok } from '../src/version.mjs';\ntest('valid', () => { assert.ok(ok('1.2.3')); });\n",
        ),
        ("mutants.toml", spec),
    ]);
    let out = fx.run(&[]);
    out.assert_exit(4);
    assert!(
        out.stderr.contains("version.test.mjs: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'semver' imported from"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_red_baseline_names_what_git_ignores_in_your_tree_and_the_checkout_lacks() {
    // setuptools-scm's way: the version file is generated at install time and git-ignored, so
    // the tree is green and every checkout is red.
    let spec = "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"20s\"\n\n[[mutant]]\nname = \"m\"\nfile = \"lib.sh\"\nanchor = \"+\"\nreplace = \"-\"\nsuite = \"unit\"\n";
    let fx = Fixture::new(spec);
    fx.repo
        .write(
            ".gitignore",
            "_version.sh\n.venv/\n__pycache__/\n.pytest_cache/\nout/\n",
        )
        .write("test.sh", ". ./_version.sh\necho \"1 passed, 0 failed\"\n");
    fx.repo.commit_all("needs a generated file");
    fx.repo
        .write("_version.sh", "VERSION=1.0\n")
        .write(".venv/bin/python", "")
        .write("pkg/__pycache__/m.pyc", "")
        .write(".pytest_cache/v", "");
    // Green in the tree itself.
    let green = std::process::Command::new("sh")
        .arg("test.sh")
        .current_dir(fx.repo.path())
        .status()
        .unwrap();
    assert!(green.success());
    // --out inside the tree, ignored too: the tool's own folder is no suspect.
    let out = testkit::Output::of(fx.cmd().args(["run", "mutants.toml", "--out", "out/m"]));
    out.assert_exit(4);
    assert!(
        out.stderr.contains(
            "mutants: the checkout lacks what git ignores in your tree (.venv/, _version.sh): a suite that reads one fails there"
        ),
        "{}",
        out.stderr
    );
}
