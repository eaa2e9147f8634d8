//! The `[worktree]` table, the same in gate.toml and mutants.toml: what a fresh checkout needs
//! before its first suite (dependencies), and how it gets it.
//!
//! A fresh checkout has no `node_modules` and no `.venv`: a Node or Python suite fails there
//! out of the box. Two ways in, as users of Stryker and tox know them:
//! - `setup` (`npm ci`, `pnpm install --frozen-lockfile`) runs once in each new checkout,
//!   through the runner like any suite, before its baseline or first suite. It is a
//!   precondition: when it fails, nothing can be judged (exit 4, the log's tail shown).
//! - `link` gives every checkout its own copy of ignored paths of the source checkout
//!   (`node_modules`, `.venv`), as Stryker shares `node_modules` with its sandboxes: nothing is
//!   installed again, and nothing a setup or suite does reaches the user's folder (a private
//!   copy, checked unchanged at the end: see [`crate::linked`]).
//!
//! - `cache` names ignored build folders (`target`) kept between runs under gatekit's cache
//!   folder and handed from the first checkout to the others (the cache module); unset, a
//!   Cargo project caches `target`, and `cache = []` says no.
//!
//! Every path is relative, stays inside the tree, and must be ignored by git in the source
//! repository: a link git would see as a new file changes the tree being judged.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::git::Git;

/// The table as written, with spans for FILE:LINE errors.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorktree {
    pub setup: Option<Spanned<String>>,
    pub setup_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub link: Vec<Spanned<String>>,
    pub cache: Option<Vec<Spanned<String>>>,
}

/// A validated `[worktree]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorktreeSetup {
    /// Run once in each new checkout, with `sh -c`, before anything else.
    pub setup: Option<String>,
    pub setup_timeout: Duration,
    /// Ignored paths of the source checkout each checkout gets a private copy of.
    pub link: Vec<String>,
    /// Ignored build folders kept between runs, as written; `None` when the table does not
    /// say (then the cache module's `paths_for` picks the ecosystem's default).
    pub cache: Option<Vec<String>>,
}

impl WorktreeSetup {
    pub fn is_empty(&self) -> bool {
        self.setup.is_none() && self.link.is_empty()
    }
}

/// Validates the table; an error carries the byte span it is about, for FILE:LINE.
pub fn validate(
    raw: &RawWorktree,
) -> Result<WorktreeSetup, (Option<std::ops::Range<usize>>, String)> {
    let setup = match &raw.setup {
        Some(s) if s.get_ref().trim().is_empty() => {
            return Err((Some(s.span()), "worktree.setup is empty".into()))
        }
        Some(s) if s.get_ref().contains('\0') => {
            return Err((Some(s.span()), "worktree.setup holds a NUL byte".into()))
        }
        Some(s) => Some(s.get_ref().clone()),
        None => None,
    };
    let setup_timeout = match &raw.setup_timeout {
        Some(t) => report::duration::timeout(t.get_ref())
            .map_err(|e| e.to_string())
            .map_err(|e| (Some(t.span()), format!("worktree.setup_timeout: {e}")))?,
        None => runner::DEFAULT_TIMEOUT,
    };
    let link = paths("link", &raw.link)?;
    // Absent and empty differ: `cache = []` turns the ecosystem's default off.
    let cache = match &raw.cache {
        Some(list) => Some(paths("cache", list)?),
        None => None,
    };
    // A folder both linked (shared with the user's copy) and cached (moved in and out) would
    // have the cache write into the user's copy.
    if let (Some(list), Some(raw_list)) = (&cache, &raw.cache) {
        if let Some(i) = list.iter().position(|p| link.contains(p)) {
            return Err((
                Some(raw_list[i].span()),
                format!("worktree.cache {:?} is also linked (link copies yours in, cache keeps one of its own: pick one)", list[i]),
            ));
        }
    }
    Ok(WorktreeSetup {
        setup,
        setup_timeout,
        link,
        cache,
    })
}

/// One list of `[worktree]` paths checked by the one path rule ([`files::path`]), kept in
/// plain form (`./node_modules/` is `node_modules`), so two spellings of one folder compare
/// equal.
fn paths(
    key: &str,
    raw: &[Spanned<String>],
) -> Result<Vec<String>, (Option<std::ops::Range<usize>>, String)> {
    let mut out = Vec::new();
    for p in raw {
        let path = p.get_ref();
        let rel = files::path::relative(path)
            .map_err(|why| (Some(p.span()), format!("worktree.{key} {path:?} {why}")))?;
        // Read from a str, so the plain form is text.
        out.push(rel.to_str().unwrap_or(path).to_string());
    }
    Ok(out)
}

/// The first linked path that git does not ignore in `repo` (the source), if any: such a link
/// would show in the checkout as a new file and change the tree being judged.
pub(crate) fn first_not_ignored<'a>(
    setup: &'a WorktreeSetup,
    repo: &Git,
) -> Option<(&'static str, &'a str)> {
    let cache = setup.cache.iter().flatten().map(|p| ("cache", p.as_str()));
    let link = setup.link.iter().map(|p| ("link", p.as_str()));
    link.chain(cache)
        .find(|(_, path)| is_not_ignored(repo, path))
}

