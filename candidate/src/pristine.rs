//! Proof that a checkout is exactly the tree under review, and its repair when it is not.
//!
//! A mutant is judged against the tree under review plus one swapped string. If an earlier
//! suite rewrote a golden file, deleted a fixture or left a new test module behind, the next
//! mutant (or control) is judged against some other tree, and its verdict describes that other
//! tree. So before each mutant the checkout is compared with the tree id under review: every
//! tracked file (content, mode, links), and every untracked file git does not ignore.
//!
//! The comparison reads the checkout through a git directory and an index of our own, kept
//! outside the checkout. A suite can rewrite the checkout's `.git/index`, or stage, stash or
//! commit there, and it can write the checkout's `.git/config` (`core.fileMode false` hides a
//! dropped exec bit, `core.worktree` points git elsewhere, `core.ignoreCase`, `core.symlinks`,
//! `core.checkStat`) or its `info/attributes` and `info/exclude`: git 2.39 has no switch to
//! ignore those, so our git directory is the only one git reads. It borrows the checkout's object
//! stores (alternates) and takes the checkout's filesystem facts (`core.fileMode`,
//! `core.symlinks`, `core.ignoreCase`, `core.precomposeUnicode`, as git probed them when the
//! checkout was made, before any suite ran). The index is filled once from the tree and
//! refreshed with git's stat cache, so a check on an unchanged tree of thousands of files costs
//! a few milliseconds. Ignore rules are the tree's own `.gitignore` files only (no exclude
//! file, no global excludes), and a `.gitignore` that is not in the tree (one a suite wrote to
//! hide its own files) is itself a difference.
//!
//! Every file a repair writes gets its time from [`crate::fresh::stamp`], like a mutant's swap
//! and restore: a file put back in the same second a suite rewrote it must not look like the
//! suite's content to Python's bytecode cache or to make.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
                .map(|p| files::escape::text(p).into_owned())
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
    /// The checkout, with git pointed at our private git directory and index.
    git: Git,
    index: PathBuf,
    git_dir: PathBuf,
    tree: String,
}

/// The filesystem facts git probed when the checkout was made, carried into our git directory.
const PROBED: &[&str] = &[
    "core.filemode",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
];

/// Our git directory for `checkout`, beside `index` (outside the checkout), made now while
/// the checkout is as we made it: `checkout` seen through it with `index`.
fn private_git(checkout: &Path, index: &Path) -> Result<(Git, PathBuf), GitError> {
    let own = Git::at(checkout);
    let mut name = index.as_os_str().to_owned();
    name.push(".gitdir");
    let git_dir = PathBuf::from(name);
    let _ = fs::remove_dir_all(&git_dir);
    let format = own.text(["rev-parse", "--show-object-format"])?;
    let objects = own.text([
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "objects",
    ])?;
    own.bytes([
        std::ffi::OsStr::new("init"),
        std::ffi::OsStr::new("--bare"),
        std::ffi::OsStr::new("--quiet"),
        std::ffi::OsStr::new("--template="),
        std::ffi::OsStr::new(&format!("--object-format={format}")),
        git_dir.as_os_str(),
    ])?;
    let io = |e: io::Error| GitError::Failed {
        command: "init".into(),
        message: format!("{}: {e}", git_dir.display()),
    };
    // Every store the checkout reads objects from, named directly: a suite that empties the
    // checkout's own alternates file cannot hide the base's objects from us.
    let objects = PathBuf::from(objects);
    let mut stores = vec![objects.clone()];
    if let Ok(text) = fs::read_to_string(objects.join("info/alternates")) {
        for line in text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            stores.push(objects.join(line));
        }
    }
    let mut alternates = String::new();
    for store in &stores {
        alternates.push_str(&store.to_string_lossy());
        alternates.push('\n');
    }
    fs::create_dir_all(git_dir.join("objects/info")).map_err(io)?;
    fs::write(git_dir.join("objects/info/alternates"), alternates).map_err(io)?;
    let mut config = String::from("[core]\n\tbare = false\n");
    for key in PROBED {
        if let Ok(value) = own.text(["config", "--bool", "--get", key]) {
            let name = key.trim_start_matches("core.");
            config.push_str(&format!("\t{name} = {value}\n"));
        }
    }
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(git_dir.join("config"))
        .map_err(io)?;
    io::Write::write_all(&mut file, config.as_bytes()).map_err(io)?;
    let git = Git::at(checkout).with_git_dir(&git_dir).with_index(index);
    Ok((git, git_dir))
}

