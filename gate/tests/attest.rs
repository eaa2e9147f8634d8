//! `gate run --attest` and `gate verify`: a signed in-toto statement of a run, checked with
//! the real `ssh-keygen`, against keys made in each test's own temp dir (HOME there too).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use testkit::Output;

use crate::common::{gate, Fixture};

/// An SSH key pair made in `dir` and the allowed_signers line that trusts it as `who`.
pub struct Key {
    pub private: PathBuf,
    pub allowed: PathBuf,
}

fn ssh_keygen(home: &Path) -> Command {
    let mut cmd = Command::new("ssh-keygen");
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("SSH_AUTH_SOCK")
        .env_remove("SSH_AGENT_PID");
    cmd
}

/// A passphrase-less ed25519 key `name` in `dir`, and `name.allowed` trusting it as `who`.
pub fn key(dir: &Path, name: &str, who: &str) -> Key {
    let private = dir.join(name);
    let st = ssh_keygen(dir)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", who, "-f"])
        .arg(&private)
        .status()
        .expect("ssh-keygen runs");
    assert!(st.success());
    let public = fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
    let mut fields = public.split_whitespace();
    let (kind, blob) = (fields.next().unwrap(), fields.next().unwrap());
    let allowed = dir.join(format!("{name}.allowed"));
    fs::write(&allowed, format!("{who} {kind} {blob}\n")).unwrap();
    Key { private, allowed }
}

/// A gated candidate: packed, committed on `work` (whose tree is the candidate's), HEAD on
/// main (the base's tree), and gate.toml with one suite that exits `exit`.
fn gated(exit: i32) -> (Fixture, PathBuf) {
    let f = Fixture::new();
    f.pack();
    f.settle();
    let config = f.config(&format!(
        "[[suite]]\nname = \"unit\"\nrun = \"echo '1 passed'; exit {exit}\"\n"
    ));
    (f, config)
}

fn run_attested(f: &Fixture, config: &Path, extra: &[&std::ffi::OsStr]) -> Output {
    let mut cmd = f.run(config, &f.out.path().join("gate-out"));
    cmd.env("HOME", f.out.path())
        .env_remove("SSH_AUTH_SOCK")
        .args(extra);
    Output::of(&mut cmd)
}

fn verify(f: &Fixture, att: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Output::of(
        gate()
            .current_dir(f.repo.path())
            .env("HOME", f.out.path())
            .arg("verify")
            .arg(att)
            .args(args),
    )
}

/// The sha256 of a file, by the real sha256sum.
fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

#[test]
fn a_signed_attestation_verifies_with_ssh_keygen_and_binds_the_tree() {
    let (f, config) = gated(0);
    let k = key(f.out.path(), "reviewer", "reviewer@example.invalid");
    let att = f.out.path().join("attestation.json");
    run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            att.as_os_str(),
            os("--sign-key"),
            k.private.as_os_str(),
        ],
    )
    .assert_exit(0);

    // The statement: in-toto v1, the three subjects, the test-result predicate.
    let json: serde_json::Value = serde_json::from_slice(&fs::read(&att).unwrap()).unwrap();
    assert_eq!(json["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(
        json["predicateType"],
        "https://in-toto.io/attestation/test-result/v0.1"
    );
    let work_tree = f.repo.git(["rev-parse", "work^{tree}"]);
    let main_head = f.repo.git(["rev-parse", "main"]);
    let digests: Vec<(String, String)> = json["subject"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["digest"].as_object().unwrap().clone())
        .map(|(k, v)| (k, v.as_str().unwrap().to_string()))
        .collect();
    let patch_sha = sha256(&f.patch());
    assert_eq!(
        digests,
        [
            ("gitTree".to_string(), work_tree.trim().to_string()),
            ("gitCommit".to_string(), main_head.trim().to_string()),
            ("sha256".to_string(), patch_sha),
        ]
    );
    let p = &json["predicate"];
    assert_eq!(p["result"], "PASSED");
    assert_eq!(p["passedTests"][1], "unit");
    assert_eq!(p["failedTests"], serde_json::json!([]));
    assert_eq!(p["configuration"][0]["digest"]["sha256"], sha256(&config));

    // The real `ssh-keygen -Y verify`, by hand, as a reviewer would.
    let sig = f.out.path().join("attestation.json.sig");
    let by_hand = ssh_keygen(f.out.path())
        .args(["-Y", "verify", "-f"])
        .arg(&k.allowed)
        .args([
            "-I",
            "reviewer@example.invalid",
            "-n",
            "gatekit-attestation",
            "-s",
        ])
        .arg(&sig)
        .stdin(fs::File::open(&att).unwrap())
        .output()
        .unwrap();
    assert!(by_hand.status.success(), "{by_hand:?}");

    // gate verify: signature and tree (work's tree is the candidate's).
    let ok = verify(
        &f,
        &att,
        &[
            os("--allowed-signers"),
            k.allowed.as_os_str(),
            os("--head"),
            os("work"),
        ],
    );
    ok.assert_exit(0);
    assert!(
        ok.stdout
            .contains("signature  good: reviewer@example.invalid"),
        "{ok}"
    );
    assert!(ok.stdout.contains("verified   yes"), "{ok}");
    // The same by tree id.
    verify(
        &f,
        &att,
        &[
            os("--allowed-signers"),
            k.allowed.as_os_str(),
            os("--tree"),
            os(work_tree.trim()),
        ],
    )
    .assert_exit(0);

    // A different head tree: main is the base, without the candidate.
    let other = verify(&f, &att, &[os("--allowed-signers"), k.allowed.as_os_str()]);
    other.assert_exit(1);
    assert!(other.stdout.contains("tree       DIFFERS"), "{other}");
    assert!(
        other.stdout.contains("verified   NO: the attested tree"),
        "{other}"
    );

    // Without allowed signers: the tree is checked, the signature is not, and it is no pass.
    let unchecked = verify(&f, &att, &[os("--head"), os("work")]);
    unchecked.assert_exit(1);
    assert!(
        unchecked.stdout.contains("signature  NOT CHECKED"),
        "{unchecked}"
    );
    assert!(
        unchecked.stdout.contains("tree       same as work"),
        "{unchecked}"
    );
}

