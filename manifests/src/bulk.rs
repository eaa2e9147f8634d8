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
use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, Mode, SFlag};

use crate::cores::cores;
use crate::entry::Digest;
use crate::hash::{hash_rest, hash_sized, BUFFER};
use crate::path::{check_path, Links, Located};
use crate::tree::{locate_all, locate_all_in, open_root, TreeError};

pub(crate) use ring::Io;
use ring::Ring;

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

/// Files at least this large are hashed one per work item, biggest first (SHA-256 cannot split
/// a file, so a large one started last would finish alone).
const LARGE: u64 = 1 << 20;

/// From this many paths in one folder, the folder is listed once (its entries' types come with
/// the names) rather than each name statted: a `getdents` for the folder instead of a lookup
/// for each file.
const LIST_FROM: usize = 8;

/// A folder is listed only when it holds about as many entries as it is asked for, or few:
/// listing a folder of 100,000 entries for 8 of them costs more than 8 lookups. Its entries
/// are guessed from its size, at [`ENTRY_BYTES`] each (ext4 spends about that on a short
/// name, tmpfs 20, btrfs twice the name): a listing at most [`LIST_RATIO`] times the names
/// asked for, or at most [`LIST_ANYWAY`] entries, is listed.
const ENTRY_BYTES: u64 = 32;
const LIST_RATIO: u64 = 4;
const LIST_ANYWAY: u64 = 256;

/// Folder handles a worker keeps open at most: a path deeper than this is reached by a walk
/// that holds two handles at a time and keeps none (see [`Worker::folder`]), so a worker's
/// descriptors never grow with the depth of a tree.
const HELD: usize = 16;

/// Folders a worker may hold for a queued batch of the ring (see [`Worker::left`]) before it
/// runs the batch early to let them go.
const LEFT_MAX: usize = 16;

/// Descriptors one worker may hold at once: its folders, those a batch holds, a listing, a
/// file being read, a walk's two and its ring.
const PER_WORKER: usize = HELD + LEFT_MAX + 5;

/// Descriptors left for the rest of the process (the caller's files, its threads' pipes).
const RESERVE: usize = 32;

/// How a folder is opened to list it.
const LIST: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC);

/// The folder handles every lookup starts from: `O_PATH` needs no read permission on the
/// folder (as a walk by name needs none), and `O_NOFOLLOW` with `O_DIRECTORY` refuses a link
/// in a folder's place, so a handle is only ever a real folder below the root.
const FOLDER: OFlag = OFlag::O_PATH
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// How a file is opened for reading: a link in its place (swapped in since it was statted) is
/// refused, and a FIFO cannot block the open.
const READ: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_NOCTTY)
    .union(OFlag::O_CLOEXEC);

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

/// What the fast path made of one path.
#[derive(Debug)]
enum Fast {
    /// Nothing at that name, below real folders.
    Missing,
    /// A regular file below real folders, read (or found large and put off).
    Read(io::Result<Read>),
    /// Anything else: for [`crate::path::locate`] to judge.
    Other,
}

/// A path as its lookup found it.
#[derive(Clone, Copy, Debug)]
enum Stat {
    /// A regular file, below real folders.
    File,
    /// Nothing at that name, below real folders.
    Missing,
    /// Anything else: for [`crate::path::locate`] to judge.
    Other,
}

/// A regular file to read: whose result it is, and where it is (no link on the way).
#[derive(Debug)]
struct ToRead<'a> {
    index: usize,
    rel: Cow<'a, [u8]>,
}

/// What reading a file gave.
#[derive(Debug)]
enum Read {
    /// Its digest.
    Done(Digest),
    /// It is large (this many bytes): left for the pass that hashes large files biggest first.
    Later(u64),
}

/// A folder's entries as one listing gave them: the names in one buffer, sorted, each with
/// whether it was a regular file.
#[derive(Debug, Default)]
struct Listing {
    names: Vec<u8>,
    entries: Vec<(usize, usize, Kind)>,
}

/// An entry's type as the folder records it (`d_type`), which costs no lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Other,
    /// The file system does not record types in its folders: ask `fstatat`.
    Unknown,
}

