//! The runner's piped mode: a child the caller talks to over its stdin and stdout (an MCP
//! server and its client), supervised as [`run`](crate::run) supervises a batch command.
//!
//! The child gets everything a run gets: its own process group, a fresh `GATEKIT_RUN` tag, the
//! job's environment with [`GIT_REDIRECTING`](crate::GIT_REDIRECTING) stripped, a timeout, and
//! the interrupt check; stderr goes to the job's log (capped, below). A watcher thread waits for it, so the
//! timeout and Ctrl-C stop the whole group even while the caller is blocked reading its
//! stdout (the kill closes that pipe, which ends the read). When the caller is done it asks
//! for the [`Finished`], or drops the handle: either way nothing of the run is left alive.
//!
//! Why the pipes are safe here when [`run`](crate::run) avoids them: the caller reads the
//! child's stdout only while it expects an answer, with its own deadline, and never waits for
//! the pipe's end-of-file to finish; the record comes from the watcher, not from the pipe.
//!
//! The child's stderr is a pipe too, drained by a thread into the log: the first
//! [`STDERR_KEPT`] bytes are kept and the rest only counted (a last line says how many), so a
//! server that floods its stderr fills neither the disk nor, through the echo, the terminal,
//! and the run ends when its timeout says, not when gigabytes of log have been copied.

use std::fs::File;
use std::io::{self, Read, Write};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::{command, log_spawn_error, spawn, supervise, Cut, Finished, Job, Tail};

/// The most of a piped child's stderr its log keeps (16 MiB); what comes after is counted and
/// dropped.
pub const STDERR_KEPT: u64 = 16 * 1024 * 1024;

/// How long the end of a run waits for the stderr drain to reach the pipe's end once the
/// group is gone (a writer that escaped the group and the tag may still hold it: then the
/// drain is left to end on its own, and the run does not wait).
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Copies `stderr` into `log` up to `kept` bytes and counts the rest; at the pipe's end, says
/// in the log how much was dropped.
fn drain(mut stderr: ChildStderr, mut log: File, kept: u64) {
    let mut buf = vec![0u8; 64 * 1024];
    let (mut written, mut dropped) = (0u64, 0u64);
    loop {
        let n = match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let room = kept.saturating_sub(written).min(n as u64) as usize;
        if room > 0 && log.write_all(&buf[..room]).is_ok() {
            written += room as u64;
        }
        dropped += (n - room) as u64;
    }
    if dropped > 0 {
        let _ = writeln!(
            log,
            "\n[{dropped} more bytes of stderr not kept: the log keeps the first {kept}]"
        );
    }
}

/// A started child with its stdin and stdout handed to the caller.
#[derive(Debug)]
pub struct Piped {
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    pid: i32,
    /// Set to stop the child now: the watcher then stops its group as on a timeout.
    asked: Arc<AtomicBool>,
    watcher: Option<thread::JoinHandle<Finished>>,
}

/// Starts `job` with piped stdin and stdout (stderr to `job.log`, echoed when `job.echo`).
///
/// Unlike [`run`](crate::run), a child that cannot start is an error, not a record: there is
/// nobody to talk to. The reason is also written to the log.
pub fn start_piped(job: &Job) -> io::Result<Piped> {
    let log = files::outputs::create(&job.log)?;
    let (mut cmd, tag) = command(job)?;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let record = Finished::starting(job);
    let mut started = match spawn(cmd, tag) {
        Ok(started) => started,
        Err(e) => {
            log_spawn_error(&job.log, &record.argv, &e)?;
            return Err(e);
        }
    };
    let stdin = started.child.stdin.take();
    let stdout = started.child.stdout.take();
    let drainer = started
        .child
        .stderr
        .take()
        .map(|stderr| thread::spawn(move || drain(stderr, log, STDERR_KEPT)));
    let pid = started.child.id() as i32;
    let asked = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&asked);
    let deadline = started.at + job.timeout;
    let grace = job.grace;
    // The caller reads the child's stdout itself: its log (stderr) is only echoed.
    let echo = job.echo.then(|| {
        let never = Arc::new(AtomicBool::new(false));
        Tail::start(job.log.clone(), true, None, never, started.at)
    });
    let watcher = thread::spawn(move || {
        let record = supervise(started, deadline, grace, (&flag, Cut::Asked), record);
        // The group is gone: the drain reaches the pipe's end (and writes its count) before
        // the echo shows the log's last lines.
        if let Some(drainer) = drainer {
            let until = Instant::now() + DRAIN_WAIT;
            while !drainer.is_finished() && Instant::now() < until {
                thread::sleep(Duration::from_millis(10));
            }
            if drainer.is_finished() {
                let _ = drainer.join();
            }
        }
        if let Some(echo) = echo {
            echo.finish();
        }
        record
    });
    Ok(Piped {
        stdin,
        stdout,
        pid,
        asked,
        watcher: Some(watcher),
    })
}

impl Piped {
    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The child's stdin, once: dropping it closes the pipe (a stdio server's cue to exit).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The child's stdout, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// Whether the run is over: the child ended (or was stopped) and its strays are gone.
    pub fn is_done(&self) -> bool {
        self.watcher.as_ref().is_none_or(|w| w.is_finished())
    }

    /// Closes the child's stdin, gives it `linger` to exit on its own, then stops its whole
    /// group (SIGTERM, SIGKILL after the job's grace) and returns the run's record.
    pub fn finish(mut self, linger: Duration) -> Finished {
        drop(self.stdin.take());
        let until = Instant::now() + linger;
        while !self.is_done() && Instant::now() < until {
            thread::sleep(Duration::from_millis(10));
        }
        self.end()
    }

    /// Stops the child's whole group now and returns the run's record.
    pub fn kill(mut self) -> Finished {
        self.end()
    }

    fn end(&mut self) -> Finished {
        self.asked.store(true, Ordering::SeqCst);
        drop(self.stdin.take());
        drop(self.stdout.take());
        let watcher = self.watcher.take().expect("the watcher runs until the end");
        watcher
            .join()
            .expect("the runner's watcher thread does not panic")
    }
}

impl Drop for Piped {
    /// A handle dropped without [`finish`](Piped::finish) (an error on the caller's path) still
    /// ends the run: no child outlives the code that started it.
    fn drop(&mut self) {
        if self.watcher.is_some() {
            let _ = self.end();
        }
    }
}
