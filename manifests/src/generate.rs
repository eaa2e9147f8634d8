//! Making a manifest for paths in a tree (what `gate pack` writes for a candidate).

use std::path::Path;

use crate::entry::{Digest, Entry, Manifest};
use crate::hash::{hash_jobs, Job};
use crate::path::{Links, Located};
use crate::tree::{locate_all, TreeError};

/// Hashes `paths` (relative to `root`, under the path rules) on every core and returns their
/// manifest, entries in the order given and in the text form (`HEX  PATH`), as
/// `sha256sum PATH...` run in `root` would write it.
///
/// Every path must be a readable regular file (in-tree links are followed): a manifest line
/// for something absent or unreadable could never check OK, so those are errors here, as are
/// an empty list and any path the rules refuse.
pub fn manifest_for<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
) -> Result<Manifest, TreeError> {
    manifest_with(root, paths, Links::Follow)
}

/// [`manifest_for`] with links judged as git records them ([`Links::AsRecorded`]): a link's
/// line holds the digest of its target's bytes. What `gate pack` writes.
pub fn manifest_as_recorded<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
) -> Result<Manifest, TreeError> {
    manifest_with(root, paths, Links::AsRecorded)
}

fn manifest_with<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
    links: Links,
) -> Result<Manifest, TreeError> {
    if paths.is_empty() {
        return Err(TreeError::NoPaths);
    }
    let located = locate_all(root, paths, links)?;
    let mut jobs = Vec::with_capacity(located.len());
    let mut digests = vec![None; paths.len()];
    for (index, (place, path)) in located.into_iter().zip(paths).enumerate() {
        let path = path.as_ref().to_vec();
        match place {
            Located::File { real, len } => jobs.push(Job {
                index,
                path: real,
                len,
            }),
            Located::Link { target } => digests[index] = Some(Digest::of(&target)),
            Located::Missing => return Err(TreeError::Missing { path }),
            Located::Unreadable(message) => return Err(TreeError::Unreadable { path, message }),
        }
    }
    for (index, result) in hash_jobs(jobs) {
        match result {
            Ok(digest) => digests[index] = Some(digest),
            Err(e) => {
                return Err(TreeError::Unreadable {
                    path: paths[index].as_ref().to_vec(),
                    message: e.to_string(),
                })
            }
        }
    }
    let entries = paths
        .iter()
        .zip(digests)
        .map(|(path, digest)| {
            digest
                .map(|d| Entry::new(path.as_ref(), d))
                .ok_or_else(|| TreeError::Unreadable {
                    path: path.as_ref().to_vec(),
                    message: "not hashed".to_string(),
                })
        })
        .collect::<Result<_, _>>()?;
    Ok(Manifest { entries })
}
