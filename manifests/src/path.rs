//! Path rules: which manifest paths are acceptable at all, and how a path is looked up in a
//! tree without ever leaving it.
//!
//! The one thing to know: a manifest is untrusted input, and so is the tree it is checked
//! against (it came out of someone's patch). A name like `../../home/x/.ssh/id_rsa`, or an
//! innocent `docs/key` where `docs` is a symlink to `/home/x/.ssh`, must not make the checker
//! read (and, by its OK or FAILED, reveal facts about) files outside the tree. So lookups walk
//! the path one component at a time with `lstat`, resolve every symlink by hand, and refuse the
//! moment a step would leave the root. Links that stay inside the tree are followed, as
//! `sha256sum` follows them: a repository's `README -> docs/README.md` is checked by the content
//! it shows.
//!
//! The walk is not atomic: a tree that is being changed while it is checked can race it. That
//! is outside what this guards against (the tree is a worktree the tool itself just made).

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use crate::escape::escape_name;

/// A path refused as bad input: which path, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("path {}: {problem}", show_path(path))]
pub struct PathError {
    /// The path as given (raw bytes, unescaped).
    pub path: Vec<u8>,
    /// What is wrong with it.
    pub problem: PathProblem,
}

/// Why a path was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathProblem {
    /// The path is empty.
    Empty,
    /// The path holds a NUL byte, which no Unix file name can.
    Nul,
    /// The path is [`files::path::PATH_MAX`] bytes or longer: the kernel opens no such path, so it could
    /// only ever be missing, and an error quoting it whole would be a megabyte long.
    TooLong,
    /// The path starts with `/`.
    Absolute,
    /// The path has a `..` component.
    ParentDir,
    /// The path ends with `/`, so it cannot name a file.
    TrailingSlash,
    /// The path is only `.` components: it names the tree itself.
    NoFileName,
    /// Following the symlink at `link` (relative to the root) would leave the tree.
    LinkEscapes {
        /// The link, relative to the root.
        link: Vec<u8>,
        /// What it points to.
        target: Vec<u8>,
    },
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathProblem::Empty => f.write_str("empty path"),
            PathProblem::Nul => f.write_str("holds a NUL byte"),
            PathProblem::TooLong => write!(
                f,
                "is {PATH_MAX} bytes or longer, so no file can be opened by it"
            ),
            PathProblem::Absolute => {
                f.write_str("absolute path (manifest paths are relative to the tree)")
            }
            PathProblem::ParentDir => {
                f.write_str("has a `..` component, which could climb out of the tree")
            }
            PathProblem::TrailingSlash => f.write_str("ends with `/`, so it names no file"),
            PathProblem::NoFileName => f.write_str("names the tree itself, not a file in it"),
            PathProblem::LinkEscapes { link, target } => write!(
                f,
                "symlink {} -> {} leads out of the tree",
                show_path(link),
                show_path(target)
            ),
        }
    }
}

/// Linux's `PATH_MAX`: a path of this many bytes or more cannot be opened (the count includes
/// the closing NUL).
pub const PATH_MAX: usize = files::path::PATH_MAX;

/// The most of a path an error message quotes; a longer one keeps its start and end, with the
/// number of bytes left out between them.
const SHOWN_BYTES: usize = 60;

