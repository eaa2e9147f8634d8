//! A suite's `select`: each mutant runs first only the tests its coverage map says reach it
//! (node --test's V8 coverage per test file, coverage.py's contexts per pytest id), a failure
//! there is `killed`, and a survivor or a mutant no test covers is confirmed by the whole suite
//! before it is `SURVIVED` or `not covered`. Real runners, real coverage; a test that watches
//! the mutated file proves which tests ran while each mutant was in place.

use serde_json::Value;

use crate::common::*;

const NODE_LIB: &str = "export function add(a, b) {
  return a + b;
}
export function weak(x) {
  return x * 2;
}
export function never(x) {
  if (x > 1) {
    return 2;
  }
  return 3;
}
// the control's comment
";

/// Covers `add` and `weak`, checks only `add`.
const NODE_A: &str = "import { test } from 'node:test';
import assert from 'node:assert';
import { add, weak } from '../src/lib.mjs';
test('adds', () => { assert.equal(add(1, 2), 3); weak(1); });
";

/// Never loads the library: it records which mutant was in place whenever it ran.
const NODE_WATCH: &str = "import { test } from 'node:test';
import { readFileSync, appendFileSync } from 'node:fs';
test('watches', () => {
  const lib = readFileSync(new URL('../src/lib.mjs', import.meta.url), 'utf8');
  for (const m of ['a - b', 'x * 3', 'return 4', 'the control']) {
    if (lib.includes(m) && !(m === 'the control' && lib.includes(\"the control's\"))) {
      appendFileSync(process.env.MARK + '/watch', m + '\\n');
    }
  }
});
";

fn node_mutant(name: &str, anchor: &str, replace: &str, extra: &str) -> String {
    format!(
        "[[mutant]]\nname = \"{name}\"\nfile = \"src/lib.mjs\"\nanchor = \"{anchor}\"\nreplace = \"{replace}\"\nsuite = \"t\"\n{extra}\n"
    )
}

#[test]
fn node_covering_tests_kill_alone_and_survivors_and_uncovered_mutants_are_confirmed_whole() {
    if !have_node() {
        return;
    }
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {{files}}\"\ntimeout = \"60s\"\n\n{}{}{}{}",
        node_mutant("add minus", "a + b", "a - b", ""),
        node_mutant("weak", "x * 2", "x * 3", ""),
        node_mutant("never", "return 2", "return 4", ""),
        node_mutant(
            "control",
            "the control's comment",
            "the control comment",
            "expect = \"survive\""
        ),
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("test/a.test.mjs", NODE_A),
        ("test/watch.test.mjs", NODE_WATCH),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let sarif = fx.out.path().join("findings.sarif");
    let out = run_in(
        &fx,
        "mutants.toml",
        &fx.out(),
        mark.path(),
        &["--sarif", sarif.to_str().unwrap()],
    );
    out.assert_exit(1);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("add minus".to_string(), "killed".to_string()),
            ("weak".into(), "SURVIVED".into()),
            ("never".into(), "not covered".into()),
            ("control".into(), "control held".into()),
        ],
        "{}",
        out.both()
    );
    // Killed by its one covering test file alone: the watching test never ran with it.
    let killed = selection(&report, "add minus");
    assert_eq!(killed["tests"], serde_json::json!(["test/a.test.mjs"]));
    assert_eq!(
        (killed["count"].as_u64(), killed["whole"].as_bool()),
        (Some(1), Some(false))
    );
    let watched = seen(mark.path(), "watch");
    assert!(!watched.contains("a - b"), "{watched}");
    // The survivor passed its covering tests, then the whole suite: the watcher saw it.
    let survived = selection(&report, "weak");
    assert_eq!(survived["whole"], true);
    assert_eq!(survived["covering"]["status"], "exit 0");
    assert!(watched.contains("x * 3"), "{watched}");
    // No test covers `return 2`: the whole suite ran before it was called `not covered`.
    let never = selection(&report, "never");
    assert_eq!(
        (never["count"].as_u64(), never["whole"].as_bool()),
        (Some(0), Some(true))
    );
    assert!(watched.contains("return 4"), "{watched}");
    // A control runs whole, with no selection.
    assert_eq!(row(&report, "control")["run"]["selection"], Value::Null);
    assert!(watched.contains("the control"), "{watched}");
    assert_eq!(report["tally"]["not_covered"], 1);
    if let Some(errors) = testkit::schema_errors("mutants.schema.json", &report) {
        assert!(errors.is_empty(), "{errors:#?}");
    }
    assert_eq!(report["tally"]["survived"], 1);
    // Every report says it.
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(text.contains("1 SURVIVED, 1 not covered"), "{text}");
    assert!(
        text.contains("no test covers it: the whole suite ran"),
        "{text}"
    );
    assert!(
        text.contains("1 covering test selected (test/a.test.mjs)"),
        "{text}"
    );
    let stryker: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.out().join("mutation-report.json")).unwrap(),
    )
    .unwrap();
    let statuses: Vec<&str> = stryker["files"]["src/lib.mjs"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["Killed", "Survived", "NoCoverage", "Ignored"]);
    let covered: Vec<&Value> = stryker["files"]["src/lib.mjs"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["coveredBy"])
        .collect();
    let a = serde_json::json!(["test/a.test.mjs"]);
    assert_eq!(covered, [&a, &a, &serde_json::json!([]), &Value::Null]);
    let junit = std::fs::read_to_string(fx.out().join("junit.xml")).unwrap();
    assert!(junit.contains("type=\"not covered\""), "{junit}");
    let sarif_path = sarif;
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).unwrap()).unwrap();
    let rules: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["survived", "not-covered"]);
    if let Some(errors) = testkit::sarif_errors(&sarif_path) {
        assert!(errors.is_empty(), "{errors:#?}");
    }
    let html = std::fs::read_to_string(fx.out().join("mutants.html")).unwrap();
    assert!(html.contains("data-verdict=\"not-covered\""));
    // Coverage went to the session folder: the checkout was whole before every mutant, and
    // the user's tree is untouched.
    for r in report["mutants"].as_array().unwrap() {
        assert_eq!(r["restored_before"], Value::Null, "{r}");
    }
    assert_eq!(fx.repo.status(), "");
    // `not covered` alone is a finding: exit 1, never counted as a kill.
    let alone = fx.out.path().join("alone");
    run_in(
        &fx,
        "mutants.toml",
        &alone,
        mark.path(),
        &["--only", "never"],
    )
    .assert_exit(1);
    assert_eq!(report_in(&alone)["tally"]["killed"], 0);
}

