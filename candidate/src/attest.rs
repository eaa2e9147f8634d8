//! Attestations: a run's verdict as an in-toto Statement v1, bound to the candidate it judged
//! and optionally signed the way git signs commits.
//!
//! The statement's subjects are what an approval must not drift from: the tree id the suites
//! ran on (`gitTree`), the head commit the candidate was checked against (`gitCommit`) and the
//! patch (`sha256`). Each tool brings its own predicate (`gate run` the in-toto test-result
//! predicate, `mutants run` gatekit's own); this module holds what they share, so the
//! statement's envelope, the signature format and its namespace live in one place.
//!
//! Signing shells out to `ssh-keygen -Y sign` in the namespace [`NAMESPACE`], and the
//! signature goes beside the statement as `FILE.sig`: the armored SSH signature git writes for
//! a signed commit, so a reviewer checks it with the keys and `allowed_signers` file they
//! already keep, by hand if they like (`ssh-keygen -Y verify -n gatekit-attestation ...`). A
//! namespace of our own means a signature made for a commit (namespace `git`) can never be
//! replayed as an approval, nor the reverse.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use runner::{Job, Outcome, Program};

/// The statement layer's type (in-toto attestation framework v1).
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// The predicate type of `mutants run --attest`: gatekit's own, under the project's address
/// (no in-toto predicate holds mutation verdicts). Its `result` reads as the test-result
/// predicate's does (`PASSED` or `FAILED`), so one check of `result` serves both.
pub const MUTANTS_PREDICATE: &str =
    concat!(env!("CARGO_PKG_REPOSITORY"), "/attestation/mutants/v0.1");

/// The in-toto test-result predicate's type (`gate run --attest`).
pub const TEST_RESULT_PREDICATE: &str = "https://in-toto.io/attestation/test-result/v0.1";

/// The `ssh-keygen -Y` namespace every gatekit attestation is signed and verified in.
pub const NAMESPACE: &str = "gatekit-attestation";

/// A signing or verifying `ssh-keygen` is quick; one that outlives this is waiting for a
/// passphrase nobody can type (it runs in a process group of its own, away from the
/// terminal), and is killed rather than left to hang the run.
const SSH_KEYGEN_TIMEOUT: Duration = Duration::from_secs(60);

/// An in-toto Statement v1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub statement_type: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    #[serde(default)]
    pub predicate: serde_json::Value,
}

/// One subject: a name and its digests (`{"gitTree": "..."}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub digest: BTreeMap<String, String>,
}

/// What a statement is about: the candidate as it was judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subjects {
    /// The tree id the suites ran on.
    pub tree: String,
    /// The head commit the candidate was checked against.
    pub commit: String,
    /// The patch's sha256 (none when the run had no patch file: `mutants run --dir`).
    pub patch_sha256: Option<String>,
}

impl Statement {
    /// A statement about `subjects` with the tool's predicate.
    pub fn new(subjects: &Subjects, predicate_type: &str, predicate: serde_json::Value) -> Self {
        let one = |name: &str, alg: &str, value: &str| Subject {
            name: Some(name.into()),
            digest: BTreeMap::from([(alg.to_string(), value.to_ascii_lowercase())]),
        };
        let mut subject = vec![
            one("tree", "gitTree", &subjects.tree),
            one("head", "gitCommit", &subjects.commit),
        ];
        if let Some(patch) = &subjects.patch_sha256 {
            subject.push(one("patch", "sha256", patch));
        }
        Statement {
            statement_type: STATEMENT_TYPE.into(),
            subject,
            predicate_type: predicate_type.into(),
            predicate,
        }
    }

    /// Reads a statement: JSON with no key twice in one object (another parser could read a
    /// different result from the same signed bytes), the v1 `_type`, at least one subject, and
    /// every subject with a digest. The error says what is wrong, for the caller to prefix
    /// with the file.
    pub fn parse(bytes: &[u8]) -> Result<Statement, String> {
        crate::unique_keys::check(bytes).map_err(|e| format!("not an in-toto statement: {e}"))?;
        let statement: Statement =
            serde_json::from_slice(bytes).map_err(|e| format!("not an in-toto statement: {e}"))?;
        if statement.statement_type != STATEMENT_TYPE {
            return Err(format!(
                "_type is {:?}, not {STATEMENT_TYPE:?}",
                statement.statement_type
            ));
        }
        if statement.subject.is_empty() {
            return Err("the statement has no subject".into());
        }
        if let Some(i) = statement.subject.iter().position(|s| s.digest.is_empty()) {
            return Err(format!("subject {} has no digest", i + 1));
        }
        Ok(statement)
    }

