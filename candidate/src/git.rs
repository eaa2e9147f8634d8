//! Running `git`: every git operation gatekit needs, as calls to the real git.
//!
//! We shell out rather than reimplement git (as cargo-mutants does): the reviewer's git is the
//! one whose behaviour they trust, with their repository's object format and attributes. But
//! one candidate must pack to one patch, apply to one tree id and get one verdict on every
//! machine, so [`Git::command`] is hermetic: the user's global and system config, injected
//! config and every other `GIT_*` variable are kept out, and every setting that changes what
//! git prints or what content it reads or writes is pinned on the command line (see
//! [`OVERRIDES`]), where it beats the repository's own config. What is left is what a fresh
//! clone on this machine sees: the repository's committed `.gitattributes` and `.gitignore`,
//! and the filesystem facts git probed when the repository was made (`core.filemode`,
//! `core.symlinks`, `core.ignoreCase`). Hooks are off too (a checkout we make must not run the
//! user's post-checkout scripts), and no call takes the user's `index.lock` or writes their
//! index: optional locks are off, and the commands we run there are plumbing that never
//! refreshes the index.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use thiserror::Error;

/// Variables that would redirect git away from the repository we name: the same list the
/// runner strips from every child. (Every `GIT_*` variable but [`KEPT_VARS`] is stripped from
/// our own calls; this list is for the one call that reads the user's trust settings.)
const REDIRECTING: &[&str] = runner::GIT_REDIRECTING;

