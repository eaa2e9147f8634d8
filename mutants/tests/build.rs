//! A suite's `build` step: a mutant that does not build is an `error`, never a kill.

use testkit::{Output, Repo};

#[test]
fn a_mutant_that_does_not_build_is_an_error_not_a_kill() {
    let repo = Repo::new();
    repo.write("lib.sh", "f() { echo 1; }\n")
        .write(
            "test.sh",
            ". ./lib.sh\nif [ \"$(f)\" = 1 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n",
        )
        .write(
            "mutants.toml",
            r#"[suites.unit]
build = "sh -n lib.sh"
run = "sh test.sh"
timeout = "30s"

[[mutant]]
name = "breaks the syntax"
file = "lib.sh"
anchor = "f() {"
replace = "f() {{"
suite = "unit"

[[mutant]]
name = "wrong value"
file = "lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"
"#,
        );
    repo.commit_all("base");
    let out = tempfile::tempdir().unwrap();
    let result = testkit::bin(env!("CARGO_BIN_EXE_mutants"))
        .current_dir(repo.path())
        .args(["run", "--json", "--out"])
        .arg(out.path())
        .output()
        .map(Output::from)
        .unwrap();
    assert_eq!(result.code, Some(1), "{}", result.stderr.as_str());
    let report: serde_json::Value = serde_json::from_str(&result.stdout).unwrap();
    let rows = report["mutants"].as_array().expect("mutants");
    assert_eq!(rows[0]["verdict"], "error", "{}", rows[0]);
    assert!(
        rows[0]["run"]["status"]
            .as_str()
            .unwrap()
            .contains("build failed"),
        "{}",
        rows[0]
    );
    assert_eq!(rows[1]["verdict"], "killed", "{}", rows[1]);
    // The build's log is kept beside the suite's.
    assert!(std::fs::read_dir(out.path().join("logs"))
        .unwrap()
        .any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".build.log")));
}

#[test]
fn a_build_that_fails_without_any_mutant_is_a_red_baseline() {
    let repo = Repo::new();
    repo.write("lib.sh", "f() { echo 1; }\n").write(
        "mutants.toml",
        r#"[suites.unit]
build = "exit 3"
run = "true"

[[mutant]]
name = "m"
file = "lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"
"#,
    );
    repo.commit_all("base");
    let out = tempfile::tempdir().unwrap();
    testkit::bin(env!("CARGO_BIN_EXE_mutants"))
        .current_dir(repo.path())
        .args(["run", "--out"])
        .arg(out.path())
        .assert()
        .code(4);
}
