//! A suite's `floor` and `watch` with the real vitest (from `scripts/install-runners.sh`, or
//! `GATEKIT_RUNNERS_DIR`): the floor timed and each suite's time per mutant said as a multiple
//! of it; mutants killed by one warm runner started once; a survivor of the warm rerun confirmed
//! by a cold run; a warm runner that dies mid-run restarted, with the verdicts a cold run gives;
//! one whose first run is never green not used at all.

use serde_json::Value;
use testkit::{Output, Repo};

use crate::common::{report_in, row, runners, verdicts};

const ADD: &str = "export function add(a, b) { return a + b; }\n";
const MUL: &str = "export function mul(a, b) { return a * b; }\n";
const ADD_TEST: &str = "import { test, expect } from 'vitest';\nimport { add } from '../src/add.js';\ntest('adds', () => expect(add(2, 3)).toBe(5));\ntest('adds zero', () => expect(add(2, 0)).toBe(2));\n";
const MUL_TEST: &str = "import { test, expect } from 'vitest';\nimport { mul } from '../src/mul.js';\ntest('muls', () => expect(mul(2, 3)).toBe(6));\n";

/// The watch command of the runner that dies: vitest in watch mode whose whole group is killed
/// as it prints its third rerun (a mutant's swap, its restore, the next swap).
const DYING: &str = "#!/bin/sh\nnode_modules/.bin/vitest --watch 2>&1 | { n=0; while IFS= read -r line; do printf '%s\\n' \"$line\"; case \"$line\" in *RERUN*) n=$((n+1)); if [ \"$n\" -ge 3 ]; then kill -KILL 0; fi;; esac; done; }\n";

fn mutant(name: &str, file: &str, anchor: &str, replace: &str, extra: &str) -> String {
    format!(
        "\n[[mutant]]\nname = \"{name}\"\nfile = \"{file}\"\nanchor = \"{anchor}\"\nreplace = \"{replace}\"\nsuite = \"unit\"\n{extra}"
    )
}

/// A committed npm project with two modules and their vitest tests, `node_modules` linked to
/// the runners' (ignored, shared read-only by `[worktree] link`), and `mutants.toml`: the
/// suite `unit` with `keys`, then `mutants`.
fn project(node_modules: &std::path::Path, keys: &str, mutants: &str) -> Repo {
    let repo = Repo::new();
    repo.write("package.json", "{\"name\": \"x\", \"type\": \"module\"}\n")
        .write(".gitignore", "node_modules\n")
        .write("src/add.js", ADD)
        .write("src/mul.js", MUL)
        .write("test/add.test.js", ADD_TEST)
        .write("test/mul.test.js", MUL_TEST)
        .write("watch.sh", DYING)
        .chmod_x("watch.sh")
        .write(
            "mutants.toml",
            format!(
                "[worktree]\nlink = [\"node_modules\"]\n\n[suites.unit]\nrun = \"node_modules/.bin/vitest run\"\n{keys}\n{mutants}"
            ),
        );
    std::os::unix::fs::symlink(node_modules, repo.path().join("node_modules")).unwrap();
    repo.commit_all("a vitest project");
    repo
}

/// A run of `mutants run` in the project with `keys` and `mutants` (see [`project`]).
struct Ran {
    output: Output,
    report: Value,
    /// The report's folder, inside `_dir`.
    out: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn run(node_modules: &std::path::Path, keys: &str, mutants: &[String]) -> Ran {
    let repo = project(node_modules, keys, &mutants.concat());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let output = Output::of(
        testkit::bin(env!("CARGO_BIN_EXE_mutants"))
            .current_dir(repo.path())
            // Its own cache: the fixture's tree is the same in every run of this test, and a
            // floor kept from an earlier one would not be timed.
            .env("GATEKIT_CACHE_DIR", dir.path().join("cache"))
            .args(["run", "mutants.toml", "--out", out.to_str().unwrap()]),
    );
    let report = report_in(&out);
    Ran {
        output,
        report,
        out,
        _dir: dir,
    }
}

fn warm<'a>(report: &'a Value, name: &str) -> &'a Value {
    &row(report, name)["run"]["warm"]
}

