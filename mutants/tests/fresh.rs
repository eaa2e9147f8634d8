//! Every verdict holds on everyday projects: tools that trust modification times (Python's
//! bytecode) see every swap and restore, runner caches (pytest's) start empty in each run, and
//! nothing a suite writes into its checkout's `.git` blinds the check that every mutant starts
//! from the whole tree.

use crate::common::*;

/// Six functions, each one line a same-size mutant can break.
const OPS: &str = "def add(a, b):\n    return a + b\n\n\
def sub(a, b):\n    return a - b\n\n\
def mul(a, b):\n    return a * b\n\n\
def big(a, b):\n    return a > b\n\n\
def small(a, b):\n    return a < b\n\n\
def same(a, b):\n    return a == b\n";

/// A test script in plain Python (fast: a mutant every few tens of milliseconds). It refuses to
/// run when Python would not write bytecode, so the test cannot pass by not exercising it.
const CHECK: &str = r#"import sys
if sys.dont_write_bytecode:
    print("bytecode is off: this check proves nothing"); sys.exit(3)
import os
from pkg import consts, ops
cases = [
    ("consts", consts.LIMIT == 1),
    ("add", ops.add(2, 3) == 5),
    ("sub", ops.sub(5, 3) == 2),
    ("mul", ops.mul(2, 3) == 6),
    ("big", ops.big(3, 2) is True and ops.big(2, 3) is False),
    ("small", ops.small(2, 3) is True and ops.small(3, 2) is False),
    ("same", ops.same(2, 2) is True and ops.same(2, 3) is False),
]
failed = [n for n, ok in cases if not ok]
for n in failed:
    print("FAIL: test_" + n)
print(f"{len(cases) - len(failed)} passed, {len(failed)} failed")
if os.environ.get("REWRITE"):
    # A generator that rewrites a tracked module (same size) and compiles it.
    import py_compile
    with open("pkg/consts.py", "w") as f:
        f.write("LIMIT = 2\n")
    py_compile.compile("pkg/consts.py", doraise=True)
sys.exit(1 if failed else 0)
"#;

/// Twelve same-size mutants of `pkg/ops.py`: each kill next to a control on the same line, so a
/// stale `.pyc` of either shows as the other's verdict.
const PAIRS: &[(&str, &str, &str)] = &[
    ("add", "return a + b", "return a - b"),
    ("add", "return a + b", "return b + a"),
    ("same", "return a == b", "return a != b"),
    ("same", "return a == b", "return b == a"),
    ("mul", "return a * b", "return a + b"),
    ("mul", "return a * b", "return b * a"),
    ("big", "return a > b", "return a < b"),
    ("big", "return a > b", "return b < a"),
    ("small", "return a < b", "return a > b"),
    ("small", "return a < b", "return b > a"),
    ("sub", "return a - b", "return a + b"),
    ("sub", "return a - b", "return a -b "),
];

fn python3() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        testkit::skip("python3", "python3 is not installed");
    }
    ok
}

/// A Python project with `.gitignore` naming `__pycache__/`, its suite `run`, and the twelve
/// mutants; returns the fixture and the verdicts each mutant must get.
fn python_project(run: &str, env: &str) -> (Fixture, Vec<(String, String)>) {
    python_project_in(run, env, &(0..PAIRS.len()).collect::<Vec<_>>())
}

/// [`python_project`] with the mutants in the order `order` gives (indices into [`PAIRS`]).
fn python_project_in(run: &str, env: &str, order: &[usize]) -> (Fixture, Vec<(String, String)>) {
    let mut spec = format!("[suites.py]\nrun = '''{run}'''\ntimeout = \"60s\"\n{env}\n");
    let mut want = Vec::new();
    for &k in order {
        let (func, anchor, replace) = PAIRS[k];
        let control = k % 2 == 1;
        let name = if control {
            format!("control {k}: {func} reordered")
        } else {
            format!("{func} broken {k}")
        };
        spec.push_str(&format!(
            "[[mutant]]\nname = \"{name}\"\nfile = \"pkg/ops.py\"\nanchor = '''{anchor}'''\nreplace = '''{replace}'''\nsuite = \"py\"\n{}\n",
            if control { "expect = \"survive\"\n" } else { "" }
        ));
        want.push((
            name,
            if control { "control held" } else { "killed" }.to_string(),
        ));
    }
    let fx = Fixture::new(&spec);
    fx.repo
        .write("pkg/__init__.py", "")
        .write("pkg/ops.py", OPS)
        .write("pkg/consts.py", "LIMIT = 1\n")
        .write("check.py", CHECK)
        .write(".gitignore", "__pycache__/\n.pytest_cache/\n");
    fx.repo.commit_all("python project");
    (fx, want)
}

/// The bytecode case: Python trusts a `.pyc` whose source size and whole-second mtime match,
/// and here every mutant is the same size and is written within a second of the last run.
#[test]
fn python_bytecode_never_stands_in_for_a_mutant_or_the_original() {
    if !python3() {
        return;
    }
    // The suite turns bytecode on, as it is on users' machines.
    let (fx, want) = python_project("unset PYTHONDONTWRITEBYTECODE; python3 check.py", "");
    let out = fx.run(&["--jobs", "1"]);
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report()), want, "{out}");
}

