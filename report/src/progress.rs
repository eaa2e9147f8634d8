//! Progress on long work: one line redrawn in place on a terminal, plain lines otherwise.
//!
//! Logs and CI output must stay readable, so the redraw (carriage return and erase-line) is only
//! used when stderr is a terminal; elsewhere each step is one line, printed when it finishes.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::duration::HumanDuration;

/// Where progress goes: stderr, redrawn or plain.
#[derive(Debug)]
pub struct Progress {
    live: bool,
    quiet: bool,
    started: Instant,
    total: usize,
    done: usize,
    drawn: bool,
}

impl Progress {
    /// `total` items of work; `quiet` suppresses everything.
    pub fn new(total: usize, quiet: bool) -> Progress {
        Progress {
            live: std::io::stderr().is_terminal(),
            quiet,
            started: Instant::now(),
            total,
            done: 0,
            drawn: false,
        }
    }

    pub fn is_live(&self) -> bool {
        self.live && !self.quiet
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// An estimate of the time left, from the mean time per finished item.
    pub fn eta(&self) -> Option<Duration> {
        if self.done == 0 || self.done >= self.total {
            return None;
        }
        let per = self.elapsed().as_secs_f64() / self.done as f64;
        Duration::try_from_secs_f64(per * (self.total - self.done) as f64).ok()
    }

    /// Redraws the live line with `status` (what is running now); nothing when not live.
    pub fn status(&mut self, status: &str) {
        if !self.is_live() {
            return;
        }
        let eta = self
            .eta()
            .map(|d| format!(", ETA {}", HumanDuration(d)))
            .unwrap_or_default();
        let line = format!(
            "[{}/{}] {} elapsed{eta}  {status}",
            self.done,
            self.total,
            HumanDuration(self.elapsed())
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{}", truncate(&line, 150));
        let _ = err.flush();
        self.drawn = true;
    }

    /// Marks one item finished and prints its line (above the live line on a terminal).
    pub fn finished(&mut self, line: &str) {
        self.done += 1;
        if self.quiet {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.drawn {
            let _ = write!(err, "\r\x1b[K");
            self.drawn = false;
        }
        let _ = writeln!(err, "{line}");
    }

    /// Erases the live line.
    pub fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            self.drawn = false;
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}
