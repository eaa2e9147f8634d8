//! Claims of the README that gatekit's own mutants (mutants.toml) showed no test pinned.

mod common;

use common::{gate, stderr, stdout};
use testkit::Repo;

/// A candidate that deletes `d/f` but puts a symlink `d -> e` in place of the folder, so the
/// path `d/f` still opens (it now shows `e/f`). The patch and manifest are handed over as a
/// reviewer would get them; `gate pack` cannot write them, as `sha256sum` cannot hash a link
/// to a folder. The manifest holds, so the deletion is the only finding.
fn deleted_but_reachable() -> (Repo, String, tempfile::TempDir) {
    let repo = Repo::new();
    repo.write("d/f", "deleted\n").write("e/f", "kept\n");
    let base = repo.commit_all("base");
    repo.git(["rm", "-q", "d/f"]);
    std::os::unix::fs::symlink("e", repo.path().join("d")).unwrap();
    repo.git(["add", "d"]);
    let out = tempfile::tempdir().unwrap();
    let patch = repo.git_output(["diff", "--cached", "--binary", &base]);
    assert!(patch.status.success());
    std::fs::write(out.path().join("build.patch"), &patch.stdout).unwrap();
    std::fs::write(
        out.path().join("candidate-manifest.sha256"),
        format!("{}  e/f\n", sha256_hex(b"kept\n")),
    )
    .unwrap();
    repo.commit_all("candidate");
    (repo, base, out)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_deleted_path_that_still_opens_fails_apply_and_run() {
    let (repo, base, out) = deleted_but_reachable();

    let applied = gate()
        .current_dir(repo.path())
        .args(["apply", "--base", &base, "--patch"])
        .arg(out.path().join("build.patch"))
        .arg("--manifest")
        .arg(out.path().join("candidate-manifest.sha256"))
        .output()
        .unwrap();
    let text = stdout(&applied);
    // apply leaves its worktree for the reviewer: removed before any assertion can fail.
    if let Some(wt) = text
        .lines()
        .find_map(|l| l.strip_prefix("worktree"))
        .and_then(|l| l.split_whitespace().next())
    {
        repo.remove_checkout(wt);
    }
    assert_eq!(applied.status.code(), Some(1), "{text}{}", stderr(&applied));
    assert!(text.contains("1/1 OK"), "{text}");
    assert!(
        text.contains("deleted   0/1 gone: d/f (STILL PRESENT)"),
        "{text}"
    );
    assert!(text.contains("1 deleted path(s) still present"), "{text}");

    // `gate run` judges the same: the suites pass, the candidate does not.
    std::fs::write(
        out.path().join("gate.toml"),
        format!(
            "base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nname = \"ok\"\nrun = \"true\"\n"
        ),
    )
    .unwrap();
    let ran = gate()
        .current_dir(repo.path())
        .arg("run")
        .arg("--config")
        .arg(out.path().join("gate.toml"))
        .arg("--out")
        .arg(out.path().join("gate-out"))
        .output()
        .unwrap();
    let text = stdout(&ran);
    assert_eq!(ran.status.code(), Some(1), "{text}{}", stderr(&ran));
    assert!(text.contains("gate FAIL"), "{text}");
    assert!(text.contains("1/1 suites passed"), "{text}");
}

#[test]
fn a_glob_star_stays_within_one_folder() {
    // `scripts/test-*.sh` names `scripts/test-a.sh`, never `scripts/test-x/deep.sh`: a `*` that
    // crossed folders would run a script nobody listed.
    let repo = Repo::new();
    repo.write(
        "scripts/test-a.sh",
        "#!/bin/sh\necho '1 passed, 0 failed'\n",
    )
    .chmod_x("scripts/test-a.sh")
    .write("scripts/test-x/deep.sh", "#!/bin/sh\necho deep ran\n")
    .chmod_x("scripts/test-x/deep.sh")
    .write("README", "v1\n");
    let base = repo.commit_all("base");
    repo.write("README", "v2\n");
    repo.git(["add", "README"]);
    let out = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .assert()
        .success();
    std::fs::write(
        out.path().join("gate.toml"),
        format!(
            "base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n[[suite]]\nglob = \"scripts/test-*.sh\"\n"
        ),
    )
    .unwrap();
    let ran = gate()
        .current_dir(repo.path())
        .arg("run")
        .arg("--config")
        .arg(out.path().join("gate.toml"))
        .arg("--out")
        .arg(out.path().join("gate-out"))
        .output()
        .unwrap();
    let text = stdout(&ran);
    assert_eq!(ran.status.code(), Some(0), "{text}{}", stderr(&ran));
    assert!(text.contains("scripts/test-a.sh"), "{text}");
    assert!(!text.contains("deep.sh"), "{text}");
    assert!(text.contains("1/1 suites passed"), "{text}");
}