#[test]
fn a_wrong_coverage_map_never_changes_a_verdict() {
    if !have_node() {
        return;
    }
    // Under coverage the checking test returns at once, so the map says no test reaches
    // `half` and only the test that checks nothing reaches `twice`: both wrong.
    let lib = "export function half(x) {\n  return x / 2;\n}\nexport function twice(x) {\n  return x * 2;\n}\n";
    let runs = "import { test } from 'node:test';\nimport { twice } from '../src/lib.mjs';\ntest('runs', () => { twice(1); });\n";
    let checks = "import { test } from 'node:test';
import assert from 'node:assert';
test('checks', async () => {
  if (process.env.NODE_V8_COVERAGE) return;
  const { half, twice } = await import('../src/lib.mjs');
  assert.equal(half(4), 2);
  assert.equal(twice(2), 4);
});
";
    let mutants = format!(
        "{}{}",
        node_mutant("half", "x / 2", "x * 2", ""),
        node_mutant("twice", "x * 2", "x * 3", "")
    );
    let suite = "[suites.t]\nrun = \"node --test test/\"\ntimeout = \"60s\"\n";
    let fx = repo_with(&[
        ("src/lib.mjs", lib),
        ("test/runs.test.mjs", runs),
        ("test/checks.test.mjs", checks),
        (
            "select.toml",
            &format!("{suite}select = \"node --test {{files}}\"\n\n{mutants}"),
        ),
        ("whole.toml", &format!("{suite}\n{mutants}")),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let whole_out = fx.out.path().join("whole");
    run_in(&fx, "whole.toml", &whole_out, mark.path(), &[]).assert_exit(0);
    let out = run_in(&fx, "select.toml", &fx.out(), mark.path(), &[]);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        verdicts(&report_in(&whole_out)),
        "{}",
        out.both()
    );
    assert_eq!(
        verdicts(&report),
        [
            ("half".to_string(), "killed".to_string()),
            ("twice".into(), "killed".into())
        ]
    );
    out.assert_exit(0);
    // The map was used, and was wrong both ways: the whole suite decided.
    assert_eq!(selection(&report, "half")["count"], 0);
    let twice = selection(&report, "twice");
    assert_eq!(twice["tests"], serde_json::json!(["test/runs.test.mjs"]));
    assert_eq!(twice["whole"], true);
    assert_eq!(twice["covering"]["status"], "exit 0");
}

#[test]
fn a_map_is_kept_for_the_same_code_and_suite_and_made_again_when_the_code_changes() {
    if !have_node() {
        return;
    }
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {{files}}\"\ntimeout = \"60s\"\n\n{}{}",
        node_mutant("add minus", "a + b", "a - b", ""),
        node_mutant("never", "return 2", "return 4", ""),
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("test/a.test.mjs", NODE_A),
        ("test/watch.test.mjs", NODE_WATCH),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = fx.out.path().join(name);
        let ran = run_in(&fx, "mutants.toml", &out, mark.path(), extra);
        ran.assert_exit(1);
        let mapped = out.join("logs/coverage-t.log").exists();
        (verdicts(&report_in(&out)), mapped, ran.both())
    };
    let (first, mapped, _) = run("first", &[]);
    assert!(mapped);
    // The same code and suite: the kept map, no coverage run, the same verdicts.
    let (again, mapped, said) = run("again", &[]);
    assert!(!mapped, "{said}");
    assert!(
        said.contains("kept from an earlier run of this code"),
        "{said}"
    );
    assert_eq!(again, first);
    let (_, mapped, _) = run("uncached", &["--no-cache"]);
    assert!(mapped);
    // Another test file: other code, mapped again.
    fx.repo
        .write("test/c.test.mjs", NODE_A.replace("adds", "adds again"));
    fx.repo.commit_all("another test");
    let (changed, mapped, _) = run("changed", &[]);
    assert!(mapped);
    assert_eq!(changed, first);
}

