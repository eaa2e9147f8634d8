//! `mutants run --attest FILE [--sign-key KEY]`: the verdicts as a signed in-toto statement,
//! checked with the real `ssh-keygen -Y verify` (keys made in the test's temp dir, HOME there).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{candidate, mutant, Fixture, SUITE};

fn ssh_keygen(home: &Path) -> Command {
    let mut cmd = Command::new("ssh-keygen");
    cmd.env("HOME", home).env_remove("SSH_AUTH_SOCK");
    cmd
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

/// (algorithm, value) of every subject digest, in order.
fn digests(statement: &Value) -> Vec<(String, String)> {
    statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["digest"].as_object().unwrap().clone())
        .map(|(k, v)| (k, v.as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_candidate_run_attests_its_verdicts_the_spec_and_the_tree_signed() {
    let spec = "[suites.double]\nrun = \"sh double-test.sh\"\n\n[[mutant]]\nname = \"times three\"\nfile = \"lib.sh\"\nanchor = \"$(( $1 * 2 ))\"\nreplace = \"$(( $1 * 3 ))\"\nsuite = \"double\"\n";
    let fx = Fixture::new(spec);
    let (dir, tree) = candidate(&fx, true);
    let home = fx.out.path();
    let key = home.join("reviewer");
    assert!(ssh_keygen(home)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "r", "-f"])
        .arg(&key)
        .status()
        .unwrap()
        .success());
    let att = home.join("mutants.intoto.json");
    let gate_toml = dir.path().join("gate.toml");
    let out = fx.run(&[
        "--candidate",
        gate_toml.to_str().unwrap(),
        "--attest",
        att.to_str().unwrap(),
        "--sign-key",
        key.to_str().unwrap(),
    ]);
    out.assert_exit(0);

    let statement: Value = serde_json::from_slice(&fs::read(&att).unwrap()).unwrap();
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert!(statement["predicateType"]
        .as_str()
        .unwrap()
        .ends_with("/attestation/mutants/v0.1"));
    let head = fx.repo.head();
    assert_eq!(
        digests(&statement),
        [
            ("gitTree".to_string(), tree.trim().to_string()),
            ("gitCommit".to_string(), head.trim().to_string()),
            (
                "sha256".to_string(),
                sha256(&dir.path().join("build.patch"))
            ),
            // The report itself, as written: a signature binds these very bytes.
            ("sha256".to_string(), sha256(&fx.out().join("mutants.json"))),
        ]
    );
    assert_eq!(statement["subject"][3]["name"], "mutants.json");
    let p = &statement["predicate"];
    assert_eq!(p["result"], "PASSED");
    assert_eq!(p["complete"], true);
    assert_eq!(
        p["spec"]["digest"]["sha256"],
        sha256(&fx.repo.path().join("mutants.toml"))
    );
    assert_eq!(p["mutants"][0]["name"], "times three");
    assert_eq!(p["mutants"][0]["verdict"], "killed");

    // The signature, checked by the real ssh-keygen as a reviewer would.
    let public = fs::read_to_string(home.join("reviewer.pub")).unwrap();
    let mut fields = public.split_whitespace();
    let allowed = home.join("allowed_signers");
    fs::write(
        &allowed,
        format!(
            "r@example.invalid {} {}\n",
            fields.next().unwrap(),
            fields.next().unwrap()
        ),
    )
    .unwrap();
    let verify = |message: &[u8]| {
        let mut child = ssh_keygen(home)
            .args(["-Y", "verify", "-f"])
            .arg(&allowed)
            .args(["-I", "r@example.invalid", "-n", "gatekit-attestation", "-s"])
            .arg(home.join("mutants.intoto.json.sig"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(message).unwrap();
        child.wait().unwrap().success()
    };
    let bytes = fs::read(&att).unwrap();
    assert!(verify(&bytes));
    let tampered = String::from_utf8(bytes)
        .unwrap()
        .replace("killed", "kiIled");
    assert!(!verify(tampered.as_bytes()));
}

#[test]
fn a_run_with_a_survivor_is_attested_failed_without_a_patch_subject() {
    let spec = format!(
        "{SUITE}{}",
        mutant("no-op", "spin() { :; }", "spin() { true; }", "")
    );
    let fx = Fixture::new(&spec);
    let att = fx.out.path().join("att.json");
    let out = fx.run(&["--attest", att.to_str().unwrap()]);
    out.assert_exit(1);
    let statement: Value = serde_json::from_slice(&fs::read(&att).unwrap()).unwrap();
    let head = fx.repo.head();
    let tree = fx.repo.git(["rev-parse", "HEAD^{tree}"]);
    assert_eq!(
        digests(&statement),
        [
            ("gitTree".to_string(), tree.trim().to_string()),
            ("gitCommit".to_string(), head.trim().to_string()),
            ("sha256".to_string(), sha256(&fx.out().join("mutants.json"))),
        ]
    );
    assert_eq!(statement["predicate"]["result"], "FAILED");
    assert_eq!(statement["predicate"]["mutants"][0]["verdict"], "SURVIVED");
    // Unsigned: no signature beside it.
    assert!(!fx.out.path().join("att.json.sig").exists());

    // The statement may not land on an input: the spec is refused, untouched.
    let before = fs::read(fx.repo.path().join("mutants.toml")).unwrap();
    let spec_path = fx.repo.path().join("mutants.toml");
    fx.run(&["--attest", spec_path.to_str().unwrap()])
        .assert_exit(2);
    assert_eq!(fs::read(&spec_path).unwrap(), before);
}
