//! `mutants run` reads DIR's uncommitted state with git (`diff-index`, `ls-files`): the same
//! copies, the same tree and the same verdicts whatever the user's system, global, repository
//! or environment git config says, no program that config names runs, and DIR's index and
//! `index.lock` are never touched.

use std::fs;
use std::path::Path;
use std::process::Command;

use testkit::hostile::{assert_each_setting_bites, stage_candidate, Hostile, LEVELS};

use crate::common::*;

/// Part of the suite, untracked in DIR: it runs the candidate's own check (`run.sh`), so the
/// baseline is green only in a copy that holds DIR's state byte for byte.
const EXTRA: &str = "./run.sh > /dev/null || { ./run.sh; exit 1; }\n";

fn spec() -> String {
    format!(
        "[suites.unit]\nrun = \"sh extra-test.sh && sh test.sh\"\ntimeout = \"20s\"\n\n{}{}",
        mutant(
            "add subtracts",
            "echo $(( $1 + $2 ))",
            "echo $(( $1 - $2 ))",
            ""
        ),
        mutant("spin twice", "spin() { :; }", "spin() { :; :; }", ""),
    )
}

/// DIR: the fixture's library and suite, then the awkward candidate staged, an unstaged edit
/// and the untracked part of the suite. Returns the fixture and the base commit.
fn dir_with_state(hostile: Option<&Hostile>) -> (Fixture, String) {
    let fx = Fixture::new(&spec());
    let base = stage_candidate(&fx.repo);
    if let Some(h) = hostile {
        assert_each_setting_bites(&fx.repo, &base, h);
    }
    fx.repo.write("lf.txt", "plain\nedit\nunstaged\n");
    fx.repo.write("extra-test.sh", EXTRA);
    // A stat-only change: porcelain `git diff` rewrites the index when it sees one.
    let touched = Command::new("touch")
        .args(["-d", "2001-01-01"])
        .arg(fx.repo.path().join("keep.txt"))
        .status()
        .unwrap();
    assert!(touched.success());
    (fx, base)
}

/// Bytes and modification time, to prove a file untouched.
fn stamp(p: &Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        fs::read(p).unwrap(),
        fs::metadata(p).unwrap().modified().unwrap(),
    )
}

#[test]
fn dirs_state_is_carried_and_judged_the_same_under_hostile_git_config_at_every_level() {
    let hostile = Hostile::new();
    let (fx, _) = dir_with_state(Some(&hostile));
    let index = fx.repo.path().join(".git/index");
    let index_before = stamp(&index);
    let work = tempfile::tempdir().unwrap();
    let mut answers = Vec::new();
    for level in LEVELS {
        let before = level.enter(fx.repo.path(), &hostile);
        let out = work.path().join(format!("{level:?}"));
        let mut cmd = fx.cmd();
        cmd.env("TMPDIR", work.path());
        level.expose(&mut cmd, &hostile);
        let ran = testkit::Output::of(cmd.arg("run").arg("mutants.toml").arg("--out").arg(&out));
        level.leave(fx.repo.path(), before);
        assert_eq!(
            hostile.ran(),
            Vec::<String>::new(),
            "{level:?}: a program git config named ran"
        );
        let report = report_in(&out);
        answers.push((
            level,
            ran.code,
            verdicts(&report),
            report["tree"].clone(),
            report["carried"].clone(),
            ran.to_string(),
        ));
    }
    let clean = &answers[0];
    // One survivor: exit 1.
    assert_eq!(clean.1, Some(1), "{}", clean.5);
    assert_eq!(
        clean.2,
        [
            ("add subtracts".to_string(), "killed".to_string()),
            ("spin twice".to_string(), "SURVIVED".to_string())
        ]
    );
    for got in &answers[1..] {
        let level = got.0;
        assert_eq!(got.1, clean.1, "{level:?}: {}", got.5);
        assert_eq!(got.2, clean.2, "{level:?}: verdicts");
        assert_eq!(got.3, clean.3, "{level:?}: another tree");
        assert_eq!(got.4, clean.4, "{level:?}: another carried state");
    }
    assert!(stamp(&index) == index_before, "DIR's index was rewritten");
}

#[test]
fn mutants_run_never_takes_dirs_index_lock_or_rewrites_its_index() {
    let (fx, _) = dir_with_state(None);
    let git_dir = fx.repo.path().join(".git");
    let lock = git_dir.join("index.lock");
    fs::write(&lock, "held by the user\n").unwrap();
    let (index_before, lock_before) = (stamp(&git_dir.join("index")), stamp(&lock));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("report");
    let ran = testkit::Output::of(
        fx.cmd()
            .env("TMPDIR", work.path())
            .arg("run")
            .arg("mutants.toml")
            .arg("--out")
            .arg(&out),
    );
    ran.assert_exit(1);
    assert_eq!(verdicts(&report_in(&out)).len(), 2);
    assert!(stamp(&lock) == lock_before, "DIR's index.lock was touched");
    assert!(
        stamp(&git_dir.join("index")) == index_before,
        "DIR's index was rewritten"
    );
    fs::remove_file(&lock).unwrap();
}
