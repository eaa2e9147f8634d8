//! Stop at the first failure (`fail_fast`), on real runners: a mutant that makes a flood of
//! tests fail, each failing one slow, is `killed` at its first failed test, named with its first
//! error line where the runner prints it then, long before the suite would have ended (never
//! `killed (hang)`); the same suite with `fail_fast = false` runs whole. A control runs whole
//! even when its suite kills it, and a suite whose passing output already reads as a failure
//! runs its mutants whole.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{Output, Repo};

use crate::common::{report_in, row, runners, Fixture, SUITE};

/// A project whose suite fails `failing` tests with the mutant in, each failing test slow.
struct Flood {
    files: Vec<(&'static str, String)>,
    /// The suite's command.
    run: String,
    file: &'static str,
    anchor: &'static str,
    replace: &'static str,
    /// The first failed test, as the runner names it.
    first: &'static str,
    /// The start of its first error line, when the runner prints it before the stop.
    error: Option<&'static str>,
    failing: u64,
    /// How long each failing test waits, in milliseconds.
    slow_ms: u64,
    /// Also a control (`expect = "survive"`) that the fail_fast suite kills.
    control: bool,
}

/// How many tests fail in each flood, each waiting `SLOW_MS` first: the whole run takes
/// seconds, the first failure a fraction of one.
const FLOOD: u64 = 600;
const SLOW_MS: u64 = 15;

struct Project {
    repo: Repo,
    out: tempfile::TempDir,
    tmp: tempfile::TempDir,
}

impl Project {
    fn new(flood: &Flood) -> Project {
        let repo = Repo::new();
        for (path, text) in &flood.files {
            repo.write(path, text);
        }
        let mutant = |name: &str, suite: &str, extra: &str| {
            format!(
                "[[mutant]]\nname = \"{name}\"\nfile = \"{}\"\nanchor = '''{}'''\nreplace = '''{}'''\nsuite = \"{suite}\"\n{extra}\n",
                flood.file, flood.anchor, flood.replace
            )
        };
        let mut spec = format!(
            "[suites.fast]\nrun = '''{run}'''\ntimeout = \"300s\"\n\n\
             [suites.whole]\nrun = '''{run}'''\ntimeout = \"300s\"\nfail_fast = false\n\n{}{}",
            mutant("fast", "fast", ""),
            mutant("whole", "whole", ""),
            run = flood.run
        );
        if flood.control {
            spec.push_str(&mutant("control", "fast", "expect = \"survive\""));
        }
        repo.write(
            ".gitignore",
            "target/\nnode_modules/\n__pycache__/\n.pytest_cache/\n",
        )
        .write("mutants.toml", &spec);
        repo.commit_all("flood");
        Project {
            repo,
            out: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn out(&self) -> PathBuf {
        self.out.path().join("report")
    }

    fn run(&self) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
        testkit::hermetic(&mut cmd);
        cmd.current_dir(self.repo.path())
            .env("TMPDIR", self.tmp.path())
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .args(["run", "mutants.toml", "--no-canary", "--jobs", "1", "--out"])
            .arg(self.out());
        let mut cmd = assert_cmd::Command::from_std(cmd);
        cmd.timeout(Duration::from_secs(600));
        Output::of(&mut cmd)
    }
}

/// Runs `flood` and checks the stop, the whole run beside it, and the reports.
fn check(flood: Flood) {
    let p = Project::new(&flood);
    let out = p.run();
    out.assert_exit(if flood.control { 1 } else { 0 });
    let report = report_in(&p.out());
    let fast = &row(&report, "fast")["run"];
    let whole = &row(&report, "whole")["run"];
    assert_eq!(row(&report, "fast")["verdict"], "killed", "{fast}");
    assert_eq!(row(&report, "whole")["verdict"], "killed", "{whole}");
    assert_eq!(fast["hang"], false, "{fast}");
    assert_eq!(fast["status"], "stopped", "{fast}");
    let first = &fast["first_failure"];
    assert_eq!(first["test"], flood.first, "{fast}");
    assert_eq!(fast["failed_tests"][0], flood.first, "{fast}");
    match flood.error {
        Some(start) => {
            let error = first["error"].as_str().unwrap_or_default();
            assert!(error.starts_with(start), "{error:?} {fast}");
            assert_eq!(fast["first_error"], first["error"]);
        }
        None => assert_eq!(first["error"], Value::Null, "{fast}"),
    }
    // The whole run: every failure counted, no stop recorded.
    assert!(whole.get("first_failure").is_none(), "{whole}");
    assert_eq!(whole["counts"]["failed"], flood.failing, "{whole}");
    let secs = |run: &Value, key: &str| run[key].as_f64().unwrap();
    let whole_secs = secs(whole, "duration_secs");
    let flood_secs = (flood.failing * flood.slow_ms) as f64 / 1000.0;
    assert!(whole_secs >= flood_secs, "{whole}");
    // Stopped long before the flood would have ended (whatever the start-up and a build took
    // in both), let alone the timeout; the stop's own time is within the run's.
    let fast_secs = secs(fast, "duration_secs");
    assert!(
        whole_secs - fast_secs > 0.7 * flood_secs,
        "{fast_secs} vs {whole_secs}"
    );
    assert!(fast_secs < 300.0 / 4.0, "{fast}");
    assert!(secs(first, "secs") <= fast_secs, "{fast}");
    let table = std::fs::read_to_string(p.out().join("mutants.txt")).unwrap();
    assert!(table.contains("killed (first failure)"), "{table}");
    assert!(table.contains(flood.first), "{table}");
    let stryker: Value = serde_json::from_str(
        &std::fs::read_to_string(p.out().join("mutation-report.json")).unwrap(),
    )
    .unwrap();
    let killed_by = stryker["files"][flood.file]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["description"] == "fast")
        .map(|m| m["killedBy"][0].clone());
    assert_eq!(killed_by, Some(Value::from(flood.first)), "{stryker}");
    if flood.control {
        // Its suite killed it, and ran whole all the same: a control's verdict is the whole
        // suite's.
        let control = &row(&report, "control")["run"];
        assert_eq!(row(&report, "control")["verdict"], "CONTROL KILLED");
        assert!(control.get("first_failure").is_none(), "{control}");
        assert_eq!(control["counts"]["failed"], flood.failing, "{control}");
    }
}

/// `LIB` with `add` as each language writes it, and a flood of `FLOOD` cases of it.
fn node_flood() -> String {
    format!(
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport {{ add }} from './lib.mjs';\n\
         const sleep = (ms) => new Promise((r) => setTimeout(r, ms));\n\
         for (let i = 0; i < {FLOOD}; i++) {{\n  test(`adds ${{i}}`, async () => {{\n    const got = add(i, 1);\n\
         \x20   // A failing case is slow, as one that waits for a timeout is.\n\
         \x20   if (got !== i + 1) await sleep({SLOW_MS});\n    assert.strictEqual(got, i + 1);\n  }});\n}}\n"
    )
}

const JS_LIB: &str = "export function add(a, b) {\n  return a + b;\n}\n";

fn have(program: &str, args: &[&str], id: &str) -> bool {
    let ok = Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        testkit::skip(id, &format!("{program} {} does not run", args.join(" ")));
    }
    ok
}

