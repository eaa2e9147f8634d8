//! A suite's `build` step: run first in the candidate's checkout under its own timeout; a build
//! that fails or hangs is that suite failing (FAIL, exit 1), its row says why and its log is
//! named in gate-summary.txt and gate.json and kept with the suites' logs.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{stderr, stdout, Fixture};

/// gate.json, checked against its schema (where jsonschema is installed).
fn json(out_dir: &Path) -> serde_json::Value {
    let report =
        serde_json::from_str(&fs::read_to_string(out_dir.join("gate.json")).unwrap()).unwrap();
    if let Some(errors) = testkit::schema_errors("gate.schema.json", &report) {
        assert_eq!(errors, Vec::<String>::new(), "{report:#}");
    }
    report
}

/// The row of `suite` in the summary's table.
fn row<'a>(summary: &'a str, suite: &str) -> &'a str {
    summary
        .lines()
        .find(|l| l.starts_with(&format!("{suite} ")))
        .unwrap_or_else(|| panic!("no row for {suite}: {summary}"))
}

#[test]
fn a_build_that_passes_runs_first_in_the_checkout_with_the_suites_env() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(
        r#"[env]
SHARED = "from-config"

[[suite]]
name = "compiled"
build = "echo \"built with $SHARED and $OWN\" > build.out; echo compiling"
run = "cat build.out"
env = { OWN = "mine" }
"#,
    );
    let out_dir = f.out.path().join("o");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let summary = stdout(&out);
    assert!(row(&summary, "compiled").contains("exit 0"), "{summary}");
    // The suite ran after the build, in the same checkout, both with the env.
    let log = fs::read_to_string(out_dir.join("logs/01-compiled.log")).unwrap();
    assert_eq!(log, "built with from-config and mine\n");
    let build_log = fs::read_to_string(out_dir.join("logs/01-compiled.build.log")).unwrap();
    assert_eq!(build_log, "compiling\n");
    let j = json(&out_dir);
    let build = &j["suites"][0]["build"];
    assert_eq!(
        build["command"].as_str().unwrap(),
        "echo \"built with $SHARED and $OWN\" > build.out; echo compiling"
    );
    assert!(build["failed"].is_null(), "{build}");
    assert_eq!(build["timeout_secs"], 1800.0);
    assert!(build["log"]
        .as_str()
        .unwrap()
        .ends_with("logs/01-compiled.build.log"));
    assert_eq!(j["verdict"], "PASS");
}

#[test]
fn a_build_that_fails_is_its_suite_failing_and_its_log_is_named() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(
        "[[suite]]\nname = \"compiled\"\nbuild = \"echo 'error: no such symbol'; exit 3\"\nrun = \"echo ran\"\n\n\
         [[suite]]\nname = \"later\"\nrun = \"true\"\n",
    );
    let out_dir = f.out.path().join("o");
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let summary = fs::read_to_string(out_dir.join("gate-summary.txt")).unwrap();
    assert!(
        row(&summary, "compiled").contains("build failed (exit 3)"),
        "{summary}"
    );
    assert!(
        summary.contains("verdict   FAIL: suite compiled build failed (exit 3)"),
        "{summary}"
    );
    // The failed section names the build's log, which is kept; the suite never ran.
    let build_log = out_dir.join("logs/01-compiled.build.log");
    assert!(
        summary
            .lines()
            .any(|l| l.trim() == format!("log {}", build_log.display())),
        "{summary}"
    );
    assert_eq!(
        fs::read_to_string(&build_log).unwrap(),
        "error: no such symbol\n"
    );
    assert!(!out_dir.join("logs/01-compiled.log").exists());
    // A later suite still runs.
    assert!(row(&summary, "later").contains("exit 0"), "{summary}");
    let j = json(&out_dir);
    let suite = &j["suites"][0];
    assert_eq!(suite["build"]["failed"], "build failed (exit 3)");
    assert_eq!(suite["build"]["log"], build_log.display().to_string());
    assert_eq!(suite["record"]["log"], build_log.display().to_string());
    assert_ne!(suite["outcome"], "passed");
    assert_eq!(j["verdict"], "FAIL");
    assert_eq!(j["exit_code"], 1);
}

#[test]
fn a_build_that_hangs_is_killed_at_its_own_timeout_and_its_suite_fails() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(
        "[[suite]]\nname = \"compiled\"\nbuild = \"echo started; exec sleep 1000\"\nbuild_timeout = \"1s\"\nrun = \"true\"\ntimeout = \"10m\"\n",
    );
    let out_dir = f.out.path().join("o");
    let started = Instant::now();
    let out = f.run(&config, &out_dir).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let summary = stdout(&out);
    assert!(
        row(&summary, "compiled").contains("build timed out after 1.00s"),
        "{summary}"
    );
    let build_log = out_dir.join("logs/01-compiled.build.log");
    assert!(
        summary.contains(&format!("log {}", build_log.display())),
        "{summary}"
    );
    assert_eq!(fs::read_to_string(&build_log).unwrap(), "started\n");
    let j = json(&out_dir);
    let suite = &j["suites"][0];
    assert!(
        suite["build"]["failed"]
            .as_str()
            .unwrap()
            .starts_with("build timed out after 1.00s"),
        "{suite}"
    );
    assert_eq!(suite["build"]["timeout_secs"], 1.0);
    // The build hung, the suite did not: never reported as the suite's hang.
    assert_ne!(suite["outcome"], "hang");
    assert_eq!(suite["timeout_secs"], 600.0);
    assert_eq!(j["verdict"], "FAIL");
}

#[test]
fn build_keys_are_checked_at_their_line_before_anything_runs() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    for (suite, want) in [
        (
            "[[suite]]\nname = \"s\"\nrun = \"true\"\nbuild_timeout = \"5m\"\n",
            "gate.toml:8: build_timeout without a `build` step",
        ),
        (
            "[[suite]]\nname = \"s\"\nrun = \"true\"\nbuild = \"make\"\nbuild_timeout = \"5 minutes\"\n",
            "gate.toml:9: build_timeout: bad duration",
        ),
        (
            "[[suite]]\nname = \"s\"\nrun = \"true\"\nquick = \"fast\"\n",
            "gate.toml:8: unknown field `quick`",
        ),
    ] {
        let config = f.config(suite);
        let out_dir = f.out.path().join("refused");
        let out = f.run(&config, &out_dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{suite}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(want), "want {want:?} in {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out_dir.exists(), "a refused run wrote its --out");
    }
}

#[test]
fn a_users_file_where_the_builds_log_would_go_is_refused_before_anything_runs() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let out_dir = f.out.path().join("o");
    fs::create_dir_all(out_dir.join("logs")).unwrap();
    fs::write(out_dir.join("logs/01-compiled.build.log"), "the user's\n").unwrap();
    let marker = f.out.path().join("build-ran");
    let config = f.config(&format!(
        "[[suite]]\nname = \"compiled\"\nbuild = \"touch '{}'\"\nrun = \"true\"\n",
        marker.display()
    ));
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("no earlier gatekit run recorded it"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "the build ran");
    assert_eq!(
        fs::read_to_string(out_dir.join("logs/01-compiled.build.log")).unwrap(),
        "the user's\n"
    );
}
