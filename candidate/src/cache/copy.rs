//! Folder trees copied or moved with every file's modification time kept, because build tools
//! decide what is stale by comparing times: a copy stamped "now" would look newer than the
//! sources and be trusted, or older and be rebuilt, at random.
//!
//! `fs::copy` is `copy_file_range` on Linux, which shares extents (a reflink) on filesystems
//! that can (btrfs, XFS) and copies in the kernel elsewhere.

use std::fs::{self, File};
use std::io;
use std::path::Path;

/// Copies the tree at `from` to `to` (which must not exist): folders, regular files with
/// their mode and mtime, and symlinks as links. Anything else (a socket, a fifo) is skipped.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(from)?, to)?;
    } else if kind.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        // Last, so the files written inside do not move it on.
        set_mtime(to, &meta);
    } else if kind.is_file() {
        fs::copy(from, to)?;
        set_mtime(to, &meta);
    }
    Ok(())
}

/// Moves `from` to `to` (a rename when both are on one filesystem, else a copy then removal).
pub(crate) fn move_tree(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        // EXDEV (18 on Linux): another filesystem. (`ErrorKind::CrossesDevices` is newer than
        // the workspace's MSRV.)
        Err(e) if e.raw_os_error() == Some(18) => {
            copy_tree(from, to)?;
            report::scratch::remove_all(from)
        }
        Err(e) => Err(e),
    }
}

/// Gives `path` the modification time `meta` records, best effort (a file we cannot stamp is
/// only rebuilt, never trusted wrongly: its time is "now", newer than any source).
fn set_mtime(path: &Path, meta: &fs::Metadata) {
    if let (Ok(file), Ok(time)) = (File::open(path), meta.modified()) {
        let _ = file.set_modified(time);
    }
}

/// Every regular file under `root` (links not followed), as (path relative to `root`, length),
/// in sorted order: the listing a cache is checked against before it is trusted.
pub(crate) fn listing(root: &Path) -> io::Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    walk(root, root, &mut |rel, meta| {
        out.push((rel.to_string(), meta.len()));
    })?;
    out.sort();
    Ok(out)
}

/// Calls `each` with every regular file under `dir` (relative path, metadata), links not
/// followed; names that are not UTF-8 are skipped (such a file is simply not cached or stamped).
pub(crate) fn walk(
    root: &Path,
    dir: &Path,
    each: &mut dyn FnMut(&str, &fs::Metadata),
) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = fs::symlink_metadata(entry.path())?;
        let path = entry.path();
        if meta.is_dir() {
            walk(root, &path, each)?;
        } else if meta.is_file() {
            if let Some(rel) = path.strip_prefix(root).ok().and_then(Path::to_str) {
                each(rel, &meta);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn a_copied_tree_keeps_every_files_mtime_and_its_links() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("from");
        fs::create_dir_all(from.join("a/b")).unwrap();
        fs::write(from.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink("b/f", from.join("a/l")).unwrap();
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        File::open(from.join("a/b/f"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        copy_tree(&from, &tmp.path().join("to")).unwrap();
        let to = tmp.path().join("to");
        assert_eq!(fs::read(to.join("a/b/f")).unwrap(), b"x");
        assert_eq!(
            fs::metadata(to.join("a/b/f")).unwrap().modified().unwrap(),
            old
        );
        assert_eq!(fs::read_link(to.join("a/l")).unwrap(), Path::new("b/f"));
        assert_eq!(listing(&to).unwrap(), [("a/b/f".to_string(), 1)]);
    }
}
