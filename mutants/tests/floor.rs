//! A suite's `floor` (its runner started with no test selected): timed three times after the
//! baseline and kept in gatekit's cache by code tree, suite and toolchains, so a run of the same
//! code reports the kept floor, saying when it was timed, without starting it again; `--no-cache`
//! and a change to the code time it again. (The floor against a real runner, with the time per
//! mutant as a multiple of it, is `warm::one_warm_runner_kills_several_mutants_and_the_floor_is_reported`.)

use std::path::Path;

use crate::common::*;
use testkit::Output;

/// `mutants run` into `out` with the test's own cache folder.
fn run(fx: &Fixture, cache: &Path, out: &Path, extra: &[&str]) -> Output {
    Output::of(
        fx.cmd()
            .env("GATEKIT_CACHE_DIR", cache)
            .args(["run", "mutants.toml", "--no-canary", "--out"])
            .arg(out)
            .args(extra),
    )
}

/// How many times the floor command has run.
fn floor_runs(fx: &Fixture) -> usize {
    std::fs::read_to_string(fx.pids.path().join("floor"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_floor_is_kept_for_the_same_code_and_timed_again_for_new_code_or_without_the_cache() {
    let spec = format!(
        "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"30s\"\nfloor = \"echo ran >> $PIDS/floor\"\n\n{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", "")
    );
    let fx = Fixture::new(&spec);
    let cache = fx.out.path().join("cache");
    let first = fx.out.path().join("first");
    let ran = run(&fx, &cache, &first, &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(floor_runs(&fx), 3);
    let report = report_in(&first);
    let floor = &report["baseline"][0]["floor"];
    assert_eq!(floor["runs"].as_array().unwrap().len(), 3, "{floor}");
    assert!(floor.get("kept_from").is_none(), "{floor}");
    let start = report["start"].as_str().unwrap().to_string();

    // The same code: the kept floor, not one more start of the runner.
    let second = fx.out.path().join("second");
    let ran = run(&fx, &cache, &second, &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(floor_runs(&fx), 3, "{}", ran.stderr);
    let report = report_in(&second);
    let kept = &report["baseline"][0]["floor"];
    assert_eq!(kept["kept_from"], start.as_str(), "{kept}");
    assert_eq!(kept["runs"], floor["runs"]);
    assert_eq!(kept["secs"], floor["secs"]);
    assert!(kept["multiple"].as_f64().is_some(), "{kept}");
    let log = std::fs::read_to_string(second.join(kept["log"].as_str().unwrap())).unwrap();
    assert!(
        log.contains(&format!("kept in gatekit's cache by the run of {start}")),
        "{log}"
    );
    let table = std::fs::read_to_string(second.join("mutants.txt")).unwrap();
    assert!(
        table.contains(&format!("(median of 3 runs, kept from the run of {start})")),
        "{table}"
    );
    assert!(
        ran.stderr.contains("kept in the cache from the run of"),
        "{}",
        ran.stderr
    );

    // Without the cache, timed again.
    let third = fx.out.path().join("third");
    let ran = run(&fx, &cache, &third, &["--no-cache"]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(floor_runs(&fx), 6);
    assert!(report_in(&third)["baseline"][0]["floor"]
        .get("kept_from")
        .is_none());

    // New code: timed again.
    fx.repo.write("lib.sh", format!("{LIB}# a comment\n"));
    fx.repo.commit_all("a comment");
    let fourth = fx.out.path().join("fourth");
    let ran = run(&fx, &cache, &fourth, &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(floor_runs(&fx), 9);
    assert!(report_in(&fourth)["baseline"][0]["floor"]
        .get("kept_from")
        .is_none());
}
