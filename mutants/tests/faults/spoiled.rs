//! A suite that replaces, deletes or links away the mutated file (or its folder) never has
//! the original written through what it left, and `check` applies run's path rule.

use std::fs;

use serde_json::Value;
use testkit::{Output, Repo};

use crate::common::report_in;

use super::{mutants, repo, run_in, LIB, MERGE_SPEC, MERGE_TEST};

// ---------------------------------------------------------------------------------------------
// 1. A suite that replaces the mutated file never has the original written through it.

/// The suite: when it sees the mutant, it does `action` to lib.sh (and fails); otherwise it
/// checks f and counts.
fn spoiling_suite(action: &str) -> String {
    format!(
        "if grep -q MUTATED {file}; then\n  {action}\n  exit 1\nfi\n. ./{file}\nif [ \"$(f)\" = 1 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n",
        file = "sub/lib.sh"
    )
}

const SPOIL_SPEC: &str = r#"[suites.unit]
run = "sh test.sh"
timeout = "20s"

[[mutant]]
name = "the suite replaces the file"
file = "sub/lib.sh"
anchor = "echo 1"
replace = "echo MUTATED"
suite = "unit"

[[mutant]]
name = "a control after it"
file = "sub/lib.sh"
anchor = "f() {"
replace = "f()  {"
suite = "unit"
expect = "survive"

[[mutant]]
name = "a real kill after it"
file = "sub/lib.sh"
anchor = "echo 1"
replace = "echo 2"
suite = "unit"
"#;

