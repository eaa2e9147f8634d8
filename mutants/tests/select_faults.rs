//! Coverage maps and selections that would mislead, on real runners: covering tests that fail
//! without the mutant (one test needs another run before it) never kill it; pytest-cov's
//! `--cov` in a project's addopts leaves the map whole, not empty (an empty map would call
//! every survivor `not covered`); and `--incremental` holds a whole suite's verdict to every
//! test file, so a test added to any of them for a survivor gets it judged again.

use crate::common::*;

fn pytest_suite() -> &'static str {
    "[suites.py]\nrun = \"python3 -m pytest -q -p no:cacheprovider\"\nselect = \"python3 -m pytest -q -p no:cacheprovider {tests}\"\ntimeout = \"60s\"\n\n"
}

fn mutant(name: &str, file: &str, anchor: &str, replace: &str, suite: &str) -> String {
    format!("[[mutant]]\nname = \"{name}\"\nfile = \"{file}\"\nanchor = \"{anchor}\"\nreplace = \"{replace}\"\nsuite = \"{suite}\"\n\n")
}

const CALC: &str = "def add(a, b):\n    return a + b\n";

#[test]
fn covering_tests_that_fail_without_the_mutant_never_kill_it() {
    covering_tests_that_fail_without_the_mutant(false);
}

/// The same with a build step: the selections are checked before the first mutant, all at
/// once, and say so.
#[test]
fn covering_tests_that_fail_without_the_mutant_checked_first_never_kill_it() {
    covering_tests_that_fail_without_the_mutant(true);
}

fn covering_tests_that_fail_without_the_mutant(build: bool) {
    if !have_coverage_py() {
        return;
    }
    // test_b needs test_a's state, and only test_b calls add: run alone, it fails with or
    // without any mutant.
    let tests = "from pkg import calc\n\nSEEN = {}\n\n\ndef test_a():\n    SEEN['v'] = 1\n\n\ndef test_b():\n    assert SEEN['v'] == 1\n    assert calc.add(1, 2) == 3\n";
    let own = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n";
    let spec = format!(
        "{}{}{}",
        match build {
            true => pytest_suite().replacen("\n", "\nbuild = \"true\"\n", 1),
            false => pytest_suite().to_string(),
        },
        // The same sum: only a selection that fails anyway would call it killed.
        mutant("swapped", "pkg/calc.py", "a + b", "b + a", "py"),
        mutant("minus", "pkg/calc.py", "a + b", "a - b", "py"),
    );
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", CALC),
        ("tests/test_order.py", tests),
        ("tests/test_own.py", own),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("swapped".to_string(), "SURVIVED".to_string()),
            ("minus".into(), "killed".into()),
        ],
        "{}",
        out.both()
    );
    out.assert_exit(1);
    // The selection failed on the unmutated code: it never ran with a mutant, the whole suite
    // decided, and the row says why, with the log of that run.
    for name in ["swapped", "minus"] {
        let s = selection(&report, name);
        assert_eq!(s["whole"], true, "{s}");
        let unmutated = &s["unmutated"];
        assert!(unmutated["status"].as_str().is_some(), "{s}");
        let log = fx.out().join(unmutated["log"].as_str().unwrap());
        assert!(
            std::fs::read_to_string(&log).unwrap().contains("KeyError"),
            "{}",
            log.display()
        );
    }
    let table = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(table.contains("fail without the mutant too"), "{table}");
    let first = "select: 0 of 1 covering selection passed on the unmutated code before the first \
         mutant; 1 selection did not: its mutants run the whole suite";
    assert_eq!(out.both().contains(first), build, "{}", out.both());
}

#[test]
fn covering_tests_that_pass_without_the_mutant_still_kill_it_alone() {
    if !have_coverage_py() {
        return;
    }
    let own = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n";
    let other = "def test_other():\n    assert True\n";
    let spec = format!(
        "{}{}",
        pytest_suite(),
        mutant("minus", "pkg/calc.py", "a + b", "a - b", "py")
    );
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", CALC),
        ("tests/test_own.py", own),
        ("tests/test_other.py", other),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]).assert_exit(0);
    let report = fx.report();
    let s = selection(&report, "minus");
    assert_eq!(s["whole"], false, "{s}");
    assert!(s.get("unmutated").is_none(), "{s}");
}

