//! What identifies the run's input: `--out` as an absolute path git would print. (A
//! candidate's files are hashed as read, in `prepare`; the tree id a report names comes from
//! the checkout's [`candidate::pristine::Pristine`], the same record every mutant is
//! checked against.)

use std::path::{Path, PathBuf};

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
