//! Approvals a reviewer can finish: `gate verify` of a candidate that is staged, not committed
//! (it works, or prints the exact command that does), what `gate run --attest` says it wrote,
//! and statements whose bytes could be read two ways.

use std::fs;
use std::path::Path;
use std::process::Command;

use testkit::{Output, Repo};

use crate::attest::key;
use crate::common::{gate, write_config};

/// `ssh-keygen -Y sign` of `file` with `private`, as a reviewer would by hand.
fn sign(home: &Path, private: &Path, file: &Path) {
    let ok = Command::new("ssh-keygen")
        .env("HOME", home)
        .env_remove("SSH_AUTH_SOCK")
        .args(["-Y", "sign", "-f"])
        .arg(private)
        .args(["-n", "gatekit-attestation"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// Runs `command` (a line gate printed) with `sh`, in `dir`, with the built `gate` first on
/// PATH and HOME in `home`.
fn run_printed(command: &str, dir: &Path, home: &Path) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_gate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("sh");
    testkit::hermetic(&mut cmd)
        .env("PATH", path)
        .env("HOME", home)
        .current_dir(dir)
        .args(["-c", command]);
    Output::from(cmd.output().unwrap())
}

/// The command after `marker` on the line of `text` that holds it.
fn printed_command<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {text}"));
    text[at + marker.len()..].lines().next().unwrap().trim()
}

#[test]
fn a_staged_candidate_is_verified_by_the_command_gate_prints() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit_all("base");
    repo.write("a.txt", "a, staged\n");
    repo.git(["add", "-A"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cand");
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", "HEAD", "--out"])
        .arg(&out)
        .assert()
        .success();
    let config = write_config(&out, &base, "[[suite]]\nname = \"ok\"\nrun = \"true\"\n");
    let k = key(dir.path(), "reviewer", "reviewer@example.invalid");
    let att = dir.path().join("att.json");
    let run = Output::of(
        gate()
            .current_dir(repo.path())
            .env("HOME", dir.path())
            .env_remove("SSH_AUTH_SOCK")
            .arg("run")
            .arg("--config")
            .arg(&config)
            .arg("--out")
            .arg(dir.path().join("gate-out"))
            .arg("--attest")
            .arg(&att)
            .arg("--sign-key")
            .arg(&k.private),
    );
    run.assert_exit(0);
    // It says where it wrote, what the statement binds and says, and what signed it where.
    let staged = repo.git(["write-tree"]).trim().to_string();
    let said = format!(
        "gate: attestation written to {}: https://in-toto.io/attestation/test-result/v0.1 \
         PASSED for tree {staged}, head {base}, patch sha256 ",
        att.display()
    );
    assert!(run.stderr.contains(&said), "{run}");
    assert!(
        run.stderr.contains(&format!(
            "; signed with {} into {}.sig (ssh-keygen namespace gatekit-attestation)",
            k.private.display(),
            att.display()
        )),
        "{run}"
    );

    // HEAD is still the base: not verified, and the answer says the command that checks
    // what is staged.
    let verify = Output::of(
        gate()
            .current_dir(repo.path())
            .env("HOME", dir.path())
            .arg("verify")
            .arg(&att)
            .arg("--allowed-signers")
            .arg(&k.allowed),
    );
    verify.assert_exit(1);
    assert!(
        verify
            .stdout
            .contains("is the tree of the staged changes, not of HEAD"),
        "{verify}"
    );
    let command = printed_command(&verify.stdout, "check what is staged with: ");
    assert!(
        command.ends_with("--tree \"$(git write-tree)\""),
        "{command}"
    );
    let again = run_printed(command, repo.path(), dir.path());
    again.assert_exit(0);
    assert!(again.stdout.contains("verified   yes"), "{again}");
}

#[test]
fn with_nothing_committed_yet_verify_names_the_command_that_checks_the_staged_tree() {
    let repo = Repo::new();
    repo.write("a.txt", "first\n");
    repo.git(["add", "-A"]);
    let staged = repo.git(["write-tree"]).trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let k = key(dir.path(), "reviewer", "reviewer@example.invalid");
    let subjects = candidate::attest::Subjects {
        tree: staged,
        commit: "0".repeat(40),
        patch_sha256: None,
    };
    let s = candidate::attest::Statement::new(
        &subjects,
        candidate::attest::TEST_RESULT_PREDICATE,
        serde_json::json!({ "result": "PASSED" }),
    );
    let att = dir.path().join("att.json");
    fs::write(&att, s.to_bytes()).unwrap();
    sign(dir.path(), &k.private, &att);
    let verify = Output::of(
        gate()
            .current_dir(repo.path())
            .env("HOME", dir.path())
            .arg("verify")
            .arg(&att)
            .arg("--allowed-signers")
            .arg(&k.allowed),
    );
    verify.assert_exit(2);
    assert_eq!(verify.stderr.trim().lines().count(), 1, "{verify}");
    let command = printed_command(&verify.stderr, "to check what is staged, run: ");
    let again = run_printed(command, repo.path(), dir.path());
    again.assert_exit(0);
    assert!(again.stdout.contains("verified   yes"), "{again}");
}

#[test]
fn a_signed_statement_with_a_key_twice_is_refused() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("one");
    let tree = repo.git(["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let k = key(dir.path(), "reviewer", "reviewer@example.invalid");
    let subjects = candidate::attest::Subjects {
        tree,
        commit: repo.head().trim().to_string(),
        patch_sha256: None,
    };
    let s = candidate::attest::Statement::new(
        &subjects,
        candidate::attest::TEST_RESULT_PREDICATE,
        serde_json::json!({ "result": "FAILED" }),
    );
    // serde_json keeps the last of two keys, other readers the first: the same signed bytes
    // would be PASSED to gate and FAILED to them.
    let text = String::from_utf8(s.to_bytes()).unwrap();
    let twice = text.replace(
        "\"result\": \"FAILED\"",
        "\"result\": \"FAILED\",\n    \"result\": \"PASSED\"",
    );
    assert_ne!(text, twice);
    let att = dir.path().join("att.json");
    fs::write(&att, twice).unwrap();
    sign(dir.path(), &k.private, &att);
    let verify = Output::of(
        gate()
            .current_dir(repo.path())
            .env("HOME", dir.path())
            .arg("verify")
            .arg(&att)
            .arg("--allowed-signers")
            .arg(&k.allowed),
    );
    verify.assert_exit(2);
    assert!(
        verify
            .stderr
            .contains("the key \"result\" appears twice in one object"),
        "{verify}"
    );
    assert!(!verify.stdout.contains("verified"), "{verify}");
}
