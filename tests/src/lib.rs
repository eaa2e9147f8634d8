//! Shared helpers for gatekit's end-to-end tests.
//!
//! Each binary's integration tests live in that binary's own `tests/` folder (so cargo builds
//! the binary before it runs them and sets `CARGO_BIN_EXE_*`); what they share lives here: real
//! git repositories built in temp dirs with a fixed identity, and a hermetic environment so the
//! developer's own git config, locale or `TMPDIR` cannot change what a test sees.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub mod hostile;
pub mod inputs;
pub mod needs;
mod output;
mod procs;
mod python;
mod repo;
mod skip;

pub use output::Output;
pub use procs::{alive, snapshot, tagged_pids};
pub use python::{junit, python_json, sarif_errors, schema_errors};
pub use repo::Repo;
pub use skip::skip;

/// An outer limit for any command a test starts, so a regression hangs nothing.
pub const OUTER_TIMEOUT: Duration = Duration::from_secs(120);

/// Environment variables stripped from every command a test runs: they would change git's or
/// the tools' behaviour.
const STRIPPED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
    "NO_COLOR",
    "CLICOLOR_FORCE",
];

/// Makes `cmd` hermetic: fixed git identity, no user or system git config, C locale.
pub fn hermetic(cmd: &mut Command) -> &mut Command {
    for var in STRIPPED {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Gate Tester")
        .env("GIT_AUTHOR_EMAIL", "tester@example.invalid")
        .env("GIT_COMMITTER_NAME", "Gate Tester")
        .env("GIT_COMMITTER_EMAIL", "tester@example.invalid")
        .env("LC_ALL", "C")
}

/// A command for a built binary (`env!("CARGO_BIN_EXE_gate")`), hermetic, with the outer timeout.
pub fn bin(path: impl AsRef<OsStr>) -> assert_cmd::Command {
    let mut std_cmd = Command::new(path);
    hermetic(&mut std_cmd);
    let mut cmd = assert_cmd::Command::from_std(std_cmd);
    cmd.timeout(OUTER_TIMEOUT);
    cmd
}

/// The workspace's root folder (where `docs/`, `.github/` and the crates are).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// Proves a bash completion script for `tool` is valid bash (`bash -n`) and, sourced, registers
/// a completion for `tool` (`complete -p TOOL`).
pub fn assert_bash_completion(tool: &str, script: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join(format!("{tool}.bash"));
    fs::write(&file, script).expect("write");
    let check = Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("run bash");
    assert!(
        check.status.success(),
        "bash -n {tool}.bash: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let sourced = Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p {tool}", file.display()))
        .output()
        .expect("run bash");
    assert!(
        String::from_utf8_lossy(&sourced.stdout).contains(tool),
        "sourcing the script registers no completion for {tool}: {}",
        String::from_utf8_lossy(&sourced.stderr)
    );
}