#[test]
fn a_select_command_that_runs_no_test_kills_nothing() {
    if !have_node() {
        return;
    }
    // node refuses the option and runs no test: no failure of a test, so the whole suite
    // decides, and the survivor stays one.
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test --no-such-option {{files}}\"\ntimeout = \"60s\"\n\n{}",
        node_mutant("weak", "x * 2", "x * 3", ""),
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("test/a.test.mjs", NODE_A),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [("weak".to_string(), "SURVIVED".to_string())],
        "{}",
        out.both()
    );
    out.assert_exit(1);
    let weak = selection(&report, "weak");
    assert_eq!(weak["whole"], true);
    assert_ne!(weak["covering"]["status"], "exit 0");
}

#[test]
fn a_suite_that_fails_with_coverage_on_has_no_map_and_runs_whole() {
    if !have_node() {
        return;
    }
    let fails_under_coverage = "import { test } from 'node:test';\ntest('no coverage', () => { if (process.env.NODE_V8_COVERAGE) throw new Error('x'); });\n";
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {{files}}\"\ntimeout = \"60s\"\n\n{}",
        node_mutant("add minus", "a + b", "a - b", ""),
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("test/a.test.mjs", NODE_A),
        ("test/b.test.mjs", fails_under_coverage),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    out.assert_exit(0);
    let said = out.both();
    assert!(
        said.contains("coverage: suite t: no map (the suite did not pass with coverage on"),
        "{said}"
    );
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [("add minus".to_string(), "killed".to_string())]
    );
    assert_eq!(row(&report, "add minus")["run"]["selection"], Value::Null);
}

#[test]
fn cargo_mutants_run_the_tests_of_their_crate_and_its_dependents_first() {
    if !testkit::needs::program(
        "select-cargo",
        "cargo",
        &["--version"],
        "install Rust's cargo",
    ) {
        return;
    }
    let crate_toml = |name: &str, deps: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}")
    };
    // `c` never links `a`: its test records which mutant of `a` was in place when it ran.
    let watch = r#"#[test]
fn watches() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../a/src/lib.rs")).unwrap();
    for m in ["x - y", "y + x"] {
        if lib.contains(m) {
            let mark = std::path::Path::new(&std::env::var("MARK").unwrap()).join("watch");
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(mark).unwrap();
            std::io::Write::write_all(&mut f, format!("{m}\n").as_bytes()).unwrap();
        }
    }
}
"#;
    let spec = "[suites.cargo]\nrun = \"cargo test -q --offline\"\nselect = \"cargo test -q --offline {tests}\"\ntimeout = \"300s\"\n\n\
        [[mutant]]\nname = \"add minus\"\nfile = \"a/src/lib.rs\"\nanchor = \"x + y\"\nreplace = \"x - y\"\nsuite = \"cargo\"\n\n\
        [[mutant]]\nname = \"swapped\"\nfile = \"a/src/lib.rs\"\nanchor = \"x + y\"\nreplace = \"y + x\"\nsuite = \"cargo\"\n";
    let fx = repo_with(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\", \"c\"]\nresolver = \"2\"\n"),
        ("a/Cargo.toml", &crate_toml("a", "")),
        ("a/src/lib.rs", "pub fn add(x: i32, y: i32) -> i32 {\n    x + y\n}\n"),
        ("b/Cargo.toml", &crate_toml("b", "a = { path = \"../a\" }\n")),
        (
            "b/src/lib.rs",
            "pub fn twice(x: i32) -> i32 {\n    a::add(x, x)\n}\n\n#[test]\nfn twice_one() {\n    assert_eq!(twice(1), 2);\n}\n",
        ),
        ("c/Cargo.toml", &crate_toml("c", "")),
        ("c/src/lib.rs", watch),
        ("mutants.toml", spec),
    ]);
    fx.repo.write(".gitignore", "target/\nCargo.lock\n");
    fx.repo.commit_all("ignore the build");
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("add minus".to_string(), "killed".to_string()),
            ("swapped".into(), "SURVIVED".into())
        ],
        "{}",
        out.both()
    );
    out.assert_exit(1);
    // Killed by the tests of `a` and of `b`, which depends on it; `c` never ran with it.
    let killed = selection(&report, "add minus");
    assert_eq!(
        killed["tests"],
        serde_json::json!(["--package=a", "--package=b"])
    );
    assert_eq!(killed["whole"], false);
    // The survivor passed them, then the whole workspace's tests, `c`'s among them.
    assert_eq!(selection(&report, "swapped")["whole"], true);
    assert_eq!(seen(mark.path(), "watch"), "y + x\n");
}

