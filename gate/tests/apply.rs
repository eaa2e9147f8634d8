//! `gate pack` and `gate apply` on real repositories.

use std::fs;

use crate::common::{gate, stderr, stdout, Fixture};
use predicates::prelude::*;

#[test]
fn pack_then_apply_proves_binary_files_odd_names_and_deletions() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let status = f.repo.status();
    let out = f.apply().output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("manifest  ") && text.contains("6/6 OK"),
        "{text}"
    );
    assert!(text.contains("deleted   1/1 gone: docs/old.md"), "{text}");
    assert!(text.contains("drift     none"), "{text}");
    // The tree id printed is the tree of the candidate commit: same content, same tree.
    let tree = f.repo.git(["rev-parse", "work^{tree}"]);
    assert!(text.contains(&format!("tree      {tree}")), "{text}");
    // The checkout is left for the reviewer, with the binary file byte for byte.
    let wt_line = text.lines().find(|l| l.starts_with("checkout")).unwrap();
    let wt = wt_line.split_whitespace().nth(1).unwrap();
    assert_eq!(
        fs::read(format!("{wt}/assets/blob.bin")).unwrap(),
        [0u8, 159, 146, 150, 255, 0, 1, 2, 3]
    );
    assert!(!std::path::Path::new(&format!("{wt}/docs/old.md")).exists());
    assert_eq!(f.repo.status(), status, "the user's checkout changed");
    f.repo.remove_checkout(wt);
}

#[test]
fn the_manifest_pack_writes_passes_the_real_sha256sum() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    f.repo.git(["checkout", "-q", "work"]);
    let out = std::process::Command::new("sha256sum")
        .args(["-c", "--strict"])
        .arg(f.manifest())
        .current_dir(f.repo.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(stdout(&out).matches(": OK").count(), 6, "{}", stdout(&out));
}

#[test]
fn a_tampered_manifest_is_a_finding_naming_the_path() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let text = fs::read_to_string(f.manifest()).unwrap();
    // Change one digit of the src/lib.txt line.
    let tampered: String = text
        .lines()
        .map(|l| {
            if l.ends_with("src/lib.txt") {
                let flipped = if l.starts_with('0') { "1" } else { "0" };
                format!("{flipped}{}\n", &l[1..])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    fs::write(f.manifest(), tampered).unwrap();
    let out = f.apply().output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("5/6 OK, 1 FAILED"), "{text}");
    assert!(text.contains("src/lib.txt: FAILED"), "{text}");
    assert!(text.contains("verdict   FAIL"), "{text}");
}

#[test]
fn drift_through_a_merge_is_found() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    // A side branch from the base touches a candidate path; main merges it but keeps its own
    // version, so default history simplification would hide the side commit.
    f.repo.git(["checkout", "-q", "-b", "side", &f.base]);
    f.repo.write("src/lib.txt", "side change\n");
    let side = f.repo.commit_all("side: edit lib");
    f.repo.git(["checkout", "-q", "main"]);
    f.repo.write("unrelated.txt", "x\n");
    f.repo.commit_all("main: unrelated");
    f.repo.git([
        "merge",
        "-q",
        "-s",
        "ours",
        "--no-edit",
        "side",
        "-m",
        "merge side",
    ]);
    let out = f.apply().output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains(&side[..12]), "side commit not listed: {text}");
    assert!(text.contains("side: edit lib"), "{text}");
    assert!(!text.contains("main: unrelated"), "{text}");
}

#[test]
fn a_patch_that_does_not_apply_is_bad_input_and_leaves_nothing() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    // Apply to a base the patch was not made for.
    f.repo.write("src/lib.txt", "entirely different\n");
    let other = f.repo.commit_all("other base");
    let before = f.repo.status();
    let out = gate()
        .current_dir(f.repo.path())
        .args(["apply", "--base", &other, "--patch"])
        .arg(f.patch())
        .arg("--manifest")
        .arg(f.manifest())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("does not apply"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(f.repo.extra_worktrees().is_empty(), "a worktree was left");
    assert_eq!(f.repo.status(), before);
}

