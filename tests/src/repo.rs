//! [`Repo`]: a real git repository in a temp dir with a fixed identity, and the checkouts tools
//! leave of it.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::hermetic;

/// A git repository in a temp dir, removed when dropped.
#[derive(Debug)]
pub struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    /// `git init` on branch `main` with one empty commit-free tree.
    pub fn new() -> Repo {
        let dir = tempfile::Builder::new()
            .prefix("gatekit-test-")
            .tempdir()
            .expect("temp dir");
        let repo = Repo { dir };
        repo.git(["init", "-q", "-b", "main"]);
        repo.git(["config", "user.name", "Gate Tester"]);
        repo.git(["config", "user.email", "tester@example.invalid"]);
        repo.git(["config", "commit.gpgsign", "false"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` to `rel` (creating folders).
    pub fn write(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> &Repo {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(&path, contents).expect("write");
        self
    }

    /// Writes `files` files of 2 MiB of incompressible bytes each as `big/N.bin`: a candidate
    /// that takes git and the manifest check long enough for a signal to land mid-way.
    pub fn write_noise(&self, files: usize) -> &Repo {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..files {
            let mut data = vec![0u8; 2 << 20];
            for b in data.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *b = seed as u8;
            }
            self.write(format!("big/{i}.bin"), data);
        }
        self
    }

    pub fn read(&self, rel: impl AsRef<Path>) -> Vec<u8> {
        fs::read(self.path().join(rel)).expect("read")
    }

    /// Makes `rel` executable.
    pub fn chmod_x(&self, rel: impl AsRef<Path>) -> &Repo {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path().join(rel);
        let mut perms = fs::metadata(&path).expect("stat").permissions();
        perms.set_mode(0o755);
        fs::set_permissions(&path, perms).expect("chmod");
        self
    }

    /// Runs git in the repo; panics with its stderr when it fails.
    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Runs git in the repo and returns whatever it did.
    pub fn git_output<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        hermetic(&mut cmd).current_dir(self.path()).args(args);
        cmd.output().expect("run git")
    }

    /// `git add -A && git commit -m MESSAGE`; returns the new commit's full sha.
    pub fn commit_all(&self, message: &str) -> String {
        self.git(["add", "-A"]);
        self.git(["commit", "-q", "--allow-empty", "-m", message]);
        self.head()
    }

    pub fn head(&self) -> String {
        self.git(["rev-parse", "HEAD"])
    }

    /// The porcelain status, so a test can prove a tool left the checkout as it found it.
    pub fn status(&self) -> String {
        self.git(["status", "--porcelain", "--untracked-files=all"])
    }

    /// The checkouts tools made of this repository and left: git's linked worktrees besides the
    /// main one, and the repositories of their own that gatekit makes, found in the temp dir by
    /// the object store they borrow (`objects/info/alternates` naming this repository's).
    pub fn extra_worktrees(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = self
            .git(["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(PathBuf::from)
            .filter(|p| {
                p.canonicalize().ok() != self.path().canonicalize().ok() && p != self.path()
            })
            .collect();
        let objects = self.path().join(".git/objects").canonicalize().ok();
        if let Ok(entries) = fs::read_dir(std::env::temp_dir()) {
            for e in entries.flatten() {
                let alt = e.path().join(".git/objects/info/alternates");
                let Ok(text) = fs::read_to_string(&alt) else {
                    continue;
                };
                if text
                    .lines()
                    .any(|l| Path::new(l).canonicalize().ok() == objects)
                {
                    found.push(e.path());
                }
            }
        }
        found
    }

    /// Removes a checkout a tool left (one [`Repo::extra_worktrees`] found).
    pub fn remove_checkout(&self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        if self
            .git(["worktree", "list", "--porcelain"])
            .lines()
            .any(|l| l.strip_prefix("worktree ").map(Path::new) == Some(path))
        {
            self.git([
                OsStr::new("worktree"),
                OsStr::new("remove"),
                OsStr::new("--force"),
                path.as_os_str(),
            ]);
        } else {
            let _ = fs::remove_dir_all(path);
        }
    }
}

impl Default for Repo {
    fn default() -> Self {
        Repo::new()
    }
}