#[test]
fn a_tampered_statement_or_an_unknown_signer_fails() {
    let (f, config) = gated(0);
    let k = key(f.out.path(), "reviewer", "reviewer@example.invalid");
    let stranger = key(f.out.path(), "stranger", "stranger@example.invalid");
    let att = f.out.path().join("attestation.json");
    run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            att.as_os_str(),
            os("--sign-key"),
            k.private.as_os_str(),
        ],
    )
    .assert_exit(0);
    let head = [os("--head"), os("work")];

    // Signed by a key the allowed_signers file does not list.
    let unknown = verify(
        &f,
        &att,
        &[
            &[os("--allowed-signers"), stranger.allowed.as_os_str()][..],
            &head,
        ]
        .concat(),
    );
    unknown.assert_exit(1);
    assert!(unknown.stdout.contains("signature  BAD"), "{unknown}");

    // The statement edited after signing (its tree now the base's, as a forger would want).
    let main_tree = f.repo.git(["rev-parse", "main^{tree}"]);
    let work_tree = f.repo.git(["rev-parse", "work^{tree}"]);
    let text = fs::read_to_string(&att).unwrap();
    fs::write(&att, text.replace(work_tree.trim(), main_tree.trim())).unwrap();
    let tampered = verify(
        &f,
        &att,
        &[
            os("--allowed-signers"),
            k.allowed.as_os_str(),
            os("--head"),
            os("main"),
        ],
    );
    tampered.assert_exit(1);
    assert!(
        tampered.stdout.contains("verified   NO: bad signature"),
        "{tampered}"
    );

    // One byte of whitespace is a tamper too.
    fs::write(&att, format!("{text} ")).unwrap();
    verify(
        &f,
        &att,
        &[&[os("--allowed-signers"), k.allowed.as_os_str()][..], &head].concat(),
    )
    .assert_exit(1);

    // No signature beside it.
    fs::write(&att, &text).unwrap();
    fs::remove_file(f.out.path().join("attestation.json.sig")).unwrap();
    let missing = verify(
        &f,
        &att,
        &[&[os("--allowed-signers"), k.allowed.as_os_str()][..], &head].concat(),
    );
    missing.assert_exit(1);
    assert!(missing.stdout.contains("signature  MISSING"), "{missing}");

    // Not a statement at all: bad input.
    fs::write(&att, "{\"hello\": 1}").unwrap();
    let bad = verify(&f, &att, &head);
    bad.assert_exit(2);
    assert!(
        bad.stderr
            .contains("attestation.json: not an in-toto statement"),
        "{bad}"
    );
}

#[test]
fn a_failed_run_is_attested_as_failed_and_does_not_verify() {
    let (f, config) = gated(3);
    let k = key(f.out.path(), "reviewer", "reviewer@example.invalid");
    let att = f.out.path().join("attestation.json");
    run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            att.as_os_str(),
            os("--sign-key"),
            k.private.as_os_str(),
        ],
    )
    .assert_exit(1);
    let json: serde_json::Value = serde_json::from_slice(&fs::read(&att).unwrap()).unwrap();
    assert_eq!(json["predicate"]["result"], "FAILED");
    assert_eq!(
        json["predicate"]["failedTests"],
        serde_json::json!(["unit"])
    );
    let v = verify(
        &f,
        &att,
        &[
            os("--allowed-signers"),
            k.allowed.as_os_str(),
            os("--head"),
            os("work"),
        ],
    );
    v.assert_exit(1);
    assert!(v.stdout.contains("signature  good"), "{v}");
    assert!(
        v.stdout
            .contains("NO: the attested run did not pass (result FAILED)"),
        "{v}"
    );
}