fn warm_logs(out: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("warm.") && !n.ends_with(".out.log"))
        .collect();
    names.sort();
    names
}

#[test]
fn one_warm_runner_kills_several_mutants_and_the_floor_is_reported() {
    let Some(node_modules) = runners("vitest") else {
        return;
    };
    let keys = "floor = \"node_modules/.bin/vitest run --passWithNoTests -t '^$'\"\nwatch = \"node_modules/.bin/vitest --watch\"\n";
    let mutants = [
        mutant("add minus", "src/add.js", "a + b", "a - b", ""),
        mutant("mul plus", "src/mul.js", "a * b", "a + b", ""),
        mutant("add times", "src/add.js", "a + b", "a * b", ""),
    ];
    // `_dir` holds the report's folder to the test's end.
    let Ran {
        output,
        report,
        out,
        _dir,
    } = run(&node_modules, keys, &mutants);
    output.assert_exit(0);
    for name in ["add minus", "mul plus", "add times"] {
        let w = warm(&report, name);
        assert_eq!(w["outcome"], "killed", "{name}: {w}");
        // Proof the warm runner judged: every kill came from its one start.
        assert_eq!(w["runner_start"], 1, "{name}: {w}");
        let r = &row(&report, name)["run"];
        assert!(r["exit_code"].is_null(), "{name} ran cold: {r}");
        assert!(!r["failed_tests"].as_array().unwrap().is_empty(), "{r}");
    }
    assert_eq!(
        row(&report, "add minus")["run"]["failed_tests"][0],
        "test/add.test.js > adds"
    );
    assert_eq!(warm_logs(&out), ["warm.unit.checkout0.1.log"]);
    // A report holding a floor and warm reruns is one the published schema describes.
    if let Some(errors) = testkit::schema_errors("mutants.schema.json", &report) {
        assert_eq!(errors, Vec::<String>::new());
    }
    // The floor: timed three times after the baseline, and the time per mutant against it.
    let floor = &report["baseline"][0]["floor"];
    assert_eq!(floor["runs"].as_array().unwrap().len(), 3, "{floor}");
    let secs = floor["secs"].as_f64().unwrap();
    let each = floor["per_mutant_secs"].as_f64().unwrap();
    assert!(secs > 0.0 && each > 0.0, "{floor}");
    let multiple = floor["multiple"].as_f64().unwrap();
    assert!((multiple - each / secs).abs() < 1e-9, "{floor}");
    let table = std::fs::read_to_string(out.join("mutants.txt")).unwrap();
    assert!(
        table.contains(&format!(
            "floor: unit {:.2}s (median of 3 runs); per mutant",
            secs
        )),
        "{table}"
    );
    assert!(
        table.contains(&format!("{multiple:.2}x the floor")),
        "{table}"
    );
    assert!(
        output
            .stderr
            .contains("mutants: floor: suite \"unit\" starts in"),
        "{}",
        output.stderr
    );
}

#[test]
fn a_survivor_of_the_warm_rerun_is_confirmed_by_a_cold_run_and_a_control_runs_cold() {
    let Some(node_modules) = runners("vitest") else {
        return;
    };
    let keys = "watch = \"node_modules/.bin/vitest --watch\"\n";
    let mutants = [
        mutant("add commuted", "src/add.js", "a + b", "b + a", ""),
        mutant(
            "mul comment",
            "src/mul.js",
            "a * b",
            "a * b /* same */",
            "expect = \"survive\"\n",
        ),
        mutant("add minus", "src/add.js", "a + b", "a - b", ""),
    ];
    let Ran { output, report, .. } = run(&node_modules, keys, &mutants);
    output.assert_exit(1);
    assert_eq!(
        verdicts(&report),
        [
            ("add commuted".to_string(), "SURVIVED".to_string()),
            ("mul comment".to_string(), "control held".to_string()),
            ("add minus".to_string(), "killed".to_string()),
        ]
    );
    let survivor = &row(&report, "add commuted")["run"];
    assert_eq!(survivor["warm"]["outcome"], "passed", "{survivor}");
    // The cold run of the whole suite, not the rerun, is what called it SURVIVED.
    assert_eq!(survivor["exit_code"], 0, "{survivor}");
    assert_eq!(survivor["counts"]["passed"], 3, "{survivor}");
    assert!(row(&report, "mul comment")["run"]["warm"].is_null());
    assert!(row(&report, "add minus")["run"]["exit_code"].is_null());
    assert_eq!(warm(&report, "add minus")["outcome"], "killed");
    assert!(report["baseline"][0]["floor"].is_null());
}

