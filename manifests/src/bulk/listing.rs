//! One folder's entries, listed once: the names sorted, each with the type the folder records
//! for it, so the many paths asked for in one folder cost one `getdents` rather than a lookup
//! each. Whether a folder is worth listing is guessed from its size, here too.

use std::os::fd::OwnedFd;

use nix::dir::{Dir, Type};
use nix::fcntl::OFlag;
use nix::sys::stat::fstat;

/// How a folder is opened to list it.
pub(super) const LIST: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC);

/// A folder is listed only when it holds about as many entries as it is asked for, or few:
/// listing a folder of 100,000 entries for 8 of them costs more than 8 lookups. Its entries
/// are guessed from its size, at [`ENTRY_BYTES`] each (ext4 spends about that on a short
/// name, tmpfs 20, btrfs twice the name): a listing at most [`LIST_RATIO`] times the names
/// asked for, or at most [`LIST_ANYWAY`] entries, is listed.
const ENTRY_BYTES: u64 = 32;
const LIST_RATIO: u64 = 4;
const LIST_ANYWAY: u64 = 256;

/// A folder's entries as one listing gave them: the names in one buffer, sorted, each with
/// whether it was a regular file.
#[derive(Debug, Default)]
pub(super) struct Listing {
    pub(super) names: Vec<u8>,
    pub(super) entries: Vec<(usize, usize, Kind)>,
}

/// An entry's type as the folder records it (`d_type`), which costs no lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Other,
    /// The file system does not record types in its folders: ask `fstatat`.
    Unknown,
}

impl Listing {
    /// The type the listing gives the entry `name`, or `None` when the folder holds none.
    pub(super) fn find(&self, name: &[u8]) -> Option<Kind> {
        self.entries
            .binary_search_by(|&(start, end, _)| self.names[start..end].cmp(name))
            .ok()
            .map(|at| self.entries[at].2)
    }
    /// Reads the entries of the folder open at `fd` (opened as [`LIST`]), for `asked` names in
    /// it; `false` when it cannot be listed or is too large for so few names to pay for its
    /// listing, and then each name is looked up instead.
    pub(super) fn read(&mut self, fd: OwnedFd, asked: usize) -> bool {
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
        self.names.clear();
        self.entries.clear();
        for entry in dir.iter() {
            let Ok(entry) = entry else {
                return false;
            };
            let kind = match entry.file_type() {
                Some(Type::File) => Kind::File,
                Some(_) => Kind::Other,
                None => Kind::Unknown,
            };
            let start = self.names.len();
            self.names.extend_from_slice(entry.file_name().to_bytes());
            self.entries.push((start, self.names.len(), kind));
        }
        let names = &self.names;
        self.entries
            .sort_unstable_by(|a, b| names[a.0..a.1].cmp(&names[b.0..b.1]));
        true
    }
}
