//! The checkouts gatekit makes for itself: each one a repository of its own, and the clean-up
//! of ones a killed run left.
//!
//! A linked `git worktree` would be cheaper still, but it shares the user's `.git`: a suite
//! that runs `git config`, `git tag`, `git stash`, writes a hook or adds a worktree would change
//! the user's repository. So every checkout is a new repository (`git init`, no templates, so no
//! hooks) that borrows the user's object store through `objects/info/alternates` (nothing is
//! copied; objects it writes, like the applied patch's blobs, stay in its own store), with the
//! user's branches, tags and remote refs copied in (so `git describe` and version-from-tag build
//! scripts work as in the user's checkout), then detached at the one commit. Nothing a suite
//! does there can reach the user's config, refs, tags, stash, hooks or worktree list.
//!
//! Each checkout records that it is gatekit's own in a marker inside its git dir
//! (`.git/gatekit-owner`): `run PID START` for one that dies with its run, `kept ID` for one
//! left for the reviewer. Clean-up trusts only that record (never a name pattern alone): a
//! run checkout whose process is gone is removed at the next start of gate or mutants; a kept
//! one only by `gate clean`, which finds it through the registry in gatekit's state folder.
//!
//! A checkout to be kept is registered while its run still works in it (`gate run --keep`
//! runs its suites there), so until that run ends its marker says so on a second line, `live
//! PID START`, and `gate clean` leaves it alone while that process (the same pid with the same
//! start time: a reused pid is another process) is running. A run killed before it could
//! drop the line leaves a dead owner, and its checkout is cleaned like any kept one.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use runner::scratch::{self, RunId};

use crate::git::{Git, GitError};

/// Name prefix of run checkouts in the temp dir: `gatekit-repo-PID.START-N`.
const RUN_PREFIX: &str = "gatekit-repo-";
/// The marker file, inside the checkout's `.git`.
const MARKER: &str = "gatekit-owner";

/// A checkout of one commit in a repository of its own.
#[derive(Debug)]
pub struct Checkout {
    path: PathBuf,
    keep: bool,
    /// The folder existed (empty) before we made the checkout in it: removing the checkout
    /// empties it but leaves the folder, which is the user's.
    preexisting: bool,
    removed: bool,
}

fn failed(command: &str, message: impl std::fmt::Display) -> GitError {
    GitError::Failed {
        command: command.into(),
        message: message.to_string(),
    }
}

impl Checkout {
    /// Makes a checkout of `commit` for this run, in the temp folder; removed on drop unless
    /// [`Checkout::keep`] is set.
    pub fn for_run(repo: &Git, commit: &str) -> Result<Checkout, GitError> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let me = RunId::current();
        let name = format!(
            "{RUN_PREFIX}{}-{}",
            me.tag(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        fs::create_dir(&path).map_err(|e| failed("init", format!("{}: {e}", path.display())))?;
        Checkout::create(repo, commit, path, false, false)
    }

    /// Makes a checkout of `commit` at `path`, which must not exist yet or be an empty folder;
    /// kept after the run.
    pub(crate) fn at_path(repo: &Git, commit: &str, path: &Path) -> Result<Checkout, GitError> {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        match fs::symlink_metadata(&abs) {
            Err(_) => {
                fs::create_dir_all(&abs)
                    .map_err(|e| failed("init", format!("{}: {e}", abs.display())))?;
                Checkout::create(repo, commit, abs, true, false)
            }
            Ok(meta) if meta.file_type().is_dir() && is_empty_dir(&abs) => {
                Checkout::create(repo, commit, abs, true, true)
            }
            Ok(_) => Err(failed(
                "init",
                format!(
                    "{} already exists and is not an empty folder",
                    abs.display()
                ),
            )),
        }
    }

    /// Makes a checkout of `commit` in a new folder of the temp dir, kept after the run.
    pub(crate) fn kept_in_temp(repo: &Git, commit: &str) -> Result<Checkout, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("gatekit-apply-")
            .tempdir()
            .map_err(|e| failed("init", format!("creating a temp folder: {e}")))?;
        Checkout::create(repo, commit, dir.keep(), true, false)
    }