const PY_CALC: &str = "LIMIT = 10


def add(a, b):
    return a + b


def never(x):
    if x > 1:
        return 2
    return 3
";

/// Ids with a space, brackets, a quote and a `$`.
const PY_ODD: &str = r#"import pytest
from pkg.calc import add


@pytest.mark.parametrize("v", ["a b", "x[1]", "it's $HOME"], ids=["a b", "x[1]", "it's $HOME"])
def test_add(v):
    assert add(1, 2) == 3
"#;

/// Never imports the code: records which mutant was in place whenever it ran.
const PY_WATCH: &str = r#"import os

def test_watch():
    text = open(os.path.join(os.path.dirname(__file__), "..", "pkg", "calc.py")).read()
    for m in ["a - b", "return 4", "LIMIT = 11"]:
        if m in text:
            with open(os.path.join(os.environ["MARK"], "watch"), "a") as f:
                f.write(m + "\n")
"#;

fn py_mutant(name: &str, anchor: &str, replace: &str) -> String {
    format!("[[mutant]]\nname = \"{name}\"\nfile = \"pkg/calc.py\"\nanchor = \"{anchor}\"\nreplace = \"{replace}\"\nsuite = \"py\"\n\n")
}

/// pytest with `select` and a derived timeout (none in the spec).
const PY_SUITE_DERIVED: &str = "[suites.py]\nrun = \"python3 -m pytest -q -p no:cacheprovider\"\nselect = \"python3 -m pytest -q -p no:cacheprovider {tests}\"\n\n";

const PY_SUITE: &str = "[suites.py]\nrun = \"python3 -m pytest -q -p no:cacheprovider\"\nselect = \"python3 -m pytest -q -p no:cacheprovider {tests}\"\ntimeout = \"60s\"\n\n";

