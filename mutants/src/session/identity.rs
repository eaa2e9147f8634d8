//! What identifies the run's input: the git tree id of a working copy's content and `--out` as
//! an absolute path git would print (a candidate's files are hashed as read, in `prepare`).
//!
//! A report names the one tree its mutants were judged against, so an `--only` rerun or a
//! merge can refuse rows of another tree.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use candidate::git::Git;

/// An absolute form of `path` that matches what git prints for the same folder, even before
/// the folder exists (its parent is canonicalized when the folder cannot be).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (
        abs.parent().and_then(|p| p.canonicalize().ok()),
        abs.file_name(),
    ) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => abs,
    }
}

/// The git tree id of a working copy's content as a run sees it: HEAD with every change and
/// every file git does not ignore, hashed through a throwaway index so the copy's own index
/// stays as it is.
pub(crate) fn tree_of(dir: &Path) -> Result<String> {
    let scratch = tempfile::tempdir().context("creating a scratch index folder")?;
    let index = scratch.path().join("index");
    let git = |args: &[&str]| -> Result<String> {
        let out = Git::at(dir)
            .command(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .context("running git")?;
        if !out.status.success() {
            bail!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // The copy's own index, copied, carries the stat cache: `add -A` then hashes only what
    // changed. Without one, the tree starts from HEAD.
    let own = Git::at(dir)
        .text(["rev-parse", "--git-path", "index"])
        .ok()
        .map(|p| dir.join(p.trim()));
    if !own.is_some_and(|p| fs::copy(p, &index).is_ok()) {
        git(&["read-tree", "HEAD"])?;
    }
    git(&["add", "-A"])?;
    git(&["write-tree"]).context("hashing the working copy's tree")
}