/// A path for an error message: escaped the way sha256sum escapes names (so a newline cannot
/// split the message), every other control character as `\u{..}` and every byte that is not
/// UTF-8 as `\x..` (so an ESC in a name cannot drive the terminal, and two names never print
/// alike), in quotes. A path longer than [`SHOWN_BYTES`] is shown by its start and end: a name
/// of a megabyte must not make an error of a megabyte.
pub(crate) fn show_path(path: &[u8]) -> String {
    if path.len() > SHOWN_BYTES {
        let (head, tail) = (
            &path[..SHOWN_BYTES * 2 / 3],
            &path[path.len() - SHOWN_BYTES / 3..],
        );
        let left_out = path.len() - head.len() - tail.len();
        let (head, tail) = (show_path(head), show_path(tail));
        return format!(
            "{}…[{left_out} bytes]…{}",
            &head[..head.len() - 1],
            &tail[1..]
        );
    }
    let escaped = escape_name(path);
    let mut out = String::with_capacity(escaped.len() + 2);
    out.push('\'');
    for chunk in escaped.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

/// Checks a manifest path without touching the file system, by the one path rule
/// ([`files::path`]): relative, non-empty, no NUL, no `..` component, shorter than
/// [`files::path::PATH_MAX`], naming something below the root; and, since a manifest line names a file, not
/// ending in `/`.
///
/// `.` components and doubled slashes are allowed (`./a//b` is what some tools write, and
/// sha256sum accepts it); the path is kept exactly as written.
pub fn check_path(path: &[u8]) -> Result<(), PathError> {
    use files::path::PathError as Rule;
    let problem = match files::path::relative_bytes(path) {
        Ok(rel) if rel.names_folder() => PathProblem::TrailingSlash,
        Ok(_) => return Ok(()),
        Err(Rule::Empty) => PathProblem::Empty,
        Err(Rule::TooLong) => PathProblem::TooLong,
        Err(Rule::Nul) => PathProblem::Nul,
        Err(Rule::Absolute) => PathProblem::Absolute,
        Err(Rule::ParentDir) => PathProblem::ParentDir,
        Err(Rule::NoName) => PathProblem::NoFileName,
    };
    Err(PathError {
        path: path.to_vec(),
        problem,
    })
}

/// How a symlink in the tree is judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Links {
    /// As `sha256sum` does: a link that stays in the tree is followed and the file it shows is
    /// hashed (`gate check`).
    #[default]
    Follow,
    /// As git records it: a link is a file whose content is its target, hashed as such and never
    /// followed, whether relative, absolute or dangling; a path that goes through a link to a
    /// folder is not a path git can record. This is how a candidate's manifest is made and
    /// checked, so a link in a patch is bound by what it says, not by what it points at.
    AsRecorded,
}

/// Where a checked path leads inside the tree.
#[derive(Debug)]
pub(crate) enum Located {
    /// A symlink judged as git records it ([`Links::AsRecorded`]): its target's bytes.
    Link { target: Vec<u8> },
    /// A regular file, at a real path with no symlinks left in it.
    File { real: PathBuf },
    /// Nothing there: a component does not exist, or one before the last is not a directory
    /// (the kernel's ENOENT and ENOTDIR), or an in-tree link dangles.
    Missing,
    /// Something is there but cannot be read as a file: a directory, a FIFO, a device, a
    /// permission error on the way, a link loop. The text says which.
    Unreadable(String),
}

/// The same limit as Linux's `MAXSYMLINKS`, so a loop is reported where the kernel would.
const MAX_LINKS: usize = 40;