#[test]
fn pytest_cov_in_the_projects_addopts_leaves_the_map_whole() {
    if !testkit::needs::python_modules("select-pytest-cov", &["pytest", "coverage", "pytest_cov"]) {
        return;
    }
    let tests = "from pkg.calc import add\n\n\ndef test_runs_add():\n    add(1, 1)\n";
    let spec = format!(
        "[suites.py]\nrun = \"python3 -m pytest -q\"\nselect = \"python3 -m pytest -q {{tests}}\"\ntimeout = \"60s\"\n\n{}",
        mutant("minus", "pkg/calc.py", "a + b", "a - b", "py")
    );
    let fx = repo_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", CALC),
        ("tests/test_calc.py", tests),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\naddopts = \"--cov=pkg --cov-fail-under=100 -p no:cacheprovider\"\n",
        ),
        ("mutants.toml", &spec),
    ]);
    fx.repo
        .write(".gitignore", "__pycache__/\n.pytest_cache/\n.coverage\n");
    fx.repo.commit_all("ignore coverage's data");
    let mark = tempfile::tempdir().unwrap();
    let out = run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]);
    let report = fx.report();
    // Its one test runs the line and checks nothing: a survivor, with its covering test named.
    assert_eq!(
        verdicts(&report),
        [("minus".to_string(), "SURVIVED".to_string())],
        "{}",
        out.both()
    );
    let s = selection(&report, "minus");
    assert_eq!(
        s["tests"],
        serde_json::json!(["tests/test_calc.py::test_runs_add"]),
        "{}",
        out.both()
    );
}

const NODE_LIB: &str = "export function add(a, b) {\n  return a + b;\n}\nexport function half(x) {\n  return x / 2;\n}\n";

#[test]
fn incremental_judges_a_whole_suites_verdict_again_when_any_test_file_changes() {
    if !have_node() {
        return;
    }
    let a = "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../src/lib.mjs';\ntest('adds', () => assert.equal(add(1, 2), 3));\n";
    let b = "import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('nothing of lib', () => assert.ok(true));\n";
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {{files}}\"\ntimeout = \"60s\"\n\n{}",
        mutant("half", "src/lib.mjs", "x / 2", "x / 3", "t")
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("test/a.test.mjs", a),
        ("test/b.test.mjs", b),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    let out = fx.out.path().join("table");
    let run = |extra: &[&str]| {
        let mut args = vec!["--incremental"];
        args.extend_from_slice(extra);
        run_in(&fx, "mutants.toml", &out, mark.path(), &args)
    };
    run(&[]).assert_exit(1);
    assert_eq!(
        verdicts(&report_in(&out)),
        [("half".to_string(), "not covered".to_string())]
    );
    // A test for it, added to a test file that never ran the library.
    fx.repo.write(
        "test/b.test.mjs",
        format!("{b}import {{ half }} from '../src/lib.mjs';\ntest('halves', () => assert.equal(half(4), 2));\n"),
    );
    fx.repo.commit_all("a test for half");
    let dry = run(&["--dry-run"]);
    dry.assert_exit(1);
    assert!(dry.stdout.contains("test/b.test.mjs"), "{}", dry.both());
    run(&[]).assert_exit(0);
    let report = report_in(&out);
    assert_eq!(
        verdicts(&report),
        [("half".to_string(), "killed".to_string())]
    );
    assert!(row(&report, "half")["reused"].is_null());
}

#[test]
fn a_selection_of_every_test_runs_the_whole_suite_once() {
    if !have_node() {
        return;
    }
    // Both test files call add: selecting them all is the whole suite, run once, with no
    // covering run before it (nor its check on the unmutated code).
    let test = |name: &str| {
        format!("import {{ test }} from 'node:test';\nimport assert from 'node:assert';\nimport {{ add }} from '../src/lib.mjs';\ntest('{name}', () => assert.equal(add(1, 2), 3));\n")
    };
    let spec = format!(
        "[suites.t]\nrun = \"node --test test/\"\nselect = \"node --test {{files}}\"\ntimeout = \"60s\"\n\n{}",
        mutant("add minus", "src/lib.mjs", "a + b", "a - b", "t")
    );
    let fx = repo_with(&[
        ("src/lib.mjs", NODE_LIB),
        ("test/a.test.mjs", &test("a")),
        ("test/b.test.mjs", &test("b")),
        ("mutants.toml", &spec),
    ]);
    let mark = tempfile::tempdir().unwrap();
    run_in(&fx, "mutants.toml", &fx.out(), mark.path(), &[]).assert_exit(0);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [("add minus".to_string(), "killed".to_string())]
    );
    let s = selection(&report, "add minus");
    assert_eq!(
        (
            s["count"].as_u64(),
            s["every"].as_bool(),
            s["whole"].as_bool()
        ),
        (Some(2), Some(true), Some(true)),
        "{s}"
    );
    assert!(s["covering"].is_null(), "{s}");
    let logs: Vec<String> = std::fs::read_dir(fx.out().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !logs
            .iter()
            .any(|l| l.ends_with(".select.log") || l.ends_with(".unmutated.log")),
        "{logs:?}"
    );
}