impl Listing {
    fn find(&self, name: &[u8]) -> Option<Kind> {
        self.entries
            .binary_search_by(|&(start, end, _)| self.names[start..end].cmp(name))
            .ok()
            .map(|at| self.entries[at].2)
    }
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

/// One thread's state: the folders of its current path, open, and its read buffer.
struct Worker<'r> {
    root: BorrowedFd<'r>,
    /// The open folders from the root down, each with its name.
    open: Vec<(Vec<u8>, OwnedFd)>,
    /// Folders left since the ring's batch was queued: a queued `openat` names its folder by
    /// number, so none is closed before the batch has run.
    left: Vec<OwnedFd>,
    buf: Vec<u8>,
    listing: Listing,
    /// [`Worker::check_all`]'s lookups and files of one chunk, kept for the next.
    stats: Vec<(usize, Stat)>,
    files: Vec<usize>,
    /// The worker's io_uring ([`ring`]), when the kernel gives one.
    ring: Option<Ring>,
    io: Io,
    /// Files the ring read whole: what tells a test a working ring from one that hands every
    /// file back (the results alone are the same either way).
    #[cfg(test)]
    via_ring: usize,
    /// The most folders a batch ever held ([`Worker::left`]): what tells a test the bound
    /// from a batch that keeps every folder it passed.
    #[cfg(test)]
    most_left: usize,
}

impl<'r> Worker<'r> {
    fn new(root: BorrowedFd<'r>, io: Io) -> Worker<'r> {
        Worker {
            root,
            open: Vec::new(),
            left: Vec::new(),
            buf: Vec::new(),
            listing: Listing::default(),
            stats: Vec::new(),
            files: Vec::new(),
            ring: None,
            io,
            #[cfg(test)]
            via_ring: 0,
            #[cfg(test)]
            most_left: 0,
        }
    }

    /// The innermost open folder.
    fn top(&self) -> BorrowedFd<'_> {
        self.open.last().map_or(self.root, |(_, fd)| fd.as_fd())
    }