/// Looks `path` up below `root`, which must already be canonical (see
/// [`std::fs::canonicalize`]), following in-tree symlinks and refusing any that leave.
///
/// The path must have passed [`check_path`]; this checks it again so no caller can skip it.
pub(crate) fn locate(root: &Path, path: &[u8], links: Links) -> Result<Located, PathError> {
    check_path(path)?;
    let links_policy = links;
    let escape = |link: &Path, target: &Path| PathError {
        path: path.to_vec(),
        problem: PathProblem::LinkEscapes {
            link: link
                .strip_prefix(root)
                .unwrap_or(link)
                .as_os_str()
                .as_bytes()
                .to_vec(),
            target: target.as_os_str().as_bytes().to_vec(),
        },
    };

    let mut pending: VecDeque<PathBuf> = components(Path::new(OsStr::from_bytes(path)));
    // `real` only ever holds real directories below `root` (never a symlink), so popping it
    // for a `..` that came out of a link target is exactly what the kernel would do.
    let mut real = root.to_path_buf();
    let mut depth = 0usize;
    let mut links = 0usize;
    // The last link whose target brought in a `..`, to name it if that `..` reaches above
    // the root.
    let mut last_link: Option<(PathBuf, PathBuf)> = None;

    while let Some(part) = pending.pop_front() {
        if part.as_os_str() == ".." {
            if depth == 0 {
                // Only a link target can bring a `..` here: check_path refused them in the
                // manifest path itself.
                let (link, target) = last_link.unwrap_or_else(|| (real.clone(), "..".into()));
                return Err(escape(&link, &target));
            }
            real.pop();
            depth -= 1;
            continue;
        }
        real.push(&part);
        let meta = match fs::symlink_metadata(&real) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Located::Missing),
            Err(e) => return Ok(Located::Unreadable(e.to_string())),
        };
        let kind = meta.file_type();
        if kind.is_symlink() && links_policy == Links::AsRecorded {
            if !pending.is_empty() {
                return Ok(Located::Unreadable(
                    "beyond a symbolic link (git records no path through one)".to_string(),
                ));
            }
            return match fs::read_link(&real) {
                Ok(target) => Ok(Located::Link {
                    target: target.as_os_str().as_bytes().to_vec(),
                }),
                Err(e) => Ok(Located::Unreadable(e.to_string())),
            };
        }
        if kind.is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Ok(Located::Unreadable(
                    "too many levels of symbolic links".to_string(),
                ));
            }
            let target = match fs::read_link(&real) {
                Ok(target) => target,
                Err(e) => return Ok(Located::Unreadable(e.to_string())),
            };
            let link = real.clone();
            real.pop();
            let next = if target.is_absolute() {
                // An absolute target is only acceptable when it names a place inside the
                // root as the root is spelled canonically; anything else is outside, even if
                // some other spelling of it would land back inside.
                match target.strip_prefix(root) {
                    Ok(inside) => {
                        real = root.to_path_buf();
                        depth = 0;
                        components(inside)
                    }
                    Err(_) => return Err(escape(&link, &target)),
                }
            } else {
                components(&target)
            };
            // Refused here, naming the link, rather than later at the `..` that climbs.
            if climbs_above(&next, depth) {
                return Err(escape(&link, &target));
            }
            if next.iter().any(|p| p.as_os_str() == "..") {
                last_link = Some((link, target));
            }
            let mut next = next;
            next.extend(pending);
            pending = next;
        } else if kind.is_dir() {
            depth += 1;
        } else if !pending.is_empty() {
            // `file/more`: the kernel says ENOTDIR, which for a checker means "not there".
            return Ok(Located::Missing);
        } else if kind.is_file() {
            return Ok(Located::File { real });
        } else {
            return Ok(Located::Unreadable("not a regular file".to_string()));
        }
    }
    Ok(Located::Unreadable("is a directory".to_string()))
}

/// The normal and `..` components of a relative path (`.` and empty ones dropped).
fn components(path: &Path) -> VecDeque<PathBuf> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(PathBuf::from(name)),
            Component::ParentDir => Some(PathBuf::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Whether walking `parts` from `depth` levels below the root goes above the root at any
/// point (counting lexically, which is exact here because the directories walked so far are
/// real, and any further link is checked again when it is reached).
fn climbs_above(parts: &VecDeque<PathBuf>, mut depth: usize) -> bool {
    for part in parts {
        if part.as_os_str() == ".." {
            if depth == 0 {
                return true;
            }
            depth -= 1;
        } else {
            depth += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(path: &[u8]) -> Option<PathProblem> {
        check_path(path).err().map(|e| e.problem)
    }

    #[test]
    fn plain_relative_paths_pass() {
        for p in [
            &b"a"[..],
            b"a/b",
            b"./a",
            b"a//b",
            b".hidden",
            b"...",
            b"a/./b",
            b"-",
        ] {
            assert_eq!(problem(p), None, "{:?}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn bad_paths_are_refused_with_their_reason() {
        assert_eq!(problem(b""), Some(PathProblem::Empty));
        assert_eq!(problem(b"a\0b"), Some(PathProblem::Nul));
        assert_eq!(problem(b"/etc/passwd"), Some(PathProblem::Absolute));
        assert_eq!(problem(b".."), Some(PathProblem::ParentDir));
        assert_eq!(problem(b"../a"), Some(PathProblem::ParentDir));
        assert_eq!(problem(b"a/../b"), Some(PathProblem::ParentDir));
        assert_eq!(problem(b"a/.."), Some(PathProblem::ParentDir));
        assert_eq!(problem(b"a/"), Some(PathProblem::TrailingSlash));
        assert_eq!(problem(b"."), Some(PathProblem::NoFileName));
        assert_eq!(problem(b"./."), Some(PathProblem::NoFileName));
    }

    #[test]
    fn errors_name_the_path_escaped_and_the_problem() {
        let e = check_path(b"../x\ny").unwrap_err();
        assert_eq!(
            e.to_string(),
            "path '../x\\ny': has a `..` component, which could climb out of the tree"
        );
    }
}