#[test]
fn bad_inputs_are_one_line_errors_with_exit_2() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--base".into(), "no-such-rev".into()],
            "unknown revision \"no-such-rev\"",
        ),
        (
            vec!["--patch".into(), "/nonexistent/build.patch".into()],
            "/nonexistent/build.patch",
        ),
    ];
    for (args, expect) in cases {
        let mut cmd = gate();
        cmd.current_dir(f.repo.path()).arg("apply");
        let has = |k: &str| args.iter().any(|a| a == k);
        if !has("--base") {
            cmd.args(["--base", &f.base]);
        }
        if !has("--patch") {
            cmd.arg("--patch").arg(f.patch());
        }
        cmd.arg("--manifest").arg(f.manifest());
        cmd.args(&args);
        cmd.assert()
            .code(2)
            .stderr(predicate::str::contains(expect))
            .stderr(predicate::function(|s: &str| s.trim().lines().count() == 1));
    }
    assert!(f.repo.extra_worktrees().is_empty());
}

#[test]
fn hostile_and_malformed_manifests_name_the_line() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let hex = "0".repeat(64);
    for (body, expect) in [
        (format!("{hex}  ../escape\n"), ":1:"),
        (format!("# ok\n{hex}  /etc/passwd\n"), ":2:"),
        (format!("{hex}  src/lib.txt\nnot a line\n"), ":2:"),
        ("# only a comment\n".to_string(), "no properly formatted"),
    ] {
        fs::write(f.manifest(), &body).unwrap();
        let out = f.apply().output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = stderr(&out);
        assert!(err.contains(expect), "{body:?}: {err}");
        assert!(err.contains("candidate-manifest.sha256"), "{err}");
    }
    assert!(f.repo.extra_worktrees().is_empty());
}

#[test]
fn a_link_out_of_the_tree_is_bound_by_its_target_and_never_followed() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "outside\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.repo.path().join("escape")).unwrap();
    f.repo.git(["add", "escape"]);
    f.pack();
    let text = fs::read_to_string(f.manifest()).unwrap();
    assert!(text.contains("  escape\n"), "{text}");
    // A manifest that asks for a file through the link is refused that file: never read.
    let hex = "0".repeat(64);
    fs::write(f.manifest(), format!("{text}{hex}  escape/secret\n")).unwrap();
    let out = f.apply().arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = v["candidate"]["manifest"]["entries"].as_array().unwrap();
    let through = entries
        .iter()
        .find(|e| e["path"] == "escape/secret")
        .unwrap();
    assert_eq!(through["status"], "FAILED", "{through}");
    assert!(through["detail"]
        .as_str()
        .unwrap()
        .contains("beyond a symbolic link"));
    if let Some(wt) = v["candidate"]["worktree"].as_str() {
        f.repo.remove_checkout(wt);
    }
}

#[test]
fn apply_json_carries_the_same_facts() {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let out = f.apply().arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "PASS");
    assert_eq!(v["candidate"]["manifest"]["summary"], "6/6 OK");
    assert_eq!(v["candidate"]["base"], f.base);
    assert_eq!(
        v["candidate"]["tree"],
        f.repo.git(["rev-parse", "work^{tree}"])
    );
    let wt = v["candidate"]["worktree"].as_str().unwrap().to_string();
    f.repo.remove_checkout(&wt);
}

#[test]
fn check_agrees_with_sha256sum_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "plain.txt",
        "with space.txt",
        "back\\slash",
        "new\nline",
        "ünï",
    ];
    for (i, n) in names.iter().enumerate() {
        fs::write(dir.path().join(n), format!("content {i}\n")).unwrap();
    }
    // sha256sum writes, gate checks.
    let written = std::process::Command::new("sha256sum")
        .args(names)
        .current_dir(dir.path())
        .output()
        .unwrap();
    fs::write(dir.path().join("SUMS"), &written.stdout).unwrap();
    gate()
        .args(["check", "--manifest"])
        .arg(dir.path().join("SUMS"))
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("5/5 OK"));
    // Tamper: both tools must fail.
    fs::write(dir.path().join("ünï"), "changed\n").unwrap();
    gate()
        .args(["check", "--manifest"])
        .arg(dir.path().join("SUMS"))
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("ünï: FAILED"))
        .stdout(predicate::str::contains("4/5 OK, 1 FAILED"));
    fs::remove_file(dir.path().join("plain.txt")).unwrap();
    gate()
        .args(["check", "--manifest"])
        .arg(dir.path().join("SUMS"))
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("plain.txt: MISSING"));
}