#[test]
fn an_attestation_onto_an_input_is_refused_before_any_suite_runs() {
    let (f, config) = gated(0);
    let k = key(f.out.path(), "reviewer", "reviewer@example.invalid");
    let patch_before = fs::read(f.patch()).unwrap();
    let out = run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            f.patch().as_os_str(),
            os("--sign-key"),
            k.private.as_os_str(),
        ],
    );
    out.assert_exit(2);
    assert_eq!(fs::read(f.patch()).unwrap(), patch_before);
    // Nor onto the key (through its .sig name: --attest reviewer writes reviewer.sig, fine,
    // but --attest reviewer itself is the key).
    let key_before = fs::read(&k.private).unwrap();
    run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            k.private.as_os_str(),
            os("--sign-key"),
            k.private.as_os_str(),
        ],
    )
    .assert_exit(2);
    assert_eq!(fs::read(&k.private).unwrap(), key_before);
    assert!(!f.out.path().join("gate-out").join("gate.json").exists());
}

#[test]
fn gate_verify_checks_a_mutants_attestation_and_refuses_an_unknown_type() {
    let dir = tempfile::tempdir().unwrap();
    let repo = testkit::Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("one");
    let tree = repo.git(["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let k = key(dir.path(), "reviewer", "reviewer@example.invalid");
    let subjects = candidate::attest::Subjects {
        tree: tree.clone(),
        commit: repo.head().trim().to_string(),
        patch_sha256: Some("ab".repeat(32)),
    };
    let check = |predicate_type: &str, result: &str| {
        let mut s = candidate::attest::Statement::new(
            &subjects,
            predicate_type,
            serde_json::json!({ "result": result }),
        );
        // As `mutants run` writes it: its report is a sha256 subject beside the patch.
        s.subject.push(candidate::attest::Subject {
            name: Some("mutants.json".into()),
            digest: [("sha256".to_string(), "cd".repeat(32))].into(),
        });
        let att = dir.path().join("m.json");
        fs::write(&att, s.to_bytes()).unwrap();
        // Signed by hand, as a reviewer could: the same format gate writes.
        assert!(ssh_keygen(dir.path())
            .args(["-Y", "sign", "-f"])
            .arg(&k.private)
            .args(["-n", "gatekit-attestation"])
            .arg(&att)
            .output()
            .unwrap()
            .status
            .success());
        let out = Output::of(
            gate()
                .current_dir(repo.path())
                .arg("verify")
                .arg(&att)
                .arg("--allowed-signers")
                .arg(&k.allowed),
        );
        let _ = fs::remove_file(dir.path().join("m.json.sig"));
        out
    };
    let ok = check(candidate::attest::MUTANTS_PREDICATE, "PASSED");
    ok.assert_exit(0);
    assert!(ok.stdout.contains("verified   yes"), "{ok}");
    // The patch is the subject named `patch`, never the report's sha256.
    assert!(ok.stdout.contains(&"ab".repeat(32)), "{ok}");
    assert!(!ok.stdout.contains(&"cd".repeat(32)), "{ok}");
    check(candidate::attest::MUTANTS_PREDICATE, "FAILED").assert_exit(1);
    let other = check("https://slsa.dev/provenance/v1", "PASSED");
    other.assert_exit(2);
    assert!(
        other.stderr.contains("is not one gatekit writes"),
        "{other}"
    );
}

#[test]
fn a_key_that_cannot_sign_is_an_error_that_keeps_the_verdict() {
    let (f, config) = gated(0);
    let att = f.out.path().join("attestation.json");
    // No such key: refused before any suite runs, nothing written.
    let missing = f.out.path().join("no-such-key");
    let out = run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            att.as_os_str(),
            os("--sign-key"),
            missing.as_os_str(),
        ],
    );
    out.assert_exit(2);
    assert!(
        out.stderr
            .contains("no-such-key: cannot read the --sign-key"),
        "{out}"
    );
    assert!(!att.exists() && !f.out.path().join("gate-out").exists());

    // A file ssh-keygen will not sign with: the run's verdict is shown, the failure named,
    // and a PASS without its attestation is not exit 0.
    let not_a_key = f.out.path().join("not-a-key");
    fs::write(&not_a_key, "hello\n").unwrap();
    let out = run_attested(
        &f,
        &config,
        &[
            os("--attest"),
            att.as_os_str(),
            os("--sign-key"),
            not_a_key.as_os_str(),
        ],
    );
    // The reports were written before the signing failed: an I/O failure after work began.
    out.assert_exit(74);
    assert!(out.stdout.contains("verdict   PASS"), "{out}");
    assert!(out.stderr.contains("ssh-keygen -Y sign failed"), "{out}");
    assert!(
        !att.exists(),
        "no unsigned statement stands in for a signed one"
    );
    // The record says the code the run ended with, not the PASS's 0.
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(f.out.path().join("gate-out/gate.json")).unwrap())
            .unwrap();
    assert_eq!(report["exit_code"], 74, "{report:#}");
    assert_eq!(report["verdict"], "PASS", "{report:#}");
    // And such a record is one its schema describes.
    if let Some(errors) = testkit::schema_errors("gate.schema.json", &report) {
        assert!(errors.is_empty(), "{errors:?}");
    }
}
