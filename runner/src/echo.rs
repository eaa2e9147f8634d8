//! Echoing a run's log to the terminal while it grows: the log, not a pipe, is what the child
//! writes to (see the runner's module comment), so the echo tails the file.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// Copies a growing log to stderr until told to stop.
pub(super) struct Echo {
    stop: Arc<AtomicBool>,
    handle: thread::JoinHandle<()>,
}

impl Echo {
    pub(super) fn start(path: PathBuf) -> Echo {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let Ok(mut f) = File::open(&path) else {
                return;
            };
            let mut buf = vec![0u8; 64 * 1024];
            // Whole lines only, each made safe for a terminal: a suite's `\r` or cursor escape
            // must not rewrite what the tool printed. A line longer than the buffer goes out in
            // pieces rather than waiting for its end.
            let mut pending: Vec<u8> = Vec::new();
            let show = |bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes);
                let _ = writeln!(io::stderr(), "{}", files::escape::terminal_line(&text));
            };
            loop {
                let done = flag.load(Ordering::SeqCst);
                loop {
                    match f.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            pending.extend_from_slice(&buf[..n]);
                            while let Some(i) = pending.iter().position(|b| *b == b'\n') {
                                show(&pending[..i]);
                                pending.drain(..=i);
                            }
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
                thread::sleep(Duration::from_millis(50));
            }
        });
        Echo { stop, handle }
    }

    pub(super) fn finish(self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.handle.join();
    }
}
