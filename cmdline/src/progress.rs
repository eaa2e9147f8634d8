//! Progress on long work: one line redrawn in place on a terminal, plain lines otherwise.
//!
//! Logs and CI output must stay readable, so the redraw (carriage return and erase-line) is only
//! used when stderr is a terminal; elsewhere each step is one line, printed when it finishes.
//!
//! A step that blocks for minutes (a suite, a client run) would freeze the live line, so
//! [`Progress::during`] runs it while a ticker thread redraws the line once a second with the
//! step's own elapsed time; off a terminal the step gets one plain line when it starts instead.
//!
//! Progress lines quote outside text (suite and mutant names), so every line passes through
//! [`safe`] before it is printed: control characters become visible escapes, and only the
//! colour codes a [`report::Painter`] emits (`ESC [ digits m`) pass, so a name can never move
//! the cursor, erase the line or print a line of its own.

use std::io::{IsTerminal, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use report::duration::HumanDuration;

/// Where progress goes: stderr, redrawn or plain. On a terminal the live line is an
/// [`indicatif`] bar showing our own text (`[3/12] 1m04s elapsed, ETA 2m  mutant 4`): indicatif
/// does the terminal's part (fitting the line to its width, erasing it, printing finished lines
/// above it); what the line says, and the ETA, are ours.
#[derive(Debug)]
pub struct Progress {
    live: bool,
    quiet: bool,
    started: Instant,
    total: usize,
    done: usize,
    bar: Option<ProgressBar>,
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
            bar: None,
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
        eta(self.done, self.total, self.elapsed())
    }

    /// At most `more` items follow the finished ones: the total grows to cover them, so a
    /// search that learns its length as it goes never shows `[k/N]` with k past N.
    pub fn expect_more(&mut self, more: usize) {
        self.total = self.total.max(self.done + more);
    }

    /// The live bar, made on first use (and again after [`Progress::clear`]).
    fn bar(&mut self) -> ProgressBar {
        self.bar
            .get_or_insert_with(|| {
                let style = ProgressStyle::with_template("{wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner());
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style)
            })
            .clone()
    }

    /// Redraws the live line with `status` (what is running now); nothing when not live.
    pub fn status(&mut self, status: &str) {
        if !self.is_live() {
            return;
        }
        let line = live_line(self.done, self.total, self.elapsed(), status);
        self.bar().set_message(line);
    }

    /// Runs `work` (a step that blocks) as step `status`: on a terminal a ticker thread redraws
    /// the live line once a second as `status (12s)`, until `work` returns; off a terminal one
    /// plain line `[n/total] status` is printed as the step starts. Returns what `work` returns.
    pub fn during<T>(&mut self, status: &str, work: impl FnOnce() -> T) -> T {
        if self.quiet {
            return work();
        }
        if !self.live {
            let _ = writeln!(
                std::io::stderr().lock(),
                "[{}/{}] {}",
                self.done + 1,
                self.total,
                safe(status)
            );
            return work();
        }
        let bar = self.bar();
        let (done, total, started) = (self.done, self.total, self.started);
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let step = Instant::now();
                loop {
                    let status = step_status(status, step.elapsed());
                    bar.set_message(live_line(done, total, started.elapsed(), &status));
                    match stopped.recv_timeout(TICK) {
                        Err(mpsc::RecvTimeoutError::Timeout) => continue,
                        _ => break,
                    }
                }
            });
            let out = work();
            drop(stop);
            out
        })
    }

    /// Marks one item finished and prints its line (above the live line on a terminal).
    pub fn finished(&mut self, line: &str) {
        self.done += 1;
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.println(safe(line)),
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{}", safe(line));
            }
        }
    }

    /// Prints `line` above the live line (on its own off a terminal) without counting a step:
    /// a note said while a loop goes. Printed even when `quiet`: quiet hides progress, not what
    /// a run has to say.
    pub fn note(&mut self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(safe(line)),
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{}", safe(line));
            }
        }
    }

    /// Erases the live line.
    pub fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The live line: `[done/total] elapsed, ETA  status`, made safe to print.
fn live_line(done: usize, total: usize, elapsed: Duration, status: &str) -> String {
    let eta = eta(done, total, elapsed)
        .map(|d| format!(", ETA {}", HumanDuration(d)))
        .unwrap_or_default();
    let line = format!(
        "[{done}/{total}] {} elapsed{eta}  {status}",
        HumanDuration(elapsed)
    );
    safe(&line).into_owned()
}

/// The time left for `total - done` items at the mean time of the `done` finished in `elapsed`.
fn eta(done: usize, total: usize, elapsed: Duration) -> Option<Duration> {
    if done == 0 || done >= total {
        return None;
    }
    let per = elapsed.as_secs_f64() / done as f64;
    Duration::try_from_secs_f64(per * (total - done) as f64).ok()
}

/// How often the ticker redraws: often enough to show a clock moving, rarely enough to cost
/// nothing and to keep a terminal log short.
const TICK: Duration = Duration::from_secs(1);

/// `status` with how long its step has run so far, in whole seconds (the ticker's resolution).
pub fn step_status(status: &str, elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{status} ({secs}s)")
    } else {
        format!("{status} ({})", HumanDuration(Duration::from_secs(secs)))
    }
}

/// `line` with every control character shown as its escape, except colour codes and tabs,
/// which cannot move the cursor (see [`files::escape::terminal_line`]).
pub fn safe(line: &str) -> std::borrow::Cow<'_, str> {
    files::escape::terminal_line(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_shows_its_own_whole_seconds() {
        assert_eq!(
            step_status("suite bus", Duration::from_millis(12_400)),
            "suite bus (12s)"
        );
        assert_eq!(step_status("n=5", Duration::from_secs(125)), "n=5 (2m05s)");
    }

    #[test]
    fn lines_keep_colour_codes_but_no_other_control() {
        assert_eq!(
            safe("[1/2] bus  \x1b[32mPASS\x1b[0m"),
            "[1/2] bus  \x1b[32mPASS\x1b[0m"
        );
        assert_eq!(
            safe("x\nverdict   PASS\r\x1b[2K\x1b[31"),
            "x\\nverdict   PASS\\r\\u{1b}[2K\\u{1b}[31"
        );
    }

    #[test]
    fn the_eta_is_the_mean_time_of_the_finished_items_times_those_left() {
        assert_eq!(eta(0, 4, Duration::from_secs(10)), None);
        assert_eq!(eta(4, 4, Duration::from_secs(10)), None);
        assert_eq!(
            eta(2, 5, Duration::from_secs(10)),
            Some(Duration::from_secs(15))
        );
        let line = live_line(2, 5, Duration::from_secs(10), "mutant \x1b[2J3");
        assert_eq!(line, "[2/5] 10.0s elapsed, ETA 15.0s  mutant \\u{1b}[2J3");
    }

    #[test]
    fn the_total_grows_to_cover_what_is_expected_and_never_shrinks() {
        let mut p = Progress::new(2, true);
        p.finished("a");
        p.finished("b");
        p.expect_more(3);
        assert_eq!(p.total, 5);
        p.expect_more(1);
        assert_eq!(p.total, 5, "a smaller plan keeps the total");
    }

    #[test]
    fn during_returns_what_the_work_returns() {
        let mut quiet = Progress::new(1, true);
        assert_eq!(quiet.during("step", || 42), 42);
        let mut plain = Progress::new(1, false);
        plain.live = false;
        assert_eq!(plain.during("step", || "done"), "done");
    }
}
