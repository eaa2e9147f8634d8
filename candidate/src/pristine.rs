//! Proof that a checkout is exactly the tree under review, and its repair when it is not.
//!
//! A mutant is judged against the tree under review plus one swapped string. If an earlier
//! suite rewrote a golden file, deleted a fixture or left a new test module behind, the next
//! mutant (or control) is judged against some other tree, and its verdict describes that other
//! tree. So before each mutant the checkout is compared with the tree id under review: every
//! tracked file (content, mode, links), and every untracked file git does not ignore.
//!
//! The comparison uses an index of our own, kept outside the checkout (a suite can rewrite the
//! checkout's `.git/index`, or stage, stash or commit there; none of that moves a tree id or
//! our private index), filled once from the tree and refreshed with git's stat cache, so a
//! check on an unchanged tree of thousands of files costs a few milliseconds. Ignore rules are
//! the tree's own `.gitignore` files only: `.git/info/exclude` and the user's global excludes
//! are left out, and a `.gitignore` that is not in the tree (one a suite wrote to hide its own
//! files) is itself a difference.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::git::{Git, GitError};

/// How a checkout differs from the tree under review.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Differences {
    /// Tracked paths whose content, mode or kind changed, or that are gone.
    pub changed: Vec<String>,
    /// Files that are not in the tree and not ignored by it (or a `.gitignore` that is not in
    /// the tree, which would hide others).
    pub added: Vec<String>,
}

impl Differences {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty()
    }

    /// `2 changed (golden.txt, ...), 1 added (new.txt)`: short enough for a table's note.
    pub fn describe(&self) -> String {
        let list = |paths: &[String]| {
            let shown: Vec<String> = paths
                .iter()
                .take(3)
                .map(|p| report::escape::text(p).into_owned())
                .collect();
            let more = paths.len().saturating_sub(3);
            match more {
                0 => shown.join(", "),
                n => format!("{}, and {n} more", shown.join(", ")),
            }
        };
        let mut parts = Vec::new();
        if !self.changed.is_empty() {
            parts.push(format!(
                "{} changed ({})",
                self.changed.len(),
                list(&self.changed)
            ));
        }
        if !self.added.is_empty() {
            parts.push(format!(
                "{} added ({})",
                self.added.len(),
                list(&self.added)
            ));
        }
        parts.join(", ")
    }
}

/// A checkout and the tree it must hold.
#[derive(Debug)]
pub struct Pristine {
    /// The checkout, with git pointed at our private index.
    git: Git,
    index: PathBuf,
    tree: String,
}

impl Pristine {
    /// The tree under review for `checkout` is `tree`; `index` is a file of ours outside the
    /// checkout (it is created, and removed with the value).
    pub fn for_tree(checkout: &Path, tree: &str, index: PathBuf) -> Result<Pristine, GitError> {
        let p = Pristine {
            git: Git::at(checkout).with_index(&index),
            index,
            tree: tree.to_string(),
        };
        p.git.bytes(["read-tree", "--end-of-options", tree])?;
        p.refresh();
        Ok(p)
    }

    /// The tree under review is what `checkout` holds now: its HEAD with every change to
    /// tracked files and every untracked file the tree's own `.gitignore` files do not ignore
    /// (a working copy made from DIR's uncommitted state).
    pub fn of_checkout(checkout: &Path, index: PathBuf) -> Result<Pristine, GitError> {
        let git = Git::at(checkout).with_index(&index);
        git.bytes(["read-tree", "HEAD"])?;
        // Tracked files changed or gone, and untracked ones the tree's own `.gitignore` files
        // do not ignore (no info/exclude, no global excludes: the rules the check uses), are
        // put into our index by name, so what is recorded is exactly what the check expects.
        let mut input = Vec::new();
        for list in [
            git.bytes(["diff-files", "--name-only", "-z"])?,
            git.bytes([
                "ls-files",
                "--others",
                "--exclude-per-directory=.gitignore",
                "-z",
            ])?,
        ] {
            for p in list.split(|b| *b == 0).filter(|p| !p.is_empty()) {
                input.extend_from_slice(p);
                input.push(0);
            }
        }
        if !input.is_empty() {
            git.bytes_with_input(
                ["update-index", "--add", "--remove", "-z", "--stdin"],
                Some(&input),
            )?;
        }
        let tree = git.text(["write-tree"])?;
        let p = Pristine { git, index, tree };
        p.refresh();
        Ok(p)
    }

    /// Takes what a `[worktree]` setup or link left that git does not ignore (a marker file,
    /// a link to a folder the user's `.gitignore` names with a trailing slash) as part of what
    /// the checkout must hold from now on, so a suite that changes it is caught like any other
    /// change; tracked files it changed are put back. Returns what it found (empty: nothing).
    pub fn settle_setup(&self) -> Result<Differences, RestoreError> {
        let found = self.differences().map_err(RestoreError::Git)?;
        if !found.changed.is_empty() {
            self.put_back(&Differences {
                changed: found.changed.clone(),
                added: Vec::new(),
            })?;
        }
        if !found.added.is_empty() {
            let mut input = Vec::new();
            for rel in &found.added {
                input.extend_from_slice(rel.trim_end_matches('/').as_bytes());
                input.push(0);
            }
            self.git
                .bytes_with_input(["update-index", "--add", "-z", "--stdin"], Some(&input))
                .map_err(RestoreError::Git)?;
        }
        let left = self.differences().map_err(RestoreError::Git)?;
        if left.is_empty() {
            Ok(found)
        } else {
            Err(RestoreError::Left(left.describe()))
        }
    }

