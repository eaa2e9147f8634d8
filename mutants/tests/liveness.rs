//! Clean-up removes only the dead: while a `mutants run` lives, `mutants clean` and another
//! run's start-up sweep leave its checkouts, session folder, `--out` lock and cache staging
//! alone, and it still finishes with its verdicts (and saves its cache); the output guard
//! refuses a bad `--out` with exit 2 before any suite runs, and a fresh run removes only the
//! files an earlier run recorded.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use testkit::{Output, Repo};

use crate::common::{report_in, verdicts};

/// A repository whose suite blocks on `flag` when mutant "blocks" is in (after touching
/// `started`), with a cached `out/` folder, and private temp, cache and output folders.
struct Live {
    repo: Repo,
    tmp: tempfile::TempDir,
    cache: tempfile::TempDir,
    out: tempfile::TempDir,
}

impl Live {
    fn new() -> Live {
        let out = tempfile::tempdir().unwrap();
        let (started, flag) = (out.path().join("started"), out.path().join("flag"));
        let repo = Repo::new();
        repo.write("lib.sh", "x=1\n")
            .write(".gitignore", "out/\n")
            .write(
                "test.sh",
                format!(
                    "mkdir -p out; touch out/built\n. ./lib.sh\n\
                     if [ $x = 2 ]; then touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done; fi\n\
                     [ $x = 1 ] && echo '1 passed, 0 failed' || {{ echo '0 passed, 1 failed'; exit 1; }}\n",
                    started.display(),
                    flag.display()
                ),
            )
            .write(
                "mutants.toml",
                "[worktree]\ncache = [\"out\"]\n\n[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"2m\"\n\n\
                 [[mutant]]\nname = \"blocks\"\nfile = \"lib.sh\"\nanchor = \"x=1\"\nreplace = \"x=2\"\nsuite = \"unit\"\n\n\
                 [[mutant]]\nname = \"quick\"\nfile = \"lib.sh\"\nanchor = \"x=1\"\nreplace = \"x=3\"\nsuite = \"unit\"\n",
            );
        repo.commit_all("base");
        Live {
            repo,
            tmp: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            out,
        }
    }

    fn started(&self) -> PathBuf {
        self.out.path().join("started")
    }

    fn flag(&self) -> PathBuf {
        self.out.path().join("flag")
    }

    fn std_cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mutants"));
        testkit::hermetic(&mut cmd);
        cmd.current_dir(self.repo.path())
            .env("TMPDIR", self.tmp.path())
            .env("GATEKIT_CACHE_DIR", self.cache.path());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = assert_cmd::Command::from_std(self.std_cmd());
        cmd.timeout(testkit::OUTER_TIMEOUT).args(args);
        Output::of(&mut cmd)
    }

    fn entries(&self, dir: &Path, prefix: &str) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    }

    /// The staging folders in the repository's cache (`worktrees/KEY/.new-*`).
    fn staging(&self) -> Vec<PathBuf> {
        self.entries(&self.cache.path().join("worktrees"), "")
            .iter()
            .flat_map(|store| self.entries(store, ".new-"))
            .collect()
    }
}

