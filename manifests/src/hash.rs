//! Hashing file contents with SHA-256, one file per core at a time.
//!
//! Files are handed out biggest first from one shared queue: with a few large files among
//! many small ones, starting a large file last would leave every other core idle while it
//! finishes. A single file cannot be split (SHA-256 is sequential), so one huge file bounds
//! the wall time whatever the core count.
//!
//! `sha2` picks the CPU's SHA extensions at run time when present, which is most of the speed
//! over GNU `sha256sum` (software SHA-256) before the cores are counted.

use std::fs::File;
use std::io::{self, Read};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use sha2::{Digest as _, Sha256};

use crate::entry::Digest;
use crate::path::Located;
use crate::tree::{locate_all, TreeError};

/// Large enough that the per-read system call is noise next to hashing it, small enough to
/// stay in L2 on most cores, so the hasher reads what `read` just wrote from cache.
const BUFFER: usize = 256 * 1024;

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

/// The SHA-256 of one file. Refuses anything but a regular file (after following links),
/// because opening a FIFO would block forever and a directory has no content to hash.
pub fn hash_file(path: &Path) -> io::Result<Digest> {
    let mut buf = vec![0u8; BUFFER];
    hash_path_with(path, &mut buf)
}

fn hash_path_with(path: &Path, buf: &mut [u8]) -> io::Result<Digest> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut file = File::open(path)?;
    hash_with(&mut file, buf)
}

/// Hashes `paths` (relative to `root`, under the path rules) on every core. One result per
/// path, in the order given: a missing file is an `io::ErrorKind::NotFound` error, a
/// directory or unreadable file another error. A path that breaks the rules (absolute, `..`,
/// a link out of the tree) refuses the whole call before anything is read.
pub fn hash_files<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
) -> Result<Vec<io::Result<Digest>>, TreeError> {
    let located = locate_all(root, paths, crate::path::Links::Follow)?;
    let mut jobs = Vec::new();
    let mut results: Vec<Option<io::Result<Digest>>> = Vec::with_capacity(located.len());
    for (index, place) in located.into_iter().enumerate() {
        results.push(match place {
            Located::File { real, len } => {
                jobs.push(Job {
                    index,
                    path: real,
                    len,
                });
                None
            }
            Located::Link { target } => Some(Ok(Digest::of(&target))),
            Located::Missing => Some(Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no such file in the tree",
            ))),
            Located::Unreadable(why) => Some(Err(io::Error::other(why))),
        });
    }
    for (index, result) in hash_jobs(jobs) {
        results[index] = Some(result);
    }
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(io::Error::other("not hashed"))))
        .collect())
}

/// One file to hash: where its result goes, where it is, and its size (for the ordering).
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) index: usize,
    pub(crate) path: PathBuf,
    pub(crate) len: u64,
}

/// Hashes the jobs on up to `available_parallelism` threads, biggest first; returns each
/// job's index with its result, in no particular order.
pub(crate) fn hash_jobs(mut jobs: Vec<Job>) -> Vec<(usize, io::Result<Digest>)> {
    jobs.sort_by_key(|job| std::cmp::Reverse(job.len));
    let threads = thread::available_parallelism()
        .map(NonZeroUsize::get)
        .unwrap_or(1)
        .min(jobs.len());
    let next = AtomicUsize::new(0);
    let work = |jobs: &[Job]| {
        let mut buf = vec![0u8; BUFFER];
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else { break };
            done.push((job.index, hash_path_with(&job.path, &mut buf)));
        }
        done
    };
    if threads <= 1 {
        return work(&jobs);
    }
    thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(|| work(&jobs))).collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(done) => done,
                // A hashing thread cannot panic short of a bug in sha2 or an allocation
                // failure; re-raise rather than report files as checked that were not.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
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

    #[test]
    fn a_directory_is_not_hashed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(hash_file(dir.path()).is_err());
    }
}