/// Runs the spoiling spec with `action`, against a victim file and a victim folder in the
/// test's own temp dir; returns the report, after checking what every case must hold.
fn spoiled_run(action: &str, status: &str) -> Value {
    let victims = tempfile::tempdir().unwrap();
    let victim = victims.path().join("victim");
    fs::write(&victim, "victim bytes\n").unwrap();
    let victim_dir = victims.path().join("victim-dir");
    fs::create_dir(&victim_dir).unwrap();
    fs::write(victim_dir.join("lib.sh"), "victim lib\n").unwrap();
    let repo = repo(&[
        ("sub/lib.sh", LIB),
        ("test.sh", &spoiling_suite(action)),
        ("mutants.toml", SPOIL_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    let result = run_in(
        &repo,
        out.path(),
        &[("VICTIM", &victim), ("VICTIM_DIR", &victim_dir)],
        &[],
    );
    // One finding (the error row), never a crash of the run.
    result.assert_exit(1);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "victim bytes\n");
    assert_eq!(
        fs::read_to_string(victim_dir.join("lib.sh")).unwrap(),
        "victim lib\n"
    );
    assert_eq!(fs::read_dir(&victim_dir).unwrap().count(), 1);
    let report = report_in(out.path());
    let rows = report["mutants"].as_array().unwrap();
    assert_eq!(rows[0]["verdict"], "error", "{}", rows[0]);
    let got = rows[0]["run"]["status"].as_str().unwrap();
    assert!(got.contains(status), "{got}");
    // Stryker's viewers see a runtime error with the reason, never a kill.
    let stryker: Value =
        serde_json::from_str(&fs::read_to_string(out.path().join("mutation-report.json")).unwrap())
            .unwrap();
    let first = &stryker["files"]["sub/lib.sh"]["mutants"][0];
    assert_eq!(first["status"], "RuntimeError", "{first}");
    assert!(
        first["statusReason"].as_str().unwrap().contains(status),
        "{first}"
    );
    // The next mutants run in a fresh copy: the control holds, the kill is a kill.
    assert_eq!(rows[1]["verdict"], "control held", "{}", rows[1]);
    assert_eq!(rows[2]["verdict"], "killed", "{}", rows[2]);
    // DIR itself was never touched.
    assert_eq!(
        fs::read_to_string(repo.path().join("sub/lib.sh")).unwrap(),
        LIB
    );
    assert!(repo.extra_worktrees().is_empty());
    report
}

#[test]
fn a_suite_that_swaps_the_mutated_file_for_a_link_never_has_it_written_through() {
    spoiled_run(
        r#"rm sub/lib.sh; ln -s "$VICTIM" sub/lib.sh"#,
        "the suite replaced the mutated file (now a symlink)",
    );
}

#[test]
fn a_suite_that_swaps_the_mutated_file_for_a_folder_is_an_error_and_the_copy_is_rebuilt() {
    spoiled_run(
        "rm sub/lib.sh; mkdir sub/lib.sh; echo x > sub/lib.sh/inner",
        "the suite replaced the mutated file (now a folder)",
    );
}

#[test]
fn a_suite_that_deletes_the_mutated_file_is_an_error_not_a_kill() {
    spoiled_run("rm sub/lib.sh", "the suite deleted the mutated file");
}

#[test]
fn a_suite_that_puts_another_file_in_its_place_is_an_error() {
    spoiled_run(
        "cp sub/lib.sh sub/new; rm sub/lib.sh; mv sub/new sub/lib.sh",
        "the suite replaced the mutated file (now another file)",
    );
}

#[test]
fn a_suite_that_swaps_the_parent_folder_for_a_link_never_has_the_victim_written() {
    spoiled_run(
        r#"mv sub sub.old; ln -s "$VICTIM_DIR" sub"#,
        "the suite replaced the mutated file (now another file)",
    );
}

#[test]
fn a_run_refuses_a_planted_logs_link_and_never_clears_or_writes_through_it() {
    let victims = tempfile::tempdir().unwrap();
    let victim_dir = victims.path().join("elsewhere");
    fs::create_dir(&victim_dir).unwrap();
    fs::write(victim_dir.join("keep.log"), "victim log\n").unwrap();
    let repo = repo(&[
        ("lib.sh", LIB),
        ("test.sh", MERGE_TEST),
        ("mutants.toml", MERGE_SPEC),
    ]);
    let out = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&victim_dir, out.path().join("logs")).unwrap();
    let result = run_in(&repo, out.path(), &[], &[]);
    // Refused before any suite runs (the one output guard): never followed, never removed.
    result.assert_exit(2);
    assert!(result.stderr.contains("is a link"), "{result}");
    assert_eq!(
        fs::read_to_string(victim_dir.join("keep.log")).unwrap(),
        "victim log\n"
    );
    assert_eq!(fs::read_dir(&victim_dir).unwrap().count(), 1);
    let logs = fs::symlink_metadata(out.path().join("logs")).unwrap();
    assert!(logs.file_type().is_symlink(), "the user's link was removed");
}

// ---------------------------------------------------------------------------------------------
// 2. `check` applies run's path rule.

#[test]
fn check_and_list_refuse_a_spec_file_that_links_out_of_the_tree_and_never_read_it() {
    let victims = tempfile::tempdir().unwrap();
    let victim = victims.path().join("victim");
    fs::write(&victim, "secret ANCHOR\n").unwrap();
    let repo = Repo::new();
    repo.write("real.txt", "ANCHOR here\n");
    fs::create_dir(repo.path().join("folder")).unwrap();
    repo.write("folder/x", "x");
    std::os::unix::fs::symlink(&victim, repo.path().join("link.txt")).unwrap();
    let spec = |file: &str| {
        format!("[suites.u]\nrun = \"true\"\n\n[[mutant]]\nname = \"m\"\nfile = \"{file}\"\nanchor = \"ANCHOR\"\nreplace = \"OTHER\"\nsuite = \"u\"\n")
    };
    repo.write("link.toml", spec("link.txt"))
        .write("folder.toml", spec("folder"))
        .write("real.toml", spec("real.txt"));
    repo.commit_all("fixture");
    for (cmd, toml, why) in [
        ("check", "link.toml", "leads outside the tree"),
        ("check", "folder.toml", "is not a regular file"),
        ("list", "link.toml", "leads outside the tree"),
        ("list", "folder.toml", "is not a regular file"),
    ] {
        let out = mutants()
            .current_dir(repo.path())
            .args([cmd, toml])
            .output()
            .map(Output::from)
            .unwrap();
        assert_eq!(out.exit(), 2, "{toml}: {}", out);
        let err = out.stderr.as_str();
        assert!(
            err.contains(&format!("{toml}:4:")) && err.contains(why),
            "{toml}: {err}"
        );
        assert!(out.stdout.is_empty(), "{}", out);
    }
    // The same rule lets a regular file inside the tree through.
    mutants()
        .current_dir(repo.path())
        .args(["check", "real.toml"])
        .assert()
        .code(0);
    mutants()
        .current_dir(repo.path())
        .args(["list", "real.toml"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("real.txt  1"));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "secret ANCHOR\n");
}
