//! Build outputs handed between working copies and kept between runs (`[worktree] cache`),
//! on a real Cargo project: what a repeat run restores, what `--no-cache` skips, what a
//! corrupt or a killed run's cache leaves (nothing used), and that a cache never changes a
//! verdict. Cargo's own `-v` words (`Fresh`, `Compiling`) in the baseline logs are the proof.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use testkit::{Output, Repo};

use crate::common::{report_in, verdicts};

/// A crate with no dependencies, its tests, and three mutants (two kills and a control).
struct Crate {
    repo: Repo,
    cache: tempfile::TempDir,
    tmp: tempfile::TempDir,
    out: tempfile::TempDir,
}

const SPEC: &str = r#"[suites.cargo]
run = "cargo test -v --offline"
timeout = "300s"

[[mutant]]
name = "add times"
file = "src/lib.rs"
anchor = "a + b"
replace = "a * b"
suite = "cargo"

[[mutant]]
name = "add plus one"
file = "src/lib.rs"
anchor = "a + b"
replace = "a + b + 1"
suite = "cargo"

[[mutant]]
name = "control: a space"
file = "src/lib.rs"
anchor = "fn adds()"
replace = "fn adds( )"
suite = "cargo"
expect = "survive"
"#;

const LIB: &str = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n";

impl Crate {
    fn new(lib: &str, spec: &str) -> Crate {
        let repo = Repo::new();
        repo.write(
            "Cargo.toml",
            "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write("src/lib.rs", lib)
        .write(".gitignore", "target/\n")
        .write("mutants.toml", spec);
        repo.commit_all("fixture");
        Crate {
            repo,
            cache: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            out: tempfile::tempdir().unwrap(),
        }
    }

    fn cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mutants"));
        testkit::hermetic(&mut cmd);
        cmd.current_dir(self.repo.path())
            .env("GATEKIT_CACHE_DIR", self.cache.path())
            .env("TMPDIR", self.tmp.path())
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR");
        cmd
    }

    fn out(&self) -> PathBuf {
        self.out.path().join("report")
    }

    /// `mutants run --jobs 2 --out OUT EXTRA...`
    fn run(&self, extra: &[&str]) -> Output {
        let mut cmd = self.cmd();
        cmd.args(["run", "--jobs", "2", "--out"])
            .arg(self.out())
            .args(extra);
        let mut cmd = assert_cmd::Command::from_std(cmd);
        cmd.timeout(Duration::from_secs(300));
        Output::of(&mut cmd)
    }

    /// The baseline log of copy `j` (0: the first).
    fn baseline_log(&self, j: usize) -> String {
        let name = match j {
            0 => "baseline.cargo.log".to_string(),
            j => format!("baseline.cargo.checkout{j}.log"),
        };
        std::fs::read_to_string(self.out().join("logs").join(name)).unwrap_or_default()
    }

    /// The repository's cache folder (`worktrees/KEY`).
    fn store(&self) -> PathBuf {
        let root = self.cache.path().join("worktrees");
        std::fs::read_dir(&root)
            .expect("a cache folder")
            .next()
            .expect("one repository")
            .unwrap()
            .path()
    }
}

fn fresh(log: &str) -> bool {
    log.contains("Fresh fixture")
}
fn compiled(log: &str) -> bool {
    log.contains("Compiling fixture")
}

const EXPECTED: [(&str, &str); 3] = [
    ("add times", "killed"),
    ("add plus one", "killed"),
    ("control: a space", "control held"),
];