#[test]
fn pytest_ids_with_spaces_and_brackets_reach_the_runner_intact_and_module_lines_reach_every_test() {
    if !have_coverage_py() {
        return;
    }
    let spec = format!(
        "{PY_SUITE}{}{}{}",
        py_mutant("add minus", "a + b", "a - b"),
        py_mutant("never", "return 2", "return 4"),
        py_mutant("limit", "LIMIT = 10", "LIMIT = 11"),
    );
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", PY_CALC),
        ("tests/test_odd.py", PY_ODD),
        ("tests/test_watch.py", PY_WATCH),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    out.assert_exit(1);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("add minus".to_string(), "killed".to_string()),
            ("never".into(), "not covered".into()),
            ("limit".into(), "SURVIVED".into()),
        ],
        "{}",
        out.both()
    );
    let ids = serde_json::json!([
        "tests/test_odd.py::test_add[a b]",
        "tests/test_odd.py::test_add[it's $HOME]",
        "tests/test_odd.py::test_add[x[1]]"
    ]);
    let killed = selection(&report, "add minus");
    assert_eq!(killed["tests"], ids);
    assert_eq!(killed["whole"], false);
    // Each id ran as itself (three failed, as the runner names them), and nothing else did.
    let run = &row(&report, "add minus")["run"];
    assert_eq!(
        run["counts"],
        serde_json::json!({"passed": 0, "failed": 3, "skipped": 0})
    );
    let watched = seen(mark.path(), "watch");
    assert!(!watched.contains("a - b"), "{watched}");
    assert_eq!(fx.repo.status(), "");
    // A line run at import (module level) counts for every test: the whole suite, at once.
    let limit = selection(&report, "limit");
    assert_eq!(
        (limit["every"].as_bool(), limit["whole"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(limit["covering"], Value::Null);
    assert!(watched.contains("LIMIT = 11"), "{watched}");
    assert_eq!(selection(&report, "never")["count"], 0);
    assert!(watched.contains("return 4"), "{watched}");
}

#[test]
fn a_list_past_the_inline_size_goes_through_a_file_as_one_run() {
    if !have_coverage_py() {
        return;
    }
    // 600 ids of about 200 bytes: past what one `sh -c` argument may hold inline.
    let many = format!(
        "import pytest\nfrom pkg.calc import add\n\nIDS = [\"{}\" + str(i) for i in range(600)]\n\n\n@pytest.mark.parametrize(\"v\", IDS, ids=IDS)\ndef test_add(v):\n    assert add(1, 2) == 3\n",
        "long id ".repeat(25)
    );
    let spec = format!("{PY_SUITE}{}", py_mutant("add minus", "a + b", "a - b"));
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", PY_CALC),
        ("tests/test_many.py", &many),
        ("tests/test_watch.py", PY_WATCH),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    out.assert_exit(0);
    let report = fx.report();
    let killed = selection(&report, "add minus");
    assert_eq!(killed["count"], 600, "{}", out.both());
    let first = killed["tests"][0].as_str().unwrap();
    assert!(
        first.ends_with(&format!("{}0]", "long id ".repeat(25))),
        "{first}"
    );
    assert_eq!(killed["whole"], false);
    assert_eq!(
        row(&report, "add minus")["run"]["counts"],
        serde_json::json!({"passed": 0, "failed": 600, "skipped": 0})
    );
    assert!(!seen(mark.path(), "watch").contains("a - b"));
}

/// Only `b.test.mjs` loads it.
const NODE_OTHER: &str = "export function twice(x) {
  return x * 2;
}
";

const NODE_B: &str = "import { test } from 'node:test';
import assert from 'node:assert';
import { twice } from '../src/other.mjs';
test('twice', () => { assert.equal(twice(2), 4); });
";

#[test]
fn incremental_holds_a_mutant_to_the_files_its_covering_tests_ran() {
    if !have_node() {
        return;
    }
    // No `inputs`: without the map, any change to the code judges every mutant again.
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {{files}}\"\ntimeout = \"60s\"\n\n{}",
        node_mutant("add minus", "a + b", "a - b", ""),
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("src/other.mjs", NODE_OTHER),
        ("test/a.test.mjs", NODE_A),
        ("test/b.test.mjs", NODE_B),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = fx.out.path().join("table");
    let run = |extra: &[&str]| {
        let mut args = vec!["--incremental"];
        args.extend_from_slice(extra);
        run_in(&fx, "mutants.toml", &out, mark.path(), &args)
    };
    let reused = || row(&report_in(&out), "add minus")["reused"].clone();
    run(&[]).assert_exit(0);
    assert_eq!(reused(), Value::Null);

    // A file only another test runs: the verdict holds, nothing is judged.
    fx.repo
        .write("src/other.mjs", NODE_OTHER.replace("x * 2", "2 * x"));
    fx.repo.commit_all("other code");
    let dry = run(&["--dry-run"]);
    dry.assert_exit(0);
    run(&[]).assert_exit(0);
    assert_ne!(reused(), Value::Null, "{}", report_in(&out));

    // The covering test's own file changed: judged again, and the dry run lists it first.
    fx.repo.write(
        "test/a.test.mjs",
        NODE_A.replace("add(1, 2), 3", "add(2, 2), 4"),
    );
    fx.repo.commit_all("the covering test");
    let dry = run(&["--dry-run"]);
    dry.assert_exit(1);
    assert!(dry.both().contains("add minus"), "{}", dry.both());
    run(&[]).assert_exit(0);
    assert_eq!(reused(), Value::Null);

    // A new test file the map has never seen may reach it: judged again.
    fx.repo
        .write("test/c.test.mjs", NODE_A.replace("adds", "adds too"));
    fx.repo.commit_all("a new test file");
    run(&["--dry-run"]).assert_exit(1);
}

/// Counts down, one step a turn: `n -= 0` never ends.
const PY_COUNT: &str = "def down(n):\n    steps = 0\n    while n > 0:\n        n -= 1\n        steps += 1\n    return steps\n";

/// Runs `fx`'s spec, whose one mutant `endless` hangs its covering tests `tests`: the covering
/// tests' own run decides, at the floor of a derived timeout, well before the whole suite's.
fn assert_hang_called_at_the_covering_bound(fx: &Fixture, tests: Value) {
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [("endless".to_string(), "killed (hang)".to_string())],
        "{}",
        out.both()
    );
    out.assert_exit(0);
    let whole = report["baseline"][0]["mutant_timeout_secs"]
        .as_f64()
        .unwrap();
    assert!(whole >= 30.0, "the whole suite's bound: {whole}");
    let run = &row(&report, "endless")["run"];
    assert_eq!(run["selection"]["whole"], false);
    assert_eq!(run["selection"]["tests"], tests);
    assert_eq!(run["timeout_secs"].as_f64(), Some(20.0), "{run}");
    let took = run["duration_secs"].as_f64().unwrap();
    assert!(took < whole - 5.0, "stopped at {took} s of {whole}");
}

