//! Running `git`: every git operation gatekit needs, as calls to the real git.
//!
//! We shell out rather than reimplement git (as cargo-mutants does): the reviewer's git is the
//! one whose behaviour they trust, with their repository's object format, attributes and
//! configuration. Two things are kept out of every call: `GIT_DIR`-style variables (set when we
//! run inside a hook, they would point git at another repository) and hooks (a worktree we make
//! must not run the user's post-checkout scripts).

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use thiserror::Error;

/// Variables that would redirect git away from the repository we name: the same list the
/// runner strips from every child.
const REDIRECTING: &[&str] = report::runner::GIT_REDIRECTING;

#[derive(Debug, Error)]
pub enum GitError {
    #[error("could not run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("{dir}: not a git repository")]
    NotARepo { dir: String },
    #[error("unknown revision {rev:?} (git rev-parse found no commit by that name)")]
    UnknownRevision { rev: String },
    #[error("git {command} failed: {message}")]
    Failed { command: String, message: String },
}

/// One commit, as drift reports it.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct Commit {
    #[schemars(regex(pattern = r"^[0-9a-f]{40}([0-9a-f]{24})?$"))]
    pub sha: String,
    pub subject: String,
    /// Whether it is a merge (more than one parent).
    pub merge: bool,
    /// The candidate paths it touched (for a merge, those that differ from every parent).
    #[serde(default)]
    pub paths: Vec<String>,
}

/// A repository (or one of its worktrees): the folder git commands run in.
#[derive(Clone, Debug)]
pub struct Git {
    dir: PathBuf,
}

impl Git {
    /// The repository containing `dir`, at its top level.
    pub fn open(dir: &Path) -> Result<Git, GitError> {
        let probe = Git {
            dir: dir.to_path_buf(),
        };
        let top = probe
            .text(["rev-parse", "--show-toplevel"])
            .map_err(|_| GitError::NotARepo {
                dir: dir.display().to_string(),
            })?;
        Ok(Git {
            dir: PathBuf::from(top),
        })
    }

    /// A handle on `dir` as it is, for a worktree we made ourselves.
    pub fn at(dir: &Path) -> Git {
        Git {
            dir: dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A `git` command in this repository, hooks off, no redirecting variables.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        for var in REDIRECTING {
            cmd.env_remove(var);
        }
        cmd.arg("-C")
            .arg(&self.dir)
            .args(["-c", "core.hooksPath=/dev/null"])
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs git and returns its stdout; a non-zero exit is an error carrying git's message.
    pub fn bytes<I, S>(&self, args: I) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.bytes_with_input(args, None)
    }

    /// Like [`Git::bytes`], with `input` on stdin.
    pub fn bytes_with_input<I, S>(&self, args: I, input: Option<&[u8]>) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let mut cmd = self.command(&args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(GitError::Spawn)?;
        if let Some(input) = input {
            let mut stdin = child.stdin.take().expect("piped stdin");
            let data = input.to_vec();
            // A writer thread, so a large input and a large output cannot deadlock each other.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            });
        }
        let out = child.wait_with_output().map_err(GitError::Spawn)?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(GitError::Failed {
                command: args
                    .iter()
                    .take(2)
                    .map(|a| a.as_ref().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
                message: first_line(&out.stderr),
            })
        }
    }

    /// Runs git and returns its stdout as trimmed text.
    pub fn text<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.bytes(args)?;
        Ok(String::from_utf8_lossy(&out).trim_end().to_string())
    }

    /// The full id of the commit `rev` names.
    pub fn commit_id(&self, rev: &str) -> Result<String, GitError> {
        let spec = format!("{rev}^{{commit}}");
        self.text([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ])
        .ok()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| GitError::UnknownRevision {
            rev: rev.to_string(),
        })
    }

    /// The folder git keeps this repository's shared state in (`.git` of the main worktree).
    pub(crate) fn common_dir(&self) -> Result<PathBuf, GitError> {
        let dir = self.text(["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
        Ok(PathBuf::from(dir))
    }

    /// Every commit in `base..head` that touches one of `paths`, newest first.
    ///
    /// `--full-history` keeps commits that history simplification would hide (a change on a
    /// side branch whose merge took the other side), and literal pathspecs keep a name like
    /// `*.rs` or `:(top)` from matching more or less than that one path.
    pub(crate) fn commits_touching(
        &self,
        base: &str,
        head: &str,
        paths: &[Vec<u8>],
    ) -> Result<Vec<Commit>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let range = format!("{base}..{head}");
        let mut args: Vec<&OsStr> = vec![
            OsStr::new("--literal-pathspecs"),
            OsStr::new("log"),
            OsStr::new("--full-history"),
            OsStr::new("--no-renames"),
            // A record separator before each commit, then its NUL-separated paths.
            OsStr::new("--format=%x1e%H%x1f%P%x1f%s"),
            OsStr::new("--name-only"),
            OsStr::new("-z"),
            OsStr::new("--cc"),
            OsStr::new(&range),
            OsStr::new("--stdin"),
            OsStr::new("--"),
        ];
        // The paths go on stdin, one per line, so a candidate of any size fits (the command line
        // has a length limit, 30,000 long paths pass it). A name holding a newline cannot be a
        // line: those few go on the command line.
        use std::os::unix::ffi::OsStrExt;
        let mut input = b"--\n".to_vec();
        for p in paths {
            if p.contains(&b'\n') {
                args.push(OsStr::from_bytes(p));
            } else {
                input.extend_from_slice(p);
                input.push(b'\n');
            }
        }
        let out = self.bytes_with_input(args, Some(&input))?;
        let commits = out
            .split(|b| *b == 0x1e)
            .filter(|r| !r.is_empty())
            .filter_map(|record| {
                let mut fields = record.split(|b| *b == 0);
                let header = String::from_utf8_lossy(fields.next()?).into_owned();
                let mut parts = header.splitn(3, '\x1f');
                let sha = parts.next()?.trim().to_string();
                let parents = parts.next()?;
                let paths = fields
                    .map(|p| p.strip_prefix(b"\n").unwrap_or(p))
                    .filter(|p| !p.is_empty())
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect();
                Some(Commit {
                    sha,
                    merge: parents.split_whitespace().count() > 1,
                    subject: parts.next().unwrap_or("").trim_end().to_string(),
                    paths,
                })
            })
            .collect();
        Ok(commits)
    }

    /// How many commits `base..head` holds.
    pub(crate) fn count_commits(&self, base: &str, head: &str) -> Result<usize, GitError> {
        let n = self.text(["rev-list", "--count", &format!("{base}..{head}")])?;
        Ok(n.parse().unwrap_or(0))
    }
}

/// The first non-empty line of git's stderr, without git's `fatal: ` / `error: ` prefix.
pub(crate) fn first_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| {
            let l = l
                .trim_start_matches("fatal: ")
                .trim_start_matches("error: ");
            // git quotes paths from the patch or the tree whole: a megabyte-long one must not
            // make the error a megabyte long.
            report::text::elide(l, 200).into_owned()
        })
        .unwrap_or_else(|| "no message".to_string())
}
