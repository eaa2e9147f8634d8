//! Looking up and hashing the many paths of one tree at once: what `verify`, `manifest_for` and
//! `hash_files` all stand on.
//!
//! A manifest of 100,000 small files costs almost nothing to hash; what costs is finding each
//! file. A lookup by whole path makes the kernel walk every component again (`src`, then
//! `src/mod`, ...) for every `lstat` and every `open`, and the per-component walk of
//! [`crate::path`] does that once per component. So here the paths are sorted (every path below
//! one folder is then contiguous), each worker keeps the folders of its current path open as
//! handles (`O_PATH`, never following a link), a folder holding many of the paths is listed
//! once (the listing gives each entry's type, so its files need no `stat`), and a file costs
//! one `openat` of a single name relative to its folder, an `fstat` of what was opened, one
//! `read` into a reused buffer and a `close`, on every core. Where the kernel allows, the small
//! files go through an io_uring ([`ring`]) in batches, one trip into the kernel for many files.
//!
//! The one thing to know: this fast path does not judge links, it only recognises the plain
//! case (every folder on the way a real folder, the last name a regular file, or nothing
//! there). Anything else (a link anywhere, a folder or FIFO where a file should be, a
//! permission error on the way) is handed to [`crate::path::locate`], the one place that
//! follows or refuses links, so every tree gets exactly the statuses and errors that walk gives.
//!
//! Passes: each worker takes a chunk of the sorted paths, looks each up (listed or statted,
//! never opened), then reads the regular files among them, so no core waits for the others
//! between looking and reading and a name is opened only once its lookup found a regular file.
//! What the fast path did not recognise is then judged by the walk; a path the rules refuse
//! (a link out of the tree) fails the whole call there, and what was read is dropped unseen.
//! Only regular files below real folders of the tree are ever opened before that, so nothing
//! outside the tree is touched. The large files found while reading are hashed last, biggest
//! first.

use std::borrow::Cow;
use std::io;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::errno::Errno;
use nix::sys::stat::Mode;

use crate::cores::cores;
use crate::entry::Digest;
use crate::path::{check_path, Links, Located};
use crate::tree::{locate_all, locate_all_in, open_root, TreeError};

mod listing;
mod ring;
mod worker;

pub(crate) use ring::Io;
use worker::{exhausted, split_last, Fast, Read, Worker, FOLDER, LARGE, PER_WORKER};

/// What one path of the tree turned out to be.
#[derive(Debug)]
pub(crate) enum Found {
    /// A regular file (reached through in-tree links under [`Links::Follow`]): the digest of its
    /// content, or why it could not be read.
    File(io::Result<Digest>),
    /// A link judged as git records it ([`Links::AsRecorded`]): the digest of its target.
    Link(Digest),
    /// Nothing there: no such name, a parent that is not a folder, an in-tree link dangling.
    Missing,
    /// Something is there that cannot be read as a file; the text says what.
    Unreadable(String),
}

/// Paths handed to a worker at a time: enough that its open folders pay off, few enough that
/// the last chunk does not leave the other cores idle for long.
const CHUNK: usize = 256;

/// Descriptors left for the rest of the process (the caller's files, its threads' pipes).
const RESERVE: usize = 32;

/// Looks up every path (relative to `root`, under the path rules and `links`) and hashes what
/// is a file, on every core. One result per path, in the order given.
///
/// A path the rules refuse (absolute, `..`, a link out of the tree) is an error for the whole
/// call, the first such in the order given: a lexical one before any file is opened, a link
/// out of the tree before any result is given.
pub(crate) fn hash_all<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
    links: Links,
) -> Result<Vec<Found>, TreeError> {
    hash_all_with(root, paths, links, Io::from_env())
}

