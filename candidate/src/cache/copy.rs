//! Folder trees copied or moved with every file's modification time kept, because build tools
//! decide what is stale by comparing times: a copy stamped "now" would look newer than the
//! sources and be trusted, or older and be rebuilt, at random.
//!
//! `fs::copy` is `copy_file_range` on Linux, which shares extents (a reflink) on filesystems
//! that can (btrfs, XFS) and copies in the kernel elsewhere.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

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
            runner::scratch::remove_all(from)
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

/// The first entry under `root` that is neither a regular file nor a folder (a link, a FIFO, a
/// socket, a device), relative to `root`: a build folder holding one is never handed over or
/// kept, since a link may name another checkout's files and the others are not data.
pub(crate) fn first_not_plain(root: &Path) -> io::Result<Option<String>> {
    let meta = fs::symlink_metadata(root)?;
    if !meta.is_dir() {
        return Ok((!meta.is_file()).then(String::new));
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            let meta = fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                stack.push(path);
            } else if !meta.is_file() {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                return Ok(Some(rel.to_string_lossy().into_owned()));
            }
        }
    }
    Ok(None)
}

/// The first regular file under `root` whose bytes hold `needle` (a checkout's absolute path),
/// relative to `root`; a file too large to read whole counts as holding it.
pub(crate) fn first_naming(root: &Path, needle: &[u8]) -> io::Result<Option<String>> {
    const MAX_READ: u64 = 256 << 20;
    let mut found = None;
    let mut failed = None;
    walk(root, root, &mut |rel, meta| {
        if found.is_some() || failed.is_some() {
            return;
        }
        if meta.len() > MAX_READ {
            found = Some(rel.to_string());
            return;
        }
        match fs::read(root.join(rel)) {
            Ok(bytes) if holds(&bytes, needle) => found = Some(rel.to_string()),
            Ok(_) => {}
            Err(e) => failed = Some(e),
        }
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(found),
    }
}

/// Whether `hay` holds `needle` anywhere.
fn holds(hay: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    let mut from = 0;
    while let Some(p) = hay[from..].iter().position(|&b| b == first) {
        if hay[from + p..].starts_with(needle) {
            return true;
        }
        from += p + 1;
    }
    false
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

/// `checkout/rel` when no folder on the way there is a link (nor `rel` itself): a cached path
/// is only ever read, written or removed inside the checkout, even when a tracked link sits
/// where its parent should be.
pub(super) fn in_tree(checkout: &Path, rel: &str) -> Option<PathBuf> {
    use files::walk::End;
    match files::walk::below(checkout, Path::new(rel)) {
        // A link or a file at the end is not a folder of ours either.
        Ok(r) if matches!(r.end, End::Folder | End::Missing) => Some(r.path),
        _ => None,
    }
}

/// Removes the cached `paths` from `checkout` (a restore that is not trusted after all).
pub fn remove_outputs(checkout: &Path, paths: &[String]) {
    for rel in paths {
        if let Some(p) = in_tree(checkout, rel) {
            let _ = runner::scratch::remove_all(&p);
        }
    }
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

    #[test]
    fn a_cached_path_behind_a_link_is_never_followed_out_of_the_checkout() {
        let tmp = tempfile::tempdir().unwrap();
        let (checkout, outside) = (tmp.path().join("co"), tmp.path().join("outside"));
        fs::create_dir_all(&checkout).unwrap();
        fs::create_dir_all(outside.join("target")).unwrap();
        fs::write(outside.join("target/keep"), "mine").unwrap();
        std::os::unix::fs::symlink(&outside, checkout.join("out")).unwrap();
        assert_eq!(in_tree(&checkout, "out/target"), None);
        assert_eq!(in_tree(&checkout, "out"), None);
        assert_eq!(in_tree(&checkout, "target"), Some(checkout.join("target")));
        remove_outputs(&checkout, &["out/target".into()]);
        assert!(outside.join("target/keep").exists());
    }
}
