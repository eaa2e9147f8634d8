//! Where a candidate's base stands against the head it is gated for.
//!
//! Drift (`base..head`) answers "what landed on the head since the base" only when the base is
//! in the head's history. A base on a side branch makes a tree that is not the head plus the
//! candidate at all (the patch may not even apply to the head), and `base..head` alone would
//! read "no drift": so that case is found first, and both sides are named.

use std::process::Stdio;

use crate::git::{first_line, Commit, Git, GitError};

/// The base is not an ancestor of the head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffHead {
    /// Commits in `head..base` (the base's side, not in the head) touching candidate paths,
    /// newest first.
    pub base_side: Vec<Commit>,
    /// How many commits `head..base` holds.
    pub base_side_count: usize,
}

/// `None` when `base` is in `head`'s history; otherwise what is on the base's side. (The
/// head's side, `base..head`, is drift's to name.)
pub(crate) fn off_head(
    repo: &Git,
    base: &str,
    head: &str,
    paths: &[Vec<u8>],
) -> Result<Option<OffHead>, GitError> {
    if is_ancestor(repo, base, head)? {
        return Ok(None);
    }
    Ok(Some(OffHead {
        base_side: repo.commits_touching(head, base, paths)?,
        base_side_count: repo.count_commits(head, base)?,
    }))
}

/// `git merge-base --is-ancestor`: exit 0 yes, 1 no, anything else git's error.
fn is_ancestor(repo: &Git, a: &str, b: &str) -> Result<bool, GitError> {
    let out = repo
        .command(["merge-base", "--is-ancestor", a, b])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(GitError::Spawn)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(GitError::Failed {
            command: "merge-base --is-ancestor".into(),
            message: first_line(&out.stderr),
        }),
    }
}
