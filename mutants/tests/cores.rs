//! How the jobs share the cores: every build and suite is handed one GNU make jobserver (the
//! tool's own, or the one it was started under), and builds that cannot use it take turns.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use nix::sys::signal::Signal;
use testkit::Output;

/// Appends one line to `$PIDS/tokens` for the command it runs in: `KIND COUNT PIPE MAKEFLAGS`
/// with the tokens it could take from the jobserver `CARGO_MAKEFLAGS` names (all given back),
/// that pipe's identity and whether `MAKEFLAGS` names the same one (`True`), is unset
/// (`unset`) or other (`False`); or `KIND none PIPES...` with every pipe the command holds,
/// when it was handed no jobserver.
const TOKENS_PY: &str = r#"import os, re, sys
from pool import count
kind = sys.argv[1]
flags = os.environ.get("CARGO_MAKEFLAGS", "")
m = re.search(r"--jobserver-auth=(\d+),(\d+)", flags)
def pipes():
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("pipe:"):
            out.add(link)
    return sorted(out)
if m is None:
    line = " ".join([kind, "none"] + pipes())
else:
    r, w = int(m.group(1)), int(m.group(2))
    make = os.environ.get("MAKEFLAGS")
    same = "unset" if make is None else make == flags
    line = "%s %d %s %s" % (kind, count(r, w), os.readlink("/proc/self/fd/%d" % r), same)
with open(os.path.join(os.environ["PIDS"], "tokens"), "a") as f:
    f.write(line + "\n")
"#;

/// `pool.py`: `count(r, w)`, the tokens the jobserver pipe `r`/`w` holds now, read without
/// waiting and all given back.
const POOL_PY: &str = r#"import os
def count(r, w):
    # A description of its own, so non-blocking reads leave the shared pipe as it was.
    fd = os.open("/dev/fd/%d" % r, os.O_RDONLY | os.O_NONBLOCK)
    got = b""
    while True:
        try:
            chunk = os.read(fd, 64)
        except BlockingIOError:
            break
        if not chunk:
            break
        got += chunk
    os.close(fd)
    if got:
        os.write(w, got)
    return len(got)
"#;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A fixture whose suite's build and run each record what jobserver they were handed, and
/// whose `[worktree] setup` (never handed one) records the pipes it holds.
fn recording() -> Fixture {
    let spec = format!(
        "[worktree]\nsetup = \"python3 tokens.py setup\"\n\n\
         [suites.unit]\nbuild = \"python3 tokens.py build\"\n\
         run = \"python3 tokens.py run && sh test.sh\"\ntimeout = \"30s\"\n\n{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greets loudly", "echo \"hello\"", "echo \"HELLO\"", ""),
    );
    let fx = Fixture::new(&spec);
    fx.repo
        .write("tokens.py", TOKENS_PY)
        .write("pool.py", POOL_PY);
    fx.repo.commit_all("records the jobserver");
    fx
}

/// `mutants run` with no jobserver of the caller's in its environment.
fn without_outer_jobserver(fx: &Fixture) -> assert_cmd::Command {
    let mut cmd = fx.cmd();
    for var in ["MAKEFLAGS", "CARGO_MAKEFLAGS", "MFLAGS"] {
        cmd.env_remove(var);
    }
    cmd
}