    fn create(
        repo: &Git,
        commit: &str,
        path: PathBuf,
        keep: bool,
        preexisting: bool,
    ) -> Result<Checkout, GitError> {
        // From here on, an error drops the handle, which removes what was made.
        let mut tree = Checkout {
            path,
            keep: false,
            preexisting,
            removed: false,
        };
        tree.populate(repo, commit)?;
        tree.keep(keep);
        Ok(tree)
    }

    fn populate(&mut self, repo: &Git, commit: &str) -> Result<(), GitError> {
        let objects = PathBuf::from(repo.text([
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "objects",
        ])?);
        let common = repo.common_dir()?;
        // The checkout borrows the user's objects, so it must name them the same way (sha1 or
        // sha256) whatever a default would say.
        let format = repo.text(["rev-parse", "--show-object-format"])?;
        let own = Git::at(&self.path);
        // `--template=` with no folder: no sample hooks, nothing copied from the user's templates.
        own.bytes([
            "-c",
            "init.defaultBranch=gatekit",
            "init",
            "--quiet",
            "--template=",
            &format!("--object-format={format}"),
        ])?;
        let git_dir = self.path.join(".git");
        // An empty hooks folder, as a fresh clone has, for tools that install hooks into it.
        let _ = fs::create_dir(git_dir.join("hooks"));
        self.mark(
            &git_dir,
            &format!("run {} {}\n", RunId::current().pid, RunId::current().start),
        )
        .map_err(|e| failed("init", format!("writing the owner marker: {e}")))?;
        let mut alternates = objects.as_os_str().as_bytes().to_vec();
        alternates.push(b'\n');
        fs::write(git_dir.join("objects/info/alternates"), alternates)
            .map_err(|e| failed("init", format!("linking the object store: {e}")))?;
        // A shallow repository's history ends where its `shallow` file says; without it, `git
        // log` in the checkout would fail at the boundary.
        if let Ok(shallow) = fs::read(common.join("shallow")) {
            let _ = fs::write(git_dir.join("shallow"), shallow);
        }
        own.bytes(["config", "gc.auto", "0"])?;
        copy_refs(repo, &own)?;
        own.bytes(["checkout", "--quiet", "--detach", commit, "--"])?;
        Ok(())
    }

