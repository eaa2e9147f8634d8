//! The engine: the unmutated baseline, then each mutant swapped in, judged and restored.
//!
//! The engine produces values ([`Baseline`]s, then [`Event`]s carrying [`Row`]s) and formats
//! nothing; the caller turns them into progress lines and report files. The one thing a
//! newcomer must know: a mutant's file is restored by a guard, and the restore is *proved* by
//! reading the bytes back, before the next mutant may start in that worktree. A suite that
//! rewrote the file itself, a full disk, a panic: all end the run rather than let the next
//! mutant be judged against a tree that is not the reviewed one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use report::runner::{self, Job, DEFAULT_TIMEOUT};
use report::{Counts, Outcome, RunRecord};

use crate::anchor::{self, Found};
use crate::checkout::{self, Checkout, Source};
use crate::record::{Baseline, Row, SuiteRun};
use crate::spec::{Expect, Mutant, Spec, Suite};
use crate::swap::{self, Change, Identity, WriteError};
use crate::verdict::Verdict;
use report::text::slug;

/// The floor of a derived timeout: below it, machine noise (a cold cache, a busy CI runner)
/// would turn slow-but-passing suites into hangs.
pub const TIMEOUT_FLOOR: Duration = Duration::from_secs(20);
/// A derived timeout is this many baseline durations (as cargo-mutants does).
pub const TIMEOUT_FACTOR: u32 = 5;

/// Where the timeout a mutant gets under a suite comes from, in order of precedence.
///
/// `--timeout` wins because it is the operator's word for this run; the spec's `timeout` is the
/// author's word for the suite; the derived one is a guess from the baseline.
pub fn mutant_timeout(
    cli: Option<Duration>,
    suite: &Suite,
    baseline: Duration,
) -> (Duration, String) {
    if let Some(t) = cli {
        return (t, "--timeout".into());
    }
    if let Some(t) = suite.timeout {
        return (t, "the spec's suite timeout".into());
    }
    let derived = (baseline * TIMEOUT_FACTOR).max(TIMEOUT_FLOOR);
    (
        Duration::from_secs(derived.as_secs_f64().ceil() as u64),
        format!(
            "max({}s, {TIMEOUT_FACTOR}x baseline)",
            TIMEOUT_FLOOR.as_secs()
        ),
    )
}

/// The timeout the baseline itself runs with: the same precedence, with SPEC's 30-minute
/// default in place of the derived one.
pub fn baseline_timeout(cli: Option<Duration>, suite: &Suite) -> Duration {
    cli.or(suite.timeout).unwrap_or(DEFAULT_TIMEOUT)
}

/// The timeout a mutant's `build` step gets: the spec's `build_timeout`, else derived from the
/// baseline's build the way a run's is (`--timeout` is the suite run's, not the build's).
pub fn mutant_build_timeout(suite: &Suite, baseline_build: Duration) -> Duration {
    if let Some(t) = suite.build_timeout {
        return t;
    }
    let derived = (baseline_build * TIMEOUT_FACTOR).max(TIMEOUT_FLOOR);
    Duration::from_secs(derived.as_secs_f64().ceil() as u64)
}

/// The timeout the baseline's `build` step runs with: the spec's, else SPEC's 30 minutes.
pub fn baseline_build_timeout(suite: &Suite) -> Duration {
    suite.build_timeout.unwrap_or(DEFAULT_TIMEOUT)
}

/// The two timeouts one suite run gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub run: Duration,
    pub build: Duration,
}

/// A suite's record and, when it has a `build` step, how long that took.
#[derive(Debug)]
pub struct Ran {
    pub record: RunRecord,
    pub build_secs: Option<f64>,
}

/// What the baseline found.
#[derive(Debug)]
pub struct BaselineResult {
    pub baselines: Vec<Baseline>,
    pub passed: bool,
    pub interrupted: bool,
    /// The per-suite mutant timeouts and baseline counts, for the mutant runs.
    pub timeouts: BTreeMap<String, Timeouts>,
    pub counts: BTreeMap<String, Option<Counts>>,
}

