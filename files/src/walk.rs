//! The one walk to a path inside a root through no link: "is `root/rel` reached through real
//! folders only, and what stands there?".
//!
//! A tree a suite or a patch has touched may hold a link where a folder was: writing,
//! removing, or reading `root/a/b` through a link at `a` would act outside the root. So the walk
//! looks at each name with `lstat` (never following a link) and stops at the first one that is
//! not a real folder. What to do about it (refuse, skip, remove the thing in the way) is each
//! caller's to say. The walk is not atomic against a tree changed while it runs: the trees it
//! guards are ones gatekit made or is about to write.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// What stands at the end of a walk that got there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Nothing yet: the last name, or a folder on the way to it, is not there (or cannot be
    /// looked at).
    Missing,
    /// A real folder.
    Folder,
    /// A regular file.
    File,
    /// A symbolic link (not followed).
    Link,
    /// A FIFO, a socket, a device.
    Other,
}

/// Where the walk got: `root/rel`, and what stands there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reached {
    pub path: PathBuf,
    pub end: End,
}

/// Why the walk stopped before the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// `rel` is not plain names (absolute, `..`, a leading `.`): it could leave the root.
    NotPlain,
    /// A folder on the way is a link, at this path.
    Link(PathBuf),
    /// A folder on the way is a file (or another non-folder), at this path.
    NotFolder(PathBuf),
}

/// Walks from `root` to `root/rel` through real folders only (see the module doc). `root`
/// itself is trusted: the caller chose it.
pub fn below(root: &Path, rel: &Path) -> Result<Reached, Blocked> {
    let parts: Vec<Component> = rel.components().collect();
    if !parts.iter().all(|c| matches!(c, Component::Normal(_))) {
        return Err(Blocked::NotPlain);
    }
    let mut at = root.to_path_buf();
    for (n, part) in parts.iter().enumerate() {
        at.push(part);
        let Ok(meta) = fs::symlink_metadata(&at) else {
            return Ok(Reached {
                path: root.join(rel),
                end: End::Missing,
            });
        };
        let kind = meta.file_type();
        let end = if kind.is_symlink() {
            End::Link
        } else if kind.is_dir() {
            End::Folder
        } else if kind.is_file() {
            End::File
        } else {
            End::Other
        };
        if n + 1 == parts.len() {
            return Ok(Reached { path: at, end });
        }
        match end {
            End::Folder => {}
            End::Link => return Err(Blocked::Link(at)),
            _ => return Err(Blocked::NotFolder(at)),
        }
    }
    Ok(Reached {
        path: at,
        end: End::Folder,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A root with `a/b/file`, a link `a/out -> OUTSIDE`, a link `a/in -> b`, a link
    /// `a/b/self -> file`, a file `a/f` standing where a folder might be expected, and a FIFO.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::create_dir_all(tmp.path().join("outside")).unwrap();
        fs::write(tmp.path().join("outside/secret"), "x").unwrap();
        fs::write(root.join("a/b/file"), "f").unwrap();
        fs::write(root.join("a/f"), "f").unwrap();
        symlink(tmp.path().join("outside"), root.join("a/out")).unwrap();
        symlink("b", root.join("a/in")).unwrap();
        symlink("file", root.join("a/b/self")).unwrap();
        (tmp, root)
    }

    fn end(root: &Path, rel: &str) -> Result<End, Blocked> {
        below(root, Path::new(rel)).map(|r| r.end)
    }

    #[test]
    fn real_folders_lead_to_what_stands_at_the_end() {
        let (_tmp, root) = tree();
        assert_eq!(
            below(&root, Path::new("a/b/file")),
            Ok(Reached {
                path: root.join("a/b/file"),
                end: End::File
            })
        );
        assert_eq!(end(&root, "a/b"), Ok(End::Folder));
        assert_eq!(end(&root, "a/b/new"), Ok(End::Missing));
        assert_eq!(end(&root, "a/new/deeper"), Ok(End::Missing));
        assert_eq!(end(&root, ""), Ok(End::Folder));
    }

    #[test]
    fn a_link_to_outside_is_never_walked_through() {
        let (_tmp, root) = tree();
        assert_eq!(
            end(&root, "a/out/secret"),
            Err(Blocked::Link(root.join("a/out")))
        );
        // At the end, the link itself is what stands there: it is never followed.
        assert_eq!(end(&root, "a/out"), Ok(End::Link));
    }

    #[test]
    fn a_link_inside_is_not_walked_through_either() {
        let (_tmp, root) = tree();
        assert_eq!(
            end(&root, "a/in/file"),
            Err(Blocked::Link(root.join("a/in")))
        );
        assert_eq!(end(&root, "a/b/self"), Ok(End::Link));
    }

    #[test]
    fn a_file_where_a_folder_is_expected_blocks_the_way() {
        let (_tmp, root) = tree();
        assert_eq!(
            end(&root, "a/f/x"),
            Err(Blocked::NotFolder(root.join("a/f")))
        );
    }

    #[test]
    fn a_path_that_could_leave_is_not_walked() {
        let (_tmp, root) = tree();
        for rel in ["../root/a", "a/../a", "/etc", "./a"] {
            assert_eq!(end(&root, rel), Err(Blocked::NotPlain), "{rel}");
        }
    }

    #[test]
    fn a_socket_is_other() {
        let (_tmp, root) = tree();
        let _socket = std::os::unix::net::UnixListener::bind(root.join("a/sock")).unwrap();
        assert_eq!(end(&root, "a/sock"), Ok(End::Other));
    }
}
