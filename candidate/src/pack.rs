//! `gate pack`: the staged changes of a repository as a candidate: a binary patch against a
//! base and the sha256 manifest of what it leaves in place.
//!
//! The manifest is not hashed from the user's working files (which may hold unstaged edits) but
//! from a scratch checkout of the base with the patch applied, exactly as `gate apply` will
//! rebuild it. So a pack that succeeds has already proved that its patch applies and that its
//! manifest describes the result.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::checkout::Checkout;
use crate::git::Git;
use crate::patch::{self, gitlinks, parse_name_status};
use report::text::short_id as short;

/// File names inside the output folder.
pub(crate) const PATCH_FILE: &str = "build.patch";
pub(crate) const MANIFEST_FILE: &str = "candidate-manifest.sha256";

/// The manifest of a candidate that leaves no file in place: one comment, no lines.
pub(crate) const NO_LINES: &str = "# no file lines: this candidate only deletes files and moves \
     submodules, which its tree id binds\n";

/// What `pack` wrote.
#[derive(Debug)]
pub struct Packed {
    pub base: String,
    pub patch: PathBuf,
    pub patch_sha256: String,
    pub manifest: PathBuf,
    pub entries: usize,
    pub deleted: usize,
    /// Submodule bumps: no manifest line, bound by the tree id.
    pub submodules: usize,
    /// Staged folders left out because they are gatekit's outputs.
    pub left_out: Vec<LeftOut>,
}

/// Report folders gatekit writes, known by two files each holds: staged by a careless
/// `git add -A`, they are the reviewer's outputs, never part of the candidate.
const OUTPUT_MARKERS: &[(&str, &str, &str)] = &[
    ("gate.json", "gate-summary.txt", "a gate report folder"),
    ("mutants.json", "mutants.txt", "a mutants report folder"),
    ("results.json", "results.txt", "a probe results folder"),
    (PATCH_FILE, MANIFEST_FILE, "a packed candidate"),
];

/// A folder left out of the candidate, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// Relative to the repository's top, with a trailing `/`.
    pub dir: String,
    pub why: &'static str,
}

/// The tree the user's index holds (what they staged), written into `scratch`'s object store.
///
/// `git write-tree` in the user's repository would take their `index.lock` (and fail while
/// they hold it) and write tree objects into their repository; so it runs on a copy of the
/// index, with the scratch checkout's store (which borrows the user's) as its object store.
fn staged_tree(repo: &Git, scratch: &Checkout) -> Result<String> {
    let git_dir = scratch.path().join(".git");
    let objects = git_dir.join("objects");
    write_staged_tree(repo, &git_dir.join("gatekit-staged-index"), &objects, None)
}

/// The id of the tree the user's index holds (what they staged), as `git write-tree` prints
/// it, written into a store of our own that is gone when this returns: the user's index and
/// object store are never written.
pub fn staged_tree_id(repo: &Git) -> Result<String> {
    let scratch = tempfile::Builder::new()
        .prefix("gatekit-staged-")
        .tempdir()
        .context("making a folder for the staged tree")?;
    let objects = scratch.path().join("objects");
    fs::create_dir(&objects).context("making a folder for the staged tree")?;
    let theirs = repo.text([
        "rev-parse",
        "--path-format=absolute",
        "--git-path",
        "objects",
    ])?;
    let index = scratch.path().join("index");
    write_staged_tree(repo, &index, &objects, Some(Path::new(&theirs)))
}

/// `git write-tree` of a copy (at `copy`) of the user's index, its objects written to
/// `objects`, which borrows the user's store through `alternates` when it does not already.
fn write_staged_tree(
    repo: &Git,
    copy: &Path,
    objects: &Path,
    alternates: Option<&Path>,
) -> Result<String> {
    let index = repo.text(["rev-parse", "--path-format=absolute", "--git-path", "index"])?;
    // No index at all is an empty one to git: the copy's absence says the same.
    match fs::copy(&index, copy) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("reading the index {index}"));
        }
        _ => {}
    }
    let mut env = vec![
        ("GIT_INDEX_FILE", copy.as_os_str()),
        ("GIT_OBJECT_DIRECTORY", objects.as_os_str()),
    ];
    if let Some(theirs) = alternates {
        env.push(("GIT_ALTERNATE_OBJECT_DIRECTORIES", theirs.as_os_str()));
    }
    let tree = repo
        .bytes_with(["write-tree"], None, &env)
        .context("reading the staged tree (git write-tree)")?;
    let _ = fs::remove_file(copy);
    Ok(String::from_utf8_lossy(&tree).trim().to_string())
}

