//! The tree a manifest describes: opening its root, and the errors that stop a check of it
//! before any verdict (as opposed to FAILED or MISSING, which are findings).

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::cores::cores;
use crate::path::{locate, show_path, Links, Located, PathError};

/// Why a tree could not be hashed or checked at all. A file that differs or is absent is not
/// an error but a [`crate::Status`]; these are bad input or a tree that cannot be opened.
#[derive(Debug, Error)]
pub enum TreeError {
    /// The root itself cannot be resolved (does not exist, no permission).
    #[error("tree {}: {source}", root.display())]
    Root {
        /// The root as given.
        root: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A path breaks the path rules (absolute, `..`, a link out of the tree).
    #[error(transparent)]
    Path(#[from] PathError),
    /// A path that must exist does not (making a manifest of it).
    #[error("path {}: no such file in the tree", show_path(path))]
    Missing {
        /// The path, relative to the root.
        path: Vec<u8>,
    },
    /// A path that must be read cannot be (making a manifest of it).
    #[error("path {}: {message}", show_path(path))]
    Unreadable {
        /// The path, relative to the root.
        path: Vec<u8>,
        /// What went wrong.
        message: String,
    },
    /// A manifest of no paths was asked for; it could not be read back (sha256sum and
    /// [`crate::parse`] both refuse an empty manifest).
    #[error("no paths given: a manifest with no entries cannot be checked")]
    NoPaths,
    /// A file could not be read for want of descriptors or memory, even alone after every
    /// other was done: the machine's state, never the file's status.
    #[error(
        "path {}: {source}: the check ran out of file descriptors or memory (see `ulimit -n`)",
        show_path(path)
    )]
    Exhausted {
        /// The path, relative to the root.
        path: Vec<u8>,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

/// The canonical root, so that every later comparison against it is exact.
pub(crate) fn open_root(root: &Path) -> Result<PathBuf, TreeError> {
    root.canonicalize().map_err(|source| TreeError::Root {
        root: root.to_path_buf(),
        source,
    })
}

/// Locates every path before anything is read, so one bad path refuses the whole request
/// instead of leaving half a report. The path-by-path walk: the fast path (`bulk`) takes the
/// plain paths of a large request another way and leaves this the rest.
pub(crate) fn locate_all<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
    links: Links,
) -> Result<Vec<Located>, TreeError> {
    locate_all_in(&open_root(root)?, paths, links)
}

/// [`locate_all`] below a root already made canonical by [`open_root`].
///
/// The paths are located on every core, in contiguous chunks put back in order, and the error
/// reported is the first in the order given, whatever thread found it.
pub(crate) fn locate_all_in<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
    links: Links,
) -> Result<Vec<Located>, TreeError> {
    let one = |p: &P| locate(root, p.as_ref(), links).map_err(TreeError::from);
    let threads = cores();
    // Below a few thousand paths a thread costs more than it saves.
    if threads == 1 || paths.len() < 4096 {
        return paths.iter().map(one).collect();
    }
    let chunk = paths.len().div_ceil(threads);
    let parts: Vec<Result<Vec<Located>, TreeError>> = std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(one).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(TreeError::Unreadable {
                        path: Vec::new(),
                        message: "a lookup thread panicked".to_string(),
                    })
                })
            })
            .collect()
    });
    let mut located = Vec::with_capacity(paths.len());
    for part in parts {
        located.extend(part?);
    }
    Ok(located)
}