#[test]
fn a_file_turned_into_a_folder_counts_as_gone() {
    let repo = testkit::Repo::new();
    repo.write("x", "a file\n").write("keep.txt", "k\n");
    let base = repo.commit_all("base");
    repo.git(["rm", "-q", "x"]);
    repo.write("x/y", "now a folder\n");
    repo.git(["add", "-A"]);
    let out_dir = tempfile::tempdir().unwrap();
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", &base, "--out"])
        .arg(out_dir.path())
        .assert()
        .success();
    let wt = out_dir.path().join("wt");
    let out = gate()
        .current_dir(repo.path())
        .args(["apply", "--base", &base, "--head", &base, "--patch"])
        .arg(out_dir.path().join("build.patch"))
        .arg("--manifest")
        .arg(out_dir.path().join("candidate-manifest.sha256"))
        .arg("--worktree")
        .arg(&wt)
        .output()
        .unwrap();
    repo.remove_checkout(wt.to_str().unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("deleted   1/1 gone: x"),
        "{}",
        stdout(&out)
    );
}

/// A candidate that deletes `d/f` but puts a symlink `d -> e` in place of the folder, so the
/// path `d/f` still opens (it now shows `e/f`). The patch and manifest are handed over as a
/// reviewer would get them; `gate pack` cannot write them, as `sha256sum` cannot hash a link
/// to a folder. The manifest holds, so the deletion is the only finding.
fn deleted_but_reachable() -> (testkit::Repo, String, tempfile::TempDir) {
    let repo = testkit::Repo::new();
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

    let applied = testkit::Output::of(
        crate::common::gate()
            .current_dir(repo.path())
            .args(["apply", "--base", &base, "--patch"])
            .arg(out.path().join("build.patch"))
            .arg("--manifest")
            .arg(out.path().join("candidate-manifest.sha256")),
    );
    let text = &applied.stdout;
    // apply leaves its checkout for the reviewer: removed before any assertion can fail, and
    // a summary that does not name it fails here (it would be left in the temp dir).
    let checkout = text
        .lines()
        .find_map(|l| l.strip_prefix("checkout "))
        .and_then(|l| l.split_whitespace().next());
    match checkout {
        Some(at) => repo.remove_checkout(at),
        None => panic!("apply named no checkout:\n{text}"),
    }
    applied.assert_exit(1);
    assert!(text.contains("1/1 OK"), "{text}");
    assert!(
        text.contains("deleted   0/1 gone: d/f (STILL PRESENT)"),
        "{text}"
    );
    assert!(text.contains("1 deleted path(s) still present"), "{text}");

    // `gate run` judges the same: the suites pass, the candidate does not.
    let config = crate::common::write_config(
        out.path(),
        &base,
        "[[suite]]\nname = \"ok\"\nrun = \"true\"\n",
    );
    let ran = crate::common::run_config(&repo, &config, &out.path().join("gate-out"), &[]);
    ran.assert_exit(1);
    let text = &ran.stdout;
    assert!(text.contains("gate FAIL"), "{text}");
    assert!(text.contains("1/1 suites passed"), "{text}");
}

#[test]
fn the_candidate_landed_on_the_head_is_named_and_is_not_drift() {
    let f = Fixture::new();
    f.pack();
    // The candidate committed on `work` as it is: the same patch-id.
    let landed = f.repo.commit_all("land the candidate");
    f.repo.git(["checkout", "-q", "main"]);
    let out = f.apply().args(["--head", "work"]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains("drift     none: the only commits in"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the candidate itself, landed as {} land the candidate",
            &landed[..12]
        )),
        "{text}"
    );
    // And on the record.
    let json = f
        .apply()
        .args(["--head", "work", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        json["candidate"]["landed"][0]["sha"],
        landed.as_str(),
        "{json}"
    );

    // Landed with an unrelated file in the same commit (another patch-id, the candidate's
    // paths exactly as its manifest says), then a real drift commit after it.
    f.repo.git(["checkout", "-q", "-b", "work2", &f.base]);
    f.repo.git(["checkout", "-q", "work", "--", "."]);
    f.repo.git(["rm", "-q", "--ignore-unmatch", "docs/old.md"]);
    f.repo.write("unrelated.txt", "x\n");
    let with_more = f.repo.commit_all("land it with more");
    f.repo.write("src/lib.txt", "changed again\n");
    let drifted = f.repo.commit_all("change lib after landing");
    f.repo.git(["checkout", "-q", "main"]);
    let out = f.apply().args(["--head", "work2"]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!("landed as {} land it with more", &with_more[..12])),
        "{text}"
    );
    assert!(text.contains("1 of 2 commits"), "{text}");
    assert!(
        text.contains(&format!("{} change lib after landing", &drifted[..12])),
        "{text}"
    );
}
