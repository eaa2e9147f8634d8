//! The mutated file on disk: found under one path rule, read, written and restored without ever
//! following a link.
//!
//! A suite runs arbitrary code in the checkout. It may replace the mutated file by a symlink to
//! somewhere else, by a folder, by another file, or delete it; a restore that wrote the original
//! bytes to the path blindly would then write through the link into a file outside the tree. So
//! the file is remembered by what it *is* (device and inode, a regular file) when the mutant is
//! written, and before every write that identity is checked again: a file that is no longer the
//! same regular file is never written to. The caller reports such a mutant as an `error` and
//! discards the checkout.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// What a file is, beyond its path: the same device and inode means the same file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    fn of(meta: &fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// How the file at the path is no longer the file that was mutated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Deleted,
    Symlink,
    Folder,
    /// A FIFO, a socket, a device.
    Special,
    /// A regular file, but another one (another inode).
    Replaced,
    /// The path cannot be examined at all (a parent folder made unreadable, say).
    Unreachable(String),
}

impl fmt::Display for Change {
    /// The row's status: `the suite replaced the mutated file (now a symlink)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Deleted => write!(f, "the suite deleted the mutated file"),
            Change::Symlink => write!(f, "the suite replaced the mutated file (now a symlink)"),
            Change::Folder => write!(f, "the suite replaced the mutated file (now a folder)"),
            Change::Special => write!(
                f,
                "the suite replaced the mutated file (now a special file)"
            ),
            Change::Replaced => write!(f, "the suite replaced the mutated file (now another file)"),
            Change::Unreachable(why) => {
                write!(f, "the suite made the mutated file unreachable ({why})")
            }
        }
    }
}

/// Why a write did not happen or did not hold.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The path is no longer the file: nothing was written.
    Changed(Change),
    Io(io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Changed(c) => write!(f, "{c}"),
            WriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {}

/// The one path rule for a spec's `file` inside a tree (used by `check` and by `run` alike):
/// `root` joined with `rel`, every link resolved, must still lie under `root` (resolved too)
/// and must be a regular file.
pub(crate) fn file_in(root: &Path, rel: &str) -> Result<PathBuf> {
    let root = root
        .canonicalize()
        .with_context(|| format!("the tree {}", files::escape::path(root)))?;
    let real = root
        .join(rel)
        .canonicalize()
        .with_context(|| format!("file {rel:?} is not in the checkout"))?;
    if !real.starts_with(&root) {
        bail!("file {rel:?} leads outside the tree (through a symlink)");
    }
    let meta = fs::symlink_metadata(&real).with_context(|| format!("file {rel:?}"))?;
    if !meta.file_type().is_file() {
        bail!("file {rel:?} is not a regular file");
    }
    Ok(real)
}

/// Opens `path` itself, never a link's target, and never blocking on a FIFO.
fn open_nofollow(path: &Path, write: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
}

/// A regular file as read: its bytes, its identity, and the open descriptor it was read
/// through. Keeping `file` open pins the inode: while it is held, a file put in its place can
/// never be given the same inode number, so an identity check cannot be fooled by reuse.
#[derive(Debug)]
pub(crate) struct Regular {
    pub bytes: Vec<u8>,
    pub id: Identity,
    pub file: File,
}

/// The regular file at `path`, read through one descriptor opened without following a link.
pub(crate) fn read_regular(path: &Path) -> io::Result<Regular> {
    let mut f = open_nofollow(path, false)?;
    let meta = f.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            files::escape::path(path)
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(1 << 30) as usize);
    f.read_to_end(&mut bytes)?;
    Ok(Regular {
        bytes,
        id: Identity::of(&meta),
        file: f,
    })
}

fn classify(meta: &fs::Metadata, id: Identity) -> Result<(), Change> {
    let t = meta.file_type();
    if t.is_symlink() {
        Err(Change::Symlink)
    } else if t.is_dir() {
        Err(Change::Folder)
    } else if !t.is_file() {
        Err(Change::Special)
    } else if Identity::of(meta) != id {
        Err(Change::Replaced)
    } else {
        Ok(())
    }
}

/// Whether the path still holds the file `id` names (the same regular file, not a link to it).
pub(crate) fn check(path: &Path, id: Identity) -> Result<(), Change> {
    match fs::symlink_metadata(path) {
        Ok(meta) => classify(&meta, id),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Change::Deleted),
        Err(e) => Err(Change::Unreachable(e.to_string())),
    }
}

/// Replaces the contents of the file `id` names with `bytes`, in place, with a modification
/// time from [`candidate::fresh::stamp`], and proves it by reading them back; writes nothing
/// when the path no longer holds that file.
pub(crate) fn write_in_place(path: &Path, id: Identity, bytes: &[u8]) -> Result<(), WriteError> {
    check(path, id).map_err(WriteError::Changed)?;
    let mut f = match open_nofollow(path, true) {
        Ok(f) => f,
        // Replaced between the check and the open: ELOOP is a link, EISDIR a folder.
        Err(e) => {
            return Err(match check(path, id) {
                Err(c) => WriteError::Changed(c),
                Ok(()) => WriteError::Io(e),
            })
        }
    };
    // The descriptor is the file we will write: it must be the one we mutated.
    let meta = f.metadata().map_err(WriteError::Io)?;
    classify(&meta, id).map_err(WriteError::Changed)?;
    f.set_len(0).map_err(WriteError::Io)?;
    f.write_all(bytes).map_err(WriteError::Io)?;
    // A time no build tool mistakes for an earlier content's (a `.pyc` of the same size).
    candidate::fresh::stamp(path, &f, manifests::Digest::of(bytes), Some(&meta))
        .map_err(WriteError::Io)?;
    drop(f);
    let now = read_regular(path).map_err(WriteError::Io)?;
    if now.id != id {
        return Err(WriteError::Changed(Change::Replaced));
    }
    if now.bytes != bytes {
        return Err(WriteError::Io(io::Error::other(format!(
            "{} does not hold the bytes just written",
            files::escape::path(path)
        ))));
    }
    Ok(())
}

