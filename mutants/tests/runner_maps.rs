//! vitest's and jest's coverage maps, by test file, with the real runners (from
//! `scripts/install-runners.sh`, with `@vitest/coverage-v8`): each test file run alone with the
//! runner's own coverage, so a mutant runs first just the files whose tests ran its line (a
//! file name with a space included), and a line no file ran is `not covered` only after the
//! whole suite confirms it.

use std::path::Path;

use serde_json::Value;
use testkit::{Output, Repo};

use crate::common::{report_in, row, runners, verdicts};

const MUTANTS: &str = r#"
[[mutant]]
name = "add minus"
file = "src/add.js"
anchor = "return a + b;"
replace = "return a - b;"
suite = "unit"

[[mutant]]
name = "neg plus"
file = "src/add.js"
anchor = "return -a;"
replace = "return +a;"
suite = "unit"

[[mutant]]
name = "mul plus"
file = "src/mul.js"
anchor = "return a * b;"
replace = "return a + b;"
suite = "unit"
"#;

/// A committed project with two modules (one function no test calls) and a test file each,
/// one of them named with a space; `node_modules` linked to the runners'.
fn project(node_modules: &Path, esm: bool, suite: &str) -> Repo {
    let repo = Repo::new();
    let (export, import) = match esm {
        true => (
            "export ",
            "import { NAME } from '../src/FILE.js';\nimport { test, expect } from 'vitest';\n",
        ),
        false => ("", "const { NAME } = require('../src/FILE.js');\n"),
    };
    let tail = |names: &str| match esm {
        true => String::new(),
        false => format!("module.exports = {{ {names} }};\n"),
    };
    let test = |name: &str, file: &str, body: &str| {
        format!(
            "{}{body}\n",
            import.replace("NAME", name).replace("FILE", file)
        )
    };
    repo.write(
        "package.json",
        if esm { "{\"name\": \"x\", \"type\": \"module\"}\n" } else { "{\"name\": \"x\"}\n" },
    )
    .write(".gitignore", "node_modules\n")
    .write(
        "src/add.js",
        format!(
            "{export}function add(a, b) {{\n  return a + b;\n}}\n{export}function neg(a) {{\n  return -a;\n}}\n{}",
            tail("add, neg")
        ),
    )
    .write(
        "src/mul.js",
        format!("{export}function mul(a, b) {{\n  return a * b;\n}}\n{}", tail("mul")),
    )
    .write(
        "test/add one.test.js",
        test("add", "add", "test('adds', () => expect(add(2, 3)).toBe(5));"),
    )
    .write(
        "test/mul.test.js",
        test("mul", "mul", "test('muls', () => expect(mul(2, 3)).toBe(6));"),
    )
    .write(
        "mutants.toml",
        format!("[worktree]\nlink = [\"node_modules\"]\n\n{suite}\n{MUTANTS}"),
    );
    std::os::unix::fs::symlink(node_modules, repo.path().join("node_modules")).unwrap();
    repo.commit_all("a project");
    repo
}

fn run(repo: &Repo) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let output = Output::of(
        testkit::bin(env!("CARGO_BIN_EXE_mutants"))
            .current_dir(repo.path())
            .env("GATEKIT_CACHE_DIR", dir.path().join("cache"))
            .args(["run", "mutants.toml", "--out", out.to_str().unwrap()]),
    );
    let report = report_in(&out);
    (output, report)
}

/// Each mutant's verdict and the test files its covering run selected.
fn assert_selected_by_file(output: &Output, report: &Value) {
    assert_eq!(output.code, Some(1), "{}", output.stderr);
    assert_eq!(
        verdicts(report),
        [
            ("add minus".to_string(), "killed".to_string()),
            ("neg plus".to_string(), "not covered".to_string()),
            ("mul plus".to_string(), "killed".to_string()),
        ],
        "{}",
        output.stderr
    );
    let selection = |name: &str| row(report, name)["run"]["selection"].clone();
    let add = selection("add minus");
    assert_eq!(
        add["tests"],
        serde_json::json!(["test/add one.test.js"]),
        "{add}"
    );
    assert_eq!(add["whole"], false, "{add}");
    let mul = selection("mul plus");
    assert_eq!(
        mul["tests"],
        serde_json::json!(["test/mul.test.js"]),
        "{mul}"
    );
    assert_eq!(mul["whole"], false, "{mul}");
    // No file ran neg's line: the whole suite ran, and only then is it `not covered`.
    let neg = selection("neg plus");
    assert_eq!(neg["count"], 0, "{neg}");
    assert_eq!(neg["whole"], true, "{neg}");
}

#[test]
fn vitest_maps_each_test_file_with_its_own_coverage() {
    let Some(node_modules) = runners("vitest") else {
        return;
    };
    let suite = "[suites.unit]\nrun = \"node_modules/.bin/vitest run\"\nselect = \"node_modules/.bin/vitest run {files}\"\n";
    let repo = project(&node_modules, true, suite);
    let (output, report) = run(&repo);
    assert_selected_by_file(&output, &report);
}

#[test]
fn jest_maps_each_test_file_with_its_own_coverage() {
    let Some(node_modules) = runners("jest") else {
        return;
    };
    let suite = "[suites.unit]\nrun = \"node_modules/.bin/jest\"\nselect = \"node_modules/.bin/jest --runTestsByPath {files}\"\n";
    let repo = project(&node_modules, false, suite);
    let (output, report) = run(&repo);
    assert_selected_by_file(&output, &report);
}