impl Pristine {
    /// The tree under review for `checkout` is `tree`; `index` is a file of ours outside the
    /// checkout (it is created, and removed with the value, with our git directory beside it).
    pub fn for_tree(checkout: &Path, tree: &str, index: PathBuf) -> Result<Pristine, GitError> {
        let (git, git_dir) = private_git(checkout, &index)?;
        let p = Pristine {
            git,
            index,
            git_dir,
            tree: tree.to_string(),
        };
        p.git.bytes(["read-tree", "--end-of-options", tree])?;
        p.refresh();
        Ok(p)
    }

    /// The tree under review is what `checkout` holds now: its HEAD with every change to
    /// tracked files and every untracked file the tree's own `.gitignore` files do not ignore
    /// (a checkout made from DIR's uncommitted state).
    pub fn of_checkout(checkout: &Path, index: PathBuf) -> Result<Pristine, GitError> {
        let head = Git::at(checkout).commit_id("HEAD")?;
        let (git, git_dir) = private_git(checkout, &index)?;
        git.bytes(["read-tree", "--end-of-options", &head])?;
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
        let p = Pristine {
            git,
            index,
            git_dir,
            tree,
        };
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

    /// Every file of the tree under review with its blob id (links and submodules included, as
    /// their entries), by path: what an incremental run compares a suite's inputs by.
    pub fn files(&self) -> Result<Vec<(String, String)>, GitError> {
        let out = self.git.bytes([
            "ls-tree",
            "-r",
            "-z",
            "--full-tree",
            "--end-of-options",
            &self.tree,
        ])?;
        Ok(out
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let tab = entry.iter().position(|b| *b == b'\t')?;
                let meta = std::str::from_utf8(&entry[..tab]).ok()?;
                let id = meta.split(' ').nth(2)?.to_string();
                Some((String::from_utf8_lossy(&entry[tab + 1..]).into_owned(), id))
            })
            .collect())
    }

    /// The id of the tree under review with `path` (relative, `/`-separated) left out: the same
    /// id whatever `path` holds, so two trees that differ only there have the same one. Built
    /// in an index of its own beside ours; only objects are written.
    pub fn tree_without(&self, path: &str) -> Result<String, GitError> {
        let index = self.index.with_extension("without");
        let git = self.git.clone().with_index(&index);
        let made = (|| {
            git.bytes(["read-tree", "--end-of-options", &self.tree])?;
            git.bytes(["update-index", "--force-remove", "--", path])?;
            git.text(["write-tree"])
        })();
        let _ = fs::remove_file(&index);
        made
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
        // One walk, with no ignore rules, that does not enter untracked folders (a build
        // folder of 100,000 files costs nothing); then the tree's own rules decide which of
        // those few entries are ignored. A `.gitignore` that is not in the tree is always a
        // difference, ignored or not: it would hide others.
        let untracked = split(
            &self
                .git
                .bytes(["ls-files", "--others", "--directory", "-z"])?,
        );
        let ignored = self.ignored(&untracked)?;
        let mut added: Vec<String> = untracked
            .into_iter()
            .filter(|p| {
                p == ".gitignore" || p.ends_with("/.gitignore") || !ignored.contains(p.as_str())
            })
            .collect();
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
            runner::scratch::remove_all(&path).map_err(|e| RestoreError::Io(rel.into(), e))?;
        }
        if !found.changed.is_empty() {
            // A tracked path whose parent a suite replaced with a link or a file: that parent
            // goes first (checkout-index writes through no link, but would stop at the file).
            for rel in &found.changed {
                clear_way(&root, rel).map_err(|e| RestoreError::Io(rel.clone(), e))?;
            }
            let mut input = Vec::new();
            let mut before = Vec::new();
            for rel in &found.changed {
                input.extend_from_slice(rel.as_bytes());
                input.push(0);
                let meta = inside(&root, rel).and_then(|p| fs::symlink_metadata(p).ok());
                before.push(meta.filter(fs::Metadata::is_file));
            }
            self.git
                .bytes_with_input(["checkout-index", "--force", "-z", "--stdin"], Some(&input))
                .map_err(RestoreError::Git)?;
            // git gave them the time of the write: the suite's own content may have had that
            // second (see the module doc).
            for (meta, rel) in before.iter().zip(&found.changed) {
                if let Some(path) = inside(&root, rel) {
                    crate::fresh::stamp_written(&path, meta.as_ref())
                        .map_err(|e| RestoreError::Io(rel.clone(), e))?;
                }
            }
        }
        Ok(())
    }
}