#[test]
fn a_node_test_files_hang_is_called_at_its_own_derived_timeout() {
    if !have_node() {
        return;
    }
    // As with pytest below, with node's times per test file: a slow file the mutant never
    // reaches sets the whole suite's bound; the covering file alone is quick.
    let spec = "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {files}\"\n\n[[mutant]]\nname = \"endless\"\nfile = \"src/count.mjs\"\nanchor = \"n -= 1\"\nreplace = \"n -= 0\"\nsuite = \"t\"\n";
    let fx = repo_with(&[
        (
            "src/count.mjs",
            "export function down(n) {\n  let steps = 0;\n  while (n > 0) {\n    n -= 1;\n    steps += 1;\n  }\n  return steps;\n}\n",
        ),
        (
            "test/count.test.mjs",
            "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { down } from '../src/count.mjs';\ntest('down', () => { assert.equal(down(3), 3); });\n",
        ),
        (
            "test/slow.test.mjs",
            "import { test } from 'node:test';\ntest('slow', async () => { await new Promise((r) => setTimeout(r, 6000)); });\n",
        ),
        ("mutants.toml", spec),
    ]);
    assert_hang_called_at_the_covering_bound(&fx, serde_json::json!(["test/count.test.mjs"]));
}

#[test]
fn a_hang_in_the_covering_tests_is_called_at_their_own_derived_timeout_not_the_whole_suites() {
    if !have_coverage_py() {
        return;
    }
    // No `timeout`: it is derived. A slow test that never reaches the mutated lines makes the
    // whole suite's bound five times its six seconds; the covering test alone is quick, so its
    // run is bounded by the floor of a derived timeout, 20 s.
    let spec = &format!("{PY_SUITE_DERIVED}[[mutant]]\nname = \"endless\"\nfile = \"pkg/count.py\"\nanchor = \"n -= 1\"\nreplace = \"n -= 0\"\nsuite = \"py\"\n");
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/count.py", PY_COUNT),
        (
            "tests/test_count.py",
            "from pkg.count import down\n\n\ndef test_down():\n    assert down(3) == 3\n",
        ),
        (
            "tests/test_slow.py",
            "import time\n\n\ndef test_slow():\n    time.sleep(6)\n",
        ),
        ("mutants.toml", spec),
    ]);
    assert_hang_called_at_the_covering_bound(
        &fx,
        serde_json::json!(["tests/test_count.py::test_down"]),
    );
}