fn expected() -> Vec<(String, String)> {
    EXPECTED
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn the_second_copy_gets_the_firsts_build_and_a_repeat_run_restores_it_from_the_cache() {
    let c = Crate::new(LIB, SPEC);
    let first = c.run(&[]);
    first.assert_exit(0);
    assert_eq!(verdicts(&report_in(&c.out())), expected());
    let (log0, log1) = (c.baseline_log(0), c.baseline_log(1));
    assert!(compiled(&log0), "the first copy builds cold:\n{log0}");
    assert!(
        fresh(&log1) && !compiled(&log1),
        "the second copy is handed the first's build and compiles nothing:\n{log1}"
    );
    assert!(first.stderr.contains("cache: none yet"), "{first}");
    assert!(first.stderr.contains("saved in"), "{first}");
    assert!(c.store().join("slot-0/meta.json").is_file());
    // What was reused is on the record, not only on stderr.
    let reused = report_in(&c.out())["reused"].clone();
    assert_eq!(
        reused,
        serde_json::json!(["target handed from the first checkout to the other 1"]),
        "{first}"
    );

    let second = c.run(&[]);
    second.assert_exit(0);
    assert!(second.stderr.contains("target restored from"), "{second}");
    let log0 = c.baseline_log(0);
    assert!(
        fresh(&log0) && !compiled(&log0),
        "the repeat run's baseline builds nothing:\n{log0}"
    );
    assert_eq!(verdicts(&report_in(&c.out())), expected(), "{second}");
    let reused = report_in(&c.out())["reused"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reused.starts_with("target restored from the cache"),
        "{reused}"
    );
    let text = std::fs::read_to_string(c.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains("reused: target restored from the cache"),
        "{text}"
    );
    // The user's checkout never holds a build.
    assert!(!c.repo.path().join("target").exists());
}

#[test]
fn no_cache_neither_restores_nor_saves_and_cache_empty_turns_the_default_off() {
    let c = Crate::new(LIB, SPEC);
    c.run(&[]).assert_exit(0);
    let meta = c.store().join("slot-0/meta.json");
    let saved = std::fs::read(&meta).unwrap();
    let run = c.run(&["--no-cache"]);
    run.assert_exit(0);
    let log0 = c.baseline_log(0);
    assert!(compiled(&log0), "--no-cache builds cold:\n{log0}");
    assert!(
        fresh(&c.baseline_log(1)),
        "copies still share the first's build"
    );
    assert!(!run.stderr.contains("cache:"), "{run}");
    assert_eq!(
        std::fs::read(&meta).unwrap(),
        saved,
        "the cache is untouched"
    );

    let off = Crate::new(LIB, &format!("[worktree]\ncache = []\n\n{SPEC}"));
    let run = off.run(&[]);
    run.assert_exit(0);
    assert!(!off.cache.path().join("worktrees").exists(), "{run}");
    assert!(
        compiled(&off.baseline_log(1)),
        "cache = [] hands nothing over"
    );
}

#[test]
fn a_corrupt_cache_is_discarded_with_a_note_and_the_verdicts_are_the_same() {
    let c = Crate::new(LIB, SPEC);
    c.run(&[]).assert_exit(0);
    // 1. An unreadable entry: discarded before anything is moved.
    let meta = c.store().join("slot-0/meta.json");
    std::fs::write(&meta, "{ not json").unwrap();
    let run = c.run(&[]);
    run.assert_exit(0);
    assert!(run.stderr.contains("cache: discarded"), "{run}");
    assert!(compiled(&c.baseline_log(0)), "{}", c.baseline_log(0));
    assert_eq!(verdicts(&report_in(&c.out())), expected());

    // 2. Outputs garbled in place, same sizes (the listing cannot see it): Cargo trusts them,
    // the test binary cannot run, and the baseline fails; the run drops the cache and runs
    // the baseline again cold instead of stopping on a red baseline.
    let deps = c.store().join("slot-0/out/target/debug/deps");
    let mut garbled = 0;
    for e in std::fs::read_dir(&deps).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("fixture-") && !name.ends_with(".d") {
            let len = std::fs::metadata(&p).unwrap().len() as usize;
            let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
            std::fs::write(&p, vec![b'x'; len]).unwrap();
            std::fs::File::open(&p)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
            garbled += 1;
        }
    }
    assert!(garbled > 0, "no test binary in {}", deps.display());
    let run = c.run(&[]);
    run.assert_exit(0);
    assert!(run.stderr.contains("target restored from"), "{run}");
    assert!(
        run.stderr.contains("running it again cold"),
        "the garbled cache is dropped: {run}"
    );
    assert!(compiled(&c.baseline_log(0)), "{}", c.baseline_log(0));
    assert_eq!(verdicts(&report_in(&c.out())), expected());
}

#[test]
fn the_cache_of_a_killed_run_is_never_used() {
    let spec = SPEC.replace(
        "replace = \"a * b\"",
        "replace = \"{ std::thread::sleep(std::time::Duration::from_secs(120)); a * b }\"",
    );
    let c = Crate::new(LIB, &spec);
    let mut cmd = c.cmd();
    cmd.args(["run", "--jobs", "1", "--out"])
        .arg(c.out())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    // Past the baseline (its snapshot is being kept) and into the first, sleeping, mutant.
    let started = c.out().join("logs/001-add-times.log");
    let deadline = Instant::now() + Duration::from_secs(240);
    let staging = || -> Vec<PathBuf> {
        let Ok(root) = std::fs::read_dir(c.cache.path().join("worktrees")) else {
            return Vec::new();
        };
        root.flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(".new-")
            })
            .collect()
    };
    while (!started.exists() || staging().is_empty()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(started.exists(), "the first mutant never started");
    let left = staging();
    assert_eq!(left.len(), 1, "one snapshot being kept");
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL: the run can save nothing
    child.wait().unwrap();
    assert!(!c.store().join("slot-0").exists(), "nothing was committed");

    // A new report (the killed run's, with two rows never judged, would keep this one
    // incomplete).
    std::fs::remove_dir_all(c.out()).unwrap();
    let run = c.run(&["--only", "add plus one"]);
    let log =
        std::fs::read_to_string(c.out().join("logs/002-add-plus-one.log")).unwrap_or_default();
    assert_eq!(run.exit(), 0, "{run}\n{log}");
    assert!(run.stderr.contains("cache: none yet"), "{run}");
    assert!(compiled(&c.baseline_log(0)), "{}", c.baseline_log(0));
    assert!(!left[0].exists(), "the dead run's snapshot is removed");
}