    /// A handle on the folder `parent` names, reusing the open folders it shares with the
    /// last one asked for. Fails at the first component that is not a real folder, and with
    /// `ENAMETOOLONG` for a folder more than [`HELD`] deep (which [`Worker::folder`] walks to
    /// from the [`HELD`] it keeps).
    fn enter(&mut self, parent: &[u8]) -> Result<BorrowedFd<'_>, Errno> {
        let mut names = components(parent);
        let mut depth = 0;
        let mut first_new = None;
        for name in names.by_ref() {
            match self.open.get(depth) {
                Some((open, _)) if open.as_slice() == name => depth += 1,
                _ => {
                    first_new = Some(name);
                    break;
                }
            }
        }
        self.let_go(depth);
        for name in first_new.into_iter().chain(names) {
            if self.open.len() == HELD {
                return Err(Errno::ENAMETOOLONG);
            }
            let fd = openat(self.top(), name, FOLDER, Mode::empty())?;
            self.open.push((name.to_vec(), fd));
        }
        Ok(self.top())
    }

    /// Closes the open folders from `depth` down, or, while a batch of the ring is queued
    /// (its opens name their folders by number), keeps them in [`Worker::left`] until it has
    /// run.
    fn let_go(&mut self, depth: usize) {
        let gone = self.open.drain(depth..).map(|(_, fd)| fd);
        if self.ring.as_ref().is_some_and(|ring| !ring.is_empty()) {
            self.left.extend(gone);
        } else {
            drop(gone);
        }
    }

    /// A handle on the folder `parent` names: one of the worker's own ([`Worker::enter`]), or
    /// for a folder deeper than [`HELD`], one reached by a walk on from the deepest it holds
    /// that refuses a link at every step as `enter` does and holds two handles at a time.
    ///
    /// Out of descriptors (a low `ulimit -n`), the worker lets its own folders go and walks:
    /// a descriptor it could not get must not become the file's status.
    fn folder(&mut self, parent: &[u8]) -> Result<Folder<'_>, Errno> {
        match self.enter(parent).map(|_| ()) {
            Ok(()) => return Ok(Folder::Held(self.top())),
            // The worker holds the first HELD folders of the path: the walk goes on from there.
            Err(Errno::ENAMETOOLONG) => {}
            Err(e) if exhausted(e) => self.let_go(0),
            Err(e) => return Err(e),
        }
        // What the worker holds is the start of this path (`enter` stops part way in order).
        let mut at: Option<OwnedFd> = None;
        for name in components(parent).skip(self.open.len()) {
            let from = at.as_ref().map_or(self.top(), |fd| fd.as_fd());
            at = Some(openat(from, name, FOLDER, Mode::empty())?);
        }
        Ok(at.map_or(Folder::Held(self.top()), Folder::Walked))
    }

    /// What the fast path makes of each of `items` (sorted paths): each is looked up
    /// ([`Worker::stat_all`]), then the regular files among them are read
    /// ([`Worker::read_all`]).
    fn check_all<'p>(
        &mut self,
        items: &[usize],
        path: impl Fn(usize) -> &'p [u8],
        out: &mut Vec<(usize, Fast)>,
    ) {
        let mut stats = std::mem::take(&mut self.stats);
        let mut files = std::mem::take(&mut self.files);
        stats.clear();
        files.clear();
        self.stat_all(items, &path, &mut stats);
        for &(i, stat) in &stats {
            match stat {
                Stat::File => files.push(i),
                Stat::Missing => out.push((i, Fast::Missing)),
                Stat::Other => out.push((i, Fast::Other)),
            }
        }
        self.read_all(&files, &path, out);
        self.stats = stats;
        self.files = files;
    }

    /// What is at each of `items` (sorted paths): a run of [`LIST_FROM`] or more in one folder
    /// is answered from one listing of it, the rest by one `fstatat` each.
    fn stat_all<'p>(
        &mut self,
        items: &[usize],
        path: impl Fn(usize) -> &'p [u8],
        out: &mut Vec<(usize, Stat)>,
    ) {
        let folder = |i: usize| split_last(path(i)).map(|(folder, _)| folder);
        let mut at = 0;
        while at < items.len() {
            let here = folder(items[at]);
            let run = items[at..]
                .iter()
                .take_while(|&&i| folder(i) == here)
                .count();
            let listed = run >= LIST_FROM && here.is_some_and(|folder| self.list(folder, run));
            for &i in &items[at..at + run] {
                let stat = if listed {
                    self.stat_listed(path(i))
                } else {
                    self.stat(path(i))
                };
                out.push((i, stat));
            }
            at += run;
        }
    }

    /// Reads the entries of the folder `parent` names into `self.listing`, for `asked` names
    /// in it; `false` when it cannot be listed (not a real folder, no read permission) or is
    /// too large for so few names to pay for its listing, and then each name is statted
    /// instead.
    fn list(&mut self, parent: &[u8], asked: usize) -> bool {
        let Ok(folder) = self.enter(parent) else {
            return false;
        };
        let Ok(fd) = openat(folder, ".", LIST, Mode::empty()) else {
            return false;
        };
        let guessed = fstat(&fd).map_or(u64::MAX, |st| {
            u64::try_from(st.st_size).unwrap_or(u64::MAX) / ENTRY_BYTES
        });
        let asked = u64::try_from(asked).unwrap_or(u64::MAX);
        if guessed > LIST_ANYWAY.max(asked.saturating_mul(LIST_RATIO)) {
            return false;
        }
        let Ok(mut dir) = Dir::from_fd(fd) else {
            return false;
        };
        let listing = &mut self.listing;
        listing.names.clear();
        listing.entries.clear();
        for entry in dir.iter() {
            let Ok(entry) = entry else {
                return false;
            };
            let kind = match entry.file_type() {
                Some(Type::File) => Kind::File,
                Some(_) => Kind::Other,
                None => Kind::Unknown,
            };
            let start = listing.names.len();
            listing
                .names
                .extend_from_slice(entry.file_name().to_bytes());
            listing.entries.push((start, listing.names.len(), kind));
        }
        let names = &listing.names;
        listing
            .entries
            .sort_unstable_by(|a, b| names[a.0..a.1].cmp(&names[b.0..b.1]));
        true
    }

    /// What is at `path`, from the listing of its folder.
    fn stat_listed(&mut self, path: &[u8]) -> Stat {
        let Some((_, name)) = split_last(path) else {
            return Stat::Other;
        };
        match self.listing.find(name) {
            // Not among the entries of a real folder: what ENOENT says.
            None => Stat::Missing,
            Some(Kind::File) => Stat::File,
            Some(Kind::Other) => Stat::Other,
            Some(Kind::Unknown) => self.stat(path),
        }
    }

    /// What is at `path`, when the answer needs no judgement about links.
    fn stat(&mut self, path: &[u8]) -> Stat {
        let Some((parent, name)) = split_last(path) else {
            return Stat::Other;
        };
        let folder = match self.folder(parent) {
            Ok(folder) => folder,
            // The first component that is not there: the walk by name says MISSING too.
            Err(Errno::ENOENT) => return Stat::Missing,
            Err(_) => return Stat::Other,
        };
        match fstatat(folder.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) if is_regular(&st) => Stat::File,
            Err(Errno::ENOENT) => Stat::Missing,
            _ => Stat::Other,
        }
    }

    /// The digest of the regular file at `rel`, or with `defer`, [`Read::Later`] when it is
    /// large. The file is opened first and then statted, so its type is checked again on what
    /// was opened (a FIFO swapped in cannot block the open, nor be read).
    fn read(&mut self, rel: &[u8], defer: bool) -> io::Result<Read> {
        self.read_on(rel, defer, None)
    }

    /// [`Worker::read`] going on from `begun`, the hash of the file's start as the ring read it,
    /// when the file is still at least that long; from its first byte otherwise.
    fn read_on(&mut self, rel: &[u8], defer: bool, begun: Option<Begun>) -> io::Result<Read> {
        if self.buf.is_empty() {
            self.buf = vec![0; BUFFER];
        }
        let (parent, name) = split_last(rel).ok_or_else(|| io::Error::other("names no file"))?;
        let folder = self.folder(parent)?;
        let fd = openat(folder.as_fd(), name, READ, Mode::empty())?;
        let st = fstat(&fd)?;
        if !is_regular(&st) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let len = u64::try_from(st.st_size).unwrap_or(0);
        if defer && len >= LARGE {
            return Ok(Read::Later(len));
        }
        let mut file = File::from(fd);
        match begun {
            Some(Begun { hasher, bytes }) if bytes <= len => {
                file.seek(SeekFrom::Start(bytes))?;
                hash_rest(&mut file, len, &mut self.buf, hasher, bytes).map(Read::Done)
            }
            _ => hash_sized(&mut file, len, &mut self.buf).map(Read::Done),
        }
    }
}

