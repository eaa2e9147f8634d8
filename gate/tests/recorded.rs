//! What git records besides file content comes through a candidate exactly: a candidate that
//! only moves a submodule packs, applies and runs (bound by its tree id, its manifest a comment
//! with no lines), and symlinks of every kind (dangling, to a folder, with `..` in the target,
//! absolute) come back after `gate pack` and `gate apply` with the very targets recorded.

use std::path::Path;

use testkit::{Output, Repo};

use crate::common::*;

/// `gate apply --json` of the candidate packed in `out`, with `manifest`, its checkout kept in
/// `out` (gone with the test).
fn apply_json(repo: &Repo, base: &str, out: &Path, manifest: &Path) -> Output {
    Output::of(
        gate()
            .current_dir(repo.path())
            .env("TMPDIR", out)
            .args(["apply", "--json", "--base", base, "--patch"])
            .arg(out.join("build.patch"))
            .arg("--manifest")
            .arg(manifest),
    )
}

fn pack(repo: &Repo, base: &str, out: &Path) -> Output {
    Output::of(
        gate()
            .current_dir(repo.path())
            .args(["pack", "--base", base, "--out"])
            .arg(out),
    )
}

#[test]
fn a_candidate_that_only_moves_a_submodule_packs_applies_and_runs() {
    // A real submodule: its own repository with two commits, added by path.
    let sub = Repo::new();
    sub.write("lib.txt", "v1\n");
    let v1 = sub.commit_all("v1");
    sub.write("lib.txt", "v2\n");
    let v2 = sub.commit_all("v2");
    sub.git(["checkout", "-q", &v1]);
    let repo = Repo::new();
    repo.write("README", "top\n");
    repo.commit_all("first");
    repo.git([
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        sub.path().to_str().unwrap(),
        "vendor/sub",
    ]);
    let base = repo.commit_all("base with a submodule at v1");
    // The candidate: the submodule moved to v2, nothing else.
    let checkout = repo.path().join("vendor/sub");
    let moved = std::process::Command::new("git")
        .arg("-C")
        .arg(&checkout)
        .args(["checkout", "-q", &v2])
        .status()
        .unwrap();
    assert!(moved.success());
    repo.git(["add", "vendor/sub"]);
    let want_tree = repo.git(["write-tree"]).trim().to_string();

    let out = tempfile::tempdir().unwrap();
    let packed = pack(&repo, &base, out.path());
    packed.assert_exit(0);
    assert!(
        packed
            .stdout
            .contains("0 paths (1 submodule bump: no line, bound by the tree id)"),
        "{packed}"
    );
    let manifest = out.path().join("candidate-manifest.sha256");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(
        text.lines().all(|l| l.starts_with('#')),
        "the manifest has a line: {text}"
    );

    let applied = apply_json(&repo, &base, out.path(), &manifest);
    applied.assert_exit(0);
    let v: serde_json::Value = serde_json::from_str(&applied.stdout).unwrap();
    // The tree id is what binds the bump: it is the staged tree's, gitlink included.
    assert_eq!(v["candidate"]["tree"], want_tree.as_str(), "{applied}");
    assert_eq!(v["verdict"], "PASS", "{applied}");
    let wt = v["candidate"]["worktree"].as_str().unwrap().to_string();
    let ls = std::process::Command::new("git")
        .args(["-C", &wt, "ls-files", "--stage", "vendor/sub"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ls.stdout).starts_with(&format!("160000 {v2}")),
        "the bump is not in the applied index"
    );
    repo.remove_checkout(&wt);

    // gate run of the same candidate, a suite that passes: PASS, with the same tree.
    repo.git(["reset", "-q", "--hard"]);
    let config = write_config(
        out.path(),
        &base,
        "[[suite]]\nname = \"unit\"\nrun = \"echo '1 passed, 0 failed'\"\n",
    );
    let run = run_config(
        &repo,
        &config,
        &out.path().join("report"),
        &["--format", "json"],
    );
    run.assert_exit(0);
    let r: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(r["candidate"]["tree"], want_tree.as_str(), "{run}");
}

#[test]
fn a_manifest_of_no_lines_is_refused_when_the_patch_leaves_a_file_in_place() {
    let fx = Fixture::new();
    fx.pack();
    fx.settle();
    for text in ["", "# nothing here\n"] {
        let empty = fx.out.path().join("empty.sha256");
        std::fs::write(&empty, text).unwrap();
        let out = apply_json(&fx.repo, &fx.base, fx.out.path(), &empty);
        out.assert_exit(2);
        assert!(
            out.stderr
                .contains("no properly formatted SHA256 checksum lines found")
                && out.stderr.contains("leaves 6 files in place"),
            "{out}"
        );
        // Bad input leaves nothing behind.
        assert_eq!(fx.repo.extra_worktrees(), Vec::<std::path::PathBuf>::new());
    }
    // gate check, like sha256sum, still refuses a manifest of no lines whatever the tree.
    let checked = Output::of(
        gate()
            .current_dir(fx.repo.path())
            .arg("check")
            .arg(fx.out.path().join("empty.sha256")),
    );
    checked.assert_exit(2);
}