/// Runs every suite unmutated in every working copy, the copies in parallel.
///
/// Every copy gets its baseline, not only the first: it warms each copy's build (a cold
/// `cargo test` in the second worktree would otherwise be timed against the first's warm one)
/// and proves each copy is green. The first copy's records are the ones reported.
pub fn baseline(
    suites: &[&Suite],
    checkouts: &[Checkout],
    cli_timeout: Option<Duration>,
    out: &Path,
) -> Result<BaselineResult> {
    let per_copy: Vec<Result<Vec<Ran>>> = std::thread::scope(|s| {
        let handles: Vec<_> = checkouts
            .iter()
            .enumerate()
            .map(|(j, co)| {
                s.spawn(move || -> Result<Vec<Ran>> {
                    let mut records = Vec::new();
                    for suite in suites {
                        let name = if j == 0 {
                            format!("baseline.{}.log", slug(&suite.name, "mutant"))
                        } else {
                            format!("baseline.{}.copy{j}.log", slug(&suite.name, "mutant"))
                        };
                        let ran = run_suite(
                            suite,
                            co.path(),
                            &out.join("logs").join(name),
                            Timeouts {
                                run: baseline_timeout(cli_timeout, suite),
                                build: baseline_build_timeout(suite),
                            },
                        )?;
                        let stop = ran.record.outcome() != Outcome::Passed;
                        records.push(ran);
                        if stop {
                            break;
                        }
                    }
                    Ok(records)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("a baseline thread panicked"))
            })
            .collect()
    });
    let per_copy: Vec<Vec<Ran>> = per_copy.into_iter().collect::<Result<_>>()?;

    let mut result = BaselineResult {
        baselines: Vec::new(),
        passed: true,
        interrupted: false,
        timeouts: BTreeMap::new(),
        counts: BTreeMap::new(),
    };
    for (i, suite) in suites.iter().enumerate() {
        // The slowest copy sets the timeout; a failure in any copy fails the baseline.
        let rans: Vec<&Ran> = per_copy.iter().filter_map(|r| r.get(i)).collect();
        let records: Vec<&RunRecord> = rans.iter().map(|r| &r.record).collect();
        let Some(first) = records.first() else {
            break;
        };
        let slowest_build = rans
            .iter()
            .filter_map(|r| r.build_secs)
            .map(|s| Duration::from_secs_f64(s.max(0.0)))
            .max()
            .unwrap_or_default();

        let slowest = records
            .iter()
            .map(|r| r.duration())
            .max()
            .unwrap_or_default();
        let worst = records
            .iter()
            .find(|r| r.outcome() != Outcome::Passed)
            .unwrap_or(first);
        let passed = worst.outcome() == Outcome::Passed;
        result.interrupted |= records.iter().any(|r| r.interrupted);
        result.passed &= passed;
        let (timeout, source) = mutant_timeout(cli_timeout, suite, slowest);
        result.timeouts.insert(
            suite.name.clone(),
            Timeouts {
                run: timeout,
                build: mutant_build_timeout(suite, slowest_build),
            },
        );
        result.counts.insert(suite.name.clone(), first.counts);
        result.baselines.push(Baseline {
            suite: suite.name.clone(),
            status: worst.status_text(),
            passed,
            duration_secs: first.duration_secs,
            build_secs: rans[0].build_secs,
            counts: worst.counts,
            strays_killed: worst.strays_killed,
            mutant_timeout_secs: timeout.as_secs_f64(),
            timeout_source: source,
            log: relative(out, &worst.log),
        });
    }
    // A copy that stopped early (its first suite failed) left the later suites unrun.
    if result.baselines.len() < suites.len() {
        result.passed = false;
    }
    Ok(result)
}

/// What the engine tells its caller as mutants run.
#[derive(Debug)]
pub enum Event {
    Started {
        index: usize,
        name: String,
    },
    Finished(Box<Row>),
    /// A second passed with no other event.
    Tick,
}

/// How often [`Event::Tick`] comes while mutants run.
const TICK: Duration = Duration::from_secs(1);

/// Everything a mutant run needs besides the mutant.
#[derive(Debug)]
pub struct Plan<'a> {
    pub spec: &'a Spec,
    /// Where a fresh working copy comes from, when a suite spoiled one, and what it needs.
    pub source: &'a Source,
    pub prep: &'a checkout::Prep,
    pub mutants: Vec<&'a Mutant>,
    pub baseline: &'a BaselineResult,
    pub out: PathBuf,
}

