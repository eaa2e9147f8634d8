//! A warm runner: a suite's `watch` command (`npx vitest --watch`), started once per checkout
//! and read after each swap, so a mutant pays for its rerun and not for the runner's start-up
//! (what Stryker gets by switching mutants inside one vitest process).
//!
//! The verdicts stay the ones a cold run gives, because the warm runner is trusted for one
//! thing only: a **kill** read from a rerun that provably ran after this swap (its `RERUN` line
//! names the mutated file, and nothing else was pending before the swap) and names a failed
//! test. Everything else goes to the cold run of the suite's `run`:
//! - a rerun that passed: the survivor is confirmed by the whole suite, cold, before it is
//!   SURVIVED (a watch mode reruns only the tests related to the changed file);
//! - any doubt (no rerun seen within [`START_LIMIT`], none ended within twice the baseline's time, a
//!   report that names no failed test, the runner gone, output before the swap): the runner is
//!   stopped (it starts again before the next mutant) and the cold run judges.
//!
//! Before each swap the runner must be idle and green; after the restore it must rerun and be
//! green again, or it is stopped. A first run that is not green means no warm runner in this
//! checkout at all: every mutant runs cold. The runner is a child under the runner crate's
//! rules (`runner::start_piped`: its own process group and run tag, strays killed when it
//! ends, stopped on Ctrl-C); dropping a [`Warm`] stops it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use candidate::suite::Share;
use report::results::Source;
use report::text::slug;

use crate::record::{WarmOutcome, WarmRerun};
use crate::spec::Suite;
use stream::Line;

mod stream;

/// How long a rerun may take to start after a swap or a restore. A watcher sees a write at
/// once (inotify) and debounces for a fraction of a second; a change no test imports starts
/// no rerun at all, and then this is what the doubt costs before the cold run.
pub(crate) const START_LIMIT: Duration = Duration::from_secs(5);

/// How long a warm runner may live: past it, its group is stopped and the next mutant starts
/// another.
const LIFETIME: Duration = Duration::from_secs(6 * 3600);

/// What a warm rerun said of a swapped mutant.
#[derive(Debug)]
pub(crate) enum Rerun {
    /// It ran after the swap and named failed tests: the mutant is killed. Its report (the
    /// rerun's lines) is in the mutant's log.
    Killed {
        record: Box<report::RunRecord>,
        warm: WarmRerun,
    },
    /// Not decided here (passed, or a doubt): a cold run must judge, and records this.
    Cold(WarmRerun),
}

/// A checkout's warm runner for one suite: started when first needed, stopped on any doubt and
/// started again before the next mutant, never again after a first run that was not green.
pub(crate) struct Warm {
    command: String,
    suite: String,
    env: BTreeMap<String, String>,
    dir: PathBuf,
    logs: PathBuf,
    checkout: usize,
    /// How long a first run or a rerun may take (twice the baseline's time, within the mutant
    /// timeout).
    limit: Duration,
    live: Option<Live>,
    starts: u32,
    /// Why this checkout has no warm runner (its first run was not green, or it could not
    /// start): every mutant runs cold.
    off: Option<String>,
}

/// A started runner: its process (group), its stdout's lines as they come, its scratch TMPDIR.
struct Live {
    process: runner::Piped,
    lines: Receiver<String>,
    _scratch: runner::scratch::ScratchDir,
}

/// Waiting for a line ended without one.
enum Gone {
    /// Nothing came within the limit.
    Quiet,
    /// The runner's stdout ended: it exited.
    Exited,
    /// Another rerun started before this one ended: another change was picked up.
    Again,
}

impl Warm {
    /// The warm runner of `suite` in checkout `checkout` (at `dir`), logs under `logs`; `None`
    /// when the suite has no `watch`.
    pub(crate) fn of(
        suite: &Suite,
        checkout: usize,
        dir: &Path,
        logs: &Path,
        limit: Duration,
    ) -> Option<Warm> {
        Some(Warm {
            command: suite.watch.clone()?,
            suite: suite.name.clone(),
            env: suite.env.clone(),
            dir: dir.to_path_buf(),
            logs: logs.to_path_buf(),
            checkout,
            limit,
            live: None,
            starts: 0,
            off: None,
        })
    }

    /// The suite it reruns.
    pub(crate) fn suite(&self) -> &str {
        &self.suite
    }

    /// Stops the runner (it starts again before the next mutant): the checkout changed under it,
    /// or what it said cannot be trusted.
    pub(crate) fn stop(&mut self) {
        self.live = None;
    }