/// The only `GIT_*` variables of the user's environment our calls keep: where git finds its
/// own programs, and where repository discovery stops. Everything else (`GIT_DIR`,
/// `GIT_INDEX_FILE`, `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`,
/// `GIT_EXTERNAL_DIFF`, `GIT_DIFF_OPTS`, `GIT_ATTR_SOURCE`, `GIT_*_PATHSPECS`,
/// `GIT_DEFAULT_HASH`, `GIT_TRACE*`, git's own test knobs, ...) would change what a call
/// reads or prints, and a list of the bad ones would miss the next one git adds.
const KEPT_VARS: &[&str] = &[
    "GIT_EXEC_PATH",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/// The environment every call gets.
const HERMETIC_ENV: &[(&str, &str)] = &[
    // No system or global config (nor `$XDG_CONFIG_HOME/git/config`, `~/.gitconfig`).
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    // No system-wide attributes file (`$(prefix)/etc/gitattributes`).
    ("GIT_ATTR_NOSYSTEM", "1"),
    // `refs/replace/*` and grafts swap one object's content or parents for another's: the
    // checkouts we make copy no replace refs, so the user's repository must not use them either.
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("GIT_GRAFT_FILE", "/dev/null"),
    // No opportunistic index refresh (`git status` and friends write the index when they can).
    ("GIT_OPTIONAL_LOCKS", "0"),
    // Our output is piped, so git pages nothing; this and `--no-pager` make sure.
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    // git's messages are shown in reports and their `fatal: ` prefix is stripped
    // ([`first_line`]), and [`Git::open`] tells "not a repository" from a refusal: one
    // language for all.
    ("LC_ALL", "C"),
];

/// Config pinned on every call with `-c` (which beats the repository's own config): each key
/// changes what git prints, which content it reads or writes, or runs a program. The value is
/// git's default unless said otherwise. Explicit flags on the calls ([`PATCH_OPTIONS`],
/// `DIFF_OPTIONS`, the `log` in `Git::commits_touching`) repeat the ones that have a flag.
///
/// Left as the repository says, deliberately: `core.filemode`, `core.symlinks` and
/// `core.ignoreCase` describe the filesystem the user's checkout sits on (git probed it when
/// the repository was made, as it does for every checkout we make): forcing them would make
/// git misread every file on a filesystem without exec bits or links.
pub const OVERRIDES: &[&str] = &[
    // A checkout we make must not run the user's hooks.
    "core.hooksPath=/dev/null",
    // Runs a program (and can write the index).
    "core.fsmonitor=false",
    // A cache of the directory scan, trusted on mtimes: always scan.
    "core.untrackedCache=false",
    // A split index writes `sharedindex.*` into the user's `.git` when we write a copy of it.
    "core.splitIndex=false",
    // Line endings: a file's bytes are what the repository's attributes say, as in a fresh clone.
    "core.autocrlf=false",
    "core.eol=lf",
    "core.safecrlf=false",
    // Names in patch headers are quoted the same way everywhere.
    "core.quotePath=true",
    // Bigger files are diffed as binary.
    "core.bigFileThreshold=512m",
    // Stat settings that make git skip files that changed.
    "core.ignoreStat=false",
    "core.checkStat=default",
    "core.trustctime=true",
    // The user's own attributes and ignore files (`~/.config/git/attributes`, `.../ignore`
    // are read even without a global config): not in a fresh clone on another machine.
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    // Which whitespace counts as an error (what `apply --whitespace=fix` would fix).
    "core.whitespace=blank-at-eol,space-before-tab,blank-at-eof",
    // Attributes from a tree named in config instead of the checkout's `.gitattributes`.
    "attr.tree=",
    // Patch text: prefixes, hunk shapes, order, renames, submodules.
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.srcPrefix=a/",
    "diff.dstPrefix=b/",
    "diff.renames=false",
    "diff.algorithm=myers",
    "diff.indentHeuristic=true",
    "diff.context=3",
    "diff.interHunkContext=0",
    "diff.suppressBlankEmpty=false",
    "diff.relative=false",
    "diff.ignoreSubmodules=none",
    "diff.submodule=short",
    // `git diff` rewrites the index after a stat-only change.
    "diff.autoRefreshIndex=false",
    "color.ui=never",
    "color.diff=never",
    // `git apply` as the patch says: no whitespace fixing, no fuzzy whitespace matching.
    "apply.whitespace=nowarn",
    "apply.ignoreWhitespace=no",
    // `git log` output we parse: no signatures (runs gpg), decorations, renames followed, or
    // re-encoded subjects.
    "log.showSignature=false",
    "log.decorate=false",
    "log.follow=false",
    "log.mailmap=false",
    "log.showRoot=true",
    "i18n.logOutputEncoding=UTF-8",
    // A checkout must not reach into submodules the new repository does not have.
    "submodule.recurse=false",
];

/// Options for every patch we make or read back (`diff-index -p`): the format `git apply`
/// takes, the same bytes on every machine. `-O/dev/null` cancels `diff.orderFile`.
pub const PATCH_OPTIONS: &[&str] = &[
    "-p",
    "--binary",
    "--full-index",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-renames",
    "--no-relative",
    "--ignore-submodules=none",
    "--submodule=short",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--unified=3",
    "--inter-hunk-context=0",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-O/dev/null",
];

/// Options for every list of changed paths (`diff-index --name-only`/`--name-status`).
pub const DIFF_OPTIONS: &[&str] = &[
    "--no-renames",
    "--no-relative",
    "--ignore-submodules=none",
    "-z",
];

#[derive(Debug, Error)]
pub enum GitError {
    #[error("could not run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("{dir}: not a git repository")]
    NotARepo { dir: String },
    /// git would not work there (another user's repository the user has not declared safe):
    /// git's own message, never a silent pass.
    #[error("{dir}: git refuses to work in it: {message}")]
    Refused { dir: String, message: String },
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
    /// An index file of ours in place of the repository's (see [`Git::with_index`]).
    index: Option<PathBuf>,
    /// A git directory of ours in place of the repository's (see [`Git::with_git_dir`]).
    git_dir: Option<PathBuf>,
}

impl Git {
    /// The repository containing `dir`, at its top level.
    pub fn open(dir: &Path) -> Result<Git, GitError> {
        let probe = Git::at(dir);
        let top = probe
            .text(["rev-parse", "--show-toplevel"])
            .map_err(|e| match e {
                // The locale is C (see HERMETIC_ENV), so git's reason reads the same for all.
                GitError::Failed { message, .. }
                    if !message.starts_with("not a git repository") =>
                {
                    GitError::Refused {
                        dir: dir.display().to_string(),
                        message,
                    }
                }
                _ => GitError::NotARepo {
                    dir: dir.display().to_string(),
                },
            })?;
        Ok(Git::at(Path::new(&top)))
    }

    /// The repository `dir` names, or the one the current directory is in; outside any, the
    /// error says how to name one (`flag`, the tool's option for it: gate's `--repo`).
    pub fn open_or_hint(dir: Option<&Path>, flag: &str) -> anyhow::Result<Git> {
        let here;
        let dir = match dir {
            Some(d) => d,
            None => {
                here = std::env::current_dir()
                    .map_err(|e| anyhow::anyhow!("current directory: {e}"))?;
                &here
            }
        };
        Git::open(dir).map_err(|e| match e {
            GitError::NotARepo { .. } => {
                anyhow::anyhow!("{e}: run it inside a git repository, or name one with {flag} DIR")
            }
            other => other.into(),
        })
    }

    /// A handle on `dir` as it is, for a worktree we made ourselves.
    pub fn at(dir: &Path) -> Git {
        Git {
            dir: dir.to_path_buf(),
            index: None,
            git_dir: None,
        }
    }

    /// The same repository with `index` (a file of ours, outside the checkout) as its index:
    /// what a suite does to the checkout's own index cannot reach it.
    pub fn with_index(self, index: &Path) -> Git {
        Git {
            index: Some(index.to_path_buf()),
            ..self
        }
    }

    /// The same work tree read through `git_dir`, a git directory of ours outside it: its
    /// config, attributes and excludes are ours, so nothing written into the work tree's own
    /// `.git` (`core.fileMode`, `core.worktree`, `info/attributes`, ...) changes what git sees.
    pub fn with_git_dir(self, git_dir: &Path) -> Git {
        Git {
            git_dir: Some(std::path::absolute(git_dir).unwrap_or_else(|_| git_dir.to_path_buf())),
            ..self
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A hermetic `git` command in this repository (see the module doc): the one place every
    /// git call is built.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        for (var, _) in std::env::vars_os() {
            let name = var.to_string_lossy();
            if name.starts_with("GIT_") && !KEPT_VARS.contains(&name.as_ref()) {
                cmd.env_remove(&var);
            }
        }
        cmd.envs(HERMETIC_ENV.iter().copied());
        // Ours, set after the hermetic environment removed every other GIT_* variable.
        if let Some(index) = &self.index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if let Some(git_dir) = &self.git_dir {
            // `-C` has already moved git into the work tree.
            cmd.env("GIT_DIR", git_dir).env("GIT_WORK_TREE", ".");
        }
        cmd.arg("--no-pager").arg("-C").arg(&self.dir);
        for setting in OVERRIDES {
            cmd.arg("-c").arg(setting);
        }
        for dir in trusted_dirs() {
            let mut setting = OsString::from("safe.directory=");
            setting.push(dir);
            cmd.arg("-c").arg(setting);
        }
        cmd.args(args).stdin(Stdio::null());
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
        self.bytes_with(args, input, &[])
    }

    /// Like [`Git::bytes_with_input`], with `env` set on top of the hermetic environment (a
    /// private index or object store: `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`).
    pub fn bytes_with<I, S>(
        &self,
        args: I,
        input: Option<&[u8]>,
        env: &[(&str, &OsStr)],
    ) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let mut cmd = self.command(&args);
        cmd.envs(env.iter().copied());
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
    /// Puts this repository's git folders (its own and the common one) on `plan` as places no
    /// output may be in: a report written into `.git` would change the user's repository.
    pub fn forbid_outputs_in(&self, plan: &mut files::outputs::Plan) -> Result<(), GitError> {
        let own = self.text(["rev-parse", "--absolute-git-dir"])?;
        plan.forbid("the repository's .git", Path::new(&own));
        plan.forbid("the repository's .git", &self.common_dir()?);
        Ok(())
    }

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
            OsStr::new("--no-relative"),
            OsStr::new("--ignore-submodules=none"),
            OsStr::new("--no-show-signature"),
            OsStr::new("--no-decorate"),
            OsStr::new("--no-mailmap"),
            OsStr::new("--no-color"),
            OsStr::new("--encoding=UTF-8"),
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
    /// `git patch-id --stable` of a diff: the same for two diffs that make the same change,
    /// whatever their line numbers or whitespace; `None` for a diff with no change in it.
    pub(crate) fn patch_id(&self, diff: &[u8]) -> Result<Option<String>, GitError> {
        let out = self.bytes_with_input(["patch-id", "--stable"], Some(diff))?;
        let text = String::from_utf8_lossy(&out);
        Ok(text.split_whitespace().next().map(str::to_string))
    }

    /// The diff commit `sha` makes against its first parent, as `git patch-id` reads it.
    pub(crate) fn commit_diff(&self, sha: &str) -> Result<Vec<u8>, GitError> {
        let mut args = vec![
            "diff-tree",
            "-p",
            "--binary",
            "--full-index",
            "--no-color",
            "-r",
        ];
        args.extend(DIFF_OPTIONS.iter().filter(|o| **o != "-z"));
        args.push("--root");
        args.push(sha);
        self.bytes(args)
    }

    /// The paths that differ between two trees (or commits).
    pub(crate) fn changed_paths(&self, a: &str, b: &str) -> Result<Vec<Vec<u8>>, GitError> {
        let mut args = vec!["diff-tree", "-r", "--name-only"];
        args.extend(DIFF_OPTIONS);
        args.extend([a, b]);
        let out = self.bytes(args)?;
        Ok(out
            .split(|c| *c == 0)
            .filter(|p| !p.is_empty())
            .map(<[u8]>::to_vec)
            .collect())
    }

    pub(crate) fn count_commits(&self, base: &str, head: &str) -> Result<usize, GitError> {
        let n = self.text(["rev-list", "--count", &format!("{base}..{head}")])?;
        Ok(n.parse().unwrap_or(0))
    }
}

/// The repositories the user declared safe to work in although another user owns them
/// (`safe.directory` in their system or global config, or given with `git -c`), in order.
///
/// git reads `safe.directory` only from those places, all of which our calls turn off. Dropping
/// the user's entries would refuse a repository they trust; passing none of them and turning the
/// check off (`safe.directory=*`) would silently work in a repository owned by someone else.
/// So the user's own entries are read once, with their own environment, and handed to every
/// call: git makes the same decision it makes for the user's own `git`, and when it refuses,
/// its message is the error ([`GitError::Refused`]). Nothing else from that config is read.
fn trusted_dirs() -> &'static [OsString] {
    static DIRS: std::sync::OnceLock<Vec<OsString>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        let mut cmd = Command::new("git");
        for var in REDIRECTING {
            cmd.env_remove(var);
        }
        // Outside any repository, so only system, global and command-line config is read.
        let out = cmd
            .current_dir("/")
            .args([
                "config",
                "--show-scope",
                "-z",
                "--get-all",
                "safe.directory",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let Ok(out) = out else {
            return Vec::new();
        };
        use std::os::unix::ffi::OsStrExt;
        let fields: Vec<&[u8]> = out.stdout.split(|b| *b == 0).collect();
        fields
            .chunks_exact(2)
            .filter(|pair| matches!(pair[0], b"system" | b"global" | b"command"))
            .map(|pair| OsStr::from_bytes(pair[1]).to_os_string())
            .collect()
    })
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