#[test]
fn a_warm_runner_that_dies_is_restarted_and_the_verdicts_stay_a_cold_runs() {
    let Some(node_modules) = runners("vitest") else {
        return;
    };
    let keys = "watch = \"./watch.sh\"\n";
    let mutants = [
        mutant("add minus", "src/add.js", "a + b", "a - b", ""),
        mutant("mul plus", "src/mul.js", "a * b", "a + b", ""),
        mutant("add times", "src/add.js", "a + b", "a * b", ""),
        mutant("add commuted", "src/add.js", "a + b", "b + a", ""),
    ];
    // `_dir` holds the report's folder to the test's end.
    let Ran {
        output,
        report,
        out,
        _dir,
    } = run(&node_modules, keys, &mutants);
    output.assert_exit(1);
    let v = verdicts(&report);
    let words: Vec<&str> = v.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(words, ["killed", "killed", "killed", "SURVIVED"], "{v:?}");
    // Killed by the first start; the second mutant's rerun died with its runner, so its cold
    // run judged; the third was killed by a second start; the fourth's died again (its
    // survivor judged cold), and no mutant was left to start a third.
    assert_eq!(warm(&report, "add minus")["outcome"], "killed");
    let died = warm(&report, "mul plus");
    assert_eq!(died["outcome"], "doubt", "{died}");
    assert!(died["doubt"].as_str().unwrap().contains("exited"), "{died}");
    // Its cold run judged it: failed whole (exit 1) or stopped at its first failure.
    let cold = &row(&report, "mul plus")["run"]["status"];
    assert!(cold == "exit 1" || cold == "stopped", "{cold}");
    let again = warm(&report, "add times");
    assert_eq!(
        (&again["outcome"], &again["runner_start"]),
        (&"killed".into(), &2.into()),
        "{again}"
    );
    assert_eq!(row(&report, "add commuted")["run"]["exit_code"], 0);
    assert_eq!(
        warm_logs(&out),
        ["warm.unit.checkout0.1.log", "warm.unit.checkout0.2.log"]
    );
}

#[test]
fn a_warm_runner_that_never_goes_green_leaves_every_mutant_to_a_cold_run() {
    // No vitest needed: a `watch` that prints something else and exits is a runner whose first
    // run never said it was green.
    let spec = format!(
        "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"3s\"\nwatch = \"echo not a watcher\"\n\n{}{}",
        crate::common::mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        crate::common::mutant("greet spacing", "echo \"hello\"", "echo  \"hello\"", ""),
    );
    let fx = crate::common::Fixture::new(&spec);
    fx.run(&[]).assert_exit(1);
    let report = fx.report();
    assert_eq!(
        verdicts(&report),
        [
            ("plus to minus".to_string(), "killed".to_string()),
            ("greet spacing".to_string(), "SURVIVED".to_string()),
        ]
    );
    for name in ["plus to minus", "greet spacing"] {
        let run = &row(&report, name)["run"];
        assert_eq!(run["warm"]["outcome"], "doubt", "{run}");
        assert!(run["warm"]["runner_start"].is_null(), "{run}");
        assert!(
            run["warm"]["doubt"].as_str().unwrap().contains("exited"),
            "{run}"
        );
        assert!(run["exit_code"].is_i64(), "judged by the cold run: {run}");
    }
    // Started once, never again after a first run that was not green.
    assert_eq!(warm_logs(&fx.out()), ["warm.unit.checkout0.1.log"]);
}