/// `git diff-tree` from `base` to `tree` in the scratch checkout `wt`: a repository of our own
/// with no config, whose attributes are the base's committed ones, so diff drivers or filters
/// the user's repository config names (`diff.<driver>.binary`, `xfuncname`) or their
/// `.git/info/attributes` cannot change the patch: it is the one a fresh clone would make.
fn diff_tree(wt: &Git, base: &str, tree: &str, what: &[&str], paths: &[String]) -> Result<Vec<u8>> {
    let mut args: Vec<String> = ["diff-tree", "-r"]
        .iter()
        .chain(what)
        .chain([&base, &tree, &"--"])
        .map(|s| s.to_string())
        .collect();
    args.extend(paths.iter().cloned());
    Ok(wt.bytes(&args)?)
}

/// The staged folders that are gatekit's own outputs: `out` (where this pack writes) when it is
/// inside the repository, and any folder holding a report's two marker files.
fn outputs_staged(
    repo: &Git,
    wt: &Git,
    base: &str,
    tree: &str,
    out: &Path,
) -> Result<Vec<LeftOut>> {
    let mut what = vec!["--name-only"];
    what.extend(crate::git::DIFF_OPTIONS);
    let staged = diff_tree(wt, base, tree, &what, &[])?;
    let staged: Vec<&[u8]> = staged
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    let mut left = Vec::new();
    let top = repo
        .dir()
        .canonicalize()
        .unwrap_or(repo.dir().to_path_buf());
    let out_abs = std::path::absolute(out).unwrap_or(out.to_path_buf());
    let out_real = out_abs.canonicalize().unwrap_or(out_abs);
    if let Ok(rel) = out_real.strip_prefix(&top) {
        let rel = rel.to_string_lossy().into_owned();
        if !rel.is_empty() {
            let dir = format!("{rel}/");
            if staged.iter().any(|p| p.starts_with(dir.as_bytes())) {
                left.push(LeftOut {
                    dir,
                    why: "this pack's --out",
                });
            }
        }
    }
    for found in report_folders(&staged) {
        if !left.iter().any(|l| found.dir.starts_with(&l.dir)) {
            left.push(found);
        }
    }
    Ok(left)
}

/// The folders among `paths` (relative to the repository's top, `/`-separated) that are
/// gatekit's own outputs: one holding a report's two marker files, or the record every run
/// keeps of what it wrote there (`.gatekit-written`). Outermost first; a folder inside one
/// already found is not listed again. Shared by `pack` (a careless `git add -A`) and by a
/// mutants run on a directory's uncommitted state (an earlier run's report folder is not part
/// of the tree under test).
pub fn report_folders(paths: &[&[u8]]) -> Vec<LeftOut> {
    let mut dirs: std::collections::BTreeMap<&[u8], Vec<&[u8]>> = Default::default();
    for p in paths {
        let (dir, name) = match p.iter().rposition(|b| *b == b'/') {
            Some(i) => (&p[..=i], &p[i + 1..]),
            None => (&p[..0], &p[..]),
        };
        dirs.entry(dir).or_default().push(name);
    }
    let mut found: Vec<LeftOut> = Vec::new();
    for (dir, names) in dirs {
        let marked = OUTPUT_MARKERS
            .iter()
            .find(|(a, b, _)| names.contains(&a.as_bytes()) && names.contains(&b.as_bytes()))
            .map(|(_, _, why)| *why)
            .or_else(|| {
                names
                    .contains(&files::outputs::RECORD_FILE.as_bytes())
                    .then_some("a gatekit output folder")
            });
        if let Some(why) = marked {
            let dir = String::from_utf8_lossy(dir).into_owned();
            if !found.iter().any(|l| dir.starts_with(&l.dir)) {
                found.push(LeftOut { dir, why });
            }
        }
    }
    found
}

