//! Why a suite failed, in gate's summary and gate.json, with real pytest: counts, full ids and
//! first error lines from the runner's JUnit report (`junit = PATH`), the same ids from its
//! closing lines without one (ids whose parameters hold spaces), TAP on stdout (`tap = true`),
//! a named report the run did not write said so, and a report path outside the checkout
//! refused before anything runs.

use std::fs;
use std::process::Command;

use crate::common::{stderr, stdout, Fixture};

const TEST_IDS: &str = r#"import pytest

@pytest.mark.parametrize("text", ["a b", "plain", "x - y"])
def test_param(text):
    assert text == "plain"

def test_crash():
    x = None
    x + 1
"#;

const TAPE_LIKE: &str = "printf 'TAP version 13\\n# subs\\nok 1 two\\nnot ok 2 three minus one\\n  ---\\n    operator: equal\\n    expected: 1\\n    actual:   2\\n  ...\\n1..2\\n# tests 2\\n# pass  1\\n# fail  1\\n'; exit 1";

#[test]
fn a_failed_suite_says_why_from_its_junit_report_its_tap_or_its_closing_lines() {
    let pytest = Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !pytest {
        testkit::skip("pytest", "python3 -m pytest is not installed");
        return;
    }
    let f = Fixture::new();
    f.repo
        .write("test_ids.py", TEST_IDS)
        .write(".gitignore", "reports/\n__pycache__/\n.pytest_cache/\n");
    f.repo.git(["add", "-A"]);
    f.pack();
    f.settle();
    let config = f.config(&format!(
        r#"[[suite]]
name = "junit"
run = "python3 -m pytest -q -p no:cacheprovider --junitxml=reports/junit.xml"
junit = "reports/junit.xml"

[[suite]]
name = "log"
run = "python3 -m pytest -q -p no:cacheprovider"

[[suite]]
name = "tap"
run = "{}"
tap = true

[[suite]]
name = "unwritten"
run = "echo '1 passed, 0 failed'"
junit = "reports/none.xml"
"#,
        TAPE_LIKE.replace('\\', "\\\\").replace('"', "\\\"")
    ));
    let out_dir = f.out.path().join("gate-out");
    let out = f.run(&config, &out_dir).output().unwrap();
    let summary = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{summary}{}", stderr(&out));
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
    let junit = &json["suites"][0]["record"];
    assert_eq!(
        junit["failed_tests"],
        serde_json::json!([
            "test_ids.test_param[a b]",
            "test_ids.test_param[x - y]",
            "test_ids.test_crash"
        ])
    );
    assert_eq!(
        junit["counts"],
        serde_json::json!({"passed": 1, "failed": 3, "skipped": 0})
    );
    assert_eq!(junit["results_from"], "reports/junit.xml");
    assert_eq!(
        junit["first_error"],
        "AssertionError: assert 'a b' == 'plain'"
    );
    // Without the report, the closing lines name the same tests by pytest's own ids.
    assert_eq!(
        json["suites"][1]["record"]["failed_tests"],
        serde_json::json!([
            "test_ids.py::test_param[a b]",
            "test_ids.py::test_param[x - y]",
            "test_ids.py::test_crash"
        ])
    );
    let tap = &json["suites"][2]["record"];
    assert_eq!(
        tap["counts"],
        serde_json::json!({"passed": 1, "failed": 1, "skipped": 0})
    );
    assert_eq!(
        tap["failed_tests"],
        serde_json::json!(["subs > three minus one"])
    );
    for line in [
        "          test_ids.test_crash: TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n",
        "          test_ids.py::test_param[x - y]: AssertionError: assert 'x - y' == 'plain'\n",
        "          subs > three minus one: equal: expected 1, actual 2\n",
        "note      suite unwritten: reports/none.xml was not written by this run: counts and names from the log\n",
    ] {
        assert!(summary.contains(line), "no {line:?} in:\n{summary}");
    }
}

#[test]
fn a_junit_path_outside_the_checkout_is_refused_before_anything_runs() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    for (path, why) in [
        ("/tmp/junit.xml", "is absolute"),
        ("../junit.xml", "climbs out of the tree"),
    ] {
        let config = f.config(&format!(
            "[[suite]]\nname = \"s\"\nrun = \"touch ran\"\njunit = \"{path}\"\n"
        ));
        let out_dir = f.out.path().join("gate-out");
        let out = f.run(&config, &out_dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("gate.toml:8: `junit` \"{path}\" {why}")),
            "{err}"
        );
        assert!(!out_dir.exists(), "a refused config wrote {out_dir:?}");
    }
}

#[test]
fn a_suite_red_in_the_checkout_names_what_git_ignores_in_your_tree_and_the_checkout_lacks() {
    let fx = Fixture::new();
    fx.pack();
    fx.settle();
    // The reviewer's tree has a file git ignores (a generated .env); the suite reads it.
    fx.repo.write(".git/info/exclude", ".env\n__pycache__/\n");
    fx.repo
        .write(".env", "TOKEN=1\n")
        .write("pkg/__pycache__/m.pyc", "");
    let config = fx.config("[[suite]]\nname = \"env\"\nrun = \"test -f .env\"\n");
    let out = fx.out.path().join("gate-out");
    let run = fx.run(&config, &out).output().unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(
        stderr(&run).contains(
            "gate: the checkout lacks what git ignores in your tree (.env): a suite that reads one fails there"
        ),
        "{}",
        stderr(&run)
    );
    // A green run says nothing of it.
    let config = fx.config("[[suite]]\nname = \"ok\"\nrun = \"true\"\n");
    let out = fx.out.path().join("gate-out-2");
    let run = fx.run(&config, &out).output().unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(!stderr(&run).contains("git ignores"), "{}", stderr(&run));
}