/// Whether `e` says the process ran out of something (descriptors, memory), which is no
/// property of the file being opened.
fn exhausted(e: Errno) -> bool {
    matches!(
        e,
        Errno::EMFILE | Errno::ENFILE | Errno::ENOMEM | Errno::ENOBUFS
    )
}

/// A folder handle as [`Worker::folder`] gives it: one the worker keeps, or one of a walk,
/// closed when dropped.
enum Folder<'a> {
    Held(BorrowedFd<'a>),
    Walked(OwnedFd),
}

impl Folder<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Folder::Held(fd) => *fd,
            Folder::Walked(fd) => fd.as_fd(),
        }
    }
}

/// The start of a file as the ring read it, hashed: where [`Worker::read_on`] goes on from.
#[derive(Debug)]
pub(crate) struct Begun {
    /// The hash of the first `bytes` bytes.
    pub(crate) hasher: sha2::Sha256,
    /// How many bytes it has taken.
    pub(crate) bytes: u64,
}

fn is_regular(st: &nix::sys::stat::FileStat) -> bool {
    st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFREG.bits()
}

/// The folder part and the last name of a path that passed [`check_path`], with `.` and empty
/// components skipped as the walk skips them (`a/./b/.` names `a/b`). `None` when no name is
/// left.
fn split_last(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut end = path.len();
    loop {
        let start = path[..end]
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(0, |slash| slash + 1);
        let name = &path[start..end];
        if !name.is_empty() && name != b"." {
            return Some((&path[..start], name));
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

/// The folder names of `parent`, without `.` and empty components.
fn components(parent: &[u8]) -> impl Iterator<Item = &[u8]> {
    parent
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
}

mod ring;
#[cfg(test)]
mod tests;
