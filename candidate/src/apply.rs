//! A candidate (base, patch, manifest, head) applied to a fresh checkout of its base (a repository
//! of its own), and the checks that bind it to what was reviewed.
//!
//! The order matters: everything that can be judged without a checkout (the patch exists, the
//! manifest parses and obeys the path rules, both revisions exist) is checked first, so bad
//! input leaves nothing behind. Then: `git apply --index` in the new checkout (its files then
//! what a fresh clone of the tree writes, see `patch`), the manifest against its files and
//! against the patch (every file the patch adds or changes must have a line), the paths the
//! patch deletes verified gone, whether the base is in the head's history at all
//! ([`crate::history`]), drift (every commit in `base..head` touching a candidate path), and
//! the tree id of the index, which is what an approval should name: it is the candidate's
//! content, independent of any commit metadata.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use manifests::{Manifest, Verification};

use crate::checkout::Checkout;
use crate::git::{Commit, Git};
use crate::patch::{self, gitlinks, parse_name_status};

/// What the reviewer was handed.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub base: String,
    pub patch: PathBuf,
    pub manifest: PathBuf,
    pub head: String,
}

/// Where the checkout goes.
#[derive(Clone, Debug)]
pub enum Place {
    /// A temp checkout that is removed when the run ends.
    Run,
    /// A checkout at this path (or a new temp folder), left for the reviewer.
    Keep(Option<PathBuf>),
}

/// A path the patch deletes, and whether it is gone from the checkout.
#[derive(Clone, Debug)]
pub struct Deleted {
    pub path: Vec<u8>,
    pub gone: bool,
}

/// The inputs as read and resolved, before any checkout exists.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub candidate: Candidate,
    pub base: String,
    pub head: String,
    pub patch_sha256: String,
    /// The patch's bytes as read once: `git apply` is fed these, not the path, so a patch
    /// given as a FIFO or `<(...)` is not read twice.
    pub patch: Vec<u8>,
    /// The sha256 of the manifest's bytes as read once (the record names it).
    pub manifest_sha256: String,
    pub manifest: Manifest,
}

/// The candidate applied and checked.
#[derive(Debug)]
pub struct Applied {
    pub checkout: Checkout,
    pub prepared: Prepared,
    pub verification: Verification,
    pub deleted: Vec<Deleted>,
    pub drift: Vec<Commit>,
    /// Commits of `base..head` that are the candidate itself, landed on the head (same
    /// patch-id, or the candidate's paths exactly as it leaves them): not drift.
    pub landed: Vec<Commit>,
    /// How many commits `base..head` holds (drift is the subset touching candidate paths).
    pub commits_since_base: usize,
    /// Set when the base is not in the head's history: the tree gated is then not the head
    /// plus the candidate, whatever drift says.
    pub off_head: Option<crate::history::OffHead>,
    /// Files the patch adds or changes that the manifest does not name.
    pub unnamed: Vec<Vec<u8>>,
    /// Submodules the patch adds or moves, each with the commit it now records: no manifest
    /// line can hold one, so they are checked from the patch and bound by the tree id.
    pub submodules: Vec<(Vec<u8>, String)>,
    /// Paths whose attributes name a `filter=` driver (see `patch::filtered`): written as
    /// their blobs hold them, so not checked as a clone with that driver would write them.
    pub filtered: Vec<Vec<u8>>,
    /// `git write-tree` of the checkout's index after the patch.
    pub tree: String,
}

impl Applied {
    /// The manifest checked again now, against the checkout as it is.
    pub fn recheck(&self) -> Result<Verification> {
        manifests::verify_as_recorded(self.checkout.path(), &self.prepared.manifest)
            .with_context(|| format!("{}", self.prepared.candidate.manifest.display()))
    }
}

/// Reads and resolves the candidate's inputs; every error here is bad input.
pub fn prepare(repo: &Git, candidate: &Candidate) -> Result<Prepared> {
    let patch = files::input::read(&candidate.patch)
        .with_context(|| format!("patch {}", candidate.patch.display()))?;
    if patch.is_empty() {
        bail!("patch {}: the file is empty", candidate.patch.display());
    }
    let (manifest, manifest_sha256) = read_manifest_hashed(&candidate.manifest)?;
    let base = repo.commit_id(&candidate.base).context("base")?;
    let head = repo.commit_id(&candidate.head).context("head")?;
    Ok(Prepared {
        candidate: candidate.clone(),
        base,
        head,
        patch_sha256: manifests::Digest::of(&patch).to_hex(),
        patch,
        manifest_sha256,
        manifest,
    })
}