#[test]
fn node_test_tap_flood_is_killed_at_its_first_failed_test_and_a_control_runs_whole() {
    if !have("node", &["--version"], "node") {
        return;
    }
    check(Flood {
        files: vec![("lib.mjs", JS_LIB.into()), ("flood.test.mjs", node_flood())],
        run: "node --test".into(),
        file: "lib.mjs",
        anchor: "a + b",
        replace: "a - b",
        first: "adds 0",
        error: Some("AssertionError: Expected values to be strictly equal"),
        failing: FLOOD,
        slow_ms: SLOW_MS,
        control: true,
    });
}

#[test]
fn pytest_verbose_flood_is_killed_at_its_first_failed_test() {
    if !have("python3", &["-m", "pytest", "--version"], "pytest") {
        return;
    }
    let test = format!(
        "import time\nimport pytest\nfrom calc import add\n\n\
         @pytest.mark.parametrize(\"i\", range({FLOOD}))\ndef test_adds(i):\n    got = add(i, 1)\n\
         \x20   if got != i + 1:\n        time.sleep({})\n    assert got == i + 1\n",
        SLOW_MS as f64 / 1000.0
    );
    check(Flood {
        files: vec![
            ("calc.py", "def add(a, b):\n    return a + b\n".into()),
            ("test_calc.py", test),
        ],
        run: "python3 -m pytest -v -p no:cacheprovider".into(),
        file: "calc.py",
        anchor: "a + b",
        replace: "a - b",
        first: "test_calc.py::test_adds[0]",
        // pytest prints a failure's `E` lines only once every test has run.
        error: None,
        failing: FLOOD,
        slow_ms: SLOW_MS,
        control: false,
    });
}

