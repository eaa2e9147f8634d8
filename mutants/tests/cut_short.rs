//! A `mutants run` cut short never leaves a report that looks green: SIGKILL mid-run leaves the
//! incomplete report written after the last verdict (`complete: false`, exit code 130, "cut
//! short after N of M", the unjudged mutants as JUnit errors and Stryker `Pending`); an `--only`
//! rerun keeps it incomplete until every mutant is judged; a full disk leaves the incomplete
//! report and a non-zero exit; git failing mid-run exits 74 and leaves a report saying 74. And
//! a baseline whose runner reports failed tests while its command exits 0 is red (exit 4), said
//! so. Every fault aims only at the test's own temp dir.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::Value;
use testkit::Output;

/// Three mutants: one killed at once, one that sleeps while `$PIDS/hold` exists (writing its
/// pid first), one after it.
fn spec() -> String {
    format!(
        "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"60s\"\n\n{}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant(
            "sleeps",
            "spin() { :; }",
            r#"spin() { if [ -f "$PIDS/hold" ]; then echo $$ > "$PIDS/sleeper"; sleep 30; fi; }"#,
            ""
        ),
        mutant(
            "never reached",
            "greet() {",
            "greet () {",
            "expect = \"survive\""
        )
    )
}

/// A TMPDIR inside the test's own temp dir: a killed run's checkouts and scratch go there, for
/// the next run to sweep.
fn scratch(fx: &Fixture) -> PathBuf {
    let tmp = fx.out.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    tmp
}

fn run_in(fx: &Fixture, tmp: &Path, extra: &[&str]) -> Output {
    let out = fx.out();
    let mut args: Vec<&str> = vec!["run", "mutants.toml", "--jobs", "1", "--out"];
    args.push(out.to_str().unwrap());
    args.extend_from_slice(extra);
    Output::of(fx.cmd().env("TMPDIR", tmp).args(&args))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The testcase of `name` in a JUnit file.
fn testcase<'a>(xml: &'a str, name: &str) -> &'a str {
    xml.split("<testcase ")
        .find(|c| c.contains(&format!("name=\"{name}\"")))
        .unwrap_or_else(|| panic!("no testcase {name}: {xml}"))
}