fn wait_for(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn mutants_clean_and_another_runs_sweep_leave_a_live_runs_checkout_session_lock_and_cache() {
    let l = Live::new();
    let out = l.out.path().join("r");
    let mut first = l.std_cmd();
    first
        .args(["run", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = first.spawn().unwrap();
    let pid = child.id();
    wait_for(&l.started(), "the blocking mutant");
    let checkouts = l.entries(l.tmp.path(), "gatekit-repo-");
    let session = l.entries(l.tmp.path(), &format!("gatekit-{pid}-"));
    let staging = l.staging();
    assert!(!checkouts.is_empty(), "no checkout in {:?}", l.tmp.path());
    assert_eq!(session.len(), 1);
    assert_eq!(staging.len(), 1, "no cache staging of the live run");
    let lock = out.join(".gatekit-lock");
    let alive = |when: &str| {
        for c in &checkouts {
            assert!(
                c.join(".git").exists(),
                "{when}: the live run's checkout went"
            );
        }
        assert!(
            session[0].join("owner").exists(),
            "{when}: its session went"
        );
        assert!(staging[0].exists(), "{when}: its cache staging went");
        assert!(lock.exists(), "{when}: its lock went");
    };

    let clean = l.run(&["clean"]);
    clean.assert_exit(0);
    assert!(clean.stdout.contains(&format!("pid {pid}")), "{clean}");
    alive("mutants clean");
    let clean = l.run(&["clean", "--all"]);
    clean.assert_exit(0);
    alive("mutants clean --all");

    let other = l.out.path().join("r2");
    let second = l.run(&["run", "--only", "quick", "--out", other.to_str().unwrap()]);
    second.assert_exit(0);
    alive("another run's sweep");
    let busy = l.run(&["run", "--only", "quick", "--out", out.to_str().unwrap()]);
    busy.assert_exit(2);
    assert!(busy.stderr.contains("in use by another run"), "{busy}");

    fs::write(l.flag(), "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut child = child;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the live run did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        err.contains("cache: out saved"),
        "its staging was lost: {err}"
    );
    let got = verdicts(&report_in(&out));
    assert_eq!(
        got,
        [
            ("blocks".to_string(), "killed".to_string()),
            ("quick".into(), "killed".into())
        ],
        "{err}"
    );
}

#[test]
fn a_bad_out_is_exit_2_before_any_suite_and_a_fresh_run_keeps_the_users_files() {
    let l = Live::new();
    fs::write(l.flag(), "").unwrap();
    let file = l.out.path().join("a-file");
    fs::write(&file, "x").unwrap();
    for (bad, why) in [
        (file.clone(), "is not a folder"),
        (l.repo.path().join(".git/r"), "inside the repository's .git"),
        (l.repo.path().to_path_buf(), "holds the run's spec"),
    ] {
        let run = l.run(&["run", "--out", bad.to_str().unwrap()]);
        run.assert_exit(2);
        assert!(run.stderr.contains(why), "{bad:?}: {run}");
        assert_eq!(run.stderr.lines().count(), 1, "{run}");
    }
    assert!(!l.repo.path().join(".git/r").exists());

    let out = l.out.path().join("r");
    fs::create_dir_all(out.join("logs")).unwrap();
    for name in [
        "logs/999-mine.log",
        "logs/baseline.other.log",
        "mutants.json.bak",
    ] {
        fs::write(out.join(name), "the user's\n").unwrap();
    }
    l.run(&["run", "--out", out.to_str().unwrap()])
        .assert_exit(0);
    let logs = l.entries(&out.join("logs"), "");
    l.run(&[
        "run",
        "--only",
        "quick",
        "--out",
        out.to_str().unwrap(),
        "--no-cache",
    ])
    .assert_exit(0);
    l.run(&["run", "--out", out.to_str().unwrap()])
        .assert_exit(0);
    for name in [
        "logs/999-mine.log",
        "logs/baseline.other.log",
        "mutants.json.bak",
    ] {
        assert_eq!(
            fs::read_to_string(out.join(name)).unwrap(),
            "the user's\n",
            "{name}"
        );
    }
    assert_eq!(
        l.entries(&out.join("logs"), ""),
        logs,
        "a fresh run's logs differ"
    );
    // A user's mutants.json in a fresh --out: refused, not overwritten.
    let other = l.out.path().join("r3");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("mutants.json"), "mine").unwrap();
    let run = l.run(&["run", "--out", other.to_str().unwrap()]);
    run.assert_exit(2);
    assert!(
        run.stderr.contains("no earlier gatekit run recorded it"),
        "{run}"
    );
    assert_eq!(
        fs::read_to_string(other.join("mutants.json")).unwrap(),
        "mine"
    );
}