/// Packs the staged changes against `base`, limited to `paths` when any are given, leaving out
/// the folders that are gatekit's own outputs (see [`Packed::left_out`]).
pub fn pack(repo: &Git, base: &str, out: &Path, paths: &[String]) -> Result<Packed> {
    let base_sha = repo.commit_id(base).context("base")?;
    // Every diff runs in the scratch checkout, against the tree the user staged.
    let scratch = Checkout::for_run(repo, &base_sha).context("creating a scratch checkout")?;
    let wt = scratch.git();
    let tree = staged_tree(repo, &scratch)?;
    let left_out = outputs_staged(repo, &wt, &base_sha, &tree, out)?;
    // A report folder at the top (dir "") would exclude everything: then only its files go.
    let mut paths: Vec<String> = paths.to_vec();
    if !left_out.is_empty() && paths.is_empty() {
        paths.push(":(top)".to_string());
    }
    for l in &left_out {
        if l.dir.is_empty() {
            for (a, b, _) in OUTPUT_MARKERS {
                paths.push(format!(":(top,exclude,literal){a}"));
                paths.push(format!(":(top,exclude,literal){b}"));
            }
        } else {
            paths.push(format!(
                ":(top,exclude,literal){}",
                l.dir.trim_end_matches('/')
            ));
        }
    }
    let paths = &paths[..];
    // Plumbing (`diff-tree`, not `diff`): it reads none of the diff UI config; the options pin
    // the rest (see `git::PATCH_OPTIONS`).
    let patch = diff_tree(&wt, &base_sha, &tree, crate::git::PATCH_OPTIONS, paths)?;
    if patch.is_empty() {
        bail!(
            "nothing to pack: the staged tree does not differ from {base} ({}){}",
            short(&base_sha),
            if paths.is_empty() {
                ""
            } else {
                " in the given paths"
            }
        );
    }
    let mut what = vec!["--name-status"];
    what.extend(crate::git::DIFF_OPTIONS);
    let changes = parse_name_status(&diff_tree(&wt, &base_sha, &tree, &what, paths)?);
    let kept: Vec<Vec<u8>> = changes
        .iter()
        .filter(|(status, _)| *status != b'D')
        .map(|(_, p)| p.clone())
        .collect();
    let deleted = changes.len() - kept.len();

    // Rebuild the candidate the way `apply` will (files as a fresh clone writes them), and
    // hash that.
    patch::apply(&wt, &patch).context("the staged diff does not apply to its own base")?;
    // A submodule bump is a commit id in the index, not a file: sha256sum has no way to say
    // it, so it gets no line (like a deletion) and is bound by the tree id instead.
    let gitlinks = gitlinks(&wt)?;
    let kept: Vec<Vec<u8>> = kept
        .into_iter()
        .filter(|p| !gitlinks.contains_key(p))
        .collect();
    let submodules = changes.len() - deleted - kept.len();
    let manifest = if kept.is_empty() {
        None
    } else {
        Some(manifests::manifest_as_recorded(scratch.path(), &kept)?)
    };
    // The rule `apply` judges by: no file the patch leaves may go without a line.
    let unnamed = patch::unnamed(
        &changes,
        &gitlinks,
        manifest.as_ref().unwrap_or(&Default::default()),
    );
    if let Some(first) = unnamed.first() {
        bail!(
            "the manifest would not name {} the patch changes (first {}): nothing written",
            report::text::plural(unnamed.len(), "file"),
            files::escape::bytes(first)
        );
    }
    drop(scratch);

    let patch_path = out.join(PATCH_FILE);
    let manifest_path = out.join(MANIFEST_FILE);
    // The one output guard (see `files::outputs`): never through a link, never into `.git`
    // or a gatekit checkout.
    let mut plan = files::outputs::Plan::new();
    plan.file("the patch", &patch_path)
        .file("the manifest", &manifest_path);
    repo.forbid_outputs_in(&mut plan)?;
    plan.check()?;
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    // A candidate that leaves no file in place (it deletes files, moves submodules) has no
    // line to write: a comment says why, and `apply` lets such a manifest through only for
    // such a patch (see `apply::apply`).
    let manifest_bytes = match &manifest {
        Some(m) => m.to_bytes(),
        None => NO_LINES.as_bytes().to_vec(),
    };
    // An interrupt while the scratch checkout was hashed must not replace an earlier pair.
    if files::interrupt::requested() {
        bail!("interrupted before writing the candidate");
    }
    files::atomic::write_all_atomic(&[(&patch_path, &patch), (&manifest_path, &manifest_bytes)])
        .with_context(|| {
            format!(
                "writing {} and {}",
                patch_path.display(),
                manifest_path.display()
            )
        })?;
    Ok(Packed {
        base: base_sha,
        patch: patch_path,
        patch_sha256: manifests::Digest::of(&patch).to_hex(),
        manifest: manifest_path,
        entries: kept.len(),
        deleted,
        submodules,
        left_out,
    })
}