    /// Before a swap: a runner that is live, idle and green, started (and its first run waited
    /// for) when there is none. `false` when this checkout has no warm runner: the mutant runs
    /// cold.
    pub(crate) fn ready(&mut self, share: &dyn Share) -> bool {
        if self.off.is_some() {
            return false;
        }
        // Anything printed since the runner was last idle (a rerun for a file some cold run
        // wrote) would be read as this mutant's: stop and start afresh instead.
        if let Some(live) = &self.live {
            loop {
                match live.lines.try_recv() {
                    Ok(line) if stream::classify(&line) == Line::Quiet => continue,
                    Err(mpsc::TryRecvError::Empty) => return true,
                    _ => break,
                }
            }
            self.stop();
        }
        self.starts += 1;
        let (started, why) = self.start(share);
        match started {
            Some(live) => {
                self.live = Some(live);
                true
            }
            None => {
                self.off = Some(why);
                false
            }
        }
    }

    fn start(&self, share: &dyn Share) -> (Option<Live>, String) {
        let base = format!(
            "warm.{}.checkout{}.{}",
            slug(&self.suite, "suite"),
            self.checkout,
            self.starts
        );
        let scratch = match runner::scratch::ScratchDir::new("tmp") {
            Ok(s) => s,
            Err(e) => return (None, format!("no scratch TMPDIR ({e})")),
        };
        // Its stderr joins its stdout, in the order written: vitest prints a failure's report
        // (the test's full name, the error) on stderr between the rerun's stdout lines.
        let script = format!("exec 2>&1\n{}", self.command);
        let mut job = runner::Job::shell(script, &self.dir, self.logs.join(format!("{base}.log")))
            .timeout(LIFETIME)
            .tmpdir(scratch.path());
        for (k, v) in &self.env {
            job = job.env(k, v);
        }
        let mut process = match runner::start_piped(&share.hand(job)) {
            Ok(p) => p,
            Err(e) => return (None, format!("`{}` could not start ({e})", self.command)),
        };
        let Some(stdout) = process.take_stdout() else {
            return (None, "the runner's stdout was not handed over".into());
        };
        // Its stdout kept whole beside its stderr's log, for the person reading the run.
        let copy = files::outputs::create(&self.logs.join(format!("{base}.out.log"))).ok();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, copy, tx));
        let mut live = Live {
            process,
            lines,
            _scratch: scratch,
        };
        match until_idle(&mut live, Instant::now() + self.limit, &mut |_| {}) {
            Ok(true) => (Some(live), String::new()),
            Ok(false) => (None, "its first run was not green".into()),
            Err(Gone::Quiet) => (
                None,
                "its first run did not end in time: no report of vitest's watch mode \
                 (`Waiting for file changes...`) was seen, and only vitest's is read"
                    .into(),
            ),
            Err(Gone::Exited) => (None, "it exited after its first run".into()),
            Err(Gone::Again) => (None, "a rerun started during its first run".into()),
        }
    }

    /// After the swap of `file` (relative to the tree's root): the rerun read, its report
    /// written to `log`.
    pub(crate) fn rerun(&mut self, file: &str, log: &Path) -> Rerun {
        let swapped = Instant::now();
        let start = SystemTime::now();
        let runner_start = Some(self.starts).filter(|_| self.live.is_some());
        let cold = |secs: f64, outcome: WarmOutcome, doubt: Option<String>| {
            Rerun::Cold(WarmRerun {
                runner_start,
                secs,
                outcome,
                doubt,
            })
        };
        let Some(live) = self.live.as_mut() else {
            let why = self.off.clone().unwrap_or_else(|| "no warm runner".into());
            return cold(0.0, WarmOutcome::Doubt, Some(why));
        };
        let read = read_rerun(live, file, self.limit);
        let secs = swapped.elapsed().as_secs_f64();
        let text = match read {
            Ok(text) => text,
            Err(why) => {
                self.stop();
                return cold(secs, WarmOutcome::Doubt, Some(why));
            }
        };
        // The rerun's report beside the cold run's log (`001-name.warm.log`): the row's log when
        // it killed, and kept when the cold run judged.
        let log = log.with_extension("warm.log");
        let joined = text.join("\n");
        if let Ok(mut f) = files::outputs::create(&log) {
            let _ = f.write_all((joined.clone() + "\n").as_bytes());
        }
        let log = log.as_path();
        let results = report::results::read(&Source::Log, &joined, &self.dir, start);
        let green = text
            .last()
            .is_some_and(|l| stream::classify(l) == Line::Idle { green: true });
        if green {
            return cold(secs, WarmOutcome::Passed, None);
        }
        let named = results.names();
        if named.is_empty() || results.counts.is_some_and(|c| c.failed == 0) {
            self.stop();
            return cold(
                secs,
                WarmOutcome::Doubt,
                Some("the rerun failed without naming a failed test".into()),
            );
        }
        // A rerun has no exit status of its own: the record says how long it took and what it
        // reported, and the verdict comes from `WarmRerun` (see `SuiteRun::judged`).
        let argv = vec!["sh".into(), "-c".into(), self.command.clone()];
        let mut record = report::RunRecord::not_yet_run(argv, self.dir.clone(), log.to_path_buf());
        record.run.start = start;
        record.run.end = SystemTime::now();
        record.run.duration_secs = secs;
        record.counts = results.counts;
        record.failed_tests = named;
        record.first_error = results.first_error();
        Rerun::Killed {
            record: Box::new(record),
            warm: WarmRerun {
                runner_start,
                secs,
                outcome: WarmOutcome::Killed,
                doubt: None,
            },
        }
    }

    /// After the restore of `file`: the runner reruns and is green again, or it is stopped.
    pub(crate) fn back(&mut self, file: &str) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let green = read_rerun(live, file, self.limit).is_ok_and(|text| {
            text.last()
                .is_some_and(|l| stream::classify(l) == Line::Idle { green: true })
        });
        if !green {
            self.stop();
        }
    }
}

