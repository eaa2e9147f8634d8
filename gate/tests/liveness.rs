//! Clean-up removes only the dead: `gate clean` and the sweep every run does at its start
//! never touch a live run's checkout, session folder or `--out` lock (live: the same pid with
//! the same start time), a run killed with SIGKILL is cleaned, a reused pid counts as dead, and
//! an interrupted `gate apply` leaves no half-made checkout.
//!
//! Every gate here runs with a private `TMPDIR` and state folder inside the test's temp dir.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{gate, stderr, stdout, Fixture};

/// A private temp dir and state dir for the gates a test starts.
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

    fn env(&self, cmd: &mut std::process::Command) {
        cmd.env("TMPDIR", self.tmp.path())
            .env("GATEKIT_STATE_DIR", self.state.path());
    }

    fn gate(&self, dir: &Path) -> assert_cmd::Command {
        let mut cmd = gate();
        cmd.current_dir(dir)
            .env("TMPDIR", self.tmp.path())
            .env("GATEKIT_STATE_DIR", self.state.path());
        cmd
    }

    fn entries(&self, prefix: &str) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| e.path())
            .collect();
        found.sort();
        found
    }
}

/// Waits up to 60 s for `path` to exist.
fn wait_for(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to 60 s for `child` to end (killing it past that) and returns its exit code.
fn finish(mut child: Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// This process's start time (clock ticks since boot), from `/proc/self/stat`.
fn my_start() -> u64 {
    let stat = fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// `gate run --keep` of a suite that says it started, then waits for `flag`; not waited for.
fn start_blocked_run(f: &Fixture, s: &Scratch, out: &Path, flag: &Path, started: &Path) -> Child {
    let config = f.config(&format!(
        "[[suite]]\nname = \"waits\"\nrun = \"touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done\"\ntimeout = \"2m\"\n",
        started.display(),
        flag.display()
    ));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut cmd);
    s.env(&mut cmd);
    cmd.current_dir(f.repo.path())
        .args(["run", "--keep", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().unwrap()
}

#[test]
fn gate_clean_and_other_runs_leave_a_live_runs_checkout_session_and_lock() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let s = Scratch::new();
    let (flag, started) = (f.out.path().join("flag"), f.out.path().join("started"));
    let out = f.out.path().join("o");
    let child = start_blocked_run(&f, &s, &out, &flag, &started);
    let pid = child.id();
    wait_for(&started, "the first run's suite");
    let checkout = s.entries("gatekit-repo-");
    let session = s.entries(&format!("gatekit-{pid}-"));
    assert_eq!(checkout.len(), 1, "{checkout:?}");
    assert_eq!(session.len(), 1, "{session:?}");
    let lock = out.join(".gatekit-lock");
    assert!(lock.exists());
    let alive = |when: &str| {
        assert!(
            checkout[0].join(".git").exists(),
            "{when}: the live run's checkout went"
        );
        assert!(
            session[0].join("owner").exists(),
            "{when}: the live run's session went"
        );
        assert!(lock.exists(), "{when}: the live run's lock went");
    };

    let o = s.gate(f.repo.path()).arg("clean").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("still running (pid {pid})")),
        "{}",
        stdout(&o)
    );
    alive("gate clean");

    let quick = f.config("[[suite]]\nname = \"quick\"\nrun = \"true\"\n");
    let o = s
        .gate(f.repo.path())
        .arg("run")
        .arg("--config")
        .arg(&quick)
        .arg("--out")
        .arg(f.out.path().join("o2"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    alive("a second run's sweep");
    // Its --out is still locked: a run on it is refused.
    let o = s
        .gate(f.repo.path())
        .arg("run")
        .arg("--config")
        .arg(&quick)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("in use by another run"),
        "{}",
        stderr(&o)
    );

    fs::write(&flag, "").unwrap();
    assert_eq!(
        finish(child),
        Some(0),
        "the live run did not finish with its verdict"
    );
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("gate.json")).unwrap()).unwrap();
    assert_eq!(report["verdict"], "PASS", "{report}");
    // Its run over, the kept checkout is gate clean's to remove.
    let o = s.gate(f.repo.path()).arg("clean").output().unwrap();
    assert!(stdout(&o).contains("(kept)"), "{}", stdout(&o));
    assert!(!checkout[0].exists());
}