fn lines(fx: &Fixture) -> Vec<Vec<String>> {
    std::fs::read_to_string(fx.pids.path().join("tokens"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(' ').map(String::from).collect())
        .collect()
}

/// The canaries are left out: these tests count every build and suite run, and a canary is
/// one more run of a suite (its own tests are in `canary.rs`).
fn run_args(fx: &Fixture) -> Vec<String> {
    let out = fx.out();
    [
        "run",
        "mutants.toml",
        "--out",
        out.to_str().unwrap(),
        "--no-canary",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn every_build_and_suite_is_handed_a_jobserver_of_the_cores_less_one_and_nothing_else_is() {
    let fx = recording();
    let result = Output::of(
        without_outer_jobserver(&fx)
            .args(run_args(&fx))
            .args(["--jobs", "1"]),
    );
    result.assert_exit(0);
    let seen = lines(&fx);
    let commands: Vec<&Vec<String>> = seen.iter().filter(|l| l[0] != "setup").collect();
    // The baseline's build and run, then each mutant's.
    assert_eq!(commands.len(), 6, "{seen:?}\n{result}");
    let tokens = (cores() - 1).to_string();
    for l in &commands {
        assert_eq!(
            l[1], tokens,
            "{} saw another pool than cores-1: {seen:?}",
            l[0]
        );
        // make is not handed the pool: a serial makefile stays serial.
        assert_eq!(l[3], "unset", "MAKEFLAGS was set: {l:?}");
    }
    let pool = &commands[0][2];
    assert!(pool.starts_with("pipe:"), "{pool}");
    assert!(
        commands.iter().all(|l| &l[2] == pool),
        "one pool for the whole run: {seen:?}"
    );
    // The setup is handed none, and the pool's pipe does not reach it by inheritance either.
    let setup = seen
        .iter()
        .find(|l| l[0] == "setup")
        .expect("the setup ran");
    assert_eq!(setup[1], "none", "{setup:?}");
    assert!(!setup[2..].contains(pool), "the pool leaked: {setup:?}");
    assert!(result.stderr.contains("mutants: jobserver:"), "{result}");
}

#[test]
fn under_a_make_jobserver_the_run_takes_its_tokens_instead_of_making_a_pool() {
    let fx = recording();
    // A count the tool's own pool (cores less one) can never have.
    let theirs = cores() + 2;
    let outer = jobserver::Client::new(theirs).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    testkit::hermetic(&mut cmd);
    cmd.current_dir(fx.repo.path())
        .env("PIDS", fx.pids.path())
        .env_remove("MFLAGS")
        .args(run_args(&fx))
        .args(["--jobs", "1"]);
    outer.configure_make(&mut cmd);
    let result = Output::of(assert_cmd::Command::from_std(cmd).timeout(Duration::from_secs(300)));
    result.assert_exit(0);
    let seen = lines(&fx);
    let commands: Vec<&Vec<String>> = seen.iter().filter(|l| l[0] != "setup").collect();
    assert_eq!(commands.len(), 6, "{seen:?}\n{result}");
    for l in &commands {
        assert_eq!(l[1], theirs.to_string(), "not the caller's pool: {seen:?}");
        // The caller's MAKEFLAGS reach the commands as the caller set them.
        assert_eq!(l[3], "True", "MAKEFLAGS changed: {l:?}");
    }
    assert!(
        result.stderr.contains("the one this run was started under"),
        "{result}"
    );
    assert_eq!(outer.available().unwrap(), theirs, "every token came back");
}

#[test]
fn no_jobserver_hands_the_commands_none() {
    let fx = recording();
    let result = Output::of(
        without_outer_jobserver(&fx)
            .args(run_args(&fx))
            .arg("--no-jobserver"),
    );
    result.assert_exit(0);
    let seen = lines(&fx);
    assert_eq!(seen.len(), 7, "{seen:?}");
    assert!(seen.iter().all(|l| l[1] == "none"), "{seen:?}");
    assert!(!result.stderr.contains("mutants: jobserver:"), "{result}");
}

/// A build that speaks no jobserver: records its start and end (`S`/`E`, nanoseconds, pid) in
/// `$PIDS/builds`, and takes `$BUILD_SECS` in between; a mutated `spin` makes it sleep long
/// (its pid in `$PIDS/sleeper`).
const BUILD_SH: &str = r#"echo "S $(date +%s%N) $$" >> "$PIDS/builds"
if grep -q 'slow build' lib.sh; then echo $$ > "$PIDS/sleeper"; sleep 30; fi
sleep "$BUILD_SECS"
echo "E $(date +%s%N) $$" >> "$PIDS/builds"
"#;

fn slotted(build_timeout: &str, mutants: &str) -> Fixture {
    let spec = format!(
        "[suites.unit]\nbuild = \"sh build.sh\"\nbuild_timeout = \"{build_timeout}\"\n\
         run = \"sh test.sh\"\ntimeout = \"30s\"\n\n{mutants}"
    );
    let fx = Fixture::new(&spec);
    fx.repo.write("build.sh", BUILD_SH);
    fx.repo.commit_all("a build that takes its time");
    fx
}

/// (start, end) of each build, in nanoseconds, ordered by start.
fn builds(fx: &Fixture) -> Vec<(u128, u128)> {
    let text = std::fs::read_to_string(fx.pids.path().join("builds")).unwrap_or_default();
    let mut starts = std::collections::BTreeMap::new();
    let mut spans = Vec::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split(' ').collect();
        let t: u128 = w[1].parse().unwrap();
        match w[0] {
            "S" => {
                starts.insert(w[2].to_string(), t);
            }
            _ => spans.push((starts[w[2]], t)),
        }
    }
    spans.sort();
    spans
}

#[test]
fn builds_of_different_jobs_never_overlap_and_waiting_is_not_build_time() {
    if cores() < 2 {
        // Two jobs on one core are more jobs than cores: there is no slot to prove.
        return;
    }
    let mutants: String = (0..4)
        .map(|i| {
            let replace = format!("$1 - $2 + {i}");
            mutant(&format!("m{i}"), "$1 + $2", &replace, "")
        })
        .collect();
    // A build takes 1.2s of its 2s timeout: one that counted its wait behind another would
    // run past it and be an error.
    let fx = slotted("2s", &mutants);
    let result = Output::of(
        without_outer_jobserver(&fx)
            .env("BUILD_SECS", "1.2")
            .args(run_args(&fx))
            .args(["--jobs", "2"]),
    );
    result.assert_exit(0);
    let spans = builds(&fx);
    // Copy 0's baseline, copy 1's, and one per mutant.
    assert_eq!(spans.len(), 6, "{spans:?}\n{result}");
    for pair in spans.windows(2) {
        assert!(
            pair[1].0 >= pair[0].1,
            "two builds overlapped: {pair:?}\n{result}"
        );
    }
    let report = fx.report();
    assert!(
        verdicts(&report).iter().all(|(_, v)| v == "killed"),
        "{report}"
    );
    assert!(result.stderr.contains("build slot"), "{result}");
}

#[test]
fn an_interrupt_stops_a_job_waiting_for_the_build_slot_before_its_build_starts() {
    if cores() < 2 {
        return;
    }
    let spec_mutants = format!(
        "{}{}{}",
        mutant(
            "slow build",
            "spin() { :; }",
            "spin() { :; } # slow build",
            ""
        ),
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greets loudly", "echo \"hello\"", "echo \"HELLO\"", ""),
    );
    let fx = slotted("60s", &spec_mutants);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    testkit::hermetic(&mut cmd);
    let child = cmd
        .current_dir(fx.repo.path())
        .env("PIDS", fx.pids.path())
        .env("BUILD_SECS", "0")
        .env_remove("MAKEFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        .args(run_args(&fx))
        .args(["--jobs", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeper = fx.first_pid("sleeper", "the slow build");
    // Time for the other job to reach the slot and wait there (not an assertion: a job that
    // has not reached it yet must not start its build after the interrupt either).
    std::thread::sleep(Duration::from_millis(800));
    let before = builds_started(&fx);
    let (exit, output) = signal_and_wait(
        child,
        Signal::SIGINT,
        "while a job waited for the build slot",
    );
    assert_eq!(exit.code(), Some(130), "{output}");
    assert!(!testkit::alive(sleeper), "the slow build is still running");
    assert_eq!(
        builds_started(&fx),
        before,
        "a build started after the interrupt\n{output}"
    );
    assert_eq!(fx.report()["interrupted"], true);
    assert!(
        fx.repo.extra_worktrees().is_empty(),
        "worktrees left behind"
    );
    assert_eq!(fx.repo.read("lib.sh"), LIB.as_bytes());
}

fn builds_started(fx: &Fixture) -> usize {
    std::fs::read_to_string(fx.pids.path().join("builds"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("S "))
        .count()
}

/// The slow mutant's suite: once the fast mutant's suite has run in the other copy, waits
/// (bounded) until the pool holds `WANT` tokens and appends how many it last saw to
/// `$PIDS/later`; every suite then runs the real test.
const SHARE_PY: &str = r#"import os, re, subprocess, sys, time
from pool import count
pids = os.environ["PIDS"]
lib = open("lib.sh").read()
def tokens():
    m = re.search(r"--jobserver-auth=(\d+),(\d+)", os.environ.get("CARGO_MAKEFLAGS", ""))
    return count(int(m.group(1)), int(m.group(2)))
if "HELLO" in lib:
    open(os.path.join(pids, "fast-done"), "w").close()
elif "$1 - $2" in lib:
    deadline = time.time() + 60
    while not os.path.exists(os.path.join(pids, "fast-done")) and time.time() < deadline:
        time.sleep(0.05)
    want, seen = int(os.environ["WANT"]), -1
    deadline = time.time() + 15
    while time.time() < deadline:
        seen = tokens()
        if seen == want:
            break
        time.sleep(0.05)
    with open(os.path.join(pids, "later"), "a") as f:
        f.write("%d\n" % seen)
sys.exit(subprocess.call(["sh", "test.sh"]))
"#;

#[test]
fn a_copy_out_of_mutants_gives_its_share_of_the_cores_to_the_copy_still_judging() {
    if cores() < 2 {
        // One core, two jobs: the pool has no token to share.
        return;
    }
    let spec = format!(
        "[suites.unit]\nrun = \"python3 share.py\"\ntimeout = \"2m\"\n\n{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greets loudly", "echo \"hello\"", "echo \"HELLO\"", ""),
    );
    let fx = Fixture::new(&spec);
    fx.repo
        .write("share.py", SHARE_PY)
        .write("pool.py", POOL_PY);
    fx.repo.commit_all("a suite that watches the pool");
    // While both copies judge, the pool holds the cores less two; once one copy has no
    // mutant left, what it held goes back and the pool holds the cores less one.
    let result = Output::of(
        without_outer_jobserver(&fx)
            .env("WANT", (cores() - 1).to_string())
            .args(run_args(&fx))
            .args(["--jobs", "2"]),
    );
    result.assert_exit(0);
    let later = std::fs::read_to_string(fx.pids.path().join("later")).unwrap_or_default();
    assert_eq!(
        later.trim(),
        (cores() - 1).to_string(),
        "the copy still judging never got the finished copy's share\n{result}"
    );
    let report = fx.report();
    assert!(
        verdicts(&report).iter().all(|(_, v)| v == "killed"),
        "{report}"
    );
}
