//! One worker of the fast path: the folders of its current path held open as handles, the
//! lookups of a chunk of sorted paths (each name statted, or a folder listed once for many),
//! and the reads of the regular files among them, in batches through its ring ([`super::ring`])
//! when the kernel gives one and one by one otherwise.
//!
//! A worker only recognises the plain case (real folders, a regular file or nothing); anything
//! else it answers [`Fast::Other`], for the walk that judges links.

use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, Mode, SFlag};

use super::listing::{Kind, Listing, LIST};
use super::ring::{abandon, Begun, Got, Io, Lost, Ring, SLOTS};
use crate::entry::Digest;
use crate::hash::{hash_rest, hash_sized, BUFFER};

/// Files at least this large are hashed one per work item, biggest first (SHA-256 cannot split
/// a file, so a large one started last would finish alone).
pub(super) const LARGE: u64 = 1 << 20;

/// From this many paths in one folder, the folder is listed once (its entries' types come with
/// the names) rather than each name statted: a `getdents` for the folder instead of a lookup
/// for each file.
const LIST_FROM: usize = 8;

/// Folder handles a worker keeps open at most: a path deeper than this is reached by a walk
/// that holds two handles at a time and keeps none (see [`Worker::folder`]), so a worker's
/// descriptors never grow with the depth of a tree.
const HELD: usize = 16;

/// Folders a worker may hold for a queued batch of the ring (see [`Worker::left`]) before it
/// runs the batch early to let them go.
const LEFT_MAX: usize = 16;

/// Descriptors one worker may hold at once: its folders, those a batch holds, a listing, a
/// file being read, a walk's two and its ring.
pub(super) const PER_WORKER: usize = HELD + LEFT_MAX + 5;

/// The folder handles every lookup starts from: `O_PATH` needs no read permission on the
/// folder (as a walk by name needs none), and `O_NOFOLLOW` with `O_DIRECTORY` refuses a link
/// in a folder's place, so a handle is only ever a real folder below the root.
pub(super) const FOLDER: OFlag = OFlag::O_PATH
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

/// What the fast path made of one path.
#[derive(Debug)]
pub(super) enum Fast {
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

/// What reading a file gave.
#[derive(Debug)]
pub(super) enum Read {
    /// Its digest.
    Done(Digest),
    /// It is large (this many bytes): left for the pass that hashes large files biggest first.
    Later(u64),
}

/// One thread's state: the folders of its current path, open, and its read buffer.
pub(super) struct Worker<'r> {
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
    /// The worker's io_uring ([`super::ring`]), when the kernel gives one.
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
    pub(super) fn new(root: BorrowedFd<'r>, io: Io) -> Worker<'r> {
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
    pub(super) fn check_all<'p>(
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
        self.listing.read(fd, asked)
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
    pub(super) fn read(&mut self, rel: &[u8], defer: bool) -> io::Result<Read> {
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

    /// [`Worker::read`] with deferral for each of `items`, the small files read in batches
    /// through the worker's ring when there is one; what the ring hands back is read the
    /// ordinary way, so every error and large file comes out as [`Worker::read`] gives it.
    pub(super) fn read_all<'p>(
        &mut self,
        items: &[usize],
        rel: impl Fn(usize) -> &'p [u8],
        out: &mut Vec<(usize, Fast)>,
    ) {
        if self.ring.is_none() && self.io == Io::Ring {
            self.ring = Ring::new(self.io);
            // Asked once: a kernel that gives no ring gives none the next time either.
            self.io = Io::Plain;
        }
        let mut queued: Vec<usize> = Vec::with_capacity(SLOTS);
        for &item in items {
            let folder = split_last(rel(item)).and_then(|(parent, name)| {
                let fd = self.enter(parent).ok()?.as_raw_fd();
                Some((fd, name))
            });
            // A batch holding many folders runs early, so they can be closed.
            if self.left.len() > LEFT_MAX {
                self.run_ring(&mut queued, &rel, out);
            }
            #[cfg(test)]
            {
                self.most_left = self.most_left.max(self.left.len());
            }
            let taken = match (&mut self.ring, folder) {
                (Some(ring), Some((fd, name))) => ring.queue(fd, name),
                _ => false,
            };
            if taken {
                queued.push(item);
                if self.ring.as_ref().is_some_and(Ring::is_full) {
                    self.run_ring(&mut queued, &rel, out);
                }
            } else {
                out.push((item, Fast::Read(self.read(rel(item), true))));
            }
        }
        self.run_ring(&mut queued, &rel, out);
    }

    /// Runs the ring's batch (the files `queued`), reads again what it hands back, and lets
    /// the folders go that the batch no longer needs.
    fn run_ring<'p>(
        &mut self,
        queued: &mut Vec<usize>,
        rel: &impl Fn(usize) -> &'p [u8],
        out: &mut Vec<(usize, Fast)>,
    ) {
        let got = match self.ring.as_mut().map(Ring::run) {
            Some(Ok(got)) => got,
            Some(Err(Lost)) => {
                if let Some(lost) = self.ring.take() {
                    abandon(lost);
                }
                Vec::new()
            }
            None => Vec::new(),
        };
        self.left.clear();
        let mut got = got.into_iter();
        for item in queued.drain(..) {
            let read = match got.next() {
                Some(Got::Whole(digest)) => {
                    #[cfg(test)]
                    {
                        self.via_ring += 1;
                    }
                    Ok(Read::Done(digest))
                }
                Some(Got::Begun(begun)) => self.read_on(rel(item), true, Some(begun)),
                Some(Got::Nothing) | None => self.read(rel(item), true),
            };
            out.push((item, Fast::Read(read)));
        }
    }
}

/// Whether `e` says the process ran out of something (descriptors, memory), which is no
/// property of the file being opened.
pub(super) fn exhausted(e: Errno) -> bool {
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

fn is_regular(st: &nix::sys::stat::FileStat) -> bool {
    st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFREG.bits()
}

/// The folder part and the last name of a path that passed [`crate::check_path`], with `.`
/// and empty components skipped as the walk skips them (`a/./b/.` names `a/b`). `None` when no
/// name is left.
pub(super) fn split_last(path: &[u8]) -> Option<(&[u8], &[u8])> {
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

#[cfg(test)]
mod tests;
