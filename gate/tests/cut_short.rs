//! A `gate run` cut short never leaves a report that looks green: SIGKILL mid-run leaves the
//! incomplete report written before (`complete: false`, exit code 130, "cut short after N of
//! M", the unrun suites as JUnit errors); SIGINT exits 130 with the same; a full disk leaves
//! the incomplete report and a non-zero exit. And a suite whose runner reports failed tests
//! while its command exits 0 is a FAIL that says the counts and the exit disagree. Every fault
//! aims only at the test's own temp dir; every process a test starts is waited on with a limit.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{gate, stderr, stdout, Fixture};

fn json(path: &Path) -> serde_json::Value {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A scratch TMPDIR and state folder inside the test's own temp dir, for the gate processes a
/// test kills (whatever they leave is the next gate's to sweep, and goes with the folder).
struct Scratch {
    tmp: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            tmp: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn apply_to(&self, cmd: &mut Command) {
        cmd.env("TMPDIR", self.tmp.path())
            .env("GATEKIT_STATE_DIR", self.state.path());
    }
}

/// `gate run` of `config` into `out` in the background, its output to files beside `out`.
fn spawn_run(
    f: &Fixture,
    s: &Scratch,
    config: &Path,
    out: &Path,
    junit: &Path,
) -> std::process::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut cmd);
    s.apply_to(&mut cmd);
    cmd.current_dir(f.repo.path())
        .arg("run")
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--junit")
        .arg(junit)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().unwrap()
}

