//! The private checkouts mutants are swapped into: never DIR itself.
//!
//! Each checkout is a repository of its own at DIR's HEAD (made by [`candidate::checkout`]:
//! cheap, it borrows DIR's object store, and nothing a suite does there reaches DIR's `.git`)
//! with DIR's uncommitted state carried over, so the run judges what the reviewer sees, while DIR's
//! files, index and status stay untouched even if the tool is killed mid-swap. What is carried:
//! every change to tracked files, staged or not (`git diff --binary HEAD`, applied with
//! `git apply`), and every untracked file git does not ignore (copied, mode and symlinks kept),
//! because a new test file not yet added is part of what the suite runs. Two things `git diff`
//! does not show are carried too: a tracked file marked assume-unchanged or skip-worktree is
//! copied as it is in DIR (git hides its edits, the suite would not), and an untracked nested
//! repository is copied as a folder of files (its own `.git` left out). Ignored files (build
//! output, `node_modules`) are not carried; the suite builds them in the checkout as CI would.
//!
//! With `--candidate gate.toml` a checkout is built the way `gate apply` builds it instead.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{bail, Context, Result};

use candidate::apply::{self, Applied, Place};
use candidate::checkout;
use candidate::git::Git;
use candidate::pristine::Pristine;

/// Where the checkouts come from.
#[derive(Debug)]
pub(crate) enum Source {
    /// DIR's HEAD plus its uncommitted state.
    Dir(DirState),
    /// A candidate from gate.toml, its patch and manifest read once (they may be FIFOs) and
    /// applied to every checkout from those bytes.
    Candidate {
        repo: Git,
        prepared: Box<apply::Prepared>,
    },
}

impl Source {
    /// The user's repository the checkouts are made from.
    pub(crate) fn repo(&self) -> &Git {
        match self {
            Source::Dir(state) => &state.repo,
            Source::Candidate { repo, .. } => repo,
        }
    }
}

/// DIR's HEAD and the uncommitted state read from it once, applied to every checkout.
#[derive(Debug)]
pub(crate) struct DirState {
    pub repo: Git,
    pub commit: String,
    diff: Vec<u8>,
    untracked: Vec<Vec<u8>>,
    /// Tracked files whose edits git hides (assume-unchanged, skip-worktree) and that exist.
    hidden: Vec<Vec<u8>>,
    /// Untracked nested repositories (listed by git as `DIR/`).
    nested: usize,
}

impl DirState {
    /// Reads DIR's HEAD, its diff against HEAD and its untracked files; files under `skip`
    /// (the output folder, when it sits inside DIR) are left out.
    pub fn read(repo: Git, skip: Option<&Path>) -> Result<DirState> {
        let commit = repo
            .commit_id("HEAD")
            .with_context(|| format!("{}: no commit at HEAD", repo.dir().display()))?;
        // `diff-index`, not `diff`: porcelain `git diff` rewrites DIR's index after a
        // stat-only change; the plumbing only reads it.
        let mut args = vec!["diff-index"];
        args.extend(candidate::git::PATCH_OPTIONS);
        args.extend(["HEAD", "--"]);
        let diff = repo
            .bytes(args)
            .context("reading DIR's uncommitted changes")?;
        let list = repo
            .bytes(["ls-files", "--others", "--exclude-standard", "-z"])
            .context("listing DIR's untracked files")?;
        let skip = skip.and_then(|s| s.canonicalize().ok());
        let top = repo
            .dir()
            .canonicalize()
            .unwrap_or(repo.dir().to_path_buf());
        let listed: Vec<&[u8]> = list.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        // An earlier run's report folder (gate's, another --out of ours, probe's) is the
        // reviewer's output, not the tree under test: carried, it would make two runs of the
        // same code two trees, and `--only` refuse its own report.
        let reports: Vec<Vec<u8>> = candidate::pack::report_folders(&listed)
            .into_iter()
            .map(|l| l.dir.into_bytes())
            .filter(|d| !d.is_empty())
            .collect();
        let untracked = listed
            .into_iter()
            .filter(|p| !reports.iter().any(|d| p.starts_with(d)))
            .filter(|p| {
                let abs = top.join(std::ffi::OsStr::from_bytes(p));
                skip.as_ref().is_none_or(|s| !abs.starts_with(s))
            })
            .map(|p| p.strip_suffix(b"/").unwrap_or(p).to_vec())
            .collect::<Vec<_>>();
        let nested = untracked
            .iter()
            .filter(|p| top.join(std::ffi::OsStr::from_bytes(p)).is_dir())
            .count();
        // `ls-files -v` tags assume-unchanged entries in lower case and skip-worktree ones `S`.
        let tagged = repo
            .bytes(["ls-files", "-v", "-z"])
            .context("listing DIR's tracked files")?;
        let hidden = tagged
            .split(|b| *b == 0)
            .filter(|e| e.len() > 2 && (e[0].is_ascii_lowercase() || e[0] == b'S'))
            .map(|e| e[2..].to_vec())
            .filter(|p| fs::symlink_metadata(top.join(std::ffi::OsStr::from_bytes(p))).is_ok())
            .collect();
        Ok(DirState {
            repo,
            commit,
            diff,
            untracked,
            hidden,
            nested,
        })
    }