#[test]
fn cargo_test_flood_is_killed_at_its_first_failed_test() {
    if !have("cargo", &["--version"], "cargo") {
        return;
    }
    // Fewer cases, each slower: one thread runs them in name order.
    let (cases, slow_ms) = (150, 60);
    let mut tests = format!("use fixture::add;\n\nconst SLOW: u64 = {slow_ms};\n\n");
    tests.push_str("fn check(i: u32) {\n    let got = add(i, 1);\n    if got != i + 1 {\n        std::thread::sleep(std::time::Duration::from_millis(SLOW));\n    }\n    assert_eq!(got, i + 1);\n}\n");
    for i in 0..cases {
        tests.push_str(&format!(
            "\n#[test]\nfn adds_{i:03}() {{\n    check({i});\n}}\n"
        ));
    }
    check(Flood {
        files: vec![
            (
                "Cargo.toml",
                "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".into(),
            ),
            (
                "src/lib.rs",
                "pub fn add(a: u32, b: u32) -> u32 {\n    a.wrapping_add(b)\n}\n".into(),
            ),
            ("tests/flood.rs", tests),
        ],
        run: "cargo test --offline -- --test-threads=1".into(),
        file: "src/lib.rs",
        anchor: "a.wrapping_add(b)",
        replace: "a.wrapping_sub(b)",
        first: "adds_000",
        // The panic is printed once every test of the binary has ended.
        error: None,
        failing: cases,
        slow_ms,
        control: false,
    });
}

/// vitest from the runners' folder (`scripts/install-runners.sh`), when it is there.
fn vitest() -> Option<PathBuf> {
    runners("vitest").map(|modules| modules.join(".bin/vitest"))
}

#[test]
fn vitest_verbose_flood_is_killed_at_its_first_failed_test() {
    let Some(vitest) = vitest() else {
        return;
    };
    let test = format!(
        "import {{ test, expect }} from 'vitest';\nimport {{ add }} from './lib.mjs';\n\
         const sleep = (ms) => new Promise((r) => setTimeout(r, ms));\n\
         for (let i = 0; i < {FLOOD}; i++) {{\n  test(`adds ${{i}}`, async () => {{\n    const got = add(i, 1);\n\
         \x20   if (got !== i + 1) await sleep({SLOW_MS});\n    expect(got).toBe(i + 1);\n  }});\n}}\n"
    );
    check(Flood {
        files: vec![
            ("package.json", "{\"type\":\"module\"}\n".into()),
            ("lib.mjs", JS_LIB.into()),
            ("flood.test.mjs", test),
        ],
        run: format!("'{}' run --reporter=verbose", vitest.display()),
        file: "lib.mjs",
        anchor: "a + b",
        replace: "a - b",
        first: "flood.test.mjs > adds 0",
        error: Some("expected -1 to be 1"),
        failing: FLOOD,
        slow_ms: SLOW_MS,
        control: false,
    });
}

#[test]
fn a_suite_whose_passing_output_reads_as_a_failure_runs_its_mutants_whole() {
    // The suite prints a line cargo's reader takes for a failed test, then passes: a reader
    // that would stop a green run cannot be trusted to stop a mutant's.
    let spec = format!(
        "{}{}",
        SUITE.replace(
            "run = \"sh test.sh\"\ntimeout = \"3s\"",
            "run = \"echo 'test looks_failed ... FAILED'; sleep 1; sh test.sh\"\ntimeout = \"30s\""
        ),
        crate::common::mutant("plus to minus", "$(( $1 + $2 ))", "$(( $1 - $2 ))", "")
    );
    let fx = Fixture::new(&spec);
    let out = fx.run(&["--no-canary"]);
    out.assert_exit(0);
    assert!(
        out.stderr.contains(
            "suite \"unit\": fail_fast is off for this run: its passing baseline's output reads as a failed test (looks_failed)"
        ),
        "{out}"
    );
    let report = fx.report();
    let run = &row(&report, "plus to minus")["run"];
    assert_eq!(row(&report, "plus to minus")["verdict"], "killed");
    // Whole: to its own exit, past the line that would have stopped it.
    assert!(run.get("first_failure").is_none(), "{run}");
    assert_eq!(run["status"], "exit 1", "{run}");
    assert!(run["duration_secs"].as_f64().unwrap() >= 1.0, "{run}");
}