/// Whether git in `repo` would see `path` (a file or a folder not there yet) as untracked.
pub(crate) fn is_not_ignored(repo: &Git, path: &str) -> bool {
    {
        // `check-ignore` exits 0 when the path is ignored, 1 when not; `deps/` in .gitignore
        // matches only a folder, so a path not there yet is asked about as one too.
        let ignored = |p: &str| {
            repo.bytes(["check-ignore", "-q", "--no-index", "--", p])
                .is_ok()
        };
        !(ignored(path) || ignored(&format!("{path}/")))
    }
}

/// Bad input (the message names `file`, the path and the repository) unless every linked path
/// is ignored by git in `repo` and none holds an install that points back into `repo` (an
/// editable install, a workspace package linked to it: the suites would import the user's
/// checkout, see [`crate::installs`]): the one check gate and mutants both make before any work.
pub fn require_ignored(setup: &WorktreeSetup, repo: &Git, file: &Path) -> Result<(), String> {
    if let Some((key, path)) = first_not_ignored(setup, repo) {
        return Err(format!(
            "{}: worktree.{key} {:?} is not ignored by git in {}: a {} git can see would change the tree being judged (add it to .gitignore)",
            files::escape::path(file),
            files::escape::text(path),
            files::escape::path(repo.dir()),
            if key == "link" { "link" } else { "cached folder" }
        ));
    }
    // With a setup, each checkout's copy is checked after it ran (`require_set_up`): the
    // setup may install the project again, into the copy, from the checkout under review.
    if setup.setup.is_some() {
        return Ok(());
    }
    match pointing_back(setup, repo.dir(), repo.dir()) {
        Some(why) => Err(format!("{}: {why}", files::escape::path(file))),
        None => Ok(()),
    }
}

/// After `setup` ran in `checkout`: an error unless no linked copy there still holds an
/// install that points back into the user's checkout at `source` (an editable install the
/// setup did not replace).
pub fn require_set_up(setup: &WorktreeSetup, source: &Path, checkout: &Path) -> Result<(), String> {
    match pointing_back(setup, checkout, source) {
        Some(why) => Err(format!("after worktree.setup ran, {why}")),
        None => Ok(()),
    }
}

/// The first linked path under `root` whose install points back into `source`, said.
fn pointing_back(setup: &WorktreeSetup, root: &Path, source: &Path) -> Option<String> {
    setup.link.iter().find_map(|rel| {
        let (found, named) = crate::installs::pointing_back(&root.join(rel), source)?;
        Some(format!(
            "worktree.link {:?}: {} points into your checkout ({}), so the suites would import your checkout, not the one under review (an editable install or a linked workspace package); link a folder with only the dependencies installed, or install the project in worktree.setup",
            files::escape::text(rel),
            files::escape::path(&found),
            files::escape::path(&named),
        ))
    })
}

/// Gives `checkout` a private copy of every `link` path of `setup` from `source` (the user's
/// checkout): see [`crate::linked`] for why a copy and not a symlink. A path missing in the
/// source is an error: a suite would fail for want of it, and the message says what to install
/// first.
pub fn link_into(setup: &WorktreeSetup, source: &Path, checkout: &Path) -> Result<(), String> {
    for rel in &setup.link {
        crate::linked::copy_into(source, checkout, rel)?;
    }
    Ok(())
}

/// Runs `setup` in `checkout` through the shared runner (own process group, timeout, strays
/// killed), with `env` and a scratch `TMPDIR`, logging to `log`.
pub fn run_setup(
    setup: &WorktreeSetup,
    checkout: &Path,
    env: &BTreeMap<String, String>,
    log: &Path,
) -> std::io::Result<Option<report::RunRecord>> {
    let Some(script) = &setup.setup else {
        return Ok(None);
    };
    let scratch = runner::scratch::ScratchDir::new("setup")?;
    let mut job = runner::Job::shell(script, checkout, log).timeout(setup.setup_timeout);
    for (k, v) in env {
        job = job.env(k, v);
    }
    let record = report::record::run(&job.tmpdir(scratch.path()))?;
    let _ = scratch.remove();
    Ok(Some(record))
}

/// The failed setup as one message with the last lines of its log (the `Cannot find package`
/// line), escaped for the terminal.
pub fn failure_text(record: &report::RunRecord) -> String {
    let tail = runner::read_tail(&record.run.log, 4096).unwrap_or_default();
    let lines: Vec<String> = tail
        .lines()
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(|l| format!("  | {}", files::escape::terminal_line(l)))
        .collect();
    format!(
        "worktree.setup failed ({}) in {:.1}s; the last lines of {}:\n{}",
        record.status_text(),
        record.run.duration_secs,
        files::escape::path(&record.run.log),
        lines.join("\n")
    )
}