    /// `3 changed paths in the diff, 1 untracked file`, for the report.
    pub fn describe(&self) -> String {
        let changed = self
            .diff
            .split(|b| *b == b'\n')
            .filter(|l| l.starts_with(b"diff --git "))
            .count();
        let mut text = format!(
            "{changed} changed tracked path(s), {} untracked file(s)",
            self.untracked.len() - self.nested
        );
        if self.nested > 0 {
            text.push_str(&format!(
                ", {} untracked nested repositor{} copied as files (its .git left out)",
                self.nested,
                if self.nested == 1 { "y" } else { "ies" }
            ));
        }
        if !self.hidden.is_empty() {
            text.push_str(&format!(
                ", {} file(s) marked assume-unchanged or skip-worktree carried as they are in DIR",
                self.hidden.len()
            ));
        }
        text
    }
}

/// One checkout, and the proof of what it must hold.
#[derive(Debug)]
pub(crate) struct Checkout {
    kind: Kind,
    /// The tree under review and our own index of it: checked (and restored) before every
    /// mutant, so no suite's edit to another file carries over to the next verdict.
    pristine: Pristine,
}

#[derive(Debug)]
enum Kind {
    Plain(checkout::Checkout),
    Candidate(Box<Applied>),
}

impl Checkout {
    pub fn path(&self) -> &Path {
        match &self.kind {
            Kind::Plain(w) => w.path(),
            Kind::Candidate(a) => a.checkout.path(),
        }
    }

    pub fn keep(&mut self, keep: bool) {
        match &mut self.kind {
            Kind::Plain(w) => w.keep(keep),
            Kind::Candidate(a) => a.checkout.keep(keep),
        }
    }

    /// The applied candidate, for a candidate checkout.
    pub fn applied(&self) -> Option<&Applied> {
        match &self.kind {
            Kind::Plain(_) => None,
            Kind::Candidate(a) => Some(a),
        }
    }

    /// The tree id every mutant in this checkout must start from.
    pub fn tree(&self) -> &str {
        self.pristine.tree()
    }

    /// Every file of the tree under review with its blob id (see
    /// [`candidate::pristine::Pristine::files`]).
    pub fn files(&self) -> Result<Vec<(String, String)>> {
        Ok(self.pristine.files()?)
    }

    /// The tree's id with `path` left out (see [`candidate::pristine::Pristine::tree_without`]).
    pub fn tree_without(&self, path: &str) -> Result<String> {
        Ok(self.pristine.tree_without(path)?)
    }