impl Drop for Pristine {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.index);
        let _ = fs::remove_dir_all(&self.git_dir);
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

impl Pristine {
    /// Which of `paths` the tree's own `.gitignore` files ignore (no info/exclude, no global
    /// excludes file).
    fn ignored(&self, paths: &[String]) -> Result<std::collections::BTreeSet<String>, GitError> {
        if paths.is_empty() {
            return Ok(Default::default());
        }
        // A folder is asked for without its slash: git then reads only the `.gitignore` files
        // of the folders above it, never one the folder holds itself (a suite's own
        // `*` there would otherwise hide the whole folder).
        let mut input = Vec::new();
        for p in paths {
            input.extend_from_slice(p.trim_end_matches('/').as_bytes());
            input.push(0);
        }
        // check-ignore exits 1 when it found nothing ignored: that is an answer, not a failure.
        let out = self.git.bytes_with_input(
            [
                "-c",
                "core.excludesFile=/dev/null",
                "check-ignore",
                "--stdin",
                "-z",
            ],
            Some(&input),
        );
        match out {
            Ok(bytes) => {
                let said: std::collections::BTreeSet<String> = split(&bytes).into_iter().collect();
                Ok(paths
                    .iter()
                    .filter(|p| said.contains(p.trim_end_matches('/')))
                    .cloned()
                    .collect())
            }
            Err(GitError::Failed { message, .. }) if message == "no message" => {
                Ok(Default::default())
            }
            Err(e) => Err(e),
        }
    }
}