/// Runs the planned mutants, one worker per working copy, each taking the next mutant in spec
/// order; `on_event` is called on this thread for every event. Stops taking mutants once an
/// interrupt arrives (the runner has already killed the suites in flight).
///
/// A working copy whose suite replaced or deleted the mutated file is discarded and a fresh one
/// made in its place (in `checkouts`) before that worker takes its next mutant: nothing in a
/// tree a suite has rearranged can be trusted, and the next mutant must be judged against the
/// reviewed tree.
pub fn run_mutants(
    plan: &Plan,
    checkouts: &mut [Checkout],
    mut on_event: impl FnMut(Event),
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Event>();
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = checkouts
            .iter_mut()
            .map(|co| {
                let tx = tx.clone();
                let (next, failed) = (&next, &failed);
                s.spawn(move || -> Result<()> {
                    let result = work(plan, co, next, failed, &tx);
                    if result.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    result
                })
            })
            .collect();
        drop(tx);
        // A mutant's suite may run for minutes: a tick once a second lets the caller keep a
        // live line's clock moving while no other event arrives.
        loop {
            match rx.recv_timeout(TICK) {
                Ok(event) => on_event(event),
                Err(mpsc::RecvTimeoutError::Timeout) => on_event(Event::Tick),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some(anyhow::anyhow!("a mutant worker panicked")),
            })
            .collect()
    });
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// One worker: takes mutants until none is left, rebuilding its copy when a suite spoiled it.
fn work(
    plan: &Plan,
    co: &mut Checkout,
    next: &AtomicUsize,
    failed: &AtomicBool,
    tx: &mpsc::Sender<Event>,
) -> Result<()> {
    loop {
        if report::interrupt::requested() || failed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let i = next.fetch_add(1, Ordering::SeqCst);
        let Some(m) = plan.mutants.get(i) else {
            return Ok(());
        };
        let _ = tx.send(Event::Started {
            index: m.index,
            name: m.name.clone(),
        });
        let done = run_one(plan, m, co)?;
        if done.spoiled {
            // The old copy is dropped here, which removes it (its links are removed, never
            // followed).
            *co = checkout::make(plan.source, 1)
                .context("making a fresh working copy after a suite replaced the mutated file")?
                .pop()
                .context("no working copy was made")?;
            plan.prep
                .apply(co, &format!("setup.rebuilt-{}.log", m.index + 1))?;
        }
        match done.row {
            Some(row) => {
                let _ = tx.send(Event::Finished(Box::new(row)));
            }
            None => return Ok(()),
        }
    }
}

/// The mutated file, what it was when the mutant went in, and its original bytes: put back on
/// [`Restore::restore`], which proves it, or on drop (an early return or a panic), best effort;
/// never written when the path no longer holds that same file.
struct Restore<'a> {
    path: &'a Path,
    id: Identity,
    original: &'a [u8],
    done: bool,
}

impl Restore<'_> {
    /// `Ok(Err(change))` when the suite replaced the file: nothing was written.
    fn restore(mut self) -> Result<Result<(), Change>> {
        self.done = true;
        match swap::write_in_place(self.path, self.id, self.original) {
            Ok(()) => Ok(Ok(())),
            Err(WriteError::Changed(c)) => Ok(Err(c)),
            Err(WriteError::Io(e)) => Err(e).with_context(|| {
                format!(
                    "restoring {} to its original bytes",
                    report::escape::path(self.path)
                )
            }),
        }
    }

    /// Gives up on the file: it is not ours any more.
    fn abandon(mut self) {
        self.done = true;
    }
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = swap::write_in_place(self.path, self.id, self.original);
        }
    }
}

/// What one mutant left: its row (`None` when the run was interrupted during it), and whether
/// its working copy is spoiled and must be made again.
struct Done {
    row: Option<Row>,
    spoiled: bool,
}