    /// Proves the checkout holds the tree under review, restoring it when a suite (or a setup, a
    /// baseline) changed it: `Ok(None)` when it was whole, `Ok(Some(what))` when it was put
    /// back, `Err` when it could not be (the caller makes a fresh checkout).
    pub fn make_whole(&self) -> Result<Option<String>> {
        let found = self
            .pristine
            .differences()
            .context("comparing the checkout with the tree under review")?;
        if found.is_empty() {
            return Ok(None);
        }
        let what = found.describe();
        self.pristine
            .restore(&found)
            .with_context(|| format!("restoring the checkout ({what})"))?;
        Ok(Some(what))
    }

    /// After the `[worktree]` links and setup: tracked files they changed put back, untracked
    /// files they left taken as part of what every mutant starts from. `Ok(None)` when they
    /// left the tree as it was.
    pub fn settle_setup(&self) -> Result<Option<String>> {
        let found = self
            .pristine
            .settle_setup()
            .context("settling the checkout after its setup")?;
        if found.is_empty() {
            return Ok(None);
        }
        let mut said = Vec::new();
        if !found.changed.is_empty() {
            let changed = candidate::pristine::Differences {
                changed: found.changed.clone(),
                added: Vec::new(),
            };
            said.push(format!("{}: restored", changed.describe()));
        }
        if !found.added.is_empty() {
            let added = candidate::pristine::Differences {
                changed: Vec::new(),
                added: found.added.clone(),
            };
            said.push(format!(
                "{} that git does not ignore: kept, and checked before every mutant",
                added.describe()
            ));
        }
        Ok(Some(said.join("; ")))
    }

    /// The candidate's manifest checked now (`12/12 OK`), for a candidate checkout.
    pub fn recheck(&self) -> Result<Option<manifests::Verification>> {
        match &self.kind {
            Kind::Plain(_) => Ok(None),
            Kind::Candidate(a) => Ok(Some(a.recheck()?)),
        }
    }
}

/// A file for a checkout's private index, in this run's session folder (outside every checkout).
fn private_index() -> Result<std::path::PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let session = runner::scratch::session().context("making the session folder")?;
    Ok(session.join(format!(
        "review-{}.index",
        SEQ.fetch_add(1, Ordering::Relaxed)
    )))
}

/// What a new checkout needs before its baseline: the `[worktree]` table, the folder its
/// links come from, the environment of its setup, and where setup logs go.
#[derive(Debug)]
pub(crate) struct Prep {
    pub worktree: candidate::setup::WorktreeSetup,
    pub source: std::path::PathBuf,
    pub env: std::collections::BTreeMap<String, String>,
    pub logs: std::path::PathBuf,
    /// The user's linked folders as they were before any checkout got its copy, compared when
    /// the run ends.
    pub linked: candidate::linked::Fingerprint,
}

/// What [`Prep::apply`] did in a checkout, for the caller to record and say.
#[derive(Debug)]
pub(crate) struct SetUp {
    /// The setup's seconds (`None` without one).
    pub secs: Option<f64>,
    /// What the links and setup changed in the checkout, put right (see
    /// [`Checkout::settle_setup`]); `None` when they left it as it was.
    pub changed: Option<String>,
}

impl Prep {
    /// Links, then the setup, in `co`. A link missing at its source or a failed setup is a
    /// failed precondition: nothing can be judged there.
    pub fn apply(&self, co: &Checkout, log_name: &str) -> Result<SetUp> {
        let secs = self.link_and_set_up(co, log_name)?;
        let changed = co.settle_setup()?;
        Ok(SetUp { secs, changed })
    }

