//! What identifies the run's input: a file's sha256, and `--out` as an absolute path git would
//! print. (The tree id a report names comes from the working copy's
//! [`candidate::pristine::Pristine`], the same record every mutant is checked against.)

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A file's sha256, hex.
pub(crate) fn sha256_of(path: &Path) -> Result<String> {
    let file = fs::File::open(path).with_context(|| report::escape::path(path))?;
    Ok(manifests::hash_reader(file)
        .with_context(|| report::escape::path(path))?
        .to_hex())
}

/// An absolute form of `path` that matches what git prints for the same folder, even before
/// the folder exists (its parent is canonicalized when the folder cannot be).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (
        abs.parent().and_then(|p| p.canonicalize().ok()),
        abs.file_name(),
    ) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => abs,
    }
}