    /// The one value of digest `alg` among the subjects: `Ok(None)` when no subject has it, an
    /// error when two disagree (a statement about two trees binds neither).
    pub fn digest(&self, alg: &str) -> Result<Option<&str>, String> {
        let mut found: Option<&str> = None;
        for value in self.subject.iter().filter_map(|s| s.digest.get(alg)) {
            match found {
                Some(v) if !v.eq_ignore_ascii_case(value) => {
                    return Err(format!("the subjects name two {alg} digests"))
                }
                _ => found = Some(value),
            }
        }
        Ok(found)
    }

    /// The value of digest `alg` of the subject named `name`: `Ok(None)` when no subject of
    /// that name has it, an error when two of that name disagree. A statement may name several
    /// files of one algorithm (a patch, a report), each told apart by its subject's name.
    pub fn subject_digest(&self, name: &str, alg: &str) -> Result<Option<&str>, String> {
        let mut found: Option<&str> = None;
        let named = self
            .subject
            .iter()
            .filter(|s| s.name.as_deref() == Some(name));
        for value in named.filter_map(|s| s.digest.get(alg)) {
            match found {
                Some(v) if !v.eq_ignore_ascii_case(value) => {
                    return Err(format!(
                        "two subjects named {name:?} name two {alg} digests"
                    ))
                }
                _ => found = Some(value),
            }
        }
        Ok(found)
    }

    /// The statement as written: pretty JSON and a final newline (the bytes that are signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// Where the signature of the attestation at `path` goes: `FILE.sig`, as `ssh-keygen -Y sign`
/// names it.
pub fn signature_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

/// `--attest FILE [--sign-key KEY]` for the output guard: the statement and its signature are
/// outputs, the key (and its `.pub`) inputs no output may land on.
pub fn plan(plan: &mut files::outputs::Plan, attest: &Path, key: Option<&Path>) {
    plan.file("--attest", attest)
        .file("--attest's signature", &signature_path(attest));
    if let Some(key) = key {
        plan.input("--sign-key", key);
        plan.input("--sign-key's public key", &signature_path_pub(key));
    }
}

fn signature_path_pub(key: &Path) -> PathBuf {
    let mut name = key.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

/// Writes `statement` to `path` and, with a key, its signature to `FILE.sig`, both whole and
/// together (see `files::atomic::write_all_atomic`). Without a key, a `FILE.sig` an earlier run
/// left is removed: it signs a statement that is no longer there.
pub fn write(path: &Path, statement: &Statement, key: Option<&Path>) -> Result<()> {
    let bytes = statement.to_bytes();
    let sig_path = signature_path(path);
    match key {
        Some(key) => {
            let sig = sign(&bytes, key)?;
            files::atomic::write_all_atomic(&[(path, &bytes), (&sig_path, &sig)])
                .with_context(|| format!("writing {}", path.display()))
        }
        None => {
            files::atomic::write_bytes_atomic(path, &bytes)
                .with_context(|| format!("writing {}", path.display()))?;
            match std::fs::remove_file(&sig_path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(e).with_context(|| format!("removing {}", sig_path.display()))
                }
                _ => Ok(()),
            }
        }
    }
}

/// Proves `key` can sign before a run starts: it is readable. (Whether ssh-keygen takes it is
/// known only when it signs, at the end.)
pub fn check_key(key: &Path) -> Result<()> {
    std::fs::File::open(key)
        .with_context(|| format!("{}: cannot read the --sign-key", key.display()))?;
    Ok(())
}

/// `ssh-keygen -Y sign -f KEY -n gatekit-attestation` over `bytes`: the armored signature.
/// The bytes are signed from a private copy, so ssh-keygen writes its `.sig` in our own
/// folder and never through a path of the user's.
pub fn sign(bytes: &[u8], key: &Path) -> Result<Vec<u8>> {
    let scratch = tempfile::Builder::new()
        .prefix("gatekit-sign-")
        .tempdir()
        .context("making a folder to sign in")?;
    let message = scratch.path().join("statement.json");
    std::fs::write(&message, bytes).context("writing the statement to sign")?;
    let key_arg = std::path::absolute(key).unwrap_or_else(|_| key.to_path_buf());
    let argv = vec![
        "ssh-keygen".to_string(),
        "-Y".into(),
        "sign".into(),
        "-f".into(),
        key_arg.display().to_string(),
        "-n".into(),
        NAMESPACE.into(),
        message.display().to_string(),
    ];
    let said = ssh_keygen(argv, scratch.path())?;
    if said.outcome != Outcome::Passed {
        bail!(
            "{}: ssh-keygen -Y sign failed: {} (a key with a passphrase must be loaded in \
             ssh-agent)",
            key.display(),
            said.last_line()
        );
    }
    std::fs::read(signature_path(&message)).context("reading the signature ssh-keygen wrote")
}

/// What `ssh-keygen -Y verify` said of a signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignatureCheck {
    /// Valid, by a key `allowed_signers` lists for `principal`, in our namespace.
    Good { principal: String, said: String },
    /// Not valid: why, in ssh-keygen's words.
    Bad(String),
}