/// One file of a checkout with other bytes swapped in (a mutant, a canary's unloadable line),
/// and its original bytes to put back: the read, swap and restore that every run of a suite on
/// a changed file goes through, in one place.
///
/// The file is read once ([`Swapped::read`], held open so its inode cannot be reused by a
/// replacement), written with [`Swapped::put`], and put back by [`Swapped::restore`], which
/// proves it, or on drop (an early return or a panic), best effort; a file that was never
/// swapped is never written, and a path that no longer holds the same file never is either.
pub(crate) struct Swapped {
    path: PathBuf,
    id: Identity,
    original: Vec<u8>,
    _pin: File,
    /// Other bytes are in place: the original must go back.
    swapped: bool,
}

impl Swapped {
    /// Reads `rel` in the checkout at `root`, under [`file_in`]'s rule; nothing is written yet.
    pub fn read(root: &Path, rel: &str) -> Result<Swapped> {
        let path = file_in(root, rel)?;
        let Regular { bytes, id, file } = read_regular(&path)
            .with_context(|| format!("reading {}", files::escape::path(&path)))?;
        Ok(Swapped {
            path,
            id,
            original: bytes,
            _pin: file,
            swapped: false,
        })
    }

    /// The file's bytes as they were read.
    pub fn original(&self) -> &[u8] {
        &self.original
    }

    /// Writes `bytes` (`what`, for an error: "the mutant") in place of the original.
    pub fn put(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        self.swapped = true;
        write_in_place(&self.path, self.id, bytes)
            .with_context(|| format!("writing {what} into {}", files::escape::path(&self.path)))
    }

    /// Whether the path still holds the file that was swapped (see [`check`]).
    pub fn check(&self) -> Result<(), Change> {
        check(&self.path, self.id)
    }

    /// Puts the original bytes back and proves them: `Ok(Err(change))` when a suite replaced
    /// the file (nothing was written), `Err` when the write failed.
    pub fn restore(mut self) -> Result<Result<(), Change>> {
        self.swapped = false;
        match write_in_place(&self.path, self.id, &self.original) {
            Ok(()) => Ok(Ok(())),
            Err(WriteError::Changed(c)) => Ok(Err(c)),
            Err(WriteError::Io(e)) => Err(e).with_context(|| {
                format!(
                    "restoring {} to its original bytes",
                    files::escape::path(&self.path)
                )
            }),
        }
    }

    /// Gives up on the file: it is not ours any more, and is never written again.
    pub fn abandon(mut self) {
        self.swapped = false;
    }
}

impl Drop for Swapped {
    fn drop(&mut self) {
        if self.swapped {
            let _ = write_in_place(&self.path, self.id, &self.original);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The temp dir, the file, the victim, the file's identity, and its pin.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, Identity, File) {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::write(&victim, "victim bytes").unwrap();
        let file = tmp.path().join("lib.sh");
        fs::write(&file, "original").unwrap();
        let r = read_regular(&file).unwrap();
        (tmp, file, victim, r.id, r.file)
    }

    #[test]
    fn a_link_in_place_of_the_file_is_never_written_through() {
        let (_tmp, file, victim, id, _pin) = setup();
        fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&victim, &file).unwrap();
        let e = write_in_place(&file, id, b"original").unwrap_err();
        assert!(matches!(e, WriteError::Changed(Change::Symlink)), "{e}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "victim bytes");
        assert!(read_regular(&file).is_err(), "a link is never opened");
    }

    #[test]
    fn a_folder_another_file_or_nothing_is_named_as_such() {
        let (_tmp, file, _victim, id, _pin) = setup();
        fs::remove_file(&file).unwrap();
        assert_eq!(check(&file, id), Err(Change::Deleted));
        fs::create_dir(&file).unwrap();
        assert_eq!(check(&file, id), Err(Change::Folder));
        fs::remove_dir(&file).unwrap();
        fs::write(&file, "original").unwrap();
        assert_eq!(check(&file, id), Err(Change::Replaced));
        assert!(matches!(
            write_in_place(&file, id, b"x"),
            Err(WriteError::Changed(Change::Replaced))
        ));
        assert_eq!(fs::read_to_string(&file).unwrap(), "original");
    }

    #[test]
    fn the_same_file_is_rewritten_in_place_and_proved() {
        let (_tmp, file, _victim, id, _pin) = setup();
        write_in_place(&file, id, b"mutated").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"mutated");
        assert_eq!(check(&file, id), Ok(()));
    }

    #[test]
    fn the_path_rule_refuses_links_out_and_non_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("tree");
        fs::create_dir_all(root.join("dir")).unwrap();
        fs::write(tmp.path().join("victim"), "v").unwrap();
        fs::write(root.join("ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("victim"), root.join("out")).unwrap();
        std::os::unix::fs::symlink("ok.txt", root.join("inside")).unwrap();
        assert!(file_in(&root, "ok.txt").is_ok());
        assert!(file_in(&root, "inside").is_ok());
        let e = file_in(&root, "out").unwrap_err().to_string();
        assert!(e.contains("leads outside the tree"), "{e}");
        let e = file_in(&root, "dir").unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(file_in(&root, "missing").is_err());
    }
}
