//! The one reader of a run's log while it grows: it echoes the log to the terminal (`--echo`)
//! and hands each line to the caller's [`Observer`], which may ask for the run to stop. The
//! log, not a pipe, is what the child writes to (see the runner's module comment), so this
//! tails the file; one tailer serves both, so an echoed run and an observed one read the same
//! lines in the same order.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// What watches a run's output as it is written: handed each line of the log (without its line
/// end; a line longer than the read buffer comes in pieces) and how long after the start it was
/// read. Returning `true` asks the runner to stop the run: its whole group is then stopped as a
/// hung one is (SIGTERM, SIGKILL after the grace, strays killed), and the record says
/// [`crate::Ended::Stopped`]. The runner does not know what the lines mean; the caller's
/// observer does. After it asked once, it is handed nothing more.
pub trait Observer: Send {
    fn line(&mut self, line: &str, at: Duration) -> bool;
}

/// An observer shared with the caller, who reads what it found after the run.
pub type Watch = Arc<Mutex<dyn Observer>>;

/// Tails a growing log until told to finish.
pub(super) struct Tail {
    stop: Arc<AtomicBool>,
    handle: thread::JoinHandle<()>,
}

impl Tail {
    /// Starts tailing `path` from its start, a run started at `since`: echoing when `echo`, each
    /// line to `watch` when there is one; `asked` is set when the observer asks to stop.
    pub(super) fn start(
        path: PathBuf,
        echo: bool,
        watch: Option<Watch>,
        asked: Arc<AtomicBool>,
        since: Instant,
    ) -> Tail {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let Ok(mut f) = File::open(&path) else {
                return;
            };
            let mut watch = watch;
            let mut buf = vec![0u8; 64 * 1024];
            // Whole lines only: for the terminal each is made safe (a suite's `\r` or cursor
            // escape must not rewrite what the tool printed), for the observer each is a line of
            // the runner's report. A line longer than the buffer goes out in pieces rather than
            // waiting for its end.
            let mut pending: Vec<u8> = Vec::new();
            let mut show = |bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes);
                if echo {
                    let _ = writeln!(io::stderr(), "{}", files::escape::terminal_line(&text));
                }
                if let Some(w) = &watch {
                    let text = text.trim_end_matches('\r');
                    let mut observer = w.lock().unwrap_or_else(PoisonError::into_inner);
                    if observer.line(text, since.elapsed()) {
                        drop(observer);
                        asked.store(true, Ordering::SeqCst);
                        watch = None;
                    }
                }
            };
            loop {
                let done = flag.load(Ordering::SeqCst);
                loop {
                    match f.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            pending.extend_from_slice(&buf[..n]);
                            let mut start = 0;
                            while let Some(i) = pending[start..].iter().position(|b| *b == b'\n') {
                                show(&pending[start..start + i]);
                                start += i + 1;
                            }
                            pending.drain(..start);
                            if pending.len() > buf.len() {
                                show(&pending);
                                pending.clear();
                            }
                        }
                    }
                }
                if done {
                    if !pending.is_empty() {
                        show(&pending);
                    }
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
        });
        Tail { stop, handle }
    }

    /// Reads what is left of the log, then stops.
    pub(super) fn finish(self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.handle.join();
    }
}