/// One mutant in one working copy.
fn run_one(plan: &Plan, m: &Mutant, co: &Checkout) -> Result<Done> {
    let path = swap::file_in(co.path(), &m.file)?;
    // `_pin` holds the file open to the end, so its inode cannot be reused by a replacement.
    let swap::Regular {
        bytes: original,
        id,
        file: _pin,
    } = swap::read_regular(&path)
        .with_context(|| format!("reading {}", report::escape::path(&path)))?;
    let mut row = Row {
        index: m.index,
        name: m.name.clone(),
        site: m.site.clone(),
        file: m.file.clone(),
        undoes: m.undoes.clone(),
        control: m.is_control(),
        anchor: m.anchor.clone(),
        replace: m.replace.clone(),
        verdict: Verdict::Error,
        matches: 0,
        span: None,
        run: None,
        also: Vec::new(),
        diff: None,
        rerun: None,
    };
    let span = match anchor::find_anchor(&original, m.anchor.as_bytes()) {
        Found::Once(span) => span,
        Found::Not(n) => {
            row.matches = n;
            row.verdict = Verdict::Skipped { matches: n };
            return Ok(Done {
                row: Some(row),
                spoiled: false,
            });
        }
    };
    row.matches = 1;
    row.span = Some(span);
    row.diff = Some(anchor::diff(
        &m.file,
        &original,
        &span,
        m.replace.as_bytes(),
    ));
    let mutated = anchor::swap(&original, &span, m.replace.as_bytes());

    let guard = Restore {
        path: &path,
        id,
        original: &original,
        done: false,
    };
    swap::write_in_place(&path, id, &mutated)
        .with_context(|| format!("writing the mutant into {}", report::escape::path(&path)))?;
    let mut runs = Vec::new();
    let mut changed = None;
    for (k, suite_name) in m.suites().enumerate() {
        let suite = &plan.spec.suites[suite_name];
        let log_name = if k == 0 {
            format!("{:03}-{}.log", m.index + 1, slug(&m.name, "mutant"))
        } else {
            format!(
                "{:03}-{}.{}.log",
                m.index + 1,
                slug(&m.name, "mutant"),
                slug(suite_name, "mutant")
            )
        };
        let timeouts = plan.baseline.timeouts[suite_name];
        let ran = run_suite(
            suite,
            co.path(),
            &plan.out.join("logs").join(log_name),
            timeouts,
        )?;
        if ran.record.interrupted {
            let spoiled = guard.restore()?.is_err();
            return Ok(Done { row: None, spoiled });
        }
        let baseline_counts = plan.baseline.counts.get(suite_name).copied().flatten();
        let mut run = suite_run(
            &plan.out,
            suite_name,
            m.expect,
            &ran,
            timeouts.run,
            baseline_counts,
        );
        // A suite that replaced or deleted the file proves nothing, whatever it exited with,
        // and the tree is no longer the one under review: stop here.
        if let Err(c) = swap::check(&path, id) {
            run.verdict = Verdict::Error;
            run.status = c.to_string();
            runs.push(run);
            changed = Some(c);
            break;
        }
        runs.push(run);
    }
    let spoiled = match changed {
        Some(_) => {
            guard.abandon();
            true
        }
        None => match guard.restore()? {
            Ok(()) => false,
            // Replaced after the check (by a process the suite left behind): the same error.
            Err(c) => {
                if let Some(last) = runs.last_mut() {
                    last.verdict = Verdict::Error;
                    last.status = c.to_string();
                }
                true
            }
        },
    };
    let mut runs = runs.into_iter();
    let main = runs.next().expect("a mutant has its own suite");
    row.verdict = if spoiled {
        Verdict::Error
    } else {
        main.verdict
    };
    row.run = Some(main);
    row.also = runs.collect();
    Ok(Done {
        row: Some(row),
        spoiled,
    })
}

fn suite_run(
    out: &Path,
    suite: &str,
    expect: Expect,
    ran: &Ran,
    timeout: Duration,
    baseline_counts: Option<Counts>,
) -> SuiteRun {
    let record = &ran.record;
    SuiteRun {
        suite: suite.to_string(),
        verdict: Verdict::judge(expect, record.outcome()).unwrap_or(Verdict::Error),
        status: record.status_text(),
        exit_code: record.exit_code,
        signal: record.signal.clone(),
        start: record.start,
        end: record.end,
        duration_secs: record.duration_secs,
        build_secs: ran.build_secs,
        timeout_secs: timeout.as_secs_f64(),
        baseline_counts,
        counts: record.counts,
        failed_tests: record.failed_tests.clone(),
        strays_killed: record.strays_killed,
        log: relative(out, &record.log),
    }
}