fn split(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// `root/rel` when `rel` is plain (no `..`, not absolute) and no folder on the way is a link.
fn inside(root: &Path, rel: &str) -> Option<PathBuf> {
    files::walk::below(root, Path::new(rel))
        .ok()
        .map(|r| r.path)
}

/// Removes whatever stands on the way to `rel` that is not a real folder (a link or a file a
/// suite put where a tracked folder was), so git can write `rel` again inside the checkout.
fn clear_way(root: &Path, rel: &str) -> io::Result<()> {
    use files::walk::Blocked;
    match files::walk::below(root, Path::new(rel)) {
        Err(Blocked::Link(at) | Blocked::NotFolder(at)) => fs::remove_file(&at),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    /// A committed checkout with `src/a.txt`, `run.sh` (executable) and an ignored `target/`.
    fn checkout() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let co = tmp.path().join("co");
        fs::create_dir_all(co.join("src")).unwrap();
        fs::write(co.join("src/a.txt"), "a\n").unwrap();
        fs::write(co.join("run.sh"), "echo\n").unwrap();
        fs::write(co.join(".gitignore"), "target/\n").unwrap();
        git(&co, &["init", "-q"]);
        git(&co, &["add", "-A"]);
        git(&co, &["update-index", "--chmod=+x", "run.sh"]);
        git(&co, &["commit", "-qm", "x"]);
        git(&co, &["checkout", "-q", "--", "."]);
        (tmp, co)
    }

    #[test]
    fn only_a_change_of_content_mode_or_kind_is_a_difference_and_each_is_put_back() {
        let (tmp, co) = checkout();
        let p = Pristine::of_checkout(&co, tmp.path().join("index")).unwrap();
        assert!(p.differences().unwrap().is_empty());
        // Touched with the same bytes, and build output in an ignored folder: the same tree.
        fs::write(co.join("src/a.txt"), "a\n").unwrap();
        fs::create_dir_all(co.join("target/debug")).unwrap();
        fs::write(co.join("target/debug/out"), "o").unwrap();
        assert!(p.differences().unwrap().is_empty());

        // A folder replaced by a link to outside, a mode dropped, a new file.
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("a.txt"), "theirs\n").unwrap();
        fs::remove_dir_all(co.join("src")).unwrap();
        std::os::unix::fs::symlink(&outside, co.join("src")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(co.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(co.join("new.txt"), "n").unwrap();
        let found = p.differences().unwrap();
        assert_eq!(found.changed, ["run.sh", "src/a.txt"]);
        assert_eq!(found.added, ["new.txt", "src"]);
        p.restore(&found).unwrap();
        assert!(p.differences().unwrap().is_empty());
        assert!(fs::symlink_metadata(co.join("src")).unwrap().is_dir());
        assert_eq!(fs::read(co.join("src/a.txt")).unwrap(), b"a\n");
        assert_eq!(
            fs::read(outside.join("a.txt")).unwrap(),
            b"theirs\n",
            "nothing written through the link"
        );
        assert!(co.join("target/debug/out").exists(), "ignored output kept");
    }

    #[test]
    fn nothing_in_the_checkouts_own_git_dir_can_hide_a_change() {
        let (tmp, co) = checkout();
        let tree = {
            let out = Command::new("git")
                .current_dir(&co)
                .args(["write-tree"])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        let p = Pristine::for_tree(&co, &tree, tmp.path().join("index")).unwrap();
        fs::write(co.join("src/a.txt"), "changed\n").unwrap();
        // Staged in the checkout's own index; a new file hidden by info/exclude; the exec bit
        // dropped under core.fileMode=false; git sent to another work tree; attributes that
        // would call every file binary and unchanged.
        git(&co, &["add", "src/a.txt"]);
        fs::create_dir_all(co.join(".git/info")).unwrap();
        fs::write(co.join(".git/info/exclude"), "hidden.txt\n").unwrap();
        fs::write(co.join(".git/info/attributes"), "* -text -diff\n").unwrap();
        fs::write(co.join("hidden.txt"), "h").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(co.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
        let decoy = tmp.path().join("decoy");
        fs::create_dir_all(&decoy).unwrap();
        for (k, v) in [
            ("core.fileMode", "false"),
            ("core.trustctime", "false"),
            ("core.checkStat", "minimal"),
            ("core.ignoreCase", "true"),
            ("core.symlinks", "false"),
            ("core.worktree", decoy.to_str().unwrap()),
        ] {
            git(&co, &["config", k, v]);
        }
        let found = p.differences().unwrap();
        assert_eq!(found.changed, ["run.sh", "src/a.txt"]);
        assert_eq!(found.added, ["hidden.txt"]);
        p.restore(&found).unwrap();
        assert!(p.differences().unwrap().is_empty());
        assert_eq!(fs::read(co.join("src/a.txt")).unwrap(), b"a\n");
        assert!(!co.join("hidden.txt").exists());
        let mode = fs::metadata(co.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the exec bit is back");
    }
}
