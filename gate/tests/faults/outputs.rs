//! Where output goes wrong: a closed stdout ends quietly, and an unwritable `--out` or
//! `--junit` is exit 2 before any suite, or said (with the verdict kept) after them.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{stderr, stdout, Fixture};

use super::{gate_std, is_root, json, wait_for, TWO_SUITES};

// ---- 6. a closed stdout ----------------------------------------------------------------------

/// Runs `cmd` with its stdout a pipe whose read end is closed before the child writes.
pub(super) fn with_closed_stdout(mut cmd: Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let status = wait_for(&mut child, Duration::from_secs(120));
    stderr_pipe.read_to_string(&mut err).unwrap();
    (status.code(), err)
}

#[test]
fn a_closed_stdout_ends_every_printing_command_quietly() {
    let f = Fixture::new();
    f.pack();
    let config = f.config(TWO_SUITES);
    let dir = f.repo.path();
    let mut check = gate_std(dir);
    check
        .arg("check")
        .arg("--manifest")
        .arg(f.manifest())
        .arg(".");
    let mut completions = gate_std(dir);
    completions.args(["completions", "bash"]);
    let mut man = gate_std(dir);
    man.arg("man");
    let mut run = gate_std(dir);
    run.arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(f.out.path().join("o"))
        .arg("--json");
    let broken = f.out.path().join("broken.sha256");
    let manifest = fs::read_to_string(f.manifest()).unwrap();
    fs::write(&broken, manifest.replacen(&manifest[..8], "00000000", 1)).unwrap();
    let mut failing_check = gate_std(dir);
    failing_check
        .arg("check")
        .arg("--manifest")
        .arg(&broken)
        .arg(".");
    for (name, cmd, code) in [
        ("check", check, 0),
        ("check with a finding", failing_check, 1),
        ("completions", completions, 0),
        ("man", man, 0),
        ("run --json", run, 0),
    ] {
        let (status, err) = with_closed_stdout(cmd);
        assert_eq!(status, Some(code), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(!err.contains("failed printing"), "{name}: {err}");
        assert!(!err.contains("error"), "{name}: {err}");
    }
    // The run's work was done and recorded though nobody read stdout.
    assert_eq!(json(&f.out.path().join("o/gate.json"))["verdict"], "PASS");
}

// ---- 7. output paths -------------------------------------------------------------------------

/// A place no write can reach, for root too: under a folder made read-only, or (as root, who
/// ignores modes) under a regular file.
fn unwritable(tmp: &Path) -> PathBuf {
    if is_root() {
        let file = tmp.join("a-file");
        fs::write(&file, "").unwrap();
        file.join("sub")
    } else {
        use std::os::unix::fs::PermissionsExt;
        let ro = tmp.join("read-only");
        fs::create_dir(&ro).unwrap();
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
        ro.join("sub")
    }
}

#[test]
fn an_unwritable_out_or_junit_is_exit_2_before_any_suite_starts() {
    let f = Fixture::new();
    f.pack();
    let marker = f.out.path().join("suite-ran");
    let config = f.config(&format!(
        "[[suite]]\nname = \"s\"\nrun = \"touch '{}'\"\n",
        marker.display()
    ));
    let bad = unwritable(f.out.path());
    let out = f.run(&config, &bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(!marker.exists(), "a suite ran before --out was checked");

    let out = f
        .run(&config, &f.out.path().join("o"))
        .arg("--junit")
        .arg(bad.join("junit.xml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!marker.exists(), "a suite ran before --junit was checked");
    // A folder is not a JUnit file either.
    let out = f
        .run(&config, &f.out.path().join("o"))
        .arg("--junit")
        .arg(f.out.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!marker.exists());
    if !is_root() {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(bad.parent().unwrap(), fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn a_report_that_cannot_be_written_after_the_suites_ran_keeps_the_verdict_and_says_so() {
    let f = Fixture::new();
    f.pack();
    let out_dir = f.out.path().join("o");
    // gate.json can never be renamed into place: the suite puts a folder there once the output
    // guard has passed (one there before the run is refused up front, exit 2).
    // The report is already on disk, marked incomplete, when the suite runs: it is replaced
    // by the folder.
    let block = format!(
        "rm -f '{}'; mkdir -p '{}'",
        out_dir.join("gate.json").display(),
        out_dir.join("gate.json/blocker").display()
    );
    let config = f.config(&format!(
        "[[suite]]\nname = \"red\"\nrun = \"{block}; exit 1\"\n"
    ));
    let out = f.run(&config, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a finding stays 1: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("gate.json"), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("verdict   FAIL"),
        "the summary is on stdout"
    );

    fs::remove_dir_all(out_dir.join("gate.json")).unwrap();
    let green = f.config(&format!("[[suite]]\nname = \"green\"\nrun = \"{block}\"\n"));
    let out = f.run(&green, &out_dir).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(74),
        "a PASS needs its record: {}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("verdict   PASS"));
    assert!(stderr(&out).contains("gate.json"), "{}", stderr(&out));
}
