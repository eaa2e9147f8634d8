//! `gate pack`: the staged changes of a repository as a candidate: a binary patch against a
//! base and the sha256 manifest of what it leaves in place.
//!
//! The manifest is not hashed from the user's working files (which may hold unstaged edits) but
//! from a scratch worktree of the base with the patch applied, exactly as `gate apply` will
//! rebuild it. So a pack that succeeds has already proved that its patch applies and that its
//! manifest describes the result.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest as _, Sha256};

use crate::apply::{hex, parse_name_status, short};
use crate::git::Git;
use crate::worktree::Worktree;

/// File names inside the output folder.
pub const PATCH_FILE: &str = "build.patch";
pub const MANIFEST_FILE: &str = "candidate-manifest.sha256";

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
}

/// Packs the staged changes against `base`, limited to `paths` when any are given.
pub fn pack(repo: &Git, base: &str, out: &Path, paths: &[String]) -> Result<Packed> {
    let base_sha = repo.commit_id(base).context("base")?;
    let mut diff_args: Vec<String> = [
        "diff",
        "--cached",
        "--binary",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        &base_sha,
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    diff_args.extend(paths.iter().cloned());
    let patch = repo.bytes(&diff_args)?;
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
    let mut status_args: Vec<String> = [
        "diff",
        "--cached",
        "--name-status",
        "--no-renames",
        "-z",
        &base_sha,
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    status_args.extend(paths.iter().cloned());
    let changes = parse_name_status(&repo.bytes(&status_args)?);
    let kept: Vec<Vec<u8>> = changes
        .iter()
        .filter(|(status, _)| *status != b'D')
        .map(|(_, p)| p.clone())
        .collect();
    let deleted = changes.len() - kept.len();

    // Rebuild the candidate the way `apply` will, and hash that.
    let scratch = Worktree::for_run(repo, &base_sha).context("creating a scratch worktree")?;
    let wt = scratch.git();
    wt.bytes_with_input(["apply", "--index", "-"], Some(&patch))
        .context("the staged diff does not apply to its own base")?;
    // A submodule bump is a commit id in the index, not a file: sha256sum has no way to say
    // it, so it gets no line (like a deletion) and is bound by the tree id instead.
    let gitlinks = gitlinks(&wt)?;
    let kept: Vec<Vec<u8>> = kept.into_iter().filter(|p| !gitlinks.contains(p)).collect();
    let submodules = changes.len() - deleted - kept.len();
    let manifest = if kept.is_empty() {
        None
    } else {
        Some(manifests::manifest_as_recorded(scratch.path(), &kept)?)
    };
    drop(scratch);

    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let patch_path = out.join(PATCH_FILE);
    let manifest_path = out.join(MANIFEST_FILE);
    let manifest_bytes = match &manifest {
        Some(m) => m.to_bytes(),
        None => bail!("the candidate only deletes files: a manifest needs at least one path it leaves in place"),
    };
    report::json::write_bytes_atomic(&patch_path, &patch)
        .with_context(|| format!("writing {}", patch_path.display()))?;
    report::json::write_bytes_atomic(&manifest_path, &manifest_bytes)
        .with_context(|| format!("writing {}", manifest_path.display()))?;
    Ok(Packed {
        base: base_sha,
        patch: patch_path,
        patch_sha256: hex(&Sha256::digest(&patch)),
        manifest: manifest_path,
        entries: kept.len(),
        deleted,
        submodules,
    })
}

/// The paths the index of `repo` records as submodules (gitlinks, mode 160000).
pub fn gitlinks(repo: &Git) -> Result<std::collections::HashSet<Vec<u8>>> {
    let list = repo.bytes(["ls-files", "--stage", "-z"])?;
    Ok(list
        .split(|b| *b == 0)
        .filter(|e| e.starts_with(b"160000 "))
        .filter_map(|e| {
            e.iter()
                .position(|b| *b == b'\t')
                .map(|i| e[i + 1..].to_vec())
        })
        .collect())
}
