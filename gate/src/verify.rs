//! `gate verify`: does this attestation approve this tree?
//!
//! Three things must hold, and the answer names each: the signature (`ATTESTATION.sig`) is
//! good by a key the allowed_signers file lists, in gatekit's namespace; the attested
//! `gitTree` is the tree of the head asked about (an approval bound to a tree holds for every
//! commit whose tree it is, and for no other); and the run it attests passed (`result`
//! `PASSED`). A signature nobody checked is not an approval, so without `--allowed-signers`
//! the answer is never "verified". The statement is read once, and the bytes whose signature
//! is checked are the bytes that are judged.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use candidate::attest::{self, SignatureCheck, Statement};
use candidate::git::{Git, GitError};

/// What the attested tree must be.
#[derive(Clone, Debug)]
pub(crate) enum Against {
    /// The tree of this commit.
    Head(String),
    /// This full tree id.
    Tree(String),
}

/// The signature's part of the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(crate) enum Signature {
    /// Good, by `principal`.
    Good { principal: String, said: String },
    /// Present but not good: why.
    Bad { reason: String },
    /// No `ATTESTATION.sig`.
    Missing { path: String },
    /// No `--allowed-signers`: not checked.
    NotChecked,
}

/// The whole answer.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Verification {
    pub attestation: String,
    pub predicate_type: String,
    /// The predicate's `result`, as written.
    pub result: Option<String>,
    pub attested_tree: String,
    pub attested_commit: Option<String>,
    pub attested_patch_sha256: Option<String>,
    pub signature: Signature,
    /// What the tree was checked against (`HEAD`, or `tree ID`).
    pub against: String,
    /// The head's commit id, when checked against a head.
    pub head: Option<String>,
    pub expected_tree: String,
    pub tree_matches: bool,
    pub passed: bool,
    pub verified: bool,
    /// Why it is not verified (the first thing that failed), when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Checks `attestation` (see the module docs). An unreadable or malformed statement, an
