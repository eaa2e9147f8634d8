//! What git ignores in the user's tree and a checkout lacks: the first suspect when a suite
//! that passes in the user's tree fails in a checkout.
//!
//! A checkout holds the commit and the uncommitted files git does not ignore, never what git
//! ignores: a generated `_version.py` (setuptools-scm), compiled translations, a `.env` file,
//! the installed `.venv` or `node_modules`. A suite that reads one fails in every checkout,
//! and the user sees a red baseline with a tree that is green at home. Listing them turns a
//! puzzle into a one-line fix (`[worktree] setup` makes them, `link` shares a folder).

use std::path::Path;

use crate::git::Git;

/// Runner and bytecode caches: never the cause, and in every tree.
fn is_cache(path: &str) -> bool {
    path.split('/')
        .any(|part| part == "__pycache__" || (part.starts_with('.') && part.ends_with("_cache")))
}

/// The paths git ignores in `repo`'s work tree (a folder as `dir/`, collapsed as git lists it)
/// that `checkout` does not have, caches left out, sorted; nothing when git cannot say.
/// `skip`: folders of the tool's own inside the tree (its `--out`), never suspects.
pub fn missing(repo: &Git, checkout: &Path, skip: &[&Path]) -> Vec<String> {
    let Ok(list) = repo.bytes([
        "ls-files",
        "--others",
        "--ignored",
        "--exclude-standard",
        "--directory",
        "-z",
    ]) else {
        return Vec::new();
    };
    // Compared as the file system names them: `--out` may be given relative, or through a link.
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let root = real(repo.dir());
    let skip: Vec<std::path::PathBuf> = skip.iter().map(|s| real(s)).collect();
    let mut paths: Vec<String> = list
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !is_cache(p))
        .filter(|p| {
            let own = root.join(p.trim_end_matches('/'));
            // The tool's own folder, or a folder that holds it.
            !skip
                .iter()
                .any(|s| own.starts_with(s) || s.starts_with(&own))
        })
        // git lists a folder whose every file is ignored as the folder: `pkg/` for a
        // `pkg/__pycache__/` alone.
        .filter(|p| !(p.ends_with('/') && only_caches(&root.join(p), 3)))
        .filter(|p| {
            checkout
                .join(p.trim_end_matches('/'))
                .symlink_metadata()
                .is_err()
        })
        .collect();
    paths.sort();
    paths
}

/// The one sentence both tools say after a red suite, `paths` from [`missing`] (the first
/// five, escaped).
pub fn describe(paths: &[String]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .take(5)
        .map(|p| files::escape::text(p).into_owned())
        .collect();
    let more = match paths.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    format!(
        "the checkout lacks what git ignores in your tree ({}{more}): a suite that reads one fails there; a [worktree] setup can make it in each checkout, link can share a folder",
        shown.join(", ")
    )
}

/// Whether `dir` holds nothing but caches (looked into `depth` levels down; deeper, or
/// unreadable, counts as something else).
fn only_caches(dir: &Path, depth: u32) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_cache(&name) {
            continue;
        }
        let folder = entry.file_type().is_ok_and(|t| t.is_dir());
        if !folder || depth == 0 || !only_caches(&entry.path(), depth - 1) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytecode_and_runner_caches_are_never_suspects() {
        assert!(is_cache("pkg/__pycache__/"));
        assert!(is_cache(".pytest_cache/"));
        assert!(is_cache("sub/.mypy_cache/"));
        assert!(!is_cache("src/pkg/_version.py"));
        assert!(!is_cache(".venv/"));
        assert!(!is_cache("my_cache/"));
    }
}