/// The lines of one rerun of `file`: from its `RERUN` line (within [`START_LIMIT`]) to the next
/// idle line (within `limit`), escapes dropped; the last line is the idle one. `Err` says why
/// the rerun cannot be read as this file's.
fn read_rerun(live: &mut Live, file: &str, limit: Duration) -> Result<Vec<String>, String> {
    let until = Instant::now() + START_LIMIT;
    let first = loop {
        let line = next_line(live, until).map_err(|gone| match gone {
            Gone::Quiet => format!("no rerun within {}s of the change", START_LIMIT.as_secs()),
            Gone::Exited | Gone::Again => "the warm runner exited".to_string(),
        })?;
        if stream::classify(&line) != Line::Quiet {
            break line;
        }
    };
    match stream::classify(&first) {
        Line::Rerun(named) if stream::names(&named, file) => {}
        Line::Rerun(named) => {
            return Err(format!(
                "the rerun was for {:?}, not the mutated file",
                files::escape::text(&named)
            ))
        }
        _ => return Err("output that is not a rerun came after the change".into()),
    }
    let mut text = vec![first];
    let mut keep = |line: &str| text.push(line.to_string());
    match until_idle(live, Instant::now() + limit, &mut keep) {
        Ok(_) => Ok(text),
        Err(Gone::Quiet) => Err(format!("the rerun did not end within {}s", limit.as_secs())),
        Err(Gone::Exited) => Err("the warm runner exited during the rerun".into()),
        Err(Gone::Again) => Err("another rerun started before this one ended".into()),
    }
}

/// Reads lines until the runner is idle (each handed to `keep`, the idle one too): whether its
/// run was green. A second `RERUN` on the way is a doubt: another change was picked up.
fn until_idle(live: &mut Live, until: Instant, keep: &mut dyn FnMut(&str)) -> Result<bool, Gone> {
    loop {
        let line = next_line(live, until)?;
        keep(&line);
        // The first line of a rerun is read by the caller; any `RERUN` here is another one.
        match stream::classify(&line) {
            Line::Idle { green } => return Ok(green),
            Line::Rerun(_) => return Err(Gone::Again),
            Line::Other | Line::Quiet => {}
        }
    }
}

fn next_line(live: &mut Live, until: Instant) -> Result<String, Gone> {
    let left = until.saturating_duration_since(Instant::now());
    match live.lines.recv_timeout(left) {
        Ok(line) => Ok(line),
        Err(RecvTimeoutError::Timeout) => Err(Gone::Quiet),
        Err(RecvTimeoutError::Disconnected) => {
            // The process may still be winding down; its record is not needed.
            let _ = live.process.is_done();
            Err(Gone::Exited)
        }
    }
}

/// The reader thread: each line of the runner's stdout, escapes dropped, to `tx` (and as it
/// came to `copy`); ends with the pipe (the runner exited or was stopped) or when nobody listens.
fn read_lines(stdout: std::process::ChildStdout, mut copy: Option<File>, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if let Some(f) = copy.as_mut() {
            let _ = f.write_all(&buf);
        }
        let line = stream::plain(String::from_utf8_lossy(&buf).trim_end_matches('\n'));
        if tx.send(line).is_err() {
            return;
        }
    }
}
