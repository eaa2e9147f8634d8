//! `gate verify`: the answer of [`crate::verify`], one line per thing checked, and its exit
//! code (0 verified, 1 not, 2 bad input).

use std::path::Path;

use anyhow::Result;

use cmdline::outln;
use cmdline::Exit;
use files::escape::text as esc;

use super::finished;
pub(super) use crate::verify::Against;
use crate::verify::{self, Signature};

pub(super) fn cmd_verify(
    repo_dir: Option<&Path>,
    attestation: &Path,
    allowed_signers: Option<&Path>,
    against: &Against,
    json: bool,
) -> Result<Exit> {
    let v = verify::verify(repo_dir, attestation, allowed_signers, against)?;
    let print = || -> Result<()> {
        if json {
            return crate::json::print("verify", None, &v);
        }
        outln!(
            "statement  {}  ({}, result {})",
            esc(&v.attestation),
            esc(&v.predicate_type),
            esc(v.result.as_deref().unwrap_or("missing"))
        )?;
        let mut subjects = format!("tree {}", esc(&v.attested_tree));
        if let Some(c) = &v.attested_commit {
            subjects.push_str(&format!(", head {}", esc(c)));
        }
        if let Some(p) = &v.attested_patch_sha256 {
            subjects.push_str(&format!(", patch sha256 {}", esc(p)));
        }
        outln!("attests    {subjects}")?;
        match &v.signature {
            Signature::Good { principal, said } => {
                outln!("signature  good: {} ({})", esc(principal), esc(said))?
            }
            Signature::Bad { reason } => outln!("signature  BAD: {}", esc(reason))?,
            Signature::Missing { path } => outln!("signature  MISSING: {}", esc(path))?,
            Signature::NotChecked => outln!("signature  NOT CHECKED (no --allowed-signers)")?,
        }
        let head = v
            .head
            .as_deref()
            .map(|h| format!(" at {h}"))
            .unwrap_or_default();
        if v.tree_matches {
            outln!("tree       same as {}{head}", v.against)?;
        } else {
            outln!(
                "tree       DIFFERS: {} has tree {}{head}",
                v.against,
                v.expected_tree
            )?;
        }
        match &v.reason {
            None => outln!("verified   yes")?,
            Some(reason) => outln!("verified   NO: {}", esc(reason))?,
        }
        Ok(())
    };
    finished(print(), Exit::from_held(v.verified))
}