/// [`hash_all`] with the way of reading small files chosen ([`Io`]), so tests run both.
pub(crate) fn hash_all_with<P: AsRef<[u8]> + Sync>(
    root: &Path,
    paths: &[P],
    links: Links,
    io: Io,
) -> Result<Vec<Found>, TreeError> {
    if let Some(bad) = paths.iter().position(|p| check_path(p.as_ref()).is_err()) {
        // The error the per-path walk gives: the first in order, whichever kind (a link out of
        // the tree before the bad path wins).
        locate_all(root, &paths[..=bad], links)?;
        check_path(paths[bad].as_ref())?;
    }
    let real_root = open_root(root)?;
    let root_fd =
        nix::fcntl::open(&real_root, FOLDER, Mode::empty()).map_err(|e| TreeError::Root {
            root: root.to_path_buf(),
            source: e.into(),
        })?;

    // Pass 1, on every core: each chunk of sorted paths is looked up and then its regular files
    // are read, so no core waits for the others between looking and reading.
    let order = sorted(paths.len(), |i| paths[i].as_ref());
    let chunks = chunked(&order, |_| 0);
    let mut found: Vec<Option<Found>> = (0..paths.len()).map(|_| None).collect();
    let mut slow: Vec<usize> = Vec::new();
    let mut later: Vec<(ToRead<'_>, u64)> = Vec::new();
    for (index, fast) in on_every_core(
        root_fd.as_fd(),
        io,
        waiting_workers(),
        &order,
        &chunks,
        |worker, items, out| worker.check_all(items, |i| paths[i].as_ref(), out),
    ) {
        let rel = || Cow::Borrowed(paths[index].as_ref());
        match fast {
            Fast::Missing => found[index] = Some(Found::Missing),
            Fast::Other => slow.push(index),
            Fast::Read(read) => settle(&mut found, &mut later, index, rel, read),
        }
    }

    // What the fast path did not recognise goes to the walk that judges links, in the order
    // given so its first error is the first in that order.
    slow.sort_unstable();
    let slow_paths: Vec<&[u8]> = slow.iter().map(|&i| paths[i].as_ref()).collect();
    let located = locate_all_in(&real_root, &slow_paths, links)?;
    let mut reads: Vec<ToRead> = Vec::new();
    for (index, place) in slow.into_iter().zip(located) {
        found[index] = match place {
            Located::File { real } => {
                // `real` holds no link (the walk resolved them all), so it reads like any plain
                // path through the folder handles.
                let rel = real.strip_prefix(&real_root).unwrap_or(&real);
                reads.push(ToRead {
                    index,
                    rel: Cow::Owned(rel.as_os_str().as_bytes().to_vec()),
                });
                continue;
            }
            Located::Link { target } => Some(Found::Link(Digest::of(&target))),
            Located::Missing => Some(Found::Missing),
            Located::Unreadable(why) => Some(Found::Unreadable(why)),
        };
    }

    // Pass 2: the files reached through links, in path order; a large one is put off.
    let order = sorted(reads.len(), |r| &reads[r].rel);
    let chunks = chunked(&order, |_| 0);
    for (r, fast) in on_every_core(
        root_fd.as_fd(),
        io,
        waiting_workers(),
        &order,
        &chunks,
        |worker, items, out| worker.read_all(items, |r| &reads[r].rel, out),
    ) {
        if let Fast::Read(read) = fast {
            let ToRead { index, rel } = &reads[r];
            settle(&mut found, &mut later, *index, || rel.clone(), read);
        }
    }

    // Pass 3: the large files, biggest first, one a work item (SHA-256 cannot split a file, so
    // a large one started last would finish alone).
    later.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
    let order: Vec<usize> = (0..later.len()).collect();
    let chunks = chunked(&order, |_| LARGE);
    for (l, read) in on_every_core(
        root_fd.as_fd(),
        Io::Plain,
        cores(),
        &order,
        &chunks,
        |worker, items, out| {
            for &l in items {
                out.push((l, worker.read(&later[l].0.rel, false)));
            }
        },
    ) {
        let ToRead { index, rel } = &later[l].0;
        found[*index] = Some(Found::File(match read {
            Ok(Read::Done(digest)) => Ok(digest),
            Ok(Read::Later(_)) => Err(io::Error::other("not hashed")),
            // Out of descriptors or memory among the others: once more, alone, now that every
            // worker has let its own go; still out, the check fails rather than the file.
            Err(e) if io_exhausted(&e) => {
                match Worker::new(root_fd.as_fd(), Io::Plain).read(rel, false) {
                    Ok(Read::Done(digest)) => Ok(digest),
                    Ok(Read::Later(_)) => Err(io::Error::other("not hashed")),
                    Err(e) if io_exhausted(&e) => {
                        return Err(TreeError::Exhausted {
                            path: rel.to_vec(),
                            source: e,
                        })
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }));
    }
    Ok(found
        .into_iter()
        .map(|f| f.unwrap_or_else(|| Found::File(Err(io::Error::other("not hashed")))))
        .collect())
}

/// Records what reading the file of `index` gave: its digest or error, or, for a large file,
/// a place among the files hashed last.
fn settle<'a>(
    found: &mut [Option<Found>],
    later: &mut Vec<(ToRead<'a>, u64)>,
    index: usize,
    rel: impl FnOnce() -> Cow<'a, [u8]>,
    read: io::Result<Read>,
) {
    found[index] = match read {
        Ok(Read::Done(digest)) => Some(Found::File(Ok(digest))),
        Ok(Read::Later(len)) => {
            later.push((ToRead { index, rel: rel() }, len));
            return;
        }
        // Read again in the last pass, and alone if need be (the machine, not the file).
        Err(e) if io_exhausted(&e) => {
            later.push((ToRead { index, rel: rel() }, 0));
            return;
        }
        Err(e) => Some(Found::File(Err(e))),
    };
}

/// [`exhausted`] for an `io::Error`.
fn io_exhausted(e: &io::Error) -> bool {
    e.raw_os_error()
        .is_some_and(|n| exhausted(Errno::from_raw(n)))
}

/// A regular file to read: whose result it is, and where it is (no link on the way).
#[derive(Debug)]
struct ToRead<'a> {
    index: usize,
    rel: Cow<'a, [u8]>,
}

/// `0..n` with the paths below each folder together, which is all the workers need: in the
/// order of the keys' bytes (a common prefix makes a folder's paths contiguous), unless the
/// list already has each folder's files together (git's order, `sort`'s, or `find`'s in a tree
/// whose folders hold files or folders but not both), which is kept as it is. On 100,000
/// paths, sorting cost 9 ms; looking costs one.
fn sorted<'a>(n: usize, key: impl Fn(usize) -> &'a [u8]) -> Vec<usize> {
    let mut items: Vec<usize> = (0..n).collect();
    if !grouped(&items, &key) {
        items.sort_unstable_by(|&a, &b| key(a).cmp(key(b)));
    }
    items
}

/// Whether the files of each folder come together in `items`: no folder (the path up to its
/// last `/`) shows up again once another has followed it.
fn grouped<'a>(items: &[usize], key: impl Fn(usize) -> &'a [u8]) -> bool {
    let folder = |i: usize| split_last(key(i)).map_or(&b""[..], |(folder, _)| folder);
    let mut done: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    let mut here: Option<&[u8]> = None;
    for &i in items {
        let folder = folder(i);
        if here == Some(folder) {
            continue;
        }
        if let Some(left) = here.replace(folder) {
            done.insert(left);
        }
        if done.contains(folder) {
            return false;
        }
    }
    true
}

/// The work items: consecutive runs of `order` of up to [`CHUNK`] paths and about [`LARGE`]
/// bytes each (so a large file is an item of its own, and a few hundred small ones are shared
/// between the cores rather than read by one).
fn chunked(order: &[usize], size: impl Fn(usize) -> u64) -> Vec<Range<usize>> {
    let mut chunks = Vec::with_capacity(order.len() / CHUNK + 1);
    let (mut start, mut bytes) = (0, 0u64);
    for (at, &item) in order.iter().enumerate() {
        bytes = bytes.saturating_add(size(item));
        if at + 1 - start == CHUNK || bytes >= LARGE {
            chunks.push(start..at + 1);
            (start, bytes) = (at + 1, 0);
        }
    }
    if start < order.len() {
        chunks.push(start..order.len());
    }
    chunks
}

/// Workers for the passes that mostly wait (looking up and reading small files): two a core,
/// since a worker waiting for the disk leaves its core to another, and at most
/// [`WAITING_MAX`]. On 100,000 small files from a cold page cache on 2 cores, one worker a core
/// took 1.7 s and two 1.2 s (plain calls: 6.5 s and 3.5 s); warm, where nothing waits, two cost
/// nothing measurable. Four a core were faster still cold (1.0 s, 2.5 s) but 4% slower warm
/// over 20 alternating runs. Hashing large files keeps a core busy, so that pass has one worker
/// a core.
fn waiting_workers() -> usize {
    (2 * cores()).min(WAITING_MAX)
}

/// Enough to keep a disk's queue full (each worker's ring has [`ring::SLOTS`] files in
/// flight), few enough that a machine of many cores does not start a hundred threads, each
/// with its ring's buffers, to check a tree.
const WAITING_MAX: usize = 16;

/// `wanted` workers, fewer when the process may not open enough descriptors for them all
/// (a low `ulimit -n`), never none: a descriptor a worker could not get would otherwise
/// become a file's status.
fn within_descriptors(wanted: usize) -> usize {
    let Ok((soft, _)) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
    else {
        return wanted;
    };
    let open = std::fs::read_dir("/proc/self/fd").map_or(RESERVE, |d| d.count());
    workers_for(usize::try_from(soft).unwrap_or(usize::MAX), open, wanted)
}

/// [`within_descriptors`] for a limit of `limit` descriptors of which `open` are open.
fn workers_for(limit: usize, open: usize, wanted: usize) -> usize {
    let free = limit.saturating_sub(open).saturating_sub(RESERVE);
    (free / PER_WORKER).clamp(1, wanted.max(1))
}

/// Runs `each` on every chunk of `order`, on up to `workers` threads (each with its own open
/// folders and buffer); `each` pushes each item with its result, and they come back in no
/// particular order.
fn on_every_core<T: Send>(
    root: BorrowedFd<'_>,
    io: Io,
    workers: usize,
    order: &[usize],
    chunks: &[Range<usize>],
    each: impl Fn(&mut Worker<'_>, &[usize], &mut Vec<(usize, T)>) + Sync,
) -> Vec<(usize, T)> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut worker = Worker::new(root, io);
        let mut done = Vec::new();
        while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
            each(&mut worker, &order[chunk.clone()], &mut done);
        }
        done
    };
    let threads = within_descriptors(workers).min(chunks.len());
    if threads <= 1 {
        return work();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(done) => done,
                // A worker cannot panic short of a bug or an allocation failure; re-raise
                // rather than report paths as checked that were not.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests;
