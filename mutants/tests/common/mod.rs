//! Fixtures for the `mutants` end-to-end tests: a real git repository holding a small shell
//! "library", a real suite (a shell script printing `N passed, N failed`) and a spec.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use testkit::{Output, Repo};

/// The library under test. Each function is a place a mutant can make the suite misbehave.
pub const LIB: &str = r#"add() { echo $(( $1 + $2 )); }
spin() { :; }
spawn() { :; }
daemon() { :; }
greet() {
  echo "hello"
}
"#;

/// The suite: records its pid, checks each function, prints counts the runner reads.
pub const TEST: &str = r#". ./lib.sh
echo $$ >> "$PIDS/suite"
fail=0
[ "$(add 2 3)" = 5 ] || { echo "FAIL: test_add"; fail=1; }
[ "$(greet)" = hello ] || { echo "FAIL: test_greet"; fail=1; }
spin || fail=1
spawn || fail=1
daemon || fail=1
if [ $fail = 0 ]; then echo "5 passed, 0 failed"; else echo "4 passed, 1 failed"; exit 1; fi
"#;

pub const SUITE: &str = "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"3s\"\n\n";

pub fn mutant(name: &str, anchor: &str, replace: &str, extra: &str) -> String {
    format!(
        "[[mutant]]\nname = \"{name}\"\nsite = \"lib\"\nfile = \"lib.sh\"\nanchor = '''{anchor}'''\nreplace = '''{replace}'''\nundoes = \"the claim of {name}\"\nsuite = \"unit\"\n{extra}\n"
    )
}

pub struct Fixture {
    pub repo: Repo,
    pub out: tempfile::TempDir,
    pub pids: tempfile::TempDir,
}

impl Fixture {
    /// A committed repository with lib.sh, test.sh and mutants.toml (`spec`).
    pub fn new(spec: &str) -> Fixture {
        let repo = Repo::new();
        repo.write("lib.sh", LIB)
            .write("test.sh", TEST)
            .write("mutants.toml", spec);
        repo.commit_all("fixture");
        Fixture {
            repo,
            out: tempfile::tempdir().unwrap(),
            pids: tempfile::tempdir().unwrap(),
        }
    }

    pub fn out(&self) -> PathBuf {
        self.out.path().join("report")
    }