#[test]
fn a_copy_handed_another_copys_build_rebuilds_what_baked_in_that_copys_path() {
    // The test reads CARGO_MANIFEST_DIR as compiled in: handed over unchanged, copy 1's test
    // binary would look at copy 0's files, where another mutant may be swapped in.
    let lib = format!(
        "{LIB}\n#[test]\nfn built_here() {{\n    assert_eq!(std::path::Path::new(env!(\"CARGO_MANIFEST_DIR\")), std::env::current_dir().unwrap());\n}}\n"
    );
    let c = Crate::new(&lib, SPEC);
    let run = c.run(&[]);
    run.assert_exit(0);
    let log1 = c.baseline_log(1);
    assert!(
        compiled(&log1),
        "the path-bound unit rebuilds in copy 1:\n{log1}"
    );
    assert!(!run.stderr.contains("judges no mutant"), "{run}");
    assert_eq!(verdicts(&report_in(&c.out())), expected());
}

#[test]
fn mutants_clean_removes_the_repositorys_cache() {
    let c = Crate::new(LIB, SPEC);
    c.run(&["--only", "add times"]).assert_exit(0);
    let store = c.store();
    assert!(store.exists());
    let mut cmd = c.cmd();
    cmd.arg("clean");
    let out = Output::of(&mut assert_cmd::Command::from_std(cmd));
    out.assert_exit(0);
    assert!(!store.exists(), "{out}");
    assert!(out.stdout.contains(&*store.to_string_lossy()), "{out}");
}

#[test]
fn a_warm_baseline_never_makes_a_derived_timeout_tighter_than_the_cold_one() {
    // Not Cargo: `cache = ["out"]` names the folder. The suite's first run in a copy is slow
    // (5 s: a cold cache), later ones are instant; the mutant timeout is derived (no timeout
    // in the spec): 5x the baseline, at least 20 s.
    let repo = Repo::new();
    repo.write("lib.sh", "x=1\n")
        .write(".gitignore", "out/\n")
        .write(
            "test.sh",
            "[ -f out/warm ] || { sleep 5; mkdir -p out; touch out/warm; }\n. ./lib.sh\n[ $x = 1 ] && echo '1 passed, 0 failed' || { echo '0 passed, 1 failed'; exit 1; }\n",
        )
        .write(
            "mutants.toml",
            "[worktree]\ncache = [\"out\"]\n\n[suites.unit]\nrun = \"sh test.sh\"\n\n\
             [[mutant]]\nname = \"x\"\nfile = \"lib.sh\"\nanchor = \"x=1\"\nreplace = \"x=2\"\nsuite = \"unit\"\n",
        );
    repo.commit_all("base");
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = || {
        let result = Output::of(
            testkit::bin(env!("CARGO_BIN_EXE_mutants"))
                .current_dir(repo.path())
                .env("GATEKIT_CACHE_DIR", cache.path())
                .args(["run", "--out"])
                .arg(out.path().join("r")),
        );
        result.assert_exit(0);
        let report = report_in(&out.path().join("r"));
        (result, report["baseline"][0].clone())
    };
    let (_, cold) = run();
    assert!(cold["duration_secs"].as_f64().unwrap() >= 5.0, "{cold}");
    let cold_timeout = cold["mutant_timeout_secs"].as_f64().unwrap();
    assert!(cold_timeout >= 25.0, "{cold}");
    let (second, warm) = run();
    assert!(second.stderr.contains("out restored from"), "{second}");
    assert!(
        warm["duration_secs"].as_f64().unwrap() < 5.0,
        "the cache was used: {warm}"
    );
    assert_eq!(
        warm["mutant_timeout_secs"].as_f64().unwrap(),
        cold_timeout,
        "the cold time kept with the cache sets the timeout: {warm}"
    );
}