    /// The tree id the checkout must hold.
    pub fn tree(&self) -> &str {
        &self.tree
    }

    /// Re-reads changed files' stat data into our index, so a file only touched (same bytes)
    /// is not a difference and the next check is fast. Its exit code only says whether some
    /// file needed it, so it is not an error.
    fn refresh(&self) {
        let _ = self
            .git
            .bytes(["update-index", "-q", "--unmerged", "--refresh"]);
    }

    /// How the checkout differs from the tree now (empty: it is the tree under review).
    pub fn differences(&self) -> Result<Differences, GitError> {
        self.refresh();
        let changed = split(&self.git.bytes(["diff-files", "--name-only", "-z"])?);
        let mut added = split(&self.git.bytes([
            "ls-files",
            "--others",
            "--exclude-per-directory=.gitignore",
            "-z",
        ])?);
        // Ignored entries, folders not entered (a build folder of 100,000 files costs nothing):
        // an ignored `.gitignore` can only be one the tree does not have.
        let ignored = split(&self.git.bytes([
            "ls-files",
            "--others",
            "--ignored",
            "--directory",
            "--exclude-per-directory=.gitignore",
            "-z",
        ])?);
        added.extend(
            ignored
                .into_iter()
                .filter(|p| p == ".gitignore" || p.ends_with("/.gitignore")),
        );
        let mut changed: Vec<String> = changed;
        changed.sort();
        changed.dedup();
        added.sort();
        added.dedup();
        Ok(Differences { changed, added })
    }

    /// Puts the checkout back to the tree: files that are not in it removed (never through a
    /// link), tracked files written again from the tree. Then proves it, returning what was
    /// different; `Err` when the checkout could not be made whole (the caller makes a new one).
    pub fn restore(&self, found: &Differences) -> Result<(), RestoreError> {
        // A removed `.gitignore` of the suite's own uncovers the files it hid, and a folder
        // put back may uncover more: a few rounds, each proved by a fresh comparison.
        let mut found = found.clone();
        for _ in 0..4 {
            self.put_back(&found)?;
            found = self.differences().map_err(RestoreError::Git)?;
            if found.is_empty() {
                return Ok(());
            }
        }
        Err(RestoreError::Left(found.describe()))
    }

    fn put_back(&self, found: &Differences) -> Result<(), RestoreError> {
        let root = self.git.dir().to_path_buf();
        for rel in &found.added {
            let rel = rel.trim_end_matches('/');
            let Some(path) = inside(&root, rel) else {
                continue;
            };
            report::scratch::remove_all(&path).map_err(|e| RestoreError::Io(rel.into(), e))?;
        }
        if !found.changed.is_empty() {
            // A tracked path whose parent a suite replaced with a link or a file: that parent
            // goes first (checkout-index writes through no link, but would stop at the file).
            for rel in &found.changed {
                clear_way(&root, rel).map_err(|e| RestoreError::Io(rel.clone(), e))?;
            }
            let mut input = Vec::new();
            for rel in &found.changed {
                input.extend_from_slice(rel.as_bytes());
                input.push(0);
            }
            self.git
                .bytes_with_input(["checkout-index", "--force", "-z", "--stdin"], Some(&input))
                .map_err(RestoreError::Git)?;
        }
        Ok(())
    }
}

impl Drop for Pristine {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.index);
    }
}

/// Why a checkout could not be put back to the tree under review.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("{0}")]
    Git(GitError),
    #[error("{0}: {1}")]
    Io(String, io::Error),
    #[error("still different after the restore: {0}")]
    Left(String),
}

fn split(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// `root/rel` when `rel` is plain (no `..`, not absolute) and no folder on the way is a link.
fn inside(root: &Path, rel: &str) -> Option<PathBuf> {
    let mut at = root.to_path_buf();
    let parts: Vec<Component> = Path::new(OsStr::from_bytes(rel.as_bytes()))
        .components()
        .collect();
    for (i, part) in parts.iter().enumerate() {
        let Component::Normal(name) = part else {
            return None;
        };
        at.push(name);
        if i + 1 < parts.len() && !fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            return None;
        }
    }
    Some(at)
}

/// Removes whatever stands on the way to `rel` that is not a real folder (a link or a file a
/// suite put where a tracked folder was), so git can write `rel` again inside the checkout.
fn clear_way(root: &Path, rel: &str) -> io::Result<()> {
    let mut at = root.to_path_buf();
    let parts: Vec<Component> = Path::new(OsStr::from_bytes(rel.as_bytes()))
        .components()
        .collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        let Component::Normal(name) = part else {
            return Ok(());
        };
        at.push(name);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&at)?;
                return Ok(());
            }
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}
