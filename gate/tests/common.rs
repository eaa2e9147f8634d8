//! Fixtures shared by gate's end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use testkit::Repo;

pub fn gate() -> assert_cmd::Command {
    testkit::bin(env!("CARGO_BIN_EXE_gate"))
}

/// A repository with a base commit, and a candidate staged on a branch from it.
pub struct Fixture {
    pub repo: Repo,
    pub base: String,
    pub out: tempfile::TempDir,
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

impl Fixture {
    /// Base: ordinary files, odd names and a file to delete; candidate: edits, a binary file,
    /// a deletion, odd new names.
    pub fn new() -> Fixture {
        let repo = Repo::new();
        repo.write("src/lib.txt", "one\ntwo\n")
            .write("docs/with space.md", "spaces\n")
            .write("docs/old.md", "to be deleted\n")
            .write("tests/ok.sh", "#!/bin/sh\necho '2 passed, 0 failed'\n")
            .chmod_x("tests/ok.sh");
        let base = repo.commit_all("base");
        repo.git(["branch", "work"]);
        repo.git(["checkout", "-q", "work"]);
        repo.write("src/lib.txt", "one\ntwo\nthree\n")
            .write("assets/blob.bin", [0u8, 159, 146, 150, 255, 0, 1, 2, 3])
            .write("docs/with space.md", "spaces, edited\n")
            .write("odd/back\\slash.txt", "backslash\n")
            .write("odd/new\nline.txt", "newline\n")
            .write("odd/ünïcödé.txt", "non-ascii\n");
        repo.git(["rm", "-q", "docs/old.md"]);
        repo.git(["add", "-A"]);
        let out = tempfile::tempdir().unwrap();
        Fixture { repo, base, out }
    }

    pub fn patch(&self) -> PathBuf {
        self.out.path().join("build.patch")
    }

    pub fn manifest(&self) -> PathBuf {
        self.out.path().join("candidate-manifest.sha256")
    }

    pub fn pack(&self) {
        gate()
            .current_dir(self.repo.path())
            .args(["pack", "--base", &self.base, "--out"])
            .arg(self.out.path())
            .assert()
            .success();
    }

    /// Commits the staged candidate on `work` and returns to `main`, so the user's checkout
    /// is clean and HEAD is main.
    pub fn settle(&self) {
        self.repo.commit_all("candidate");
        self.repo.git(["checkout", "-q", "main"]);
    }

    /// Writes a gate.toml beside the patch with these suites (TOML text).
    pub fn config(&self, suites: &str) -> PathBuf {
        let path = self.out.path().join("gate.toml");
        std::fs::write(
            &path,
            format!(
                "base = \"{}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n{suites}",
                self.base
            ),
        )
        .unwrap();
        path
    }

    /// `gate apply` of the packed candidate; the checkout it keeps goes in the fixture's
    /// temp dir, gone with it.
    pub fn apply(&self) -> assert_cmd::Command {
        let mut cmd = gate();
        cmd.current_dir(self.repo.path())
            .env("TMPDIR", self.out.path())
            .args(["apply", "--base", &self.base, "--patch"])
            .arg(self.patch())
            .arg("--manifest")
            .arg(self.manifest());
        cmd
    }

    pub fn run(&self, config: &Path, out: &Path) -> assert_cmd::Command {
        let mut cmd = gate();
        cmd.current_dir(self.repo.path())
            .arg("run")
            .arg("--config")
            .arg(config)
            .arg("--out")
            .arg(out);
        cmd
    }
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Packs the staged changes of `repo` against `base` into `out` and writes `out/gate.toml`
/// naming the patch and manifest, with `body` (`[[suite]]`, `[worktree]`, ...) after; returns
/// the gate.toml's path.
pub fn pack_with_config(repo: &Repo, base: &str, out: &Path, body: &str) -> PathBuf {
    gate()
        .current_dir(repo.path())
        .args(["pack", "--base", base, "--out"])
        .arg(out)
        .assert()
        .success();
    write_config(out, base, body)
}

/// Writes `dir/gate.toml` naming `dir`'s build.patch and candidate-manifest.sha256 on `base`,
/// with `body` after; returns its path.
pub fn write_config(dir: &Path, base: &str, body: &str) -> PathBuf {
    let path = dir.join("gate.toml");
    std::fs::write(
        &path,
        format!(
            "base = \"{base}\"\npatch = \"build.patch\"\nmanifest = \"candidate-manifest.sha256\"\n\n{body}"
        ),
    )
    .unwrap();
    path
}

/// `gate run --config CONFIG --out OUT` (and `extra` flags) in `repo`, run to its end.
pub fn run_config(repo: &Repo, config: &Path, out: &Path, extra: &[&str]) -> testkit::Output {
    testkit::Output::of(
        gate()
            .current_dir(repo.path())
            .arg("run")
            .args(extra)
            .arg("--config")
            .arg(config)
            .arg("--out")
            .arg(out),
    )
}
