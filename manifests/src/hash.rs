//! Hashing content with SHA-256: what a reader yields ([`hash_reader`]) and one file
//! ([`hash_file`]), the house's one sha256 of a file; the many paths of a tree are hashed on
//! every core by the fast path, which reads each file with the helpers here.
//!
//! A single file cannot be split (SHA-256 is sequential), so one huge file bounds the wall
//! time of a check whatever the core count.
//!
//! `sha2` picks the CPU's SHA extensions at run time when present, which is most of the speed
//! over GNU `sha256sum` (software SHA-256) before the cores are counted.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest as _, Sha256};

use crate::entry::Digest;

/// Large enough that the per-read system call is noise next to hashing it, small enough to
/// stay in L2 on most cores, so the hasher reads what `read` just wrote from cache.
pub(crate) const BUFFER: usize = 256 * 1024;

/// The SHA-256 of everything `reader` yields.
pub fn hash_reader(mut reader: impl Read) -> io::Result<Digest> {
    let mut buf = vec![0u8; BUFFER];
    hash_with(&mut reader, &mut buf)
}

fn hash_with(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<Digest> {
    let mut hasher = Sha256::new();
    loop {
        match reader.read(buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(Digest(hasher.finalize().into()))
}

/// The SHA-256 of one file's content: the house's one sha256 of a file (its hex is
/// [`Digest::to_hex`]). Refuses anything but a regular file (after following links), because
/// opening a FIFO would block forever and a directory has no content to hash. Reads in pieces
/// of 256 KiB, so a file of any size costs that much memory.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f");
/// std::fs::write(&path, b"abc")?;
/// assert_eq!(
///     manifests::hash_file(&path)?.to_hex(),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// assert!(manifests::hash_file(dir.path()).is_err(), "a folder is not hashed");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn hash_file(path: &Path) -> io::Result<Digest> {
    let mut buf = vec![0u8; BUFFER];
    hash_path_with(path, &mut buf)
}

fn hash_path_with(path: &Path, buf: &mut [u8]) -> io::Result<Digest> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut file = File::open(path)?;
    hash_sized(&mut file, meta.len(), buf)
}

/// The SHA-256 of an open regular file that was `len` bytes when it was statted, read into
/// `buf`.
///
/// A read of a regular file comes up short only at its end; when that end is where the size
/// said it would be, the read that would return 0 is skipped: for a small file that is one
/// system call of the four it costs. A file that grew since keeps being read to its end.
pub(crate) fn hash_sized(file: &mut File, len: u64, buf: &mut [u8]) -> io::Result<Digest> {
    hash_rest(file, len, buf, Sha256::new(), 0)
}

/// [`hash_sized`] for a file whose first `done` bytes `hasher` has already taken, read from
/// where `file` stands (the caller seeks past them).
pub(crate) fn hash_rest(
    file: &mut File,
    len: u64,
    buf: &mut [u8],
    mut hasher: Sha256,
    done: u64,
) -> io::Result<Digest> {
    let mut total = done;
    loop {
        let n = match file.read(buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total = total.saturating_add(n as u64);
        if n < buf.len() && total == len {
            break;
        }
    }
    Ok(Digest(hasher.finalize().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        assert_eq!(
            hash_reader(&b""[..]).unwrap().to_hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hash_reader(&b"abc"[..]).unwrap().to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_directory_is_not_hashed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(hash_file(dir.path()).is_err());
    }
}