/// The Stryker status of mutant `name` in mutation-report.json.
fn stryker_status(out: &Path, name: &str) -> String {
    let report: Value = serde_json::from_str(&read(&out.join("mutation-report.json"))).unwrap();
    report["files"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|f| f["mutants"].as_array().unwrap().iter())
        .find(|m| m["mutatorName"] == name)
        .map(|m| m["status"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no mutant {name}"))
}

/// What every report of a run cut short after "plus to minus" must say.
fn assert_cut_short_after_one(out: &Path, verdict: &str) {
    let report = report_in(out);
    assert_eq!(report["complete"], false, "{report:#}");
    assert_ne!(report["exit_code"], 0, "{report:#}");
    let unjudged: Vec<&str> = report["unjudged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(unjudged, ["sleeps", "never reached"]);
    let text = read(&out.join("mutants.txt"));
    assert!(
        text.contains(&format!(
            "{verdict}: cut short after 1 of 3 mutants judged; not judged: sleeps, never reached"
        )),
        "{text}"
    );
    let xml = read(&out.join("junit.xml"));
    for name in ["sleeps", "never reached"] {
        let case = testcase(&xml, name);
        assert!(case.contains("<error message=\"not judged"), "{case}");
        assert_eq!(stryker_status(out, name), "Pending");
    }
    assert!(testcase(&xml, "plus to minus").contains("time="));
    let html = read(&out.join("mutants.html"));
    assert!(html.contains("cut short after 1 of 3 mutants judged"));
    assert!(!html.contains(">PASS<"), "{html}");
}

#[test]
fn a_run_killed_with_sigkill_leaves_an_incomplete_report_that_an_only_rerun_completes() {
    let fx = Fixture::new(&spec());
    let tmp = scratch(&fx);
    fs::write(fx.pids.path().join("hold"), "").unwrap();
    let out = fx.out();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    testkit::hermetic(&mut cmd);
    let mut child = cmd
        .current_dir(fx.repo.path())
        .env("PIDS", fx.pids.path())
        .env("TMPDIR", &tmp)
        .args(["run", "mutants.toml", "--jobs", "1", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let tag = format!("{}.", child.id());
    fx.first_pid("sleeper", "the sleeping mutant");
    // The files after "plus to minus" (mutants.json is written last of them).
    let deadline = Instant::now() + Duration::from_secs(30);
    while fs::read_to_string(out.join("mutants.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_none_or(|r| r["mutants"].as_array().is_none_or(|m| m.is_empty()))
    {
        assert!(
            Instant::now() < deadline,
            "the first verdict was never written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: mutants can write nothing more
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the killed run did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The suite lives on in its group: this test's run started it, so this test ends it.
    for pid in testkit::tagged_pids(&tag) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert_cut_short_after_one(&out, "INCOMPLETE");
    let report = report_in(&out);
    assert_eq!(report["exit_code"], 130, "{report:#}");
    assert_eq!(report["interrupted"], false);
    assert_eq!(
        verdicts(&report),
        [("plus to minus".into(), "killed".into())]
    );

    // An --only rerun of a judged mutant leaves the others unjudged: still not complete.
    fs::remove_file(fx.pids.path().join("hold")).unwrap();
    let again = run_in(&fx, &tmp, &["--only", "plus to minus"]);
    assert_eq!(again.code, Some(1), "{}", again.stderr);
    assert_cut_short_after_one(&out, "INCOMPLETE");
    assert_eq!(report_in(&out)["exit_code"], 1);

    // Judging the rest completes it (a survivor is a finding, not an incomplete report).
    let rest = run_in(&fx, &tmp, &["--only", "sleeps", "--only", "never reached"]);
    assert_eq!(rest.code, Some(1), "{}", rest.stderr);
    let report = report_in(&out);
    assert_eq!(report["complete"], true, "{report:#}");
    assert_eq!(report["unjudged"], serde_json::json!([]));
    assert_eq!(report["exit_code"], 1);
    assert_eq!(report["mutants"].as_array().unwrap().len(), 3);
    let text = read(&out.join("mutants.txt"));
    assert!(!text.contains("cut short"), "{text}");
    assert!(!read(&out.join("junit.xml")).contains("not judged"));
}

#[test]
fn an_only_rerun_killed_in_its_baseline_leaves_the_report_incomplete_not_its_earlier_pass() {
    let spec = format!(
        "[suites.unit]\nrun = \"if [ -f \\\"$PIDS/hold\\\" ]; then echo $$ > \\\"$PIDS/sleeper\\\"; sleep 30; fi; sh test.sh\"\ntimeout = \"60s\"\n\n{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant("greet is gone", "echo \"hello\"", "echo \"bye\"", "")
    );
    let fx = Fixture::new(&spec);
    let tmp = scratch(&fx);
    let first = run_in(&fx, &tmp, &[]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let out = fx.out();
    assert_eq!(report_in(&out)["complete"], true);

    fs::write(fx.pids.path().join("hold"), "").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    testkit::hermetic(&mut cmd);
    let mut child = cmd
        .current_dir(fx.repo.path())
        .env("PIDS", fx.pids.path())
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "mutants.toml",
            "--jobs",
            "1",
            "--only",
            "plus to minus",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let tag = format!("{}.", child.id());
    fx.first_pid("sleeper", "the sleeping baseline");
    child.kill().unwrap(); // SIGKILL while the baseline runs, before any mutant
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the killed run did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in testkit::tagged_pids(&tag) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    let report = report_in(&out);
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(report["exit_code"], 130, "{report:#}");
    assert_eq!(report["unjudged"][0]["name"], "plus to minus", "{report:#}");
    let text = read(&out.join("mutants.txt"));
    assert!(
        text.contains(
            "INCOMPLETE: cut short after 1 of 2 mutants judged; not judged: plus to minus"
        ),
        "{text}"
    );
    assert!(testcase(&read(&out.join("junit.xml")), "plus to minus").contains("<error message="));
}

#[test]
fn a_run_stopped_by_sigint_exits_130_with_every_report_saying_it_was_cut_short() {
    let fx = Fixture::new(&spec());
    let tmp = scratch(&fx);
    fs::write(fx.pids.path().join("hold"), "").unwrap();
    let out = fx.out();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mutants"));
    testkit::hermetic(&mut cmd);
    let child = cmd
        .current_dir(fx.repo.path())
        .env("PIDS", fx.pids.path())
        .env("TMPDIR", &tmp)
        .args(["run", "mutants.toml", "--jobs", "1", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeper = fx.first_pid("sleeper", "the sleeping mutant");
    let (exit, output) = signal_and_wait(child, nix::sys::signal::Signal::SIGINT, "after SIGINT");
    assert_eq!(exit.code(), Some(130), "{output}");
    assert!(!testkit::alive(sleeper), "the interrupted suite still runs");
    assert_cut_short_after_one(&out, "INTERRUPTED");
    let report = report_in(&out);
    assert_eq!(
        (report["exit_code"].clone(), report["interrupted"].clone()),
        (130.into(), true.into())
    );
}

#[test]
fn a_disk_that_fills_mid_run_leaves_the_incomplete_report_and_a_clear_non_zero_exit() {
    // The second mutant's suite fills the disk the reports live on.
    let spec = format!(
        "{SUITE}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant(
            "fills the disk",
            "spin() { :; }",
            r#"spin() { dd if=/dev/zero of="$FILLER" bs=4k 2>/dev/null; :; }"#,
            ""
        )
    );
    let fx = Fixture::new(&spec);
    let tmp = scratch(&fx);
    let disk = fx.out.path().join("disk");
    let Some(_mounted) = testkit::Tmpfs::mount(&disk, "1m") else {
        return;
    };
    let out = disk.join("report");
    let run = Output::of(
        fx.cmd()
            .env("TMPDIR", &tmp)
            .env("FILLER", disk.join("filler"))
            .args(["run", "mutants.toml", "--jobs", "1", "--out"])
            .arg(&out),
    );
    // An I/O failure after the run began to write: 74, never the 2 of bad input.
    assert_eq!(run.code, Some(74), "{}", run.stderr);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
    let report = report_in(&out);
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(report["exit_code"], 130, "{report:#}");
    let text = read(&out.join("mutants.txt"));
    assert!(
        text.contains("INCOMPLETE: cut short after 1 of 2 mutants judged"),
        "{text}"
    );
    assert!(testcase(&read(&out.join("junit.xml")), "fills the disk").contains("<error message="),);
}

#[test]
fn a_baseline_whose_runner_reports_failures_but_exits_0_is_red_and_says_why() {
    for (suite, failed) in [
        ("echo '1 passed, 2 failed'; exit 0", 2),
        // A real runner whose failing test's exit code a `| tee` pipeline loses.
        ("python3 -m unittest test_red 2>&1 | tee unittest.out", 1),
    ] {
        let spec = format!(
            "[suites.unit]\nrun = \"{suite}\"\n\n{}",
            mutant("plus to minus", "$1 + $2", "$1 - $2", "")
        );
        let fx = Fixture::new(&spec);
        fx.repo.write(
            "test_red.py",
            "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n\n    def test_red(self):\n        self.assertEqual(1, 2)\n",
        );
        fx.repo.commit_all("a red unittest");
        let run = fx.run(&[]);
        assert_eq!(run.code, Some(4), "{suite}: {}", run.stderr);
        let said = format!("exit 0 but {failed} failed: the counts and the exit disagree");
        assert!(run.stderr.contains(&said), "{suite}: {}", run.stderr);
        let report = fx.report();
        assert_eq!(report["baseline_failed"], true);
        assert_eq!(report["exit_code"], 4);
        assert_eq!(report["baseline"][0]["status"], said.as_str());
        assert_eq!(report["baseline"][0]["passed"], false);
    }
}

#[test]
fn git_failing_mid_run_exits_74_and_the_report_says_74_and_incomplete() {
    // The second mutant's suite breaks git for the rest of the run: every later `git` the run
    // calls (through a wrapper first on PATH, in the test's own temp dir) fails, as a git whose
    // repository or disk went bad would. The engine cannot go on: exit 74, and the report it
    // leaves says the same 74, incomplete, with the first verdict kept.
    let spec = format!(
        "{SUITE}{}{}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        mutant(
            "breaks git",
            "spin() { :; }",
            r#"spin() { touch "$PIDS/git-broken"; }"#,
            ""
        )
    );
    let fx = Fixture::new(&spec);
    let tmp = scratch(&fx);
    let real = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap().trim().to_string();
    assert!(!real.is_empty(), "no git on PATH");
    let wrappers = fx.out.path().join("bin");
    fs::create_dir_all(&wrappers).unwrap();
    let flag = fx.pids.path().join("git-broken");
    fs::write(
        wrappers.join("git"),
        format!(
            "#!/bin/sh\nif [ -e '{}' ]; then echo 'git: broken for this test' >&2; exit 128; fi\nexec '{real}' \"$@\"\n",
            flag.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(wrappers.join("git"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        wrappers.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = fx.out();
    let run = Output::of(
        fx.cmd()
            .env("TMPDIR", &tmp)
            .env("PATH", path)
            .args(["run", "mutants.toml", "--jobs", "1", "--no-canary", "--out"])
            .arg(&out),
    );
    assert!(
        flag.exists(),
        "the second mutant's suite never ran: {}",
        run.stderr
    );
    assert_eq!(run.code, Some(74), "{}", run.stderr);
    assert!(
        run.stderr.contains("git: broken for this test"),
        "{}",
        run.stderr
    );
    let report = report_in(&out);
    assert_eq!(report["exit_code"], 74, "{report:#}");
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(row(&report, "plus to minus")["verdict"], "killed");
    let text = read(&out.join("mutants.txt"));
    assert!(
        text.contains("INCOMPLETE: cut short after 1 of 2"),
        "{text}"
    );
}