/// The same with `PYTHONPYCACHEPREFIX`: the bytecode lives outside the checkout, in one tree
/// shared by every checkout and every run.
#[test]
fn python_bytecode_under_a_shared_pycache_prefix_never_stands_in_either() {
    if !python3() {
        return;
    }
    let prefix = tempfile::tempdir().unwrap();
    let run = format!(
        "unset PYTHONDONTWRITEBYTECODE; PYTHONPYCACHEPREFIX='{}' python3 check.py",
        prefix.path().display()
    );
    let (fx, want) = python_project(&run, "");
    for _ in 0..2 {
        let out = fx.run(&["--jobs", "2"]);
        out.assert_exit(0);
        assert_eq!(verdicts(&fx.report()), want, "{out}");
    }
}

/// The repair: a suite rewrites a tracked module with other bytes of the same size and compiles
/// it; the checkout is put back within the same second, and the next run must not get the
/// suite's bytecode for the tracked source.
#[test]
fn a_module_the_suite_rewrote_is_put_back_where_bytecode_sees_it() {
    if !python3() {
        return;
    }
    let (fx, want) = python_project(
        "unset PYTHONDONTWRITEBYTECODE; python3 check.py",
        "env = { REWRITE = \"1\" }",
    );
    let out = fx.run(&["--jobs", "1"]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(verdicts(&report), want, "{out}");
    let after = row(&report, "add broken 0")["restored_after"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(after.contains("pkg/consts.py"), "{after:?}");
}

/// A suite that tells its checkout's git to stop looking (file modes, case, attributes, the
/// work tree itself) and then drops a script's exec bit: the next mutant still starts whole.
#[test]
fn a_suite_that_blinds_its_checkouts_git_cannot_hide_what_it_changed() {
    let test = r#"./tool.sh || { echo "0 passed, 1 failed"; exit 1; }
. ./lib.sh
[ "$(greet)" = hello ] || { echo "FAIL: test_greet"; echo "0 passed, 1 failed"; exit 1; }
git config core.fileMode false
git config core.ignoreCase true
git config core.trustctime false
git config core.checkStat minimal
printf '* -text -diff\n' > .git/info/attributes
printf 'tool.sh\n' >> .git/info/exclude
chmod -x tool.sh
echo "1 passed, 0 failed"
"#;
    let mut spec = SUITE.to_string();
    spec.push_str(&mutant(
        "greet shouts",
        "echo \"hello\"",
        "echo \"HELLO\"",
        "",
    ));
    spec.push_str(&mutant(
        "control: spin spaced",
        "spin() { :; }",
        "spin() { : ; }",
        "expect = \"survive\"",
    ));
    spec.push_str(&mutant(
        "control: add spaced",
        "add() { echo $(( $1 + $2 )); }",
        "add() { echo $(( $1 +  $2 )); }",
        "expect = \"survive\"",
    ));
    let fx = Fixture::new(&spec);
    fx.repo
        .write("test.sh", test)
        .write("tool.sh", "#!/bin/sh\nexit 0\n");
    fx.repo.chmod_x("tool.sh");
    fx.repo.commit_all("a suite that needs tool.sh executable");
    let out = fx.run(&["--jobs", "1"]);
    out.assert_exit(0);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("greet shouts".into(), "killed".into()),
            ("control: spin spaced".into(), "control held".into()),
            ("control: add spaced".into(), "control held".into()),
        ],
        "{out}"
    );
    let after = row(&report, "control: spin spaced")["restored_after"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(after.contains("tool.sh"), "{after:?}");
}

/// pytest's cache: with `--lf` a run after a kill runs only the test that failed last time,
/// and a mutant that breaks another test would pass. Each run starts from an empty cache, as
/// on a CI machine, even when the project's `.gitignore` keeps `.pytest_cache/` between runs.
#[test]
fn pytests_cache_of_the_last_run_never_decides_the_next() {
    if !python3() {
        return;
    }
    let has_pytest = std::process::Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_pytest {
        testkit::skip(
            "pytest",
            "pytest is not installed (python3 -m pip install pytest)",
        );
        return;
    }
    // Every kill first: after each, `--lf` would run only the test the last one broke.
    let order: Vec<usize> = (0..PAIRS.len())
        .step_by(2)
        .chain((1..PAIRS.len()).step_by(2))
        .collect();
    let (fx, want) = python_project_in(
        "python3 -m pytest -q --lf -p no:randomly test_ops.py",
        "",
        &order,
    );
    let tests: String = [
        ("add", "ops.add(2, 3) == 5"),
        ("sub", "ops.sub(5, 3) == 2"),
        ("mul", "ops.mul(2, 3) == 6"),
        ("big", "ops.big(3, 2) is True and ops.big(2, 3) is False"),
        (
            "small",
            "ops.small(2, 3) is True and ops.small(3, 2) is False",
        ),
        ("same", "ops.same(2, 2) is True and ops.same(2, 3) is False"),
    ]
    .iter()
    .map(|(name, check)| format!("\ndef test_{name}():\n    assert {check}\n"))
    .collect();
    fx.repo
        .write("test_ops.py", format!("from pkg import ops\n{tests}"));
    fx.repo.commit_all("pytest tests");
    // The environment names a cache folder of its own, as a CI job's (or an outer mutants
    // run's) `PYTEST_ADDOPTS` can: each run still starts from an empty one.
    let shared = fx.out.path().join("shared-pytest-cache");
    let addopts = format!("-o cache_dir={}", shared.display());
    let out_dir = fx.out();
    let out = testkit::Output::of(fx.cmd().env("PYTEST_ADDOPTS", &addopts).args([
        "run",
        "mutants.toml",
        "--out",
        out_dir.to_str().unwrap(),
        "--jobs",
        "1",
    ]));
    out.assert_exit(0);
    assert_eq!(verdicts(&fx.report()), want, "{out}");
}