/// Checks `signature` (the armored text) over exactly `bytes` against `allowed_signers`, in
/// [`NAMESPACE`]: the principals whose key made it are found with `-Y find-principals`, then
/// `-Y verify` must accept one of them. The message and signature are copied to a private
/// folder first, so what is verified is what the caller read and will judge.
pub fn verify_signature(
    bytes: &[u8],
    signature: &[u8],
    allowed_signers: &Path,
) -> Result<SignatureCheck> {
    let scratch = tempfile::Builder::new()
        .prefix("gatekit-verify-")
        .tempdir()
        .context("making a folder to verify in")?;
    let message = scratch.path().join("statement.json");
    let sig = scratch.path().join("statement.json.sig");
    std::fs::write(&message, bytes).context("copying the statement")?;
    std::fs::write(&sig, signature).context("copying the signature")?;
    let allowed = std::path::absolute(allowed_signers)
        .unwrap_or_else(|_| allowed_signers.to_path_buf())
        .display()
        .to_string();
    let s = |p: &Path| p.display().to_string();
    let found = ssh_keygen(
        vec![
            "ssh-keygen".into(),
            "-Y".into(),
            "find-principals".into(),
            "-s".into(),
            s(&sig),
            "-f".into(),
            allowed.clone(),
        ],
        scratch.path(),
    )?;
    if found.outcome != Outcome::Passed {
        return Ok(SignatureCheck::Bad(format!(
            "signed by a key {} does not list ({})",
            allowed_signers.display(),
            found.last_line()
        )));
    }
    let mut last = String::new();
    for principal in found.text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // `-Y verify` reads the message on stdin only; the runner gives children /dev/null,
        // so a shell redirects it from our copy (paths as arguments, never spliced in).
        let said = ssh_keygen(
            vec![
                "sh".into(),
                "-c".into(),
                r#"exec ssh-keygen -Y verify -f "$1" -I "$2" -n "$3" -s "$4" < "$5""#.into(),
                "sh".into(),
                allowed.clone(),
                principal.to_string(),
                NAMESPACE.into(),
                s(&sig),
                s(&message),
            ],
            scratch.path(),
        )?;
        if said.outcome == Outcome::Passed {
            return Ok(SignatureCheck::Good {
                principal: principal.to_string(),
                said: said.last_line(),
            });
        }
        last = said.last_line();
    }
    Ok(SignatureCheck::Bad(if last.is_empty() {
        "no principal to verify against".into()
    } else {
        last
    }))
}

/// What one `ssh-keygen` said: how it ended and its output.
struct Said {
    outcome: Outcome,
    text: String,
}

impl Said {
    fn last_line(&self) -> String {
        self.text
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .map(files::escape::text)
            .map(|t| t.into_owned())
            .unwrap_or_else(|| format!("{:?}", self.outcome).to_lowercase())
    }
}