    fn link_and_set_up(&self, co: &Checkout, log_name: &str) -> Result<Option<f64>> {
        if self.worktree.is_empty() {
            return Ok(None);
        }
        candidate::setup::link_into(&self.worktree, &self.source, co.path())
            .map_err(runner::stop::PreconditionFailed::new)?;
        let log = self.logs.join(log_name);
        let Some(record) = candidate::setup::run_setup(&self.worktree, co.path(), &self.env, &log)
            .context("running worktree.setup")?
        else {
            return Ok(None);
        };
        if record.outcome() != report::Outcome::Passed {
            return Err(
                runner::stop::PreconditionFailed::new(candidate::setup::failure_text(&record))
                    .into(),
            );
        }
        candidate::setup::require_set_up(&self.worktree, &self.source, co.path())
            .map_err(runner::stop::PreconditionFailed::new)?;
        Ok(Some(record.run.duration_secs))
    }
}

/// Opens the repository a run or a check works in: DIR, or the current directory.
pub(crate) fn open_repo(dir: Option<std::path::PathBuf>) -> Result<Git> {
    Git::open_or_hint(dir.as_deref(), "--dir")
}

/// Makes `n` checkouts from `source`, in parallel (each is a checkout in a repository of
/// its own and, for a candidate, a `git apply`; they do not depend on each other).
pub(crate) fn make(source: &Source, n: usize) -> Result<Vec<Checkout>> {
    let results: Vec<Result<Checkout>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n).map(|_| s.spawn(|| make_one(source))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("making a checkout panicked"))
            })
            .collect()
    });
    // On an error the checkouts already made are dropped here, which removes them.
    results.into_iter().collect()
}

fn make_one(source: &Source) -> Result<Checkout> {
    match source {
        Source::Dir(state) => {
            let made = checkout::Checkout::for_run(&state.repo, &state.commit)
                .context("creating a checkout")?;
            carry(state, made.path())?;
            let pristine = Pristine::of_checkout(made.path(), private_index()?)
                .context("recording the checkout's tree")?;
            Ok(Checkout {
                kind: Kind::Plain(made),
                pristine,
            })
        }
        Source::Candidate { repo, prepared } => {
            let applied = apply::apply(repo, (**prepared).clone(), &Place::Run)?;
            let pristine =
                Pristine::for_tree(applied.checkout.path(), &applied.tree, private_index()?)
                    .context("recording the candidate's tree")?;
            Ok(Checkout {
                kind: Kind::Candidate(Box::new(applied)),
                pristine,
            })
        }
    }
}

/// Applies DIR's uncommitted state to a fresh checkout.
fn carry(state: &DirState, root: &Path) -> Result<()> {
    if !state.diff.is_empty() {
        Git::at(root)
            .bytes_with_input(
                ["apply", "--binary", "--whitespace=nowarn", "-"],
                Some(&state.diff),
            )
            .context("carrying DIR's uncommitted changes into the checkout (git apply)")?;
    }
    let from_root = state.repo.dir();
    for rel in state.untracked.iter().chain(&state.hidden) {
        let rel = Path::new(std::ffi::OsStr::from_bytes(rel));
        copy_entry(&from_root.join(rel), &root.join(rel))?;
    }
    Ok(())
}

/// Copies one file, link or (a nested repository) folder from DIR into a checkout, replacing what
/// is there; a nested repository's own `.git` is left out. Links are copied as links.
fn copy_entry(from: &Path, to: &Path) -> Result<()> {
    let meta = match fs::symlink_metadata(from) {
        Ok(m) => m,
        // Gone since we listed it: nothing to carry.
        Err(_) => return Ok(()),
    };
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    if fs::symlink_metadata(to).is_ok_and(|m| !m.is_dir()) {
        fs::remove_file(to).with_context(|| format!("replacing {}", to.display()))?;
    }
    let kind = meta.file_type();
    if kind.is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(from)?, to)?;
    } else if kind.is_dir() {
        fs::create_dir_all(to)?;
        for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
            let entry = entry?;
            if entry.file_name() == ".git" {
                continue;
            }
            copy_entry(&entry.path(), &to.join(entry.file_name()))?;
        }
    } else if kind.is_file() {
        fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    }
    Ok(())
}