/// unreadable allowed_signers file, an unknown head or a malformed tree id is an error (exit
/// 2); anything else is an answer.
pub(crate) fn verify(
    repo_dir: Option<&Path>,
    attestation: &Path,
    allowed_signers: Option<&Path>,
    against: &Against,
) -> Result<Verification> {
    let shown = attestation.display().to_string();
    let bytes = files::input::read(attestation).with_context(|| shown.clone())?;
    let statement = Statement::parse(&bytes).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let known = [attest::TEST_RESULT_PREDICATE, attest::MUTANTS_PREDICATE];
    if !known.contains(&statement.predicate_type.as_str()) {
        bail!(
            "{shown}: predicateType {:?} is not one gatekit writes ({})",
            statement.predicate_type,
            known.join(", ")
        );
    }
    let digest = |alg: &str| -> Result<Option<String>> {
        statement
            .digest(alg)
            .map(|d| d.map(str::to_ascii_lowercase))
            .map_err(|e| anyhow::anyhow!("{shown}: {e}"))
    };
    let Some(attested_tree) = digest("gitTree")? else {
        bail!("{shown}: no subject has a gitTree digest");
    };
    let result = statement.predicate["result"].as_str().map(str::to_string);
    let passed = result.as_deref() == Some("PASSED");

    // The attested tree is not the head's but what the user has staged: an approval of a
    // candidate not committed yet, which `--tree` checks.
    let mut staged: Option<String> = None;
    let (against_text, head, expected_tree) = match against {
        Against::Tree(id) => {
            if !is_full_id(id) {
                bail!("--tree {id:?}: not a full tree id (40 or 64 hex digits)");
            }
            (format!("tree {id}"), None, id.to_ascii_lowercase())
        }
        Against::Head(rev) => {
            let dir = match repo_dir {
                Some(d) => d.to_path_buf(),
                None => std::env::current_dir().context("current directory")?,
            };
            let repo = Git::open(&dir)?;
            let commit = match repo.commit_id(rev) {
                Ok(commit) => commit,
                // A repository whose first commit is still being staged: no HEAD, but the
                // staged tree can be named.
                Err(e @ GitError::UnknownRevision { .. }) if rev == "HEAD" => bail!(
                    "--head HEAD: {e}: nothing is committed yet; to check what is staged, run: \
                     {}",
                    staged_command(repo_dir, attestation, allowed_signers)
                ),
                Err(e) => return Err(anyhow::Error::new(e).context("--head")),
            };
            let tree = repo
                .text([
                    "rev-parse",
                    "--verify",
                    "--end-of-options",
                    &format!("{commit}^{{tree}}"),
                ])
                .context("the head's tree")?;
            staged = (tree != attested_tree)
                .then(|| candidate::pack::staged_tree_id(&repo).ok())
                .flatten()
                .filter(|staged| *staged == attested_tree);
            (files::escape::text(rev).into_owned(), Some(commit), tree)
        }
    };
    let tree_matches = attested_tree == expected_tree;

    let signature = match allowed_signers {
        None => Signature::NotChecked,
        Some(allowed) => {
            std::fs::File::open(allowed)
                .with_context(|| format!("{}: cannot read --allowed-signers", allowed.display()))?;
            let sig_path: PathBuf = attest::signature_path(attestation);
            match std::fs::read(&sig_path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Signature::Missing {
                    path: sig_path.display().to_string(),
                },
                Err(e) => return Err(e).with_context(|| sig_path.display().to_string()),
                Ok(sig) => match attest::verify_signature(&bytes, &sig, allowed)? {
                    SignatureCheck::Good { principal, said } => Signature::Good { principal, said },
                    SignatureCheck::Bad(reason) => Signature::Bad { reason },
                },
            }
        }
    };

    let reason = match &signature {
        Signature::NotChecked => {
            Some("the signature was not checked (give --allowed-signers FILE)".to_string())
        }
        Signature::Missing { path } => Some(format!("no signature: {path} is missing")),
        Signature::Bad { reason } => Some(format!("bad signature: {reason}")),
        Signature::Good { .. } => None,
    }
    .or_else(|| {
        (!tree_matches).then(|| match &staged {
            Some(_) => format!(
                "the attested tree {attested_tree} is the tree of the staged changes, not of \
                 {against_text} ({expected_tree}): commit them, or check what is staged with: {}",
                staged_command(repo_dir, attestation, allowed_signers)
            ),
            None => format!(
                "the attested tree {attested_tree} is not the tree of {against_text} \
                 ({expected_tree})"
            ),
        })
    })
    .or_else(|| {
        (!passed).then(|| {
            format!(
                "the attested run did not pass (result {})",
                result.as_deref().unwrap_or("missing")
            )
        })
    });
    let attested_commit = digest("gitCommit")?;
    // By name: a mutants run's statement also names its report's sha256.
    let attested_patch_sha256 = statement
        .subject_digest("patch", "sha256")
        .map(|d| d.map(str::to_ascii_lowercase))
        .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    Ok(Verification {
        attestation: shown,
        predicate_type: statement.predicate_type.clone(),
        result,
        attested_tree,
        attested_commit,
        attested_patch_sha256,
        signature,
        against: against_text,
        head,
        expected_tree,
        tree_matches,
        passed,
        verified: reason.is_none(),
        reason,
    })
}

/// The command that checks `attestation` against the staged tree: `gate verify` with the same
/// arguments and `--tree "$(git write-tree)"` (quoted for a POSIX shell).
fn staged_command(
    repo_dir: Option<&Path>,
    attestation: &Path,
    allowed_signers: Option<&Path>,
) -> String {
    let quote = |p: &Path| report::text::shell_quote(&p.display().to_string());
    let (repo, git) = match repo_dir {
        Some(dir) => (
            format!(" --repo {}", quote(dir)),
            format!("git -C {} write-tree", quote(dir)),
        ),
        None => (String::new(), "git write-tree".to_string()),
    };
    let signers = allowed_signers
        .map(|f| format!(" --allowed-signers {}", quote(f)))
        .unwrap_or_default();
    format!(
        "gate{repo} verify {}{signers} --tree \"$({git})\"",
        quote(attestation)
    )
}

/// A full object id: 40 (SHA-1) or 64 (SHA-256) hex digits.
fn is_full_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_full_ids_are_tree_ids() {
        assert!(is_full_id(&"a".repeat(40)));
        assert!(is_full_id(&"A".repeat(64)));
        assert!(!is_full_id(&"a".repeat(39)));
        assert!(!is_full_id(&"g".repeat(40)));
    }
}
