//! Real trees: a candidate of more paths than a command line can carry packs, applies, is
//! checked and has its drift found; symlinks of every kind and submodule bumps are packed,
//! applied and checked as git records them (a link by its target, never followed).

use crate::common::{gate, stderr, stdout};
use testkit::Repo;

/// Long names, so 30,000 of them (about 2.5 MB) are more than Linux's 2 MB argument limit.
fn name(i: usize) -> String {
    format!(
        "generated/a/fairly/deep/folder/for/many/files/{:03}/file-with-a-long-name-{i:05}.txt",
        i / 1000
    )
}

#[test]
fn a_candidate_of_30000_paths_packs_applies_and_finds_drift() {
    const N: usize = 30_000;
    let repo = Repo::new();
    repo.write("README", "base\n");
    let base = repo.commit_all("base");
    // Drift: a commit on main after the base that touches the last candidate path.
    repo.write(name(N - 1), "main's version\n");
    let head = repo.commit_all("touches a candidate path");
    repo.git(["checkout", "-q", "-b", "work", &base]);
    for i in 0..N {
        repo.write(name(i), format!("{i}\n"));
    }
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    let packed = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{}", stderr(&packed));
    let manifest = out.path().join("candidate-manifest.sha256");
    let applied = gate()
        .current_dir(repo.path())
        .args([
            "apply", "--base", &base, "--head", &head, "--json", "--patch",
        ])
        .arg(out.path().join("build.patch"))
        .arg("--manifest")
        .arg(&manifest)
        .output()
        .unwrap();
    // Drift is a finding: exit 1, with the one commit named.
    assert_eq!(applied.status.code(), Some(1), "{}", stderr(&applied));
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    let c = &v["candidate"];
    assert_eq!(
        c["manifest"]["summary"],
        format!("{N}/{N} OK"),
        "{}",
        stdout(&applied)
    );
    assert_eq!(c["drift"].as_array().unwrap().len(), 1, "{}", c["drift"]);
    assert_eq!(c["drift"][0]["sha"], head.as_str());
    // Each drifting commit names the candidate paths it touched.
    assert_eq!(c["drift"][0]["paths"], serde_json::json!([name(N - 1)]));
    if let Some(wt) = c["worktree"].as_str() {
        repo.remove_checkout(wt);
    }
    let checked = gate()
        .current_dir(repo.path())
        .args(["check", "--manifest"])
        .arg(&manifest)
        .arg(repo.path())
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    assert!(
        stdout(&checked).contains(&format!("{N}/{N} OK")),
        "{}",
        stdout(&checked)
    );
}

#[test]
fn links_and_submodule_bumps_are_checked_as_git_records_them() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n").write("d/b.txt", "b\n");
    let first = repo.commit_all("first");
    // A submodule at the first commit (any commit id will do for a gitlink).
    repo.git([
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{first},vendor/sub"),
    ]);
    repo.git(["commit", "-q", "-m", "base with a submodule"]);
    let base = repo.head();
    let outside = tempfile::tempdir().unwrap();
    let abs_target = outside.path().join("secret.txt");
    std::fs::write(&abs_target, "not the candidate's\n").unwrap();
    for (link, target) in [
        ("rel", "a.txt"),
        ("d/up", "../a.txt"),
        ("dangling", "nowhere/at/all"),
        ("abs", abs_target.to_str().unwrap()),
    ] {
        std::os::unix::fs::symlink(target, repo.path().join(link)).unwrap();
    }
    repo.git([
        "update-index",
        "--cacheinfo",
        &format!("160000,{base},vendor/sub"),
    ]);
    repo.git(["add", "rel", "d/up", "dangling", "abs"]);
    let out = tempfile::tempdir().unwrap();
    let packed = gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(packed.status.code(), Some(0), "{}", stderr(&packed));
    assert!(
        stdout(&packed).contains("1 submodule bump"),
        "{}",
        stdout(&packed)
    );
    let manifest = out.path().join("candidate-manifest.sha256");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // A link's line is the digest of its target, as git stores it.
    use sha2::Digest as _;
    let digest = |b: &[u8]| {
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    assert!(
        text.contains(&format!("{}  rel\n", digest(b"a.txt"))),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}  dangling\n", digest(b"nowhere/at/all"))),
        "{text}"
    );
    assert!(!text.contains("vendor/sub"), "{text}");

    let apply = |manifest: &std::path::Path| {
        gate()
            .current_dir(repo.path())
            .args(["apply", "--json", "--base", &base, "--patch"])
            .arg(out.path().join("build.patch"))
            .arg("--manifest")
            .arg(manifest)
            .output()
            .unwrap()
    };
    let applied = apply(&manifest);
    assert_eq!(
        applied.status.code(),
        Some(0),
        "{}{}",
        stdout(&applied),
        stderr(&applied)
    );
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    assert_eq!(v["candidate"]["manifest"]["summary"], "4/4 OK");
    let wt = v["candidate"]["worktree"].as_str().unwrap().to_string();
    let ls = std::process::Command::new("git")
        .args(["-C", &wt, "ls-files", "--stage", "vendor/sub"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ls.stdout).starts_with(&format!("160000 {base}")),
        "the bump is not in the applied index"
    );
    repo.remove_checkout(&wt);

    // A manifest that names another target for a link is a finding, even when the file the
    // other target names has the same content.
    let forged = text.replace(&digest(b"a.txt"), &digest(b"d/b.txt"));
    let forged_path = out.path().join("forged.sha256");
    std::fs::write(&forged_path, forged).unwrap();
    let applied = apply(&forged_path);
    assert_eq!(applied.status.code(), Some(1), "{}", stderr(&applied));
    let v: serde_json::Value = serde_json::from_slice(&applied.stdout).unwrap();
    assert_eq!(
        v["candidate"]["manifest"]["summary"], "3/4 OK, 1 FAILED",
        "{}",
        v["candidate"]["manifest"]
    );
    if let Some(wt) = v["candidate"]["worktree"].as_str() {
        repo.remove_checkout(wt);
    }
    assert_eq!(
        std::fs::read_to_string(&abs_target).unwrap(),
        "not the candidate's\n"
    );
}
