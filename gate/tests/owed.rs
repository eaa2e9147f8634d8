//! What a run owes whatever its end: every file it writes in `--out` on its record (so the
//! next run into the same folder can take it back), a record that says what happened (the
//! real exit code, whether the checkout is gone), and a JUnit file never greener than the run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use testkit::{Output, Repo};

use crate::common::{pack_with_config, run_config};

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every file below `out` (relative), but the record and the lock themselves.
fn files_below(out: &Path) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, found: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                walk(root, &path, found);
            } else {
                found.insert(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut found = BTreeSet::new();
    walk(out, out, &mut found);
    found.remove(Path::new(".gatekit-written"));
    found.remove(Path::new(".gatekit-lock"));
    found
}

/// The paths `out/.gatekit-written` lists.
fn recorded(out: &Path) -> BTreeSet<PathBuf> {
    std::fs::read(out.join(".gatekit-written"))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8(p.to_vec()).unwrap()))
        .collect()
}

/// A candidate with a glob suite whose matches are one good script, one without its exec bit
/// and one link out of the tree; returns the repository, its temp dir and the gate.toml.
fn glob_candidate() -> (Repo, tempfile::TempDir, PathBuf) {
    let repo = Repo::new();
    repo.write(
        "scripts/test-a.sh",
        "#!/bin/sh\necho '1 passed, 0 failed'\n",
    )
    .chmod_x("scripts/test-a.sh")
    .write(
        "scripts/test-b.sh",
        "#!/bin/sh\necho '1 passed, 0 failed'\n",
    )
    .write("README", "v1\n");
    std::os::unix::fs::symlink("../../outside.sh", repo.path().join("scripts/test-c.sh")).unwrap();
    let base = repo.commit_all("base");
    repo.write("README", "v2\n");
    repo.git(["add", "README"]);
    let dir = tempfile::tempdir().unwrap();
    let config = pack_with_config(
        &repo,
        &base,
        dir.path(),
        "[[suite]]\nglob = \"scripts/test-*.sh\"\n",
    );
    (repo, dir, config)
}

#[test]
fn a_glob_row_that_is_not_run_is_on_the_record_and_the_next_run_into_the_same_out_works() {
    let (repo, dir, config) = glob_candidate();
    let out = dir.path().join("gate-out");
    let first = run_config(&repo, &config, &out, &[]);
    first.assert_exit(1);
    assert!(first.stdout.contains("not executable"), "{first}");
    assert!(first.stdout.contains("a link out of the tree"), "{first}");
    // Every file the run wrote, the refused rows' logs among them, is on its record.
    let written = files_below(&out);
    assert!(written.len() >= 5, "{written:?}");
    assert_eq!(written, recorded(&out), "files left off .gatekit-written");
    // So the next run into the same folder takes them back and runs, twice over.
    for _ in 0..2 {
        let again = run_config(&repo, &config, &out, &[]);
        again.assert_exit(1);
        assert_eq!(json(&out.join("gate.json"))["exit_code"], 1);
        assert_eq!(files_below(&out), recorded(&out));
    }
}

#[test]
fn a_refused_rerun_into_the_same_out_removes_nothing() {
    let (repo, dir, config) = glob_candidate();
    let out = dir.path().join("gate-out");
    run_config(&repo, &config, &out, &[]).assert_exit(1);
    let before = files_below(&out);
    // A file of the user's where a log of the next run would go: that run is refused (exit 2)
    // and everything the first run wrote is still there.
    let logs: Vec<PathBuf> = before
        .iter()
        .filter(|p| p.starts_with("logs"))
        .cloned()
        .collect();
    let victim = logs.first().unwrap();
    std::fs::remove_file(out.join(victim)).unwrap();
    let mut record = std::fs::read(out.join(".gatekit-written")).unwrap();
    let listed = format!("{}\0", victim.display()).into_bytes();
    let at = record
        .windows(listed.len())
        .position(|w| w == listed.as_slice())
        .unwrap();
    record.drain(at..at + listed.len());
    std::fs::write(out.join(".gatekit-written"), record).unwrap();
    std::fs::write(out.join(victim), "the user's own\n").unwrap();
    let refused = run_config(&repo, &config, &out, &[]);
    refused.assert_exit(2);
    assert_eq!(files_below(&out), before, "a refused run removed files");
    assert_eq!(
        std::fs::read_to_string(out.join(victim)).unwrap(),
        "the user's own\n"
    );
}