/// Reads and parses a manifest file; errors read `FILE:LINE: problem`.
pub fn read_manifest(path: &std::path::Path) -> Result<Manifest> {
    let bytes = files::input::read(path).with_context(|| format!("manifest {}", path.display()))?;
    parse_manifest(&bytes, &path.display().to_string())
}

/// A candidate's manifest and the sha256 of the bytes read. Unlike [`read_manifest`], one of
/// no entries (only comments, as `pack` writes for a candidate that only deletes files and
/// moves submodules) is let through here: [`apply`] refuses it once it sees the patch leaves a
/// file in place.
fn read_manifest_hashed(path: &std::path::Path) -> Result<(Manifest, String)> {
    let bytes = files::input::read(path).with_context(|| format!("manifest {}", path.display()))?;
    let manifest = match manifests::parse(&bytes) {
        Err(manifests::ParseError::NoEntries) => Manifest::default(),
        _ => parse_manifest(&bytes, &path.display().to_string())?,
    };
    Ok((manifest, manifests::Digest::of(&bytes).to_hex()))
}

/// Parses manifest bytes read from `name` (a file, or `standard input`); errors read
/// `NAME:LINE: problem`.
pub fn parse_manifest(bytes: &[u8], name: &str) -> Result<Manifest> {
    manifests::parse(bytes).map_err(|e| match &e {
        manifests::ParseError::Line { line, problem } => anyhow!("{name}:{line}: {problem}"),
        manifests::ParseError::NoEntries => anyhow!("{name}: {e}"),
    })
}

/// Applies a prepared candidate in a new checkout and runs every check.
pub fn apply(repo: &Git, prepared: Prepared, place: &Place) -> Result<Applied> {
    let checkout = match place {
        Place::Run => Checkout::for_run(repo, &prepared.base),
        Place::Keep(Some(path)) => Checkout::at_path(repo, &prepared.base, path),
        Place::Keep(None) => Checkout::kept_in_temp(repo, &prepared.base),
    }
    .context("creating the checkout")?;
    // Until every check has run, any error removes the checkout, even one asked to be kept:
    // bad input leaves nothing behind.
    let mut checkout = checkout;
    let keep = checkout.kept();
    checkout.keep(false);
    let wt = checkout.git();
    // The bytes read once go in on stdin: the patch may have been a FIFO, now drained.
    match patch::apply(&wt, &prepared.patch) {
        Ok(()) => {}
        // The checkout is dropped (removed) on the way out: nothing is left behind.
        Err(patch::ApplyError::Rejected(message)) => bail!(
            "patch {} does not apply to {}: {message}",
            prepared.candidate.patch.display(),
            report::text::short_id(&prepared.base)
        ),
        Err(patch::ApplyError::Git(e)) => return Err(e.into()),
    }
    let verification = manifests::verify_as_recorded(checkout.path(), &prepared.manifest)
        .with_context(|| format!("{}", prepared.candidate.manifest.display()))?;

    let mut args = vec!["diff-index", "--cached", "--name-status"];
    args.extend(crate::git::DIFF_OPTIONS);
    args.push(&prepared.base);
    let changes = wt.bytes(args)?;
    let changed = parse_name_status(&changes);
    let links = gitlinks(&wt)?;
    let unnamed = patch::unnamed(&changed, &links, &prepared.manifest);
    if prepared.manifest.is_empty() {
        // The rule for a manifest of no lines: sound only when the patch leaves nothing in
        // place a line could bind (it deletes files, checked gone below, and moves submodules,
        // which sha256sum cannot express); the tree id binds all of it. Otherwise the manifest
        // is bad input, as sha256sum would find it.
        if let Some(first) = unnamed.first() {
            bail!(
                "{}: {} (the patch leaves {} in place, first {}; a manifest may list none only \
                 when its candidate just deletes files and moves submodules)",
                prepared.candidate.manifest.display(),
                manifests::ParseError::NoEntries,
                report::text::plural(unnamed.len(), "file"),
                report::text::elide(&files::escape::bytes(first), 80)
            );
        }
    }
    // Submodules the patch moves: no sha256sum line can hold a gitlink, so the patch says
    // where each now points, and the tree id binds it.
    let submodules: Vec<(Vec<u8>, String)> = changed
        .iter()
        .filter(|(status, _)| *status != b'D')
        .filter_map(|(_, path)| links.get(path).map(|id| (path.clone(), id.clone())))
        .collect();
    let filtered = patch::filtered(&wt)?;
    let deleted: Vec<Deleted> = changed
        .iter()
        .filter(|(status, _)| *status == b'D')
        .map(|(_, path)| Deleted {
            gone: is_gone(&checkout.path().join(std::ffi::OsStr::from_bytes(path))),
            path: path.clone(),
        })
        .collect();

    // Drift covers every path the candidate has a say about: the manifest's and the deleted.
    // A set, not `Vec::contains`: that was a quadratic scan, seconds at 50,000 paths.
    let mut paths: Vec<Vec<u8>> = prepared.manifest.iter().map(|e| e.path.clone()).collect();
    let mut seen: std::collections::HashSet<&[u8]> = prepared
        .manifest
        .iter()
        .map(|e| e.path.as_slice())
        .collect();
    for (_, p) in &changed {
        if seen.insert(p) {
            paths.push(p.clone());
        }
    }
    let touching = repo.commits_touching(&prepared.base, &prepared.head, &paths)?;
    let commits_since_base = repo.count_commits(&prepared.base, &prepared.head)?;
    let off_head = crate::history::off_head(repo, &prepared.base, &prepared.head, &paths)?;
    let tree = wt.text(["write-tree"])?;
    let (landed, drift) = split_landed(repo, &wt, &prepared, &tree, &paths, touching)?;
    if files::interrupt::requested() {
        // Interrupted while it was being made: the handle goes, and the checkout with it,
        // even one asked to be kept (a half-judged checkout is nobody's to review).
        return Err(runner::stop::Interrupted.into());
    }
    checkout.keep(keep);
    Ok(Applied {
        checkout,
        prepared,
        verification,
        deleted,
        drift,
        landed,
        commits_since_base,
        off_head,
        unnamed,
        submodules,
        filtered,
        tree,
    })
}