    /// Writes the owner marker; `Ok` only when it is in place.
    fn mark(&self, git_dir: &Path, text: &str) -> io::Result<()> {
        fs::write(git_dir.join(MARKER), text)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Git commands inside the checkout.
    pub fn git(&self) -> Git {
        Git::at(&self.path)
    }

    /// Whether it will be left in place.
    pub fn kept(&self) -> bool {
        self.keep
    }

    /// Leave the checkout in place when this handle goes (recorded in its marker and in the
    /// registry `gate clean` reads), or not.
    pub fn keep(&mut self, keep: bool) {
        if keep == self.keep {
            return;
        }
        let git_dir = self.path.join(".git");
        if keep {
            let id = kept_id(&self.path);
            let me = RunId::current();
            let text = format!("kept {id}\nlive {} {}\n", me.pid, me.start);
            if self.mark(&git_dir, &text).is_ok() {
                let _ = register_kept(&id, &self.path, self.preexisting);
            }
        } else {
            let me = RunId::current();
            let _ = self.mark(&git_dir, &format!("run {} {}\n", me.pid, me.start));
            let _ = unregister_kept(&kept_id(&self.path));
        }
        self.keep = keep;
    }

    /// Removes the checkout now (a no-op when kept); `Ok` only when it is really gone.
    pub fn remove(mut self) -> Result<(), GitError> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> Result<(), GitError> {
        if self.keep || self.removed {
            return Ok(());
        }
        self.removed = true;
        let result = if self.preexisting {
            empty_folder(&self.path)
        } else {
            scratch::remove_all(&self.path)
        };
        result.map_err(|e| failed("clean", format!("removing {}: {e}", self.path.display())))
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if self.keep && !self.removed {
            // The run is done with it: from now on only `gate clean` decides.
            let id = kept_id(&self.path);
            let _ = self.mark(&self.path.join(".git"), &format!("kept {id}\n"));
        }
        let _ = self.remove_now();
    }
}

/// Copies the user's branches, tags and remote refs into `own` (one `update-ref --stdin`), so
/// tools that describe a checkout by its tags see what they would see in the user's clone.
fn copy_refs(repo: &Git, own: &Git) -> Result<(), GitError> {
    let list = repo.bytes([
        "for-each-ref",
        "--format=%(objectname) %(refname)",
        "refs/heads",
        "refs/tags",
        "refs/remotes",
    ])?;
    let mut input = Vec::with_capacity(list.len() + list.len() / 4);
    for line in list.split(|b| *b == b'\n') {
        let Some(space) = line.iter().position(|b| *b == b' ') else {
            continue;
        };
        let (sha, name) = (&line[..space], &line[space + 1..]);
        input.extend_from_slice(b"update ");
        input.extend_from_slice(name);
        input.push(b' ');
        input.extend_from_slice(sha);
        input.push(b'\n');
    }
    if !input.is_empty() {
        own.bytes_with_input(["update-ref", "--stdin"], Some(&input))?;
    }
    Ok(())
}

fn is_empty_dir(path: &Path) -> bool {
    fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// Removes everything inside `dir` but not `dir` itself.
fn empty_folder(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        scratch::remove_all(&entry?.path())?;
    }
    Ok(())
}

/// A kept checkout's id: its path made file-name-safe and unique enough for the registry.
fn kept_id(path: &Path) -> String {
    // The first 12 bytes of the digest, as 24 hex digits.
    manifests::Digest::of(path.as_os_str().as_bytes()).to_hex()[..24].to_string()
}

/// The registry of kept checkouts, one file per checkout naming its path.
fn registry() -> PathBuf {
    scratch::state_dir().join("kept")
}

fn register_kept(id: &str, path: &Path, preexisting: bool) -> io::Result<()> {
    let dir = registry();
    fs::create_dir_all(&dir)?;
    let mut text = path.as_os_str().as_bytes().to_vec();
    text.extend_from_slice(if preexisting {
        b"\0preexisting"
    } else {
        b"\0made"
    });
    files::atomic::write_bytes_atomic(&dir.join(id), &text)
}

fn unregister_kept(id: &str) -> io::Result<()> {
    match fs::remove_file(registry().join(id)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Whether `dir` is a real folder of this user whose `.git/gatekit-owner` says `expected`.
fn marker_says(dir: &Path, expected: &str) -> bool {
    marker_of(dir).is_some_and(|t| t == expected)
}

/// The text of `dir`'s owner marker, when `dir` is a real folder of this user with a real
/// `.git` folder holding a regular marker file (never read through a link).
fn marker_of(dir: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(dir).ok()?;
    if !scratch::is_my_folder(&meta) {
        return None;
    }
    let git_dir = dir.join(".git");
    if !fs::symlink_metadata(&git_dir).is_ok_and(|m| m.file_type().is_dir()) {
        return None;
    }
    let marker = git_dir.join(MARKER);
    if !fs::symlink_metadata(&marker).is_ok_and(|m| m.file_type().is_file()) {
        return None;
    }
    fs::read_to_string(marker).ok()
}

/// What a kept checkout's marker says of it: `None` when it is not the kept checkout `id`.
fn kept_state(dir: &Path, id: &str) -> Option<Kept> {
    let text = marker_of(dir)?;
    let rest = text.strip_prefix(&format!("kept {id}\n"))?;
    if rest.is_empty() {
        return Some(Kept::Done);
    }
    let owner = rest.strip_prefix("live ")?.strip_suffix('\n')?;
    let (pid, start) = owner.split_once(' ')?;
    Some(Kept::Live(RunId {
        pid: pid.parse().ok()?,
        start: start.parse().ok()?,
    }))
}

/// A kept checkout: its run is done with it, or the run keeping it may still work in it.
enum Kept {
    Done,
    Live(RunId),
}

/// Removes the run checkouts in the temp dir whose process is gone (a run killed before it
/// could clean up), trusting only their owner marker. Kept checkouts, the user's own folders and
/// anything else are never touched. Returns how many it removed.
pub fn clean_stale() -> usize {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let Some(owner) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(RUN_PREFIX))
            .and_then(|rest| rest.rsplit_once('-'))
            .and_then(|(tag, _)| tag.split_once('.'))
            .and_then(|(pid, start)| {
                Some(RunId {
                    pid: pid.parse().ok()?,
                    start: start.parse().ok()?,
                })
            })
        else {
            continue;
        };
        if owner == RunId::current() || owner.alive() {
            continue;
        }
        let path = entry.path();
        if !marker_says(&path, &format!("run {} {}\n", owner.pid, owner.start)) {
            continue;
        }
        if scratch::remove_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// What `gate clean` did with one kept checkout.
#[derive(Debug)]
pub struct CleanedKept {
    pub path: PathBuf,
    pub result: io::Result<Fate>,
}

/// What became of a kept checkout `gate clean` found in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Removed,
    /// No longer ours (moved, replaced or gone): left alone, and forgotten.
    NotOurs,
    /// The run keeping it is still running (this pid) and may be working in it: left alone.
    InUse(u32),
}

/// Removes every checkout kept with `--keep` or by `gate apply` that the registry names and
/// whose marker still says it is that kept checkout; forgets entries that are no longer ours.
pub fn clean_kept() -> Vec<CleanedKept> {
    let Ok(entries) = fs::read_dir(registry()) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for entry in entries.flatten() {
        let id = entry.file_name().to_string_lossy().into_owned();
        let Ok(text) = fs::read(entry.path()) else {
            continue;
        };
        let mut parts = text.splitn(2, |b| *b == 0);
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(
            parts.next().unwrap_or_default(),
        ));
        let preexisting = parts.next() == Some(b"preexisting");
        let state = (kept_id(&path) == id)
            .then(|| kept_state(&path, &id))
            .flatten();
        let result = match state {
            None => Ok(Fate::NotOurs),
            Some(Kept::Live(owner)) if owner == RunId::current() || owner.alive() => {
                Ok(Fate::InUse(owner.pid))
            }
            Some(_) => if preexisting {
                empty_folder(&path)
            } else {
                scratch::remove_all(&path)
            }
            .map(|()| Fate::Removed),
        };
        if matches!(result, Ok(Fate::Removed | Fate::NotOurs)) {
            let _ = fs::remove_file(entry.path());
        }
        done.push(CleanedKept { path, result });
    }
    done.sort_by(|a, b| a.path.cmp(&b.path));
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_ids_are_file_names_and_differ_by_path() {
        let a = kept_id(Path::new("/tmp/a"));
        assert_eq!(a.len(), 24);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, kept_id(Path::new("/tmp/b")));
    }

    #[test]
    fn a_folder_without_the_marker_is_never_ours() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join(".git")).unwrap();
        assert!(!marker_says(tmp.path(), "run 1 1\n"));
        fs::write(tmp.path().join(".git").join(MARKER), "run 1 2\n").unwrap();
        assert!(!marker_says(tmp.path(), "run 1 1\n"));
        assert!(marker_says(tmp.path(), "run 1 2\n"));
    }
}
