//! Git gives everyone the same answer: one candidate packs to one patch, applies to one tree id
//! and gets one verdict whatever the user's system, global or repository git config, or their
//! `GIT_*` environment, says about output and content; and no gate command takes the user's
//! `index.lock` or rewrites their index.
//!
//! Each hostile setting is first shown to change what plain git prints or writes (so the matrix
//! cannot pass because a setting did nothing); then the same settings are put at each level and
//! the tools must give the clean answer byte for byte. Every program a setting names (external
//! diff, fsmonitor, hook, pager, filter) writes a marker in the test's temp dir: none may run.

use std::fs;
use std::path::Path;
use std::process::Command;

use testkit::hostile::{
    assert_each_setting_bites, plain_git, stage_candidate, Hostile, Level, LEVELS,
};
use testkit::Repo;

use crate::common::{gate, stderr, stdout};

/// What the tools gave under one level.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    patch: Vec<u8>,
    manifest: Vec<u8>,
    apply_exit: Option<i32>,
    tree: String,
    apply_verdict: String,
    run_exit: Option<i32>,
    run_verdict: String,
}

/// `gate pack`, `gate apply` (of the clean pack, the candidate the reviewer was handed) and
/// `gate run` of it, under `level`.
fn answer(
    repo: &Repo,
    base: &str,
    level: Level,
    hostile: &Hostile,
    clean: &Path,
    work: &Path,
) -> Answer {
    let name = format!("{level:?}");
    let out = work.join(&name);
    let tmp = work.join(format!("{name}-tmp"));
    fs::create_dir_all(&tmp).unwrap();
    let before = level.enter(repo.path(), hostile);
    let with_level = |cmd: &mut assert_cmd::Command| {
        cmd.current_dir(repo.path())
            .env("TMPDIR", &tmp)
            .env("GATEKIT_STATE_DIR", work.join("state"));
        level.expose(cmd, hostile);
    };
    let mut pack = gate();
    with_level(&mut pack);
    let packed = pack
        .args(["pack", "--base", base, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{name}: {}", stderr(&packed));
    let mut apply = gate();
    with_level(&mut apply);
    let applied = apply
        .args(["apply", "--json", "--base", base, "--patch"])
        .arg(clean.join("build.patch"))
        .arg("--manifest")
        .arg(clean.join("candidate-manifest.sha256"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout)
        .unwrap_or_else(|_| panic!("{name}: {}", stderr(&applied)));
    if let Some(wt) = v["candidate"]["worktree"].as_str() {
        repo.remove_checkout(wt);
    }
    let mut run = gate();
    with_level(&mut run);
    let ran = run
        .arg("run")
        .arg("--config")
        .arg(clean.join("gate.toml"))
        .arg("--out")
        .arg(work.join(format!("{name}-run")))
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(work.join(format!("{name}-run/gate.json"))).unwrap_or_default(),
    )
    .unwrap_or_default();
    level.leave(repo.path(), before);
    Answer {
        patch: fs::read(out.join("build.patch")).unwrap(),
        manifest: fs::read(out.join("candidate-manifest.sha256")).unwrap(),
        apply_exit: applied.status.code(),
        tree: v["candidate"]["tree"].as_str().unwrap_or("").to_string(),
        apply_verdict: v["verdict"].to_string(),
        run_exit: ran.status.code(),
        run_verdict: format!(
            "{} {} {}",
            report["verdict"],
            report["suites"][0]["record"]["exit_code"],
            stdout(&ran)
                .lines()
                .find(|l| l.starts_with("manifest"))
                .unwrap_or("")
        ),
    }
}

/// Packs the clean candidate into `dir` with a gate.toml whose one suite is the candidate's
/// own check: what the reviewer is handed.
pub fn hand_over(repo: &Repo, base: &str, dir: &Path) {
    let packed = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", base, "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{}", stderr(&packed));
    fs::write(
        dir.join("gate.toml"),
        format!("base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nname = \"check\"\nrun = \"./run.sh\"\n"),
    )
    .unwrap();
}

#[test]
fn one_candidate_packs_applies_and_runs_the_same_under_hostile_git_config_at_every_level() {
    let repo = Repo::new();
    let base = stage_candidate(&repo);
    let hostile = Hostile::new();
    assert_each_setting_bites(&repo, &base, &hostile);
    let work = tempfile::tempdir().unwrap();

    // Each level really reaches plain git.
    let diff = ["diff", "--cached", base.as_str()];
    let clean_diff = plain_git(repo.path(), &[], &[], &diff);
    for level in &LEVELS[1..] {
        let before = level.enter(repo.path(), &hostile);
        let mut cmd = Command::new("git");
        testkit::hermetic(&mut cmd)
            .current_dir(repo.path())
            .args(diff);
        level.expose(&mut cmd, &hostile);
        let seen = cmd.output().unwrap().stdout;
        level.leave(repo.path(), before);
        assert_ne!(
            seen, clean_diff,
            "{level:?} settings do not reach plain git"
        );
    }
    hostile.clear();

    // (write-tree records its cache in the index: before the index is taken as the user's.)
    let staged_tree = repo.git(["write-tree"]);
    let index = repo.path().join(".git/index");
    let index_before = fs::read(&index).unwrap();
    let handed = work.path().join("handed");
    hand_over(&repo, &base, &handed);
    let answers: Vec<Answer> = LEVELS
        .iter()
        .map(|&level| {
            let got = answer(&repo, &base, level, &hostile, &handed, work.path());
            assert_eq!(
                hostile.ran(),
                Vec::<String>::new(),
                "{level:?}: a program git config named ran"
            );
            got
        })
        .collect();
    // The clean answer is the right one: the tree is the staged tree and the check passes.
    let clean = &answers[0];
    assert_eq!(clean.patch, fs::read(handed.join("build.patch")).unwrap());
    assert_eq!(clean.tree, staged_tree);
    assert_eq!(clean.apply_exit, Some(0));
    assert_eq!(clean.run_exit, Some(0), "{}", clean.run_verdict);
    for (level, got) in LEVELS.iter().zip(&answers).skip(1) {
        assert!(
            got.patch == clean.patch,
            "{level:?}: another patch:\n{}",
            String::from_utf8_lossy(&got.patch)
        );
        assert_eq!(got.manifest, clean.manifest, "{level:?}: another manifest");
        assert_eq!(got.tree, clean.tree, "{level:?}: another tree");
        assert_eq!(got.apply_exit, clean.apply_exit, "{level:?}: apply");
        assert_eq!(got.apply_verdict, clean.apply_verdict, "{level:?}: apply");
        assert_eq!(
            got.run_exit, clean.run_exit,
            "{level:?}: run {}",
            got.run_verdict
        );
        assert_eq!(got.run_verdict, clean.run_verdict, "{level:?}: run");
    }
    assert_eq!(
        fs::read(&index).unwrap(),
        index_before,
        "the user's index was rewritten"
    );
}

#[test]
fn no_gate_command_takes_the_users_index_lock_or_rewrites_their_index() {
    let repo = Repo::new();
    let base = stage_candidate(&repo);
    let work = tempfile::tempdir().unwrap();
    let handed = work.path().join("handed");
    hand_over(&repo, &base, &handed);
    // A stat-only change: porcelain git refreshes (rewrites) the index when it sees one.
    let touched = Command::new("touch")
        .args(["-d", "2001-01-01"])
        .arg(repo.path().join("keep.txt"))
        .status()
        .unwrap();
    assert!(touched.success());
    let git_dir = repo.path().join(".git");
    let lock = git_dir.join("index.lock");
    fs::write(&lock, "held by the user\n").unwrap();
    let index = git_dir.join("index");
    let stamp = |p: &Path| {
        (
            fs::read(p).unwrap(),
            fs::metadata(p).unwrap().modified().unwrap(),
        )
    };
    let (index_before, lock_before) = (stamp(&index), stamp(&lock));
    let tmp = work.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let cmd = |args: &[&std::ffi::OsStr]| {
        let out = gate()
            .current_dir(repo.path())
            .env("TMPDIR", &tmp)
            .env("GATEKIT_STATE_DIR", work.path().join("state"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "gate {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        out
    };
    let o = |s: &str| std::ffi::OsString::from(s);
    cmd(&[
        &o("pack"),
        &o("--base"),
        &o(&base),
        &o("--out"),
        work.path().join("again").as_os_str(),
    ]);
    let applied = cmd(&[
        &o("apply"),
        &o("--json"),
        &o("--base"),
        &o(&base),
        &o("--patch"),
        handed.join("build.patch").as_os_str(),
        &o("--manifest"),
        handed.join("candidate-manifest.sha256").as_os_str(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    repo.remove_checkout(v["candidate"]["worktree"].as_str().unwrap());
    cmd(&[
        &o("run"),
        &o("--config"),
        handed.join("gate.toml").as_os_str(),
        &o("--out"),
        work.path().join("run").as_os_str(),
    ]);
    assert_eq!(
        stamp(&lock),
        lock_before,
        "the user's index.lock was touched"
    );
    assert_eq!(
        stamp(&index),
        index_before,
        "the user's index was rewritten"
    );
    fs::remove_file(&lock).unwrap();
}

/// Whether this test process runs as root (the only way a test can make a repository another
/// user owns).
fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false)
}

#[test]
fn a_repository_another_user_owns_gets_gits_refusal_unless_the_user_trusts_it() {
    if !is_root() {
        testkit::skip(
            "other-owner",
            "only root can give a test repository another owner",
        );
        return;
    }
    let repo = Repo::new();
    let base = stage_candidate(&repo);
    let chowned = Command::new("chown")
        .args(["-R", "4242:4242"])
        .arg(repo.path())
        .status()
        .unwrap();
    assert!(chowned.success());
    let work = tempfile::tempdir().unwrap();
    let pack = |global: &Path| {
        gate()
            .current_dir(repo.path())
            .env("TMPDIR", work.path())
            .env("GIT_CONFIG_GLOBAL", global)
            .env_remove("SUDO_UID")
            .args(["pack", "--base", &base, "--out"])
            .arg(work.path().join("out"))
            .output()
            .unwrap()
    };
    // No trust declared: git's own refusal, as a one-line error (exit 2), nothing written.
    let refused = pack(Path::new("/dev/null"));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("dubious ownership"),
        "{}",
        stderr(&refused)
    );
    assert!(!work.path().join("out").exists());
    // The user's own global config trusts it: gate works there, as their git does.
    let trust = work.path().join("trust.gitconfig");
    fs::write(
        &trust,
        format!("[safe]\n\tdirectory = {}\n", repo.path().display()),
    )
    .unwrap();
    let trusted = pack(&trust);
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
}

#[test]
fn a_sha256_repository_packs_and_applies_whatever_the_default_object_format() {
    let repo = Repo::new();
    fs::remove_dir_all(repo.path().join(".git")).unwrap();
    repo.git(["init", "-q", "-b", "main", "--object-format=sha256"]);
    repo.git(["config", "user.name", "Gate Tester"]);
    repo.git(["config", "user.email", "tester@example.invalid"]);
    let base = stage_candidate(&repo);
    assert_eq!(base.len(), 64);
    let work = tempfile::tempdir().unwrap();
    let handed = work.path().join("handed");
    hand_over(&repo, &base, &handed);
    // The checkout borrows sha256 objects: a sha1 default must not decide its format.
    let applied = gate()
        .current_dir(repo.path())
        .env("TMPDIR", work.path())
        .env("GATEKIT_STATE_DIR", work.path().join("state"))
        .env("GIT_DEFAULT_HASH", "sha1")
        .args(["apply", "--json", "--base", &base, "--patch"])
        .arg(handed.join("build.patch"))
        .arg("--manifest")
        .arg(handed.join("candidate-manifest.sha256"))
        .output()
        .unwrap();
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    repo.remove_checkout(v["candidate"]["worktree"].as_str().unwrap());
    assert_eq!(v["candidate"]["tree"], repo.git(["write-tree"]));
}
