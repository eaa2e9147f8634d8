//! Hashing named paths of a tree on every core: each path's digest or why not
//! ([`hash_files`]), or a manifest of them, where every path must be a readable file
//! ([`manifest_for`], what `gate pack` writes for a candidate).

use std::io;
use std::path::Path;

use crate::bulk::{hash_all, Found};
use crate::entry::{Digest, Entry, Manifest};
use crate::path::Links;
use crate::tree::TreeError;

/// Hashes `paths` (relative to `root`, under the path rules) on every core. One result per
/// path, in the order given: a missing file is an `io::ErrorKind::NotFound` error, a
/// directory or unreadable file another error. A path that breaks the rules (absolute, `..`,
/// a link out of the tree) refuses the whole call before anything is read.
pub fn hash_files<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
) -> Result<Vec<io::Result<Digest>>, TreeError> {
    Ok(hash_all(root, paths, Links::Follow)?
        .into_iter()
        .map(|found| match found {
            Found::File(result) => result,
            Found::Link(digest) => Ok(digest),
            Found::Missing => Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no such file in the tree",
            )),
            Found::Unreadable(why) => Err(io::Error::other(why)),
        })
        .collect())
}

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
    let found = hash_all(root, paths, links)?;
    // What is absent or not a file is named first, in order, before any read error.
    for (path, found) in paths.iter().zip(&found) {
        let path = || path.as_ref().to_vec();
        match found {
            Found::Missing => return Err(TreeError::Missing { path: path() }),
            Found::Unreadable(message) => {
                return Err(TreeError::Unreadable {
                    path: path(),
                    message: message.clone(),
                })
            }
            Found::File(_) | Found::Link(_) => {}
        }
    }
    let entries = paths
        .iter()
        .zip(found)
        .map(|(path, found)| match found {
            Found::File(Ok(digest)) | Found::Link(digest) => Ok(Entry::new(path.as_ref(), digest)),
            Found::File(Err(e)) => Err(TreeError::Unreadable {
                path: path.as_ref().to_vec(),
                message: e.to_string(),
            }),
            Found::Missing | Found::Unreadable(_) => Err(TreeError::Missing {
                path: path.as_ref().to_vec(),
            }),
        })
        .collect::<Result<_, _>>()?;
    Ok(Manifest { entries })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_reader;

    #[test]
    fn many_files_come_back_in_the_order_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..50).map(|i| format!("f{i}")).collect();
        for (i, name) in names.iter().enumerate() {
            std::fs::write(dir.path().join(name), vec![b'x'; i * 1000]).unwrap();
        }
        let got = hash_files(dir.path(), &names).unwrap();
        for (i, result) in got.into_iter().enumerate() {
            let want = hash_reader(&vec![b'x'; i * 1000][..]).unwrap();
            assert_eq!(result.unwrap(), want, "f{i}");
        }
    }
}