/// Runs one suite through the shared runner: `sh -c RUN` in `dir`, its own process group,
/// its timeout, output to `log`, and a scratch `TMPDIR` of its own.
///
/// The scratch folder is why two mutants running at once (`--jobs`) cannot meet in `/tmp`: a
/// suite that writes a fixed temp name would otherwise see the other mutant's file, and a
/// verdict could depend on timing. It is removed afterwards, best effort (never a verdict).
///
/// A `build` step runs first under its own timeout (`timeouts.build`); a build that fails or
/// runs past it is the suite's record as an `error` (see [`build_failed`]).
fn run_suite(suite: &Suite, dir: &Path, log: &Path, timeouts: Timeouts) -> Result<Ran> {
    let scratch =
        report::scratch::ScratchDir::new("tmp").context("creating the suite's scratch TMPDIR")?;
    let job_for = |script: &str, log: &Path, timeout: Duration| {
        let mut job = Job::shell(script, dir, log).timeout(timeout);
        for (k, v) in &suite.env {
            job = job.env(k, v);
        }
        job.tmpdir(scratch.path())
    };
    let mut record = None;
    let mut build_secs = None;
    if let Some(build) = &suite.build {
        let build_log = log.with_extension("build.log");
        let built = runner::run(&job_for(build, &build_log, timeouts.build))
            .with_context(|| format!("creating the log {}", build_log.display()))?;
        build_secs = Some(built.duration_secs);
        if built.outcome() != Outcome::Passed {
            record = Some(build_failed(built, timeouts.build));
        }
    }
    let record = match record {
        Some(r) => r,
        None => runner::run(&job_for(&suite.run, log, timeouts.run))
            .with_context(|| format!("creating the log {}", log.display()))?,
    };
    // Read-only folders a suite left are made writable first; removal is never a verdict, and
    // what cannot be removed now goes with the session at the end of the run.
    let _ = scratch.remove();
    Ok(Ran { record, build_secs })
}

/// A failed or hung build as the suite's record: the suite never ran, so it "could not start"
/// (an `error`, never a kill, never a hang, never a killed control), with the build's own
/// status kept in the record's text and no run time. Only an interrupted build keeps its own
/// outcome (the run is stopping).
fn build_failed(mut built: RunRecord, timeout: Duration) -> RunRecord {
    if built.interrupted {
        return built;
    }
    let why = if built.hang {
        format!(
            "build timed out after {} (its process group was killed)",
            report::duration::human(timeout)
        )
    } else {
        format!("build failed ({})", built.status_text())
    };
    built.hang = false;
    built.spawn_error = Some(why);
    built.duration_secs = 0.0;
    built
}

/// `log` relative to `out`, with `/`, for reports that move with their folder.
fn relative(out: &Path, log: &Path) -> String {
    log.strip_prefix(out)
        .unwrap_or(log)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(timeout: Option<Duration>) -> Suite {
        Suite {
            build: None,
            name: "bus".into(),
            run: "true".into(),
            timeout,
            build_timeout: None,
            env: BTreeMap::new(),
        }
    }

    #[test]
    fn timeouts_follow_cli_then_spec_then_baseline() {
        let s = Duration::from_secs;
        assert_eq!(
            mutant_timeout(Some(s(3)), &suite(Some(s(9))), s(100)).0,
            s(3)
        );
        assert_eq!(mutant_timeout(None, &suite(Some(s(9))), s(100)).0, s(9));
        assert_eq!(mutant_timeout(None, &suite(None), s(100)).0, s(500));
        assert_eq!(
            mutant_timeout(None, &suite(None), Duration::from_millis(300)).0,
            TIMEOUT_FLOOR
        );
        assert_eq!(baseline_timeout(None, &suite(None)), DEFAULT_TIMEOUT);
    }

    #[test]
    fn build_timeouts_follow_spec_then_the_baseline_build() {
        let s = Duration::from_secs;
        let mut with_build = suite(None);
        with_build.build = Some("true".into());
        assert_eq!(mutant_build_timeout(&with_build, s(100)), s(500));
        assert_eq!(
            mutant_build_timeout(&with_build, Duration::from_millis(300)),
            TIMEOUT_FLOOR
        );
        assert_eq!(baseline_build_timeout(&with_build), DEFAULT_TIMEOUT);
        with_build.build_timeout = Some(s(7));
        assert_eq!(mutant_build_timeout(&with_build, s(100)), s(7));
        assert_eq!(baseline_build_timeout(&with_build), s(7));
    }
}
