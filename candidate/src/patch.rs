//! A candidate's patch in a checkout's index: how it is applied, and how the changes it made
//! are read back. Both `apply` (which checks a candidate) and `pack` (which makes one and
//! proves it applies) stand on these, so the two can never disagree on what a patch did, what
//! files it leaves, or which of them its manifest must name.
//!
//! After [`apply`], every file of the checkout is what a fresh clone of the resulting tree
//! writes: the checkout of the base was one, our git calls read no user or system config (see
//! `git`), and `git apply` writes each file through the attributes in force. Those are the
//! base's, though, and a patch that changes a `.gitattributes` (`*.sh text eol=crlf`) changes
//! how files it does not touch are written too: then every file is written again from the
//! new tree, as `git clone` would, so the checkout holds what CI will check out.

use std::collections::{BTreeMap, HashSet};
use std::fs;

use anyhow::Result;
use thiserror::Error;

use crate::git::{Git, GitError};

/// `git apply` of a candidate's patch, to the index and the files of a checkout: exactly as
/// the patch says (whitespace neither fixed nor matched loosely, whatever config says).
pub(crate) const APPLY_ARGS: &[&str] = &["apply", "--index", "--whitespace=nowarn"];

/// Why [`apply`] failed: the patch does not apply (git's reason), or git failed otherwise.
#[derive(Debug, Error)]
pub(crate) enum ApplyError {
    #[error("{0}")]
    Rejected(String),
    #[error(transparent)]
    Git(#[from] GitError),
}

/// Applies `patch` to the index and files of the checkout `wt` (detached at the base), and
/// makes its files what a fresh clone of the resulting tree writes (see the module doc).
pub(crate) fn apply(wt: &Git, patch: &[u8]) -> Result<(), ApplyError> {
    let args = APPLY_ARGS.iter().copied().chain(["-"]);
    if let Err(e) = wt.bytes_with_input(args, Some(patch)) {
        return Err(ApplyError::Rejected(match e {
            GitError::Failed { message, .. } => message,
            other => other.to_string(),
        }));
    }
    let mut args = vec!["diff-index", "--cached", "--name-only"];
    args.extend(crate::git::DIFF_OPTIONS);
    args.push("HEAD");
    let changed = wt.bytes(args)?;
    let attributes = changed
        .split(|b| *b == 0)
        .any(|p| p == b".gitattributes" || p.ends_with(b"/.gitattributes"));
    if attributes {
        checkout_afresh(wt)?;
    }
    Ok(())
}

/// Writes every file of the checkout `wt` again from its index's tree, as `git clone` does:
/// the index emptied, every file but `.git` removed, then `read-tree --reset -u`, which reads
/// the attributes from the new index (the tree's own `.gitattributes`), not from the files.
fn checkout_afresh(wt: &Git) -> Result<(), GitError> {
    let tree = wt.text(["write-tree"])?;
    wt.bytes(["read-tree", "--empty"])?;
    let failed = |e: std::io::Error| GitError::Failed {
        command: "checkout".into(),
        message: format!("{}: emptying the checkout: {e}", wt.dir().display()),
    };
    for entry in fs::read_dir(wt.dir()).map_err(failed)? {
        let entry = entry.map_err(failed)?;
        if entry.file_name() == ".git" {
            continue;
        }
        // `remove_dir_all` never follows a link: a link the patch made is removed, not entered.
        let removed = match entry.file_type().map_err(failed)?.is_dir() {
            true => fs::remove_dir_all(entry.path()),
            false => fs::remove_file(entry.path()),
        };
        removed.map_err(failed)?;
    }
    wt.bytes(["read-tree", "--reset", "-u", &tree])?;
    Ok(())
}

/// The paths of the checkout `wt` whose attributes name a `filter=` driver: its program lives
/// in config, never in the tree, so a fresh clone here (no config) writes the blob as it is,
/// and whether CI's clone runs a driver is not something the tree can say.
pub(crate) fn filtered(wt: &Git) -> Result<Vec<Vec<u8>>> {
    let list = wt.bytes(["ls-files", "-z"])?;
    let out = wt.bytes_with_input(
        ["check-attr", "--cached", "-z", "--stdin", "filter"],
        Some(&list),
    )?;
    // NUL-separated triples: path, attribute, value.
    let fields: Vec<&[u8]> = out.split(|b| *b == 0).collect();
    Ok(fields
        .chunks_exact(3)
        .filter(|t| !matches!(t[2], b"unspecified" | b"unset" | b"set"))
        .map(|t| t[0].to_vec())
        .collect())
}

/// The paths the patch leaves in place (added, changed, not deleted) that the manifest does
/// not name: every such file needs a line. A submodule's gitlink needs none (a sha256sum line
/// cannot hold a commit id; the tree id binds it), nor does a deletion (checked gone).
pub(crate) fn unnamed(
    changed: &[(u8, Vec<u8>)],
    links: &BTreeMap<Vec<u8>, String>,
    manifest: &manifests::Manifest,
) -> Vec<Vec<u8>> {
    let named: HashSet<&[u8]> = manifest.iter().map(|e| e.path.as_slice()).collect();
    changed
        .iter()
        .filter(|(status, path)| {
            *status != b'D' && !links.contains_key(path) && !named.contains(path.as_slice())
        })
        .map(|(_, path)| path.clone())
        .collect()
}

/// `git diff --name-status -z` output as (status letter, path) pairs.
pub(crate) fn parse_name_status(out: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let Some(status) = fields.next() {
        let Some(path) = fields.next() else { break };
        changes.push((status[0], path.to_vec()));
    }
    changes
}

/// The paths the index of `repo` records as submodules (gitlinks, mode 160000), each with the
/// commit id it records.
pub(crate) fn gitlinks(repo: &Git) -> Result<BTreeMap<Vec<u8>, String>> {
    let list = repo.bytes(["ls-files", "--stage", "-z"])?;
    Ok(list
        .split(|b| *b == 0)
        .filter_map(|e| e.strip_prefix(b"160000 "))
        .filter_map(|e| {
            let tab = e.iter().position(|b| *b == b'\t')?;
            let id = e[..tab].split(|b| *b == b' ').next()?;
            Some((
                e[tab + 1..].to_vec(),
                String::from_utf8_lossy(id).into_owned(),
            ))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_pairs_survive_odd_names() {
        let out = b"M\0a b.txt\0D\0dir/new\nline\0A\0x\\y\0";
        let got = parse_name_status(out);
        assert_eq!(
            got,
            vec![
                (b'M', b"a b.txt".to_vec()),
                (b'D', b"dir/new\nline".to_vec()),
                (b'A', b"x\\y".to_vec())
            ]
        );
    }
}
