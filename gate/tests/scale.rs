//! Real trees at scale: a candidate of more paths than a command line can carry packs, applies,
//! is checked and has its drift found.

mod common;

use common::{gate, stderr, stdout};
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