#[test]
fn symlinks_come_back_exactly_as_recorded_after_pack_and_apply() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n").write("dir/inner.txt", "inner\n");
    let base = repo.commit_all("base");
    repo.git(["checkout", "-q", "-b", "work"]);
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "not the candidate's\n").unwrap();
    let links: Vec<(&str, String)> = vec![
        ("to-file", "a.txt".into()),
        ("to-folder", "dir".into()),
        ("dir/up", "../a.txt".into()),
        ("dir/up-folder", "../dir".into()),
        ("dangling", "nowhere/at/all".into()),
        ("dangling-up", "../../../../nowhere".into()),
        ("climbs-out", "../../../../etc/passwd".into()),
        ("absolute", secret.display().to_string()),
        ("dots", "./a.txt/../a.txt".into()),
        ("spaced name", "a target with spaces".into()),
    ];
    for (link, target) in &links {
        std::os::unix::fs::symlink(target, repo.path().join(link)).unwrap();
    }
    repo.git(["add", "-A"]);
    let out = tempfile::tempdir().unwrap();
    pack(&repo, &base, out.path()).assert_exit(0);
    let manifest = out.path().join("candidate-manifest.sha256");
    // Each link's line is the digest of its target's bytes, never of what it points at.
    let text = std::fs::read_to_string(&manifest).unwrap();
    for (link, target) in &links {
        let digest = manifests::Digest::of(target.as_bytes()).to_hex();
        assert!(
            text.contains(&format!("{digest}  {link}\n")),
            "{link}: {text}"
        );
    }
    repo.commit_all("links");
    repo.git(["checkout", "-q", "main"]);
    let applied = apply_json(&repo, &base, out.path(), &manifest);
    applied.assert_exit(0);
    let v: serde_json::Value = serde_json::from_str(&applied.stdout).unwrap();
    assert_eq!(
        v["candidate"]["manifest"]["summary"],
        format!("{0}/{0} OK", links.len()),
        "{applied}"
    );
    let wt = Path::new(v["candidate"]["worktree"].as_str().unwrap()).to_path_buf();
    for (link, target) in &links {
        let path = wt.join(link);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} is no link");
        assert_eq!(
            std::fs::read_link(&path).unwrap(),
            Path::new(target),
            "{link}"
        );
    }
    // `gate check` follows links as sha256sum does, but never out of the tree: the links
    // that climb out or are absolute make the check an error naming one, not a read of it.
    let checked = Output::of(gate().arg("check").arg(&manifest).arg(&wt));
    checked.assert_exit(2);
    assert!(
        checked.stderr.contains("leads out of the tree"),
        "{checked}"
    );
    assert!(!checked.both().contains("not the candidate's"), "{checked}");
    repo.remove_checkout(&wt);
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "not the candidate's\n"
    );
}

/// The same rule covers a candidate that only deletes: no file is left in place to list, the
/// deletion is checked gone, and the tree id binds the rest.
#[test]
fn a_candidate_that_only_deletes_packs_and_applies() {
    let repo = Repo::new();
    repo.write("keep.txt", "kept\n").write("old.txt", "old\n");
    let base = repo.commit_all("base");
    repo.git(["checkout", "-q", "-b", "work"]);
    repo.git(["rm", "-q", "old.txt"]);
    let out = tempfile::tempdir().unwrap();
    let packed = pack(&repo, &base, out.path());
    packed.assert_exit(0);
    assert!(
        packed.stdout.contains("0 paths (1 path deleted"),
        "{packed}"
    );
    repo.commit_all("delete");
    repo.git(["checkout", "-q", "main"]);
    let manifest = out.path().join("candidate-manifest.sha256");
    let applied = apply_json(&repo, &base, out.path(), &manifest);
    applied.assert_exit(0);
    let v: serde_json::Value = serde_json::from_str(&applied.stdout).unwrap();
    assert_eq!(v["verdict"], "PASS", "{applied}");
    let wt = Path::new(v["candidate"]["worktree"].as_str().unwrap()).to_path_buf();
    assert!(!wt.join("old.txt").exists() && wt.join("keep.txt").exists());
    repo.remove_checkout(&wt);
}
