//! Detached worktrees that gatekit makes for itself, and the clean-up of ones a killed run left.
//!
//! All work happens in a `git worktree` rather than the user's checkout or a copy of it: a
//! worktree shares the object store (so making one is a checkout, not a clone), starts from
//! exactly one commit, and leaves the user's working tree and index untouched. A worktree made
//! for a run is named `gatekit-run-<pid>-<n>`; when that pid is gone, the next start of any
//! gatekit tool on the repository removes it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::git::{Git, GitError};

/// Serialises this process's `git worktree add`/`remove`/`prune`: git's worktree bookkeeping
/// (`.git/worktrees/NAME/commondir` and friends) is not safe against two of them at once, and
/// `mutants --jobs N` makes N worktrees in parallel (seen failing under load with "failed to
/// read .git/worktrees/.../commondir"). Checkouts are still made one after another, which is
/// the cheap part next to the suites.
fn admin_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Name prefix of worktrees that belong to one run and die with it.
const RUN_PREFIX: &str = "gatekit-run-";

/// A detached worktree of one commit.
#[derive(Debug)]
pub struct Worktree {
    repo: Git,
    path: PathBuf,
    keep: bool,
    removed: bool,
}

impl Worktree {
    /// Makes a worktree of `commit` for this run, in the temp folder; removed on drop unless
    /// [`Worktree::keep`] is set.
    pub fn for_run(repo: &Git, commit: &str) -> Result<Worktree, GitError> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "{RUN_PREFIX}{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        if path.exists() {
            // A leftover of a recycled pid: it is ours by name, so clear it.
            let _ = repo.bytes([
                "worktree".as_ref(),
                "remove".as_ref(),
                "--force".as_ref(),
                path.as_os_str(),
            ]);
            let _ = fs::remove_dir_all(&path);
        }
        Worktree::create(repo, commit, path, false)
    }

    /// Makes a worktree of `commit` at `path`, which must not exist yet or be an empty
    /// folder; kept after the run.
    pub fn at_path(repo: &Git, commit: &str, path: &Path) -> Result<Worktree, GitError> {
        let empty_dir = fs::read_dir(path)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if path.exists() && !empty_dir {
            return Err(GitError::Failed {
                command: "worktree add".into(),
                message: format!("{} already exists", path.display()),
            });
        }
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Worktree::create(repo, commit, abs, true)
    }

    fn create(repo: &Git, commit: &str, path: PathBuf, keep: bool) -> Result<Worktree, GitError> {
        let _serial = admin_lock();
        repo.bytes([
            "worktree".as_ref(),
            "add".as_ref(),
            "--quiet".as_ref(),
            "--detach".as_ref(),
            path.as_os_str(),
            commit.as_ref(),
        ])?;
        Ok(Worktree {
            repo: repo.clone(),
            path,
            keep,
            removed: false,
        })
    }

    /// Makes a worktree of `commit` in a new folder of the temp dir, kept after the run.
    pub fn kept_in_temp(repo: &Git, commit: &str) -> Result<Worktree, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("gatekit-apply-")
            .tempdir()
            .map_err(|e| GitError::Failed {
                command: "worktree add".into(),
                message: format!("creating a temp folder: {e}"),
            })?;
        let path = dir.keep();
        Worktree::create(repo, commit, path, true)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Git commands inside the worktree.
    pub fn git(&self) -> Git {
        Git::at(&self.path)
    }

    /// Whether it will be left in place.
    pub fn kept(&self) -> bool {
        self.keep
    }

    /// Leave the worktree in place when this handle goes.
    pub fn keep(&mut self, keep: bool) {
        self.keep = keep;
    }

    /// Removes the worktree now (a no-op when kept).
    pub fn remove(mut self) -> Result<(), GitError> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> Result<(), GitError> {
        if self.keep || self.removed {
            return Ok(());
        }
        self.removed = true;
        let _serial = admin_lock();
        let result = self.repo.bytes([
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            self.path.as_os_str(),
        ]);
        if self.path.exists() {
            let _ = fs::remove_dir_all(&self.path);
            let _ = self.repo.bytes(["worktree", "prune"]);
        }
        result.map(|_| ())
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = self.remove_now();
    }
}

/// Removes the run worktrees of `repo` whose process is gone (a run that was killed before it
/// could clean up), and prunes git's records of vanished ones. Returns how many it removed.
pub fn clean_stale(repo: &Git) -> usize {
    let Ok(list) = repo.bytes(["worktree", "list", "--porcelain", "-z"]) else {
        return 0;
    };
    let mut removed = 0;
    for field in list.split(|b| *b == 0) {
        let Some(path) = field.strip_prefix(b"worktree ") else {
            continue;
        };
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(path));
        let Some(pid) = run_pid(path) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let _ = repo.bytes([
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            path.as_os_str(),
        ]);
        let _ = fs::remove_dir_all(path);
        removed += 1;
    }
    let _ = repo.bytes(["worktree", "prune"]);
    removed
}

/// The pid in a run worktree's name, if the path is one.
fn run_pid(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix(RUN_PREFIX)?;
    rest.split('-').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_worktree_names_carry_their_pid() {
        assert_eq!(run_pid(Path::new("/tmp/gatekit-run-4242-0")), Some(4242));
        assert_eq!(run_pid(Path::new("/tmp/gatekit-apply-4242-0")), None);
        assert_eq!(run_pid(Path::new("/home/me/repo")), None);
    }
}