#[test]
fn what_a_run_killed_with_sigkill_kept_is_removed_by_gate_clean() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let s = Scratch::new();
    let (flag, started) = (f.out.path().join("flag"), f.out.path().join("started"));
    let mut child = start_blocked_run(&f, &s, &f.out.path().join("o"), &flag, &started);
    let pid = child.id();
    wait_for(&started, "the run's suite");
    child.kill().unwrap(); // SIGKILL: the run can clean nothing
    child.wait().unwrap();
    let checkout = s.entries("gatekit-repo-");
    assert_eq!(checkout.len(), 1);
    let o = s.gate(f.repo.path()).arg("clean").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!checkout[0].exists(), "{}", stdout(&o));
    assert!(
        s.entries(&format!("gatekit-{pid}-")).is_empty(),
        "the dead session stayed"
    );
    fs::write(&flag, "").unwrap();
}

#[test]
fn a_reused_pid_counts_as_dead_and_a_live_one_does_not() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let (me, start) = (std::process::id(), my_start());
    let t = s.tmp.path();
    let plant = |name: &str, marker: &str| {
        let dir = t.join(name);
        fs::create_dir_all(dir.join(".git")).unwrap();
        fs::write(dir.join(".git/gatekit-owner"), marker).unwrap();
        dir
    };
    // A live pid (this test's) with another start time: a dead run whose pid was reused.
    let reused = plant(
        &format!("gatekit-repo-{me}.{}-0", start + 1),
        &format!("run {me} {}\n", start + 1),
    );
    let live = plant(
        &format!("gatekit-repo-{me}.{start}-0"),
        &format!("run {me} {start}\n"),
    );
    let reused_session = t.join(format!("gatekit-{me}-{}", start + 1));
    fs::create_dir_all(&reused_session).unwrap();
    fs::write(
        reused_session.join("owner"),
        format!("gatekit session pid {me} start {}\n", start + 1),
    )
    .unwrap();
    // Two kept checkouts, each said to be still used by this pid: with its start time, and not.
    let mut kept = Vec::new();
    for right in [true, false] {
        let before = s.entries("gatekit-apply-");
        let mut apply = f.apply();
        apply
            .env("TMPDIR", t)
            .env("GATEKIT_STATE_DIR", s.state.path());
        apply.assert().success();
        let made: Vec<PathBuf> = s
            .entries("gatekit-apply-")
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        let marker = made[0].join(".git/gatekit-owner");
        let text = fs::read_to_string(&marker).unwrap();
        assert!(
            text.starts_with("kept ") && text.lines().count() == 1,
            "{text}"
        );
        let owner_start = if right { start } else { start + 1 };
        fs::write(&marker, format!("{text}live {me} {owner_start}\n")).unwrap();
        kept.push(made[0].clone());
    }

    let o = s.gate(f.repo.path()).arg("clean").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!reused.exists(), "a reused pid kept a dead run's checkout");
    assert!(
        !reused_session.exists(),
        "a reused pid kept a dead run's session"
    );
    assert!(live.exists(), "a live run's checkout was removed");
    assert!(
        kept[0].exists(),
        "a kept checkout still in use was removed: {}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains(&format!("still running (pid {me})")),
        "{}",
        stdout(&o)
    );
    assert!(
        !kept[1].exists(),
        "a kept checkout of a reused pid stayed: {}",
        stdout(&o)
    );
    fs::remove_dir_all(&live).unwrap();
}

#[test]
fn an_interrupted_apply_leaves_no_half_made_checkout() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    // 32 MiB of incompressible data: applying it and checking its manifest takes long enough
    // for the SIGINT to land while gate apply is making the checkout. (A slow smudge filter in
    // the user's git config no longer reaches gatekit's git, which ignores that config.)
    let base = f.repo.head();
    f.repo.write_noise(16);
    f.repo.git(["add", "-A"]);
    fs::remove_file(f.patch()).unwrap();
    fs::remove_file(f.manifest()).unwrap();
    gate()
        .current_dir(f.repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(f.out.path())
        .assert()
        .success();

    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut cmd);
    s.env(&mut cmd);
    cmd.current_dir(f.repo.path())
        .args(["apply", "--base", &base, "--patch"])
        .arg(f.patch())
        .arg("--manifest")
        .arg(f.manifest())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.entries("gatekit-apply-").is_empty() {
        assert!(Instant::now() < deadline, "the checkout never started");
        std::thread::sleep(Duration::from_millis(2));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(finish(child), Some(130));
    let left: Vec<String> = fs::read_dir(s.tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "the interrupted apply left {left:?}");
    let registry = s.state.path().join("kept");
    assert!(
        fs::read_dir(&registry).map_or(true, |mut d| d.next().is_none()),
        "the interrupted apply left a registry entry"
    );
}
