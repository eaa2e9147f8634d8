//! Shared helpers for gatekit's end-to-end tests.
//!
//! Each binary's integration tests live in that binary's own `tests/` folder (so cargo builds
//! the binary before it runs them and sets `CARGO_BIN_EXE_*`); what they share lives here: real
//! git repositories built in temp dirs with a fixed identity, and a hermetic environment so the
//! developer's own git config, locale or `TMPDIR` cannot change what a test sees.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

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

/// A command for a built binary (`env!("CARGO_BIN_EXE_gate")`), hermetic, with the outer timeout.
pub fn bin(path: impl AsRef<OsStr>) -> assert_cmd::Command {
    let mut std_cmd = Command::new(path);
    hermetic(&mut std_cmd);
    let mut cmd = assert_cmd::Command::from_std(std_cmd);
    cmd.timeout(OUTER_TIMEOUT);
    cmd
}

/// Whether a process with this pid exists (and is not a zombie).
pub fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// The workspace's root folder (where `docs/`, `.github/` and the crates are).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// Runs a Python script that prints JSON, for checks done by real consumers from PyPI
/// (junitparser, jsonschema, PyYAML). `None`, after a notice, when python3 or the module the
/// script imports (the script exits 3) is missing outside CI; a panic when missing under CI
/// (`CI` set), where a check that silently checks nothing would hide a broken report.
pub fn python_json(what: &str, script: &str, args: &[&Path]) -> Option<serde_json::Value> {
    let in_ci = std::env::var_os("CI").is_some();
    let out = match Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            assert!(!in_ci, "python3 could not run under CI: {e}");
            eprintln!("SKIP: python3 is not installed, so {what} was not checked");
            return None;
        }
    };
    if out.status.code() == Some(3) {
        assert!(
            !in_ci,
            "the Python module for {what} is missing under CI: .ci/run must install it"
        );
        eprintln!(
            "SKIP: the Python module for {what} is not installed \
             (python3 -m pip install junitparser jsonschema pyyaml)"
        );
        return None;
    }
    assert!(
        out.status.success(),
        "{what}: python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the script prints JSON"))
}

const VALIDATE: &str = r#"
import json, sys
try:
    import jsonschema
except ImportError:
    sys.exit(3)
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
instance = json.load(open(sys.argv[2]))
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
print(json.dumps({"errors": sorted(e.message for e in v.iter_errors(instance))}))
"#;

/// The errors of `instance` against `docs/schema/SCHEMA` (draft 2020-12, formats checked), by
/// the real `jsonschema` from PyPI; `None` when skipped (see [`python_json`]).
pub fn schema_errors(schema: &str, instance: &serde_json::Value) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("instance.json");
    fs::write(&path, serde_json::to_string_pretty(instance).expect("JSON")).expect("write");
    let schema = workspace().join("docs/schema").join(schema);
    let v = python_json(
        "JSON Schema validation (jsonschema)",
        VALIDATE,
        &[&schema, &path],
    )?;
    Some(
        v["errors"]
            .as_array()
            .expect("a list of errors")
            .iter()
            .map(|e| e.as_str().unwrap_or_default().to_string())
            .collect(),
    )
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

/// Every entry under `dir` (not following links) with its kind, mode and bytes (a link's
/// target for a link), so a test can prove a folder, `.git` say, is byte-for-byte as it was.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, (String, u32, Vec<u8>)> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode();
            let t = meta.file_type();
            if t.is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    ("link".into(), mode, target.as_os_str().as_bytes().to_vec()),
                );
            } else if t.is_dir() {
                out.insert(rel, ("dir".into(), mode, Vec::new()));
                stack.push(path);
            } else {
                out.insert(
                    rel,
                    ("file".into(), mode, fs::read(&path).unwrap_or_default()),
                );
            }
        }
    }
    out
}

/// The live processes whose `GATEKIT_RUN` tag has a run that starts with `fragment` (a gatekit
/// process's `PID.` prefix, say):
/// how a test finds, and kills, only what its own run started.
pub fn tagged_pids(fragment: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return pids;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        let tagged = env
            .split(|b| *b == 0)
            .filter_map(|v| v.strip_prefix(b"GATEKIT_RUN="))
            .any(|v| {
                v.split(|b| *b == b':')
                    .any(|part| part.starts_with(fragment.as_bytes()))
            });
        if tagged && !zombie {
            pids.push(pid);
        }
    }
    pids
}
