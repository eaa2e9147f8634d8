//! Signals: SIGINT and SIGTERM end pack, apply and run with 130, their children killed and
//! nothing left behind.

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{gate, Fixture};
use testkit::Repo;

use super::{gate_std, json, wait_for};

// ---- 8. interrupts ---------------------------------------------------------------------------

fn send(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// A repository whose staged candidate is large enough (32 MiB of noise) that packing or
/// applying it takes a while in a debug build; returns it with its base.
fn big_candidate() -> (Repo, String) {
    let repo = Repo::new();
    repo.write("README", "r\n");
    let base = repo.commit_all("base");
    repo.write_noise(16);
    repo.git(["add", "-A"]);
    (repo, base)
}

/// Starts `cmd`, sends it SIGTERM (to its own pid only) while it works, and returns its exit.
fn terminated(mut cmd: Command) -> std::process::ExitStatus {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the command finished before the signal"
    );
    send(child.id(), "TERM");
    wait_for(&mut child, Duration::from_secs(120))
}

#[test]
fn a_pack_interrupted_by_sigterm_exits_130_and_leaves_no_files() {
    let (repo, base) = big_candidate();
    let out_dir = tempfile::tempdir().unwrap();
    let target = out_dir.path().join("cand");
    let mut cmd = gate_std(repo.path());
    cmd.args(["pack", "--base", &base, "--out"]).arg(&target);
    assert_eq!(terminated(cmd).code(), Some(130));
    let leftovers: Vec<_> = fs::read_dir(&target)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    assert!(repo.extra_worktrees().is_empty(), "a git worktree was left");
}

#[test]
fn an_apply_interrupted_by_sigterm_exits_130_and_leaves_no_worktree() {
    let (repo, base) = big_candidate();
    let cand = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(cand.path())
        .assert()
        .success();
    let at = cand.path().join("wt");
    let mut cmd = gate_std(repo.path());
    cmd.args(["apply", "--base", &base, "--patch"])
        .arg(cand.path().join("build.patch"))
        .arg("--manifest")
        .arg(cand.path().join("candidate-manifest.sha256"))
        .arg("--worktree")
        .arg(&at);
    assert_eq!(terminated(cmd).code(), Some(130));
    assert!(!at.exists(), "the checkout was left at {}", at.display());
    assert!(repo.extra_worktrees().is_empty(), "a worktree was left");
}

#[test]
fn a_run_interrupted_by_sigint_or_sigterm_exits_130_with_its_suite_killed_and_nothing_left() {
    for signal in ["INT", "TERM"] {
        let f = Fixture::new();
        f.pack();
        let pid_file = f.out.path().join("suite.pid");
        let config = f.config(&format!(
            "[[suite]]\nname = \"slow\"\nrun = \"echo $$ > '{}'; exec sleep 60\"\n\n[[suite]]\nname = \"later\"\nrun = \"true\"\n",
            pid_file.display()
        ));
        let out_dir = f.out.path().join("o");
        let mut child = gate_std(f.repo.path())
            .arg("run")
            .arg("--config")
            .arg(&config)
            .arg("--out")
            .arg(&out_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let suite_pid = loop {
            if let Some(pid) = fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break pid;
            }
            assert!(Instant::now() < deadline, "the suite never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        let sent = Instant::now();
        send(child.id(), signal);
        let status = wait_for(&mut child, Duration::from_secs(60));
        assert_eq!(status.code(), Some(130), "SIG{signal}");
        assert!(
            sent.elapsed() < Duration::from_secs(30),
            "SIG{signal}: slow to stop"
        );
        assert!(
            !testkit::alive(suite_pid),
            "SIG{signal}: the suite still runs"
        );
        let report = json(&out_dir.join("gate.json"));
        assert_eq!(report["verdict"], "INTERRUPTED", "SIG{signal}");
        assert_eq!(
            report["suites"].as_array().unwrap().len(),
            1,
            "later never started"
        );
        assert!(
            f.repo.extra_worktrees().is_empty(),
            "SIG{signal}: a worktree was left"
        );
    }
}

#[test]
fn a_command_blocked_on_its_input_still_ends_at_ctrl_c_with_130() {
    // `gate cites` reading a review from a stdin that never ends (a terminal, a stuck pipe):
    // the interrupt handler must not turn Ctrl-C into nothing.
    let f = Fixture::new();
    f.settle();
    let mut cmd = gate_std(f.repo.path());
    let mut child = cmd
        .args(["cites", "--head", "HEAD"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _held_open = child.stdin.take();
    std::thread::sleep(Duration::from_millis(300));
    send(child.id(), "INT");
    let status = wait_for(&mut child, Duration::from_secs(10));
    assert_eq!(
        status.code(),
        Some(130),
        "Ctrl-C did not end it: {status:?}"
    );
}