/// Runs one `ssh-keygen` through the runner (its own process group, a timeout) in `dir`,
/// its output logged there.
fn ssh_keygen(argv: Vec<String>, dir: &Path) -> Result<Said> {
    let log = dir.join(format!("ssh-keygen-{}.log", argv.len()));
    let job = Job::new(Program::Argv(argv), dir, &log).timeout(SSH_KEYGEN_TIMEOUT);
    let record = report::record::run(&job).context("running ssh-keygen")?;
    if let Some(e) = &record.run.ended.could_not_start() {
        bail!("cannot run ssh-keygen: {e}");
    }
    let text = runner::read_tail(&log, 64 * 1024).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    Ok(Said {
        outcome: record.outcome(),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subjects() -> Subjects {
        Subjects {
            tree: "B335940E697E64712E89CD948B284E0890ECC7F9".into(),
            commit: "9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d".into(),
            patch_sha256: Some("ab".repeat(32)),
        }
    }

    #[test]
    fn the_mutants_predicate_type_is_a_uri_under_the_workspace_repository() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let workspace: toml::Table = std::fs::read_to_string(manifest).unwrap().parse().unwrap();
        let repository = workspace["workspace"]["package"]["repository"]
            .as_str()
            .unwrap();
        assert!(repository.starts_with("https://"), "{repository}");
        assert_eq!(
            MUTANTS_PREDICATE,
            format!("{repository}/attestation/mutants/v0.1")
        );
    }

    #[test]
    fn a_statement_with_a_key_twice_is_refused() {
        let s = Statement::new(
            &subjects(),
            "urn:x",
            serde_json::json!({"result": "FAILED"}),
        );
        let text = String::from_utf8(s.to_bytes()).unwrap();
        let twice = text.replace(
            "\"result\": \"FAILED\"",
            "\"result\": \"FAILED\", \"result\": \"PASSED\"",
        );
        assert_ne!(text, twice);
        let e = Statement::parse(twice.as_bytes()).unwrap_err();
        assert!(e.contains("\"result\" appears twice"), "{e}");
    }

    #[test]
    fn a_statement_names_tree_head_and_patch_and_reads_back() {
        let s = Statement::new(
            &subjects(),
            "urn:x",
            serde_json::json!({"result": "PASSED"}),
        );
        let back = Statement::parse(&s.to_bytes()).unwrap();
        assert_eq!(back, s);
        assert_eq!(
            back.digest("gitTree").unwrap(),
            Some("b335940e697e64712e89cd948b284e0890ecc7f9")
        );
        assert_eq!(
            back.digest("sha256").unwrap(),
            Some("ab".repeat(32).as_str())
        );
        let json: serde_json::Value = serde_json::from_slice(&s.to_bytes()).unwrap();
        assert_eq!(json["_type"], STATEMENT_TYPE);
        assert_eq!(json["predicateType"], "urn:x");
    }

    #[test]
    fn malformed_statements_are_refused_with_a_reason() {
        for (text, want) in [
            ("{", "not an in-toto statement"),
            (
                r#"{"_type":"https://in-toto.io/Statement/v0.1","subject":[{"digest":{"a":"b"}}],"predicateType":"x"}"#,
                "_type is",
            ),
            (
                r#"{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"x"}"#,
                "no subject",
            ),
            (
                r#"{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{}}],"predicateType":"x"}"#,
                "subject 1 has no digest",
            ),
        ] {
            let e = Statement::parse(text.as_bytes()).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn two_trees_in_one_statement_bind_neither() {
        let mut s = Statement::new(&subjects(), "urn:x", serde_json::Value::Null);
        s.subject.push(Subject {
            name: None,
            digest: BTreeMap::from([("gitTree".into(), "00".repeat(20))]),
        });
        assert!(s.digest("gitTree").is_err());
        assert_eq!(s.digest("gitBlob").unwrap(), None);
    }

    #[test]
    fn a_named_subject_is_found_by_its_name_beside_others_of_its_algorithm() {
        let mut s = Statement::new(&subjects(), "urn:x", serde_json::Value::Null);
        s.subject.push(Subject {
            name: Some("mutants.json".into()),
            digest: BTreeMap::from([("sha256".into(), "cd".repeat(32))]),
        });
        assert_eq!(
            s.subject_digest("patch", "sha256").unwrap(),
            Some("ab".repeat(32).as_str())
        );
        assert_eq!(
            s.subject_digest("mutants.json", "sha256").unwrap(),
            Some("cd".repeat(32).as_str())
        );
        assert_eq!(s.subject_digest("other", "sha256").unwrap(), None);
        s.subject.push(Subject {
            name: Some("mutants.json".into()),
            digest: BTreeMap::from([("sha256".into(), "ef".repeat(32))]),
        });
        assert!(s.subject_digest("mutants.json", "sha256").is_err());
    }
}