    /// `mutants ARGS` in the repository, with `PIDS` pointing at the pid folder.
    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = testkit::bin(env!("CARGO_BIN_EXE_mutants"));
        cmd.current_dir(self.repo.path())
            .env("PIDS", self.pids.path());
        cmd
    }

    /// `mutants run mutants.toml --out OUT EXTRA...`
    pub fn run(&self, extra: &[&str]) -> Output {
        let out = self.out();
        let mut args: Vec<&str> = vec!["run", "mutants.toml", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        Output::of(self.cmd().args(&args))
    }

    pub fn report(&self) -> Value {
        report_in(&self.out())
    }

    /// Pids the suite wrote to `$PIDS/NAME`, one a line.
    pub fn pids(&self, name: &str) -> Vec<i32> {
        std::fs::read_to_string(self.pids.path().join(name))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// The first pid a suite wrote to `name`, waited for up to 30 s (`what` names the wait in
    /// the panic).
    pub fn first_pid(&self, name: &str, what: &str) -> i32 {
        let started = std::time::Instant::now();
        loop {
            if let Some(&pid) = self.pids(name).first() {
                return pid;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "{what} never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

pub fn report_in(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("mutants.json")).expect("mutants.json");
    serde_json::from_str(&text).unwrap()
}

/// (name, verdict) of every row.
pub fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn row<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

/// A candidate as `gate pack` would hand it over: the patch and manifest of staged changes.
pub fn candidate(fx: &Fixture, manifest_ok: bool) -> (tempfile::TempDir, String) {
    let base = fx.repo.head();
    fx.repo.write(
        "lib.sh",
        format!("{LIB}double() {{ echo $(( $1 * 2 )); }}\n"),
    );
    fx.repo.write(
        "double-test.sh",
        ". ./lib.sh\n[ \"$(double 4)\" = 8 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
    );
    fx.repo.git(["add", "-A"]);
    let tree = fx.repo.git(["write-tree"]);
    let dir = tempfile::tempdir().unwrap();
    let patch = fx
        .repo
        .git_output(["diff", "--cached", "--binary", &base])
        .stdout;
    std::fs::write(dir.path().join("build.patch"), patch).unwrap();
    let sums = std::process::Command::new("sha256sum")
        .current_dir(fx.repo.path())
        .args(["lib.sh", "double-test.sh"])
        .output()
        .unwrap()
        .stdout;
    let mut sums = String::from_utf8(sums).unwrap();
    if !manifest_ok {
        sums = sums.replacen(&sums[..4], "0000", 1);
    }
    std::fs::write(dir.path().join("candidate-manifest.sha256"), sums).unwrap();
    std::fs::write(
        dir.path().join("gate.toml"),
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n"),
    )
    .unwrap();
    fx.repo.git(["reset", "-q", "--hard"]);
    fx.repo.git(["clean", "-qfd"]);
    (dir, tree)
}

/// Sends `signal` to the `mutants` run `child` (started by the test) and waits up to 20 s for
/// it to end; its exit status and what it printed. `what` names the wait in the panic.
pub fn signal_and_wait(
    mut child: std::process::Child,
    signal: nix::sys::signal::Signal,
    what: &str,
) -> (std::process::ExitStatus, Output) {
    use std::time::{Duration, Instant};
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mutants did not stop {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (exit, child.wait_with_output().map(Output::from).unwrap())
}

/// The runners' `node_modules` folder (`scripts/install-runners.sh`, or `GATEKIT_RUNNERS_DIR`)
/// when `runner`'s command there runs (`vitest`, `jest`); otherwise `None`, and the test is
/// skipped, saying how to get it (under CI a skip fails).
pub fn runners(runner: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("GATEKIT_RUNNERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/gatekit/runners")
        });
    let bin = dir.join("node_modules/.bin").join(runner);
    testkit::needs::program(
        runner,
        bin.to_str()?,
        &["--version"],
        "run scripts/install-runners.sh",
    )
    .then(|| dir.join("node_modules"))
}

// ---- for the suites with `select` (coverage maps) ----

pub fn have_node() -> bool {
    testkit::needs::program("select-node", "node", &["--version"], "install Node.js 20")
}

pub fn have_coverage_py() -> bool {
    testkit::needs::python_modules("select-pytest", &["pytest", "coverage"])
}

/// A repository with `files` committed, the runners' leftovers ignored.
pub fn repo_with(files: &[(&str, &str)]) -> Fixture {
    let fx = Fixture::new("");
    fx.repo
        .write(".gitignore", "__pycache__/\n.pytest_cache/\nreports/\n");
    for (path, text) in files {
        fx.repo.write(path, text);
    }
    fx.repo.commit_all("sample");
    fx
}

/// `mutants run SPEC --no-canary EXTRA...` with `MARK` pointing at `mark`, for the watching test.
pub fn run_in(
    fx: &Fixture,
    spec: &str,
    out: &std::path::Path,
    mark: &std::path::Path,
    extra: &[&str],
) -> testkit::Output {
    let mut args = vec!["run", spec, "--no-canary", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    // The maps kept between runs go to this test's own cache folder.
    let cache = fx.out.path().join("cache");
    testkit::Output::of(
        fx.cmd()
            .env("MARK", mark)
            .env("GATEKIT_CACHE_DIR", cache)
            // A cargo suite builds in its checkout, not in the target folder of these tests.
            .env_remove("CARGO_TARGET_DIR")
            .args(&args),
    )
}

/// What the watching test saw in the mutated file while it ran, one mutant's text a line.
pub fn seen(mark: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(mark.join(name)).unwrap_or_default()
}

pub fn selection<'a>(report: &'a Value, name: &str) -> &'a Value {
    &row(report, name)["run"]["selection"]
}