/// Waits until `path` holds a pid, for at most a minute.
fn pid_in(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(pid) = fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the suite never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send(pid: i32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Waits for `child` with an outer limit; kills it (by its own pid) if the limit passes.
fn wait_for(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("child {} did not finish within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Three suites, the middle one writing its pid to `pid_file` and sleeping.
fn sleeper_config(f: &Fixture, pid_file: &Path) -> PathBuf {
    f.config(&format!(
        "[[suite]]\nname = \"first\"\nrun = \"true\"\n\n[[suite]]\nname = \"slow\"\nrun = \"echo $$ > '{}'; exec sleep 60\"\n\n[[suite]]\nname = \"last\"\nrun = \"true\"\n",
        pid_file.display()
    ))
}

/// What every cut-short report must say: not complete, exit code 130 and the verdict
/// `verdict`, the summary "cut short after `done` of 3", and JUnit errors (no pass, no skip)
/// for the suites without a result.
fn assert_cut_short(out: &Path, junit: &Path, verdict: &str, done: usize) {
    let report = json(&out.join("gate.json"));
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(report["exit_code"], 130, "{report:#}");
    assert_eq!(report["verdict"], verdict, "{report:#}");
    let summary = read(&out.join("gate-summary.txt"));
    assert!(
        summary.contains(&format!("cut short after {done} of 3 suites")),
        "{summary}"
    );
    assert!(summary.contains(&format!("gate {verdict}")), "{summary}");
    assert!(!summary.contains("PASS"), "{summary}");
    let xml = read(junit);
    for name in ["slow", "last"] {
        let case = xml
            .split("<testcase ")
            .find(|c| c.contains(&format!("name=\"{name}\"")))
            .unwrap_or_else(|| panic!("no testcase for {name}: {xml}"));
        assert!(case.contains("<error message="), "{name}: {case}");
    }
    assert!(!xml.contains("<skipped"), "{xml}");
}

#[test]
fn a_run_killed_with_sigkill_leaves_a_report_that_says_it_was_cut_short() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let pid_file = f.out.path().join("suite.pid");
    let config = sleeper_config(&f, &pid_file);
    let out = f.out.path().join("o");
    let junit = f.out.path().join("junit.xml");
    let mut child = spawn_run(&f, &s, &config, &out, &junit);
    let suite = pid_in(&pid_file);
    // The report after `first` is written before `slow` starts.
    child.kill().unwrap(); // SIGKILL: gate can write nothing more
    wait_for(&mut child, Duration::from_secs(30));
    // The suite lives on in its own group: this test started it, so this test ends it.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{suite}")])
        .status();
    assert_cut_short(&out, &junit, "INCOMPLETE", 1);
    let report = json(&out.join("gate.json"));
    assert_eq!(report["suites"].as_array().unwrap().len(), 1, "{report:#}");

    // The next gate sweeps what the killed one left (its checkout, its scratch).
    let mut clean = Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut clean);
    s.apply_to(&mut clean);
    let status = clean
        .current_dir(f.repo.path())
        .arg("clean")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_run_killed_during_its_setup_replaces_an_earlier_pass_with_an_incomplete_report() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let out = f.out.path().join("o");
    let junit = f.out.path().join("junit.xml");
    let green = f.config("[[suite]]\nname = \"ok\"\nrun = \"true\"\n");
    let mut first = spawn_run(&f, &s, &green, &out, &junit);
    assert!(wait_for(&mut first, Duration::from_secs(60)).success());
    assert_eq!(json(&out.join("gate.json"))["verdict"], "PASS");

    let pid_file = f.out.path().join("setup.pid");
    let config = f.config(&format!(
        "[worktree]\nsetup = \"echo $$ > '{}'; exec sleep 60\"\n\n[[suite]]\nname = \"ok\"\nrun = \"true\"\n",
        pid_file.display()
    ));
    let mut child = spawn_run(&f, &s, &config, &out, &junit);
    let setup = pid_in(&pid_file);
    child.kill().unwrap(); // SIGKILL while the setup runs, before any suite
    wait_for(&mut child, Duration::from_secs(30));
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{setup}")])
        .status();
    let report = json(&out.join("gate.json"));
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(report["verdict"], "INCOMPLETE", "{report:#}");
    assert_eq!(report["exit_code"], 130, "{report:#}");
    let summary = read(&out.join("gate-summary.txt"));
    assert!(
        summary.contains("cut short after 0 of 1 suites; not run: ok"),
        "{summary}"
    );
    assert!(!summary.contains("PASS"), "{summary}");
    assert!(read(&junit).contains("<error message=\"suite ok was not run"));
}

#[test]
fn an_only_rerun_killed_with_sigkill_leaves_the_summary_incomplete_not_its_earlier_pass() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let hold = f.out.path().join("hold");
    let pid_file = f.out.path().join("suite.pid");
    let config = f.config(&format!(
        "[[suite]]\nname = \"quick\"\nrun = \"true\"\n\n[[suite]]\nname = \"slow\"\nrun = \"if [ -f '{}' ]; then echo $$ > '{}'; exec sleep 60; fi\"\n",
        hold.display(),
        pid_file.display()
    ));
    let out = f.out.path().join("o");
    let junit = f.out.path().join("junit.xml");
    let mut first = Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut first);
    s.apply_to(&mut first);
    let status = first
        .current_dir(f.repo.path())
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let report = json(&out.join("gate.json"));
    assert_eq!(
        (report["verdict"].clone(), report["complete"].clone()),
        ("PASS".into(), true.into())
    );

    fs::write(&hold, "").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut cmd);
    s.apply_to(&mut cmd);
    let mut child = cmd
        .current_dir(f.repo.path())
        .args(["run", "--only", "slow", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .arg("--junit")
        .arg(&junit)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let suite = pid_in(&pid_file);
    child.kill().unwrap(); // SIGKILL mid-rerun
    wait_for(&mut child, Duration::from_secs(30));
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{suite}")])
        .status();
    let report = json(&out.join("gate.json"));
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(report["verdict"], "INCOMPLETE", "{report:#}");
    assert_eq!(report["exit_code"], 130, "{report:#}");
    assert_eq!(report["reruns"].as_array().unwrap().len(), 1, "{report:#}");
    let summary = read(&out.join("gate-summary.txt"));
    assert!(
        summary.contains("cut short after 0 of 1 suites; not run: slow"),
        "{summary}"
    );
    let xml = read(&junit);
    assert!(
        xml.contains("<error message=\"suite slow was not run"),
        "{xml}"
    );
}

#[test]
fn a_run_stopped_by_sigint_exits_130_with_reports_that_say_it_was_cut_short() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let pid_file = f.out.path().join("suite.pid");
    let config = sleeper_config(&f, &pid_file);
    let out = f.out.path().join("o");
    let junit = f.out.path().join("junit.xml");
    let mut child = spawn_run(&f, &s, &config, &out, &junit);
    let suite = pid_in(&pid_file);
    send(child.id() as i32, "INT");
    let status = wait_for(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    assert!(!testkit::alive(suite), "the suite still runs");
    assert_cut_short(&out, &junit, "INTERRUPTED", 1);
    let xml = read(&junit);
    assert!(
        xml.contains("suite slow was cut short by an interrupt"),
        "{xml}"
    );
}

#[test]
fn a_disk_that_fills_during_the_run_leaves_the_incomplete_report_and_a_non_zero_exit() {
    let f = Fixture::new();
    f.pack();
    let disk = f.out.path().join("disk");
    let Some(_mounted) = testkit::Tmpfs::mount(&disk, "512k") else {
        return;
    };
    let out = disk.join("o");
    let junit = disk.join("junit.xml");
    // The first suite fills the disk the reports live on (and passes); the second passes too.
    let config = f.config(&format!(
        "[[suite]]\nname = \"fill\"\nrun = \"dd if=/dev/zero of='{}' bs=4k 2>/dev/null; true\"\n\n[[suite]]\nname = \"after\"\nrun = \"true\"\n",
        disk.join("filler").display()
    ));
    let run = f
        .run(&config, &out)
        .arg("--junit")
        .arg(&junit)
        .env("TMPDIR", f.out.path())
        .output()
        .unwrap();
    let err = stderr(&run);
    // An I/O failure after the run began to write: 74, never the 2 of bad input.
    assert_eq!(
        run.status.code(),
        Some(74),
        "a PASS without its record: {err}"
    );
    assert!(err.contains("No space left on device"), "{err}");
    assert!(stdout(&run).contains("verdict   PASS"), "{}", stdout(&run));
    // On disk: the report written before the first suite, which says it is not complete.
    let report = json(&out.join("gate.json"));
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(report["exit_code"], 130, "{report:#}");
    assert_ne!(report["verdict"], "PASS", "{report:#}");
    let summary = read(&out.join("gate-summary.txt"));
    assert!(
        summary.contains("cut short after 0 of 2 suites"),
        "{summary}"
    );
    assert!(read(&junit).contains("<error message="), "{}", read(&junit));
}

#[test]
fn a_suite_whose_runner_reports_failures_but_exits_0_fails_the_gate_and_says_why() {
    let f = Fixture::new();
    f.pack();
    // A script that prints a failing tally and exits 0, and a real runner (python's unittest)
    // whose failing test's exit code a `| tee` pipeline loses.
    fs::write(
        f.out.path().join("test_red.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n\n    def test_red(self):\n        self.assertEqual(1, 2)\n",
    )
    .unwrap();
    let config = f.config(&format!(
        "[[suite]]\nname = \"swallowed\"\nrun = \"echo '1 passed, 2 failed'; exit 0\"\n\n[[suite]]\nname = \"teed\"\nrun = \"cd '{}' && python3 -m unittest test_red 2>&1 | tee unittest.out\"\n",
        f.out.path().display()
    ));
    let out = f.out.path().join("o");
    let run = f.run(&config, &out).output().unwrap();
    let text = stdout(&run);
    assert_eq!(run.status.code(), Some(1), "{text}{}", stderr(&run));
    assert!(text.contains("exit 0 but 2 failed"), "{text}");
    assert!(text.contains("exit 0 but 1 failed"), "{text}");
    assert!(text.contains("the counts and the exit disagree"), "{text}");
    let verdict = text.lines().find(|l| l.starts_with("verdict")).unwrap();
    assert!(verdict.starts_with("verdict   FAIL"), "{verdict}");
    assert!(
        verdict.contains("suite swallowed exit 0 but 2 failed"),
        "{verdict}"
    );
    assert!(
        verdict.contains("suite teed exit 0 but 1 failed"),
        "{verdict}"
    );
    let report = json(&out.join("gate.json"));
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(
        (report["complete"].clone(), report["exit_code"].clone()),
        (true.into(), 1.into())
    );
    for s in report["suites"].as_array().unwrap() {
        assert_eq!(s["record"]["exit_code"], 0, "{s:#}");
        assert_eq!(s["outcome"], "failed", "{s:#}");
    }
    let findings = report["findings"].to_string();
    assert!(
        findings.contains("the counts and the exit disagree"),
        "{findings}"
    );
    // A green run is complete with exit code 0.
    let green = f.config("[[suite]]\nname = \"ok\"\nrun = \"echo '3 passed'\"\n");
    let out = f.out.path().join("green");
    gate()
        .current_dir(f.repo.path())
        .args(["run", "--config"])
        .arg(&green)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let report = json(&out.join("gate.json"));
    assert_eq!(
        (
            report["complete"].clone(),
            report["exit_code"].clone(),
            report["verdict"].clone()
        ),
        (true.into(), 0.into(), "PASS".into())
    );
    assert!(!read(&out.join("gate-summary.txt")).contains("cut short"));
}
