//! Inputs that are not regular files, for the tests of every tool: a FIFO, a folder, a socket
//! and a device given where a file is read, and a run interrupted while it waits on one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Makes a FIFO at `path` and returns it.
pub fn fifo(path: &Path) -> PathBuf {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    path.to_path_buf()
}

/// Paths in `dir` (and a device) that are no file to read, each with the words a refusal
/// must hold: a folder, a socket, `/dev/zero` (read only: it must be refused, never read).
pub fn not_files(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let folder = dir.join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let socket = dir.join("a-socket");
    if !socket.exists() {
        // The socket file stays once the listener is gone; nothing ever connects to it.
        drop(std::os::unix::net::UnixListener::bind(&socket).expect("bind a socket"));
    }
    vec![
        (folder, "is a folder, not a file"),
        (socket, "is a socket, not a file"),
        (
            PathBuf::from("/dev/zero"),
            "is a character device, not a file",
        ),
    ]
}

/// What an interrupted run ended with.
#[derive(Debug)]
pub struct Ended {
    /// The exit code (None: ended by a signal).
    pub code: Option<i32>,
    pub stderr: String,
    /// From the signal to the end.
    pub took: Duration,
}

/// Starts `cmd` (its stdin a pipe nobody writes to, kept open), lets it reach its wait for
/// `settle`, checks it is still waiting, sends SIGINT to its pid alone and waits at most 10 s
/// for it to end. A run that does not end is killed and the test fails.
pub fn interrupt_while_waiting(cmd: &mut Command, settle: Duration) -> Ended {
    crate::hermetic(cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(settle);
    if let Some(status) = child.try_wait().unwrap() {
        let out = child.wait_with_output().unwrap();
        panic!(
            "ended before the interrupt ({status}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 10 s after SIGINT: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = sent.elapsed();
    let out = child.wait_with_output().unwrap();
    Ended {
        code: status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took,
    }
}