/// Splits the commits of `base..head` that touch candidate paths into the candidate itself,
/// landed on the head (a commit whose `git patch-id --stable` is the patch's, or that leaves
/// every candidate path exactly as the candidate does, so as its manifest says), and drift:
/// the rest. A candidate that has landed is not drift against itself. Trees are compared in
/// the checkout (`wt`), which holds the candidate's tree and sees the repository's commits.
fn split_landed(
    repo: &Git,
    wt: &Git,
    prepared: &Prepared,
    tree: &str,
    paths: &[Vec<u8>],
    touching: Vec<Commit>,
) -> Result<(Vec<Commit>, Vec<Commit>)> {
    if touching.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let patch = fs::read(&prepared.candidate.patch)
        .with_context(|| format!("patch {}", prepared.candidate.patch.display()))?;
    let own = repo.patch_id(&patch)?;
    let ours: std::collections::HashSet<&[u8]> = paths.iter().map(Vec::as_slice).collect();
    let (mut landed, mut drift) = (Vec::new(), Vec::new());
    for commit in touching {
        let same_change = !commit.merge
            && own.is_some()
            && repo.patch_id(&repo.commit_diff(&commit.sha)?)? == own;
        let same_paths = same_change
            || !wt
                .changed_paths(&commit.sha, tree)?
                .iter()
                .any(|p| ours.contains(p.as_slice()));
        if same_paths {
            landed.push(commit);
        } else {
            drift.push(commit);
        }
    }
    Ok((landed, drift))
}

/// Whether a file the patch deletes is gone: nothing is there, or a folder is (a candidate that
/// turns file `x` into `x/y`). Anything else counts as still present, including a file reached
/// through a link the candidate put in a parent's place.
fn is_gone(path: &std::path::Path) -> bool {
    match fs::symlink_metadata(path) {
        Err(_) => true,
        Ok(meta) => meta.is_dir(),
    }
}