#[test]
fn a_failed_setup_is_recorded_as_exit_4_with_the_checkout_truly_removed_and_attested() {
    let repo = Repo::new();
    repo.write("test.sh", "echo '1 passed, 0 failed'\n")
        .write("README", "v1\n");
    let base = repo.commit_all("base");
    repo.write("README", "v2\n");
    repo.git(["add", "README"]);
    let dir = tempfile::tempdir().unwrap();
    let config = pack_with_config(
        &repo,
        &base,
        dir.path(),
        "[[suite]]\nname = \"unit\"\nrun = \"sh test.sh\"\n\n[worktree]\nsetup = \"echo broken setup; exit 3\"\n",
    );
    let out = dir.path().join("gate-out");
    let junit = dir.path().join("junit.xml");
    let attestation = dir.path().join("gate.intoto.json");
    let run = run_config(
        &repo,
        &config,
        &out,
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--attest",
            attestation.to_str().unwrap(),
        ],
    );
    run.assert_exit(4);
    assert!(run.stderr.contains("worktree.setup failed"), "{run}");
    assert!(run.stderr.contains("broken setup"), "{run}");
    let report = json(&out.join("gate.json"));
    assert_eq!(report["exit_code"], 4, "{report}");
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(report["complete"], true);
    assert!(report["precondition"]
        .as_str()
        .unwrap()
        .starts_with("worktree.setup failed (exit 3)"));
    if let Some(errors) = testkit::schema_errors("gate.schema.json", &report) {
        assert_eq!(errors, Vec::<String>::new(), "{report}");
    }
    let checkout = report["candidate"]["worktree"].as_str().unwrap();
    assert!(!Path::new(checkout).exists(), "{checkout} is still there");
    assert_eq!(report["candidate"]["worktree_removed"], true);
    let summary = std::fs::read_to_string(out.join("gate-summary.txt")).unwrap();
    assert!(summary.contains(" (removed)"), "{summary}");
    assert!(!summary.contains("NOT removed"), "{summary}");
    assert!(
        summary.contains("worktree.setup failed (exit 3)"),
        "{summary}"
    );
    assert_eq!(files_below(&out), recorded(&out));
    // The attestation is written (FAILED), so an earlier PASS at its path cannot outlive it.
    let statement = json(&attestation);
    assert_eq!(statement["predicate"]["result"], "FAILED", "{statement}");
    let Some(facts) = testkit::junit(&junit) else {
        return;
    };
    assert!(facts["errors"].as_u64().unwrap() >= 1, "{facts}");
    let setup = facts["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["classname"] == "gate.setup")
        .unwrap_or_else(|| panic!("no setup testcase: {facts}"));
    assert_eq!(setup["results"][0]["kind"], "Error", "{setup}");
}

#[test]
fn an_exit_4_canary_run_is_never_green_in_junit() {
    let repo = Repo::new();
    repo.write("lib.sh", "add() { echo $(( $1 + $2 )); }\n")
        .write(
            "test.sh",
            ". \"${LIB_DIR:-.}/lib.sh\"\n[ \"$(add 2 3)\" = 5 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
        );
    let base = repo.commit_all("base");
    repo.write("lib.sh", "add() { echo $(( $2 + $1 )); }\n");
    repo.git(["add", "-A"]);
    let dir = tempfile::tempdir().unwrap();
    let config = pack_with_config(
        &repo,
        &base,
        dir.path(),
        "[[suite]]\nname = \"unit\"\nrun = \"sh test.sh\"\n",
    );
    let junit = dir.path().join("junit.xml");
    // The suite loads lib.sh from the user's checkout: it passes with the checkout's made
    // unloadable, exit 4.
    let run = Output::of(
        crate::common::gate()
            .current_dir(repo.path())
            .env("LIB_DIR", repo.path())
            .args(["run", "--canary", "--junit"])
            .arg(&junit)
            .arg("--config")
            .arg(&config)
            .arg("--out")
            .arg(dir.path().join("gate-out")),
    );
    run.assert_exit(4);
    // The canary runs' logs are on the record like every other file of the run.
    let out = dir.path().join("gate-out");
    assert!(files_below(&out).iter().any(|p| p.starts_with("logs")));
    assert_eq!(files_below(&out), recorded(&out));
    let Some(facts) = testkit::junit(&junit) else {
        return;
    };
    let failing = facts["failures"].as_u64().unwrap() + facts["errors"].as_u64().unwrap();
    assert!(failing > 0, "exit 4 with a green JUnit file: {facts}");
    let canary = facts["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["classname"] == "gate.canary")
        .unwrap_or_else(|| panic!("no canary testcase: {facts}"));
    assert!(
        canary["name"].as_str().unwrap().contains("lib.sh"),
        "{canary}"
    );
    assert_eq!(canary["results"][0]["kind"], "Failure", "{canary}");
}
