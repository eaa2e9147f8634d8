//! `merge --allowed-signers FILE`: each shard taken only with a signature that verifies over
//! the very `mutants.json` the merge reads.
//!
//! A shard run with `--attest DIR/mutants.intoto.json --sign-key KEY` writes a statement whose
//! subjects name its report (`mutants.json` and its sha256, beside the tree and commit), signed
//! with `ssh-keygen -Y sign` in gatekit's namespace. The merge checks the signature the way
//! `gate verify` does (`candidate::attest::verify_signature`: the principal found in the
//! allowed_signers file, then `-Y verify`), over the statement's bytes as read once, and then
//! that the sha256 the statement names is the sha256 of the report bytes it merges. A shard
//! with no statement, no signature, a signature by a key the file does not list, or a report
//! changed after it was signed is refused. Signatures are what catch a shard rewritten whole
//! and consistently: the other checks (see `check`) only catch one that contradicts itself or
//! its spec.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use candidate::attest::{self, SignatureCheck, Statement, MUTANTS_PREDICATE};
use files::escape;

use crate::attest::{REPORT_SUBJECT, SHARD_STATEMENT};

/// Proves `allowed_signers` readable before any shard is checked against it.
pub(super) fn check_allowed(allowed_signers: &Path) -> Result<()> {
    std::fs::File::open(allowed_signers).with_context(|| {
        format!(
            "{}: cannot read --allowed-signers",
            escape::path(allowed_signers)
        )
    })?;
    Ok(())
}

/// Refuses the shard in `dir` unless its statement is signed by a key `allowed_signers` lists
/// and names `report` (the bytes of its `mutants.json` as the merge read them); returns the
/// principal whose key signed it.
pub(super) fn verify(dir: &Path, report: &[u8], allowed_signers: &Path) -> Result<String> {
    let path = dir.join(SHARD_STATEMENT);
    let shown = escape::path(&path);
    let unsigned = |why: String| -> Result<String> {
        bail!(
            "{}: unsigned shard ({why}): with --allowed-signers every shard must be run with --attest {} --sign-key KEY",
            escape::path(dir),
            escape::path(&path)
        )
    };
    let bytes = match crate::swap::read_regular(&path) {
        Ok(read) => read.bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unsigned(format!("no {SHARD_STATEMENT}"))
        }
        Err(e) => bail!("{shown}: cannot read it ({e})"),
    };
    let sig_path: PathBuf = attest::signature_path(&path);
    let signature = match crate::swap::read_regular(&sig_path) {
        Ok(read) => read.bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unsigned(format!("{SHARD_STATEMENT} has no .sig beside it"))
        }
        Err(e) => bail!("{}: cannot read it ({e})", escape::path(&sig_path)),
    };
    let principal = match attest::verify_signature(&bytes, &signature, allowed_signers)? {
        SignatureCheck::Good { principal, .. } => principal,
        SignatureCheck::Bad(reason) => bail!(
            "{}: bad signature: {}",
            escape::path(&sig_path),
            escape::text(&reason)
        ),
    };
    let statement = Statement::parse(&bytes).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    if statement.predicate_type != MUTANTS_PREDICATE {
        bail!(
            "{shown}: predicateType {:?} is not a mutants run's ({MUTANTS_PREDICATE})",
            escape::text(&statement.predicate_type)
        );
    }
    let named = statement
        .subject_digest(REPORT_SUBJECT, "sha256")
        .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let Some(named) = named else {
        bail!("{shown}: no subject names the shard's {REPORT_SUBJECT}: it binds no report");
    };
    let actual = manifests::Digest::of(report).to_hex();
    if !named.eq_ignore_ascii_case(&actual) {
        bail!(
            "{}: its sha256 is {actual}, not {} as the signed statement says: the report was changed after it was signed",
            escape::path(&dir.join("mutants.json")),
            escape::text(named)
        );
    }
    Ok(principal)
}
