//! What gate owns, and only that: its run checkouts are repositories of their own (a suite
//! cannot reach the user's `.git`), stale clean-up trusts only the owner marker, a kept
//! checkout waits for `gate clean`, and a run killed with SIGKILL is cleaned by the next start.
//!
//! Every test runs gate with a private `TMPDIR`, so what it plants and what it looks for are in
//! its own temp dir only; the victims of the attacks are folders inside it too.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{gate, stderr, stdout, Fixture};

/// A private temp dir for the tool, and a state dir for its registry.
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

    fn apply_to(&self, cmd: &mut assert_cmd::Command) {
        cmd.env("TMPDIR", self.tmp.path())
            .env("GATEKIT_STATE_DIR", self.state.path());
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn plant_checkout(dir: &Path, marker: Option<&str>) {
    fs::create_dir_all(dir.join(".git")).unwrap();
    fs::write(dir.join("notes.txt"), "a reviewer's notes\n").unwrap();
    if let Some(m) = marker {
        fs::write(dir.join(".git/gatekit-owner"), m).unwrap();
    }
}

#[test]
fn stale_clean_up_removes_only_what_its_marker_says_is_a_dead_runs() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let s = Scratch::new();
    let t = s.tmp.path();
    // No process has pid 2^22+1 (above the kernel's pid_max ceiling): these owners are dead.
    let dead = t.join("gatekit-repo-4194305.1-0");
    plant_checkout(&dead, Some("run 4194305 1\n"));
    let unmarked = t.join("gatekit-repo-4194305.1-1");
    plant_checkout(&unmarked, None);
    let kept = t.join("gatekit-repo-4194305.1-2");
    plant_checkout(&kept, Some("kept 0123\n"));
    let other_owner = t.join("gatekit-repo-4194305.1-3");
    plant_checkout(&other_owner, Some("run 4194305 2\n"));
    // A link named like a dead run's checkout, to a folder that carries a valid marker.
    let victim = f.out.path().join("victim");
    plant_checkout(&victim, Some("run 4194305 1\n"));
    symlink(&victim, t.join("gatekit-repo-4194305.1-4")).unwrap();
    // A dead session's scratch, and a lookalike without its owner file.
    let session = t.join("gatekit-4194305-1");
    fs::create_dir_all(session.join("tmp-0")).unwrap();
    fs::write(
        session.join("owner"),
        "gatekit session pid 4194305 start 1\n",
    )
    .unwrap();
    let lookalike = t.join("gatekit-4194305-2");
    fs::create_dir_all(&lookalike).unwrap();

    let config = f.config("[[suite]]\nname = \"ok\"\nrun = \"true\"\n");
    let mut cmd = f.run(&config, &f.out.path().join("o"));
    s.apply_to(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    assert!(!dead.exists(), "a dead run's marked checkout stays");
    assert!(!session.exists(), "a dead run's session stays");
    for kept_one in [&unmarked, &kept, &other_owner, &lookalike] {
        assert!(kept_one.exists(), "{} was removed", kept_one.display());
    }
    assert!(unmarked.join("notes.txt").exists());
    assert!(
        victim.join("notes.txt").exists(),
        "clean-up followed a link"
    );
    assert!(t
        .join("gatekit-repo-4194305.1-4")
        .symlink_metadata()
        .is_ok());
    // And the run's own checkout and session are gone.
    let left: Vec<String> = s
        .entries()
        .into_iter()
        .filter(|n| !n.contains("4194305"))
        .collect();
    assert!(left.is_empty(), "the run left {left:?}");
}

#[test]
fn a_suite_cannot_change_the_users_repository() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    f.repo.git(["tag", "v1.0", &f.base]);
    f.repo.git(["config", "gatekit.test", "original"]);
    fs::write(
        f.repo.path().join(".git/hooks/pre-commit"),
        "#!/bin/sh\nexit 0\n",
    )
    .unwrap();
    let s = Scratch::new();
    let git_dir = f.repo.path().join(".git");
    let before = testkit::snapshot(&git_dir);
    // Everything a careless or hostile suite might do to "its" repository.
    let config = f.config(
        r#"[[suite]]
name = "meddles"
run = """
set -e
git describe --tags --always >/dev/null
git config user.name Meddler
git config user.email m@example.invalid
git config gatekit.test changed
git tag evil
git tag -d v1.0
git branch evil
git branch -D work
echo change >> src/lib.txt
git stash
git stash list | grep -q .
echo '#!/bin/sh' > .git/hooks/post-checkout
git worktree add -q ../evil-worktree HEAD
git commit -q --allow-empty -m meddle
git update-ref refs/heads/main HEAD
git gc -q --prune=now
echo '1 passed, 0 failed'
"""
"#,
    );
    let mut cmd = f.run(&config, &f.out.path().join("o"));
    s.apply_to(&mut cmd);
    let out = cmd.output().unwrap();
    let log = fs::read_to_string(f.out.path().join("o/logs/01-meddles.log")).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}{log}",
        stdout(&out),
        stderr(&out)
    );
    let after = testkit::snapshot(&git_dir);
    let changed: Vec<_> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(changed.is_empty(), "the user's .git changed: {changed:?}");
    assert_eq!(f.repo.git(["config", "gatekit.test"]), "original");
    assert!(f.repo.git(["tag"]).contains("v1.0"));
    assert_eq!(f.repo.git(["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_run_killed_with_sigkill_is_cleaned_by_the_next_start() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let s = Scratch::new();
    // A suite whose child escapes its group, then a long wait.
    let config = f.config(
        "[[suite]]\nname = \"hangs\"\nrun = \"setsid sleep 300 & sleep 300\"\ntimeout = \"10m\"\n",
    );
    let mut std_cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gate"));
    testkit::hermetic(&mut std_cmd);
    std_cmd
        .current_dir(f.repo.path())
        .args(["run", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(f.out.path().join("o"))
        .env("TMPDIR", s.tmp.path())
        .env("GATEKIT_STATE_DIR", s.state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = std_cmd.spawn().unwrap();
    let tag = format!("{}.", child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    while testkit::tagged_pids(&tag).len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        testkit::tagged_pids(&tag).len() >= 3,
        "the suite did not start"
    );
    child.kill().unwrap(); // SIGKILL: gate can clean nothing
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let orphans = testkit::tagged_pids(&tag);
    assert!(
        !orphans.is_empty(),
        "the kill took the suite with it: nothing to prove"
    );
    assert!(
        s.entries().iter().any(|n| n.starts_with("gatekit-repo-")),
        "{:?}",
        s.entries()
    );

    let mut next = gate();
    next.current_dir(f.repo.path()).arg("clean");
    s.apply_to(&mut next);
    let out = next.output().unwrap();
    let left = testkit::tagged_pids(&tag);
    for pid in &left {
        let _ = nix_kill(*pid);
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        left.is_empty(),
        "processes of the killed run survived: {left:?}"
    );
    assert!(
        stderr(&out).contains("left by a gatekit run that was killed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s.entries(), Vec::<String>::new(), "scratch left behind");
}

/// SIGKILL to one pid this test found by its run's tag.
fn nix_kill(pid: i32) -> std::io::Result<()> {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other("kill failed"))
    }
}

#[test]
fn a_kept_checkout_waits_for_gate_clean() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let s = Scratch::new();
    let config = f.config("[[suite]]\nname = \"ok\"\nrun = \"true\"\n");
    let mut keep = f.run(&config, &f.out.path().join("o"));
    keep.arg("--keep");
    s.apply_to(&mut keep);
    keep.assert().success();
    let kept: Vec<String> = s.entries();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept = s.tmp.path().join(&kept[0]);
    fs::write(kept.join("review-notes.txt"), "notes\n").unwrap();

    // Another run, and an apply, do not touch it.
    let mut again = f.run(&config, &f.out.path().join("o2"));
    s.apply_to(&mut again);
    again.assert().success();
    assert!(kept.join("review-notes.txt").exists());

    let mut clean = gate();
    clean.current_dir(f.repo.path()).arg("clean");
    s.apply_to(&mut clean);
    let out = clean.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("(kept)"), "{}", stdout(&out));
    assert!(!kept.exists());
    assert_eq!(s.entries(), Vec::<String>::new());
}

#[test]
fn gate_clean_leaves_a_kept_folder_that_is_no_longer_gatekits() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let mut apply = f.apply();
    s.apply_to(&mut apply);
    apply.assert().success();
    let kept = s.tmp.path().join(&s.entries()[0]);
    // The reviewer replaced it with a folder of their own at the same path.
    fs::remove_dir_all(&kept).unwrap();
    fs::create_dir_all(kept.join(".git")).unwrap();
    fs::write(kept.join("mine.txt"), "mine\n").unwrap();
    let mut clean = gate();
    clean.current_dir(f.repo.path()).arg("clean");
    s.apply_to(&mut clean);
    let out = clean.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        kept.join("mine.txt").exists(),
        "gate clean removed a stranger's folder"
    );
    assert!(
        stdout(&out).contains("no longer a gatekit checkout"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn apply_into_an_existing_folder_removes_only_what_it_made_there() {
    let f = Fixture::new();
    f.pack();
    let s = Scratch::new();
    let bad_patch = f.out.path().join("bad.patch");
    let mut patch = fs::read(f.patch()).unwrap();
    let i = patch.windows(5).position(|w| w == b"+thre").unwrap();
    patch[i + 1] = b'X';
    // A context line that is not in the base, so the patch cannot apply.
    let j = patch.windows(4).position(|w| w == b" one").unwrap();
    patch[j + 1] = b'Q';
    fs::write(&bad_patch, patch).unwrap();

    let existing = f.out.path().join("review-here");
    fs::create_dir(&existing).unwrap();
    let mut cmd = gate();
    cmd.current_dir(f.repo.path())
        .args(["apply", "--base", &f.base, "--patch"])
        .arg(&bad_patch)
        .arg("--manifest")
        .arg(f.manifest())
        .arg("--worktree")
        .arg(&existing);
    s.apply_to(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(existing.is_dir(), "the user's folder was removed");
    assert_eq!(
        fs::read_dir(&existing).unwrap().count(),
        0,
        "what apply made is left"
    );

    let fresh = f.out.path().join("made-by-apply");
    let mut cmd = gate();
    cmd.current_dir(f.repo.path())
        .args(["apply", "--base", &f.base, "--patch"])
        .arg(&bad_patch)
        .arg("--manifest")
        .arg(f.manifest())
        .arg("--worktree")
        .arg(&fresh);
    s.apply_to(&mut cmd);
    assert_eq!(cmd.output().unwrap().status.code(), Some(2));
    assert!(!fresh.exists(), "a folder apply made was left on error");
}

#[test]
fn folders_a_suite_leaves_read_only_are_removed_and_said_so_truthfully() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let s = Scratch::new();
    let config = f.config(
        "[[suite]]\nname = \"ro\"\nrun = \"mkdir -p cache/mod/x \\\"$TMPDIR/gomod/y\\\" && chmod -R a-w cache \\\"$TMPDIR/gomod\\\"\"\n",
    );
    let mut cmd = f.run(&config, &f.out.path().join("o"));
    s.apply_to(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("(removed)"), "{}", stdout(&out));
    assert_eq!(s.entries(), Vec::<String>::new(), "left behind");
}
