//! Every file a tool reads as its input (a patch, a manifest, gate.toml, a mutants spec, an
//! MCP config, a review text, standard input) is read here, once, by one set of rules.
//!
//! - A regular file is read whole, in pieces, with the interrupt flag looked at between them.
//! - A FIFO or pipe (`--patch <(...)`, a named FIFO, standard input from a pipe) is opened
//!   without waiting for a writer and read through `poll` with a short timeout, so Ctrl-C and
//!   SIGTERM end the wait: the tools' signal handler only sets a flag (see
//!   [`crate::interrupt`]), and a plain blocking `open` or `read` on a FIFO nobody writes to
//!   would never return to look at it.
//! - A folder, a device or a socket given as a path is refused before it is opened, with one
//!   line saying what it is: a device such as `/dev/zero` would otherwise be read forever.
//!   Standard input may also be a terminal, a socket or `/dev/null`; any other device there is
//!   refused too.
//!
//! The type is checked again on the open descriptor, so a path swapped for something else
//! between the look and the open is refused as well. No size bound is set: none existed for
//! these inputs, and the interrupt is what ends a read that goes on too long.
//!
//! The errors say what went wrong without the path (as `io::Error` does); each caller already
//! names its input (`patch build.patch: is a folder, not a file`).

use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The path names something that is not a file to read.
    #[error("is {0}, not a file")]
    NotAFile(&'static str),
    /// Opening or reading failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Ctrl-C or SIGTERM arrived while waiting for the input.
    #[error("interrupted while reading")]
    Interrupted(#[source] crate::interrupt::Interrupted),
}

/// How long one wait on a pipe lasts before the interrupt flag is looked at again.
const POLL_MS: u16 = 100;

/// The most read at once from a regular file between looks at the interrupt flag.
const CHUNK: usize = 1 << 20;

/// The bytes of the input at `path`, by the rules of this module.
pub fn read(path: &Path) -> Result<Vec<u8>, InputError> {
    let meta = std::fs::metadata(path)?;
    let kind = kind_of(&meta.file_type());
    if let Kind::Refused(what) = kind {
        return Err(InputError::NotAFile(what));
    }
    // Non-blocking, so an open of a FIFO never waits for a writer; no controlling terminal.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)?;
    let opened = kind_of(&file.metadata()?.file_type());
    match opened {
        Kind::Refused(what) => Err(InputError::NotAFile(what)),
        Kind::Regular => read_regular(file),
        Kind::Stream => read_stream(file.as_fd()),
    }
}

/// The bytes of standard input, by the rules of this module.
pub fn read_stdin() -> Result<Vec<u8>, InputError> {
    let stdin = io::stdin();
    let fd = stdin.as_fd();
    let meta = nix::sys::stat::fstat(fd).map_err(io::Error::from)?;
    let kind = kind_of_mode(meta.st_mode);
    match kind {
        Kind::Regular => {
            let file = File::from(fd.try_clone_to_owned()?);
            read_regular(file)
        }
        Kind::Stream => read_stream(fd),
        Kind::Refused("a folder") => Err(InputError::NotAFile("a folder")),
        Kind::Refused(what) => {
            // A terminal (someone typing or pasting), a socket and /dev/null end; other devices
            // may never end.
            let is_null = std::fs::metadata("/dev/null")
                .is_ok_and(|null| null.file_type().is_char_device() && null.rdev() == meta.st_rdev);
            let socket = what == "a socket";
            if socket || is_null || nix::unistd::isatty(fd).unwrap_or(false) {
                read_stream(fd)
            } else {
                Err(InputError::NotAFile(what))
            }
        }
    }
}

/// What a file type means for reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Regular,
    /// A FIFO or pipe: read through poll.
    Stream,
    /// Not read; the words say what it is.
    Refused(&'static str),
}

fn kind_of(t: &std::fs::FileType) -> Kind {
    if t.is_file() {
        Kind::Regular
    } else if t.is_fifo() {
        Kind::Stream
    } else if t.is_dir() {
        Kind::Refused("a folder")
    } else if t.is_block_device() {
        Kind::Refused("a block device")
    } else if t.is_char_device() {
        Kind::Refused("a character device")
    } else if t.is_socket() {
        Kind::Refused("a socket")
    } else {
        Kind::Refused("not a regular file")
    }
}

fn kind_of_mode(mode: nix::libc::mode_t) -> Kind {
    use nix::libc::{S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFMT, S_IFREG, S_IFSOCK};
    match mode & S_IFMT {
        S_IFREG => Kind::Regular,
        S_IFIFO => Kind::Stream,
        S_IFDIR => Kind::Refused("a folder"),
        S_IFBLK => Kind::Refused("a block device"),
        S_IFCHR => Kind::Refused("a character device"),
        S_IFSOCK => Kind::Refused("a socket"),
        _ => Kind::Refused("not a regular file"),
    }
}

fn interrupted() -> InputError {
    InputError::Interrupted(crate::interrupt::Interrupted)
}

fn read_regular(mut file: File) -> Result<Vec<u8>, InputError> {
    let size = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    let mut chunk = vec![0u8; CHUNK];
    loop {
        if crate::interrupt::requested() {
            return Err(interrupted());
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if retry(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reads a pipe, FIFO, socket or terminal to its end, waiting in short polls so an interrupt
/// is seen. The read after `poll` says "ready" does not block, whether or not the descriptor
/// is non-blocking, so standard input's flags (shared with whoever else holds it) are left
/// alone.
fn read_stream(fd: BorrowedFd<'_>) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if crate::interrupt::requested() {
            return Err(interrupted());
        }
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(POLL_MS)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(io::Error::from(e).into()),
        }
        let ready = fds[0].revents().unwrap_or(PollFlags::empty());
        if ready.is_empty() {
            continue;
        }
        // POLLHUP without POLLIN: every writer is gone and nothing is left; the read says 0.
        match nix::unistd::read(fd, &mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(io::Error::from(e).into()),
        }
    }
}

fn retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..3 * CHUNK + 7).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        assert_eq!(read(&path).unwrap(), data);
    }

    #[test]
    fn a_folder_a_device_and_a_socket_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for (path, words) in [
            (dir.path(), "is a folder, not a file"),
            (Path::new("/dev/zero"), "is a character device, not a file"),
            (socket.as_path(), "is a socket, not a file"),
        ] {
            let e = read(path).unwrap_err();
            assert_eq!(e.to_string(), words, "{}", path.display());
        }
    }

    #[test]
    fn a_fifo_with_a_writer_is_read_to_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                // Opening for writing waits for the reader, so the reader's open came first.
                let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
                for _ in 0..50 {
                    std::io::Write::write_all(&mut w, &[b'x'; 10_000]).unwrap();
                }
            })
        };
        // The reader opens without a writer and must wait for one, not take "no writer" as
        // the end.
        let got = read(&fifo).unwrap();
        writer.join().unwrap();
        assert_eq!(got.len(), 500_000);
    }
}