#[test]
fn a_fixture_set_up_once_for_many_tests_counts_in_every_covering_runs_bound() {
    if !have_coverage_py() {
        return;
    }
    // The session fixture's 5 s are paid by the first test in the whole run, but by the
    // covering test alone too: its bound must hold them (5x, over the 20 s floor), or a slow
    // setup would be called a hang.
    let spec = &format!(
        "{PY_SUITE_DERIVED}{}",
        py_mutant("add minus", "a + b", "a - b")
    );
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", PY_CALC),
        (
            "tests/test_fix.py",
            "import time\n\nimport pytest\n\nfrom pkg.calc import add\n\n\n@pytest.fixture(scope=\"session\")\ndef slow():\n    time.sleep(5)\n    return 1\n\n\ndef test_a(slow):\n    assert slow == 1\n\n\ndef test_b(slow):\n    assert add(1, 2) == 3\n",
        ),
        ("mutants.toml", spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    out.assert_exit(0);
    let report = fx.report();
    let run = &row(&report, "add minus")["run"];
    assert_eq!(run["verdict"], "killed", "{run}");
    assert_eq!(
        run["selection"]["tests"],
        serde_json::json!(["tests/test_fix.py::test_b"])
    );
    let bound = run["timeout_secs"].as_f64().unwrap();
    assert!(
        bound >= 25.0,
        "the covering run's bound leaves out the fixture: {run}"
    );
}

#[test]
fn incremental_holds_a_pytest_kill_to_its_covering_test_files_and_a_survivor_to_every_test() {
    if !have_coverage_py() {
        return;
    }
    // pytest imports every test file when the whole suite runs, so each one's module-level
    // lines run outside any test. A kill by the covering tests alone loaded only their files;
    // a verdict of the whole suite (here `not covered`) read them all.
    let spec = format!(
        "{PY_SUITE}{}{}",
        py_mutant("add minus", "a + b", "a - b"),
        py_mutant("never", "return 2", "return 4"),
    );
    let never_test =
        "from pkg.calc import never\n\n\ndef test_never():\n    assert never(0) == 3\n";
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", PY_CALC),
        (
            "tests/test_add.py",
            "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        ),
        ("tests/test_never.py", never_test),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = fx.out.path().join("table");
    let run = |extra: &[&str]| {
        let mut args = vec!["--incremental"];
        args.extend_from_slice(extra);
        run_in(&fx, "mutants.toml", &out, mark.path(), &args)
    };
    let reused = |name: &str| !row(&report_in(&out), name)["reused"].is_null();
    run(&[]).assert_exit(1);
    let report = report_in(&out);
    assert_eq!(
        verdicts(&report),
        [
            ("add minus".to_string(), "killed".to_string()),
            ("never".into(), "not covered".into()),
        ]
    );
    assert_eq!(selection(&report, "add minus")["whole"], false);

    // One line of the other test file: the kill holds; the whole suite's verdict is judged
    // again (that test could reach it now).
    fx.repo.write(
        "tests/test_never.py",
        never_test.replace("never(0)", "never(-1)"),
    );
    fx.repo.commit_all("another test file");
    run(&[]).assert_exit(1);
    assert!(reused("add minus"), "{}", report_in(&out));
    assert!(!reused("never"));

    // The covering test's own file: judged again.
    fx.repo.write(
        "tests/test_add.py",
        "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    );
    fx.repo.commit_all("the covering test");
    run(&[]).assert_exit(1);
    assert!(!reused("add minus"));
}

/// Whether the toolchain has rustup's `llvm-tools` (`llvm-profdata`, `llvm-cov`), which a
/// libtest map reads profiles with; skipped as `id` when not.
fn has_llvm_tools(id: &str) -> bool {
    let rustc = |arg: &str| {
        std::process::Command::new("rustc")
            .arg(arg)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (Some(sysroot), Some(version)) = (rustc("--print=sysroot"), rustc("-vV")) else {
        testkit::skip(id, "rustc does not run; install Rust");
        return false;
    };
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or_default();
    let bin = std::path::Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(host.trim())
        .join("bin");
    if bin.join("llvm-profdata").is_file() && bin.join("llvm-cov").is_file() {
        return true;
    }
    testkit::skip(
        id,
        "the toolchain has no llvm-profdata; rustup component add llvm-tools",
    );
    false
}

#[test]
fn cargo_tests_named_for_libtest_run_alone_first_from_rustcs_own_coverage() {
    if !testkit::needs::program(
        "select-libtest",
        "cargo",
        &["--version"],
        "install Rust's cargo",
    ) || !has_llvm_tools("select-libtest")
    {
        return;
    }
    let lib = "pub const LIMIT: i32 = 10;

pub fn add(x: i32, y: i32) -> i32 {
    x + y
}

pub fn sub(x: i32, y: i32) -> i32 {
    let f = |a: i32| a - y;
    f(x)
}

pub fn never(x: i32) -> i32 {
    if x > LIMIT {
        return 2;
    }
    3
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    static SET: AtomicBool = AtomicBool::new(false);

    #[test]
    fn adds() {
        assert_eq!(super::add(1, 2), 3);
    }

    #[test]
    fn subs() {
        assert_eq!(super::sub(3, 2), 1);
    }

    #[test]
    fn a_sets() {
        SET.store(true, Ordering::SeqCst);
    }

    // Needs `a_sets` run before it: alone, it fails with or without any mutant.
    #[test]
    fn b_needs_a() {
        assert_eq!(super::sub(5, 2), 3);
        assert!(SET.load(Ordering::SeqCst));
    }
}
";
    // Never calls the code: records which mutant was in place whenever it ran.
    let watch = r#"#[test]
fn watches() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    for m in ["a + y", "x * y", "return 5", "LIMIT: i32 = 11", "-(y - a)"] {
        if lib.contains(m) {
            let mark = std::path::Path::new(&std::env::var("MARK").unwrap()).join("watch");
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(mark).unwrap();
            std::io::Write::write_all(&mut f, format!("{m}\n").as_bytes()).unwrap();
        }
    }
}
"#;
    let mutant = |name: &str, anchor: &str, replace: &str| {
        format!("[[mutant]]\nname = \"{name}\"\nfile = \"src/lib.rs\"\nanchor = \"{anchor}\"\nreplace = \"{replace}\"\nsuite = \"cargo\"\n\n")
    };
    // One test thread: `a_sets` runs before `b_needs_a` in the whole suite.
    let spec = [
        "[suites.cargo]\nrun = \"cargo test -q --offline -- --test-threads=1\"\nselect = \"cargo test -q --offline --tests -- --exact --skip watches --test-threads=1 {tests}\"\ntimeout = \"300s\"\n\n".to_string(),
        mutant("sub plus", "|a: i32| a - y", "|a: i32| a + y"),
        mutant("add times", "    x + y", "    x * y"),
        mutant("never five", "        return 2;", "        return 5;"),
        mutant("limit", "LIMIT: i32 = 10", "LIMIT: i32 = 11"),
        // The same difference: only a test that fails anyway would call it killed.
        mutant("sub the same", "|a: i32| a - y", "|a: i32| -(y - a)"),
    ]
    .concat();
    let fx = repo_with(&[
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("src/lib.rs", lib),
        (
            "tests/adding.rs",
            "#[test]\nfn it_adds() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
        ),
        ("tests/watch.rs", watch),
        (".gitignore", "target/\nCargo.lock\n"),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    let said = out.both();
    // The template's `--skip` holds for the map: the watching test is neither run alone nor
    // mapped (its file's functions are known, none of them run).
    assert!(
        said.contains("coverage: suite cargo: 5 tests over 3 files"),
        "{said}"
    );
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("sub plus".to_string(), "killed".to_string()),
            ("add times".into(), "killed".into()),
            ("never five".into(), "not covered".into()),
            ("limit".into(), "SURVIVED".into()),
            ("sub the same".into(), "SURVIVED".into()),
        ],
        "{said}"
    );
    out.assert_exit(1);
    // The tests that ran the mutated function, and only they, ran first: both tests of `add`
    // (a unit test and an integration test), and the kill was proved by the first that
    // failed, run alone with the mutant (it had passed alone without it).
    let add = selection(&report, "add times");
    assert_eq!(
        add["tests"],
        serde_json::json!(["tests::adds", "it_adds"]),
        "{said}"
    );
    assert_eq!(add["whole"], false);
    assert_eq!(add["alone"]["test"], "tests::adds", "{add}");
    assert_eq!(add["alone"]["failed"], true, "{add}");
    let alone_log = fx.out().join(add["alone"]["log"].as_str().unwrap());
    assert!(std::fs::read_to_string(alone_log)
        .unwrap()
        .contains("tests::adds"));
    // `b_needs_a` fails alone without any mutant: its failure proves nothing, and the whole
    // suite decided: the real change is killed, the equivalent one survives.
    for name in ["sub plus", "sub the same"] {
        let sub = selection(&report, name);
        assert_eq!(
            sub["tests"],
            serde_json::json!(["tests::b_needs_a", "tests::subs"]),
            "{sub}"
        );
        assert_eq!(sub["whole"], true, "{sub}");
        assert_eq!(sub["alone"], serde_json::Value::Null, "{sub}");
    }
    // A function no test runs: the whole suite confirms it.
    let never = selection(&report, "never five");
    assert_eq!(
        (never["count"].as_u64(), never["whole"].as_bool()),
        (Some(0), Some(true))
    );
    // A `const` is in no function: every test reaches it, and the whole suite ran.
    assert_eq!(selection(&report, "limit")["every"], true);
    // The watching test ran with the mutants the whole suite passed with, never with the one
    // the covering tests killed (the whole suite that killed `sub plus` stopped at its first
    // failed test, before the watching test's binary).
    assert_eq!(
        seen(mark.path(), "watch"),
        "return 5\nLIMIT: i32 = 11\n-(y - a)\n"
    );
    // No selection was checked without the mutant first: each test ran alone in the map.
    assert!(
        !said.contains("on the unmutated code before the first mutant"),
        "{said}"
    );
    // The instrumented build went to the cache, not to the checkout or the tree.
    assert!(fx.out.path().join("cache/coverage/cargo-target").is_dir());
    assert!(!fx.repo.path().join("target").exists());
    // A second run of the same code reads the kept map: no instrumented run again, the same
    // verdicts (which tests passed alone kept with it).
    let again = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    assert!(
        again
            .both()
            .contains("coverage: suite cargo: 5 tests over 3 files (kept"),
        "{}",
        again.both()
    );
    let report_again = fx.report();
    assert_eq!(verdicts(&report_again), verdicts(&report));
    assert_eq!(
        selection(&report_again, "add times")["alone"]["failed"],
        true
    );
}
