//! One run per output folder: a lock taken on `--out` before anything is written to it.
//!
//! Two runs writing the same `--out` would interleave their logs and each rewrite the other's
//! report, so a summary could describe rows of two different runs. The lock is an advisory
//! `flock` on `DIR/.gatekit-lock`, which the kernel drops when the holder dies however it dies
//! (SIGKILL included), so a killed run never leaves a stale lock behind; the file itself stays,
//! holding the pid of the last holder for the message a second run prints.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use thiserror::Error;

/// The lock file's name inside the output folder.
pub const LOCK_FILE: &str = ".gatekit-lock";

#[derive(Debug, Error)]
pub enum LockError {
    #[error("{dir}: output folder is in use by another run (pid {pid}); wait for it or pick another --out")]
    Busy { dir: String, pid: String },
    #[error("{dir}: cannot lock the output folder: {source}")]
    Io {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

/// The held lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct OutLock {
    _file: Flock<File>,
    dir: PathBuf,
}

impl OutLock {
    /// Creates `dir` if needed and locks it, or says which run holds it.
    pub fn acquire(dir: &Path) -> Result<OutLock, LockError> {
        let io = |source| LockError::Io {
            dir: dir.display().to_string(),
            source,
        };
        fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(LOCK_FILE);
        // Never through a link: a planted link must not make us truncate or lock another file.
        if fs::symlink_metadata(&path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(io(std::io::Error::other(format!(
                "{} is not a regular file",
                path.display()
            ))));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io)?;
        let mut file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(f) => f,
            Err((mut file, errno)) if errno == nix::errno::Errno::EWOULDBLOCK => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(LockError::Busy {
                    dir: dir.display().to_string(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.to_string()
                    },
                });
            }
            Err((_, errno)) => return Err(io(errno.into())),
        };
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        Ok(OutLock {
            _file: file,
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_folder_is_refused_until_the_first_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let first = OutLock::acquire(&out).unwrap();
        let second = OutLock::acquire(&out).unwrap_err();
        assert!(
            second.to_string().contains(&std::process::id().to_string()),
            "{second}"
        );
        drop(first);
        OutLock::acquire(&out).unwrap();
    }

    #[test]
    fn a_planted_link_is_never_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::write(&victim, "keep me").unwrap();
        let out = tmp.path().join("out");
        fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join(LOCK_FILE)).unwrap();
        assert!(OutLock::acquire(&out).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
    }
}
