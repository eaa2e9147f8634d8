//! The engine: the unmutated baseline, then each mutant swapped in, judged and restored.
//!
//! The engine produces values ([`Baseline`]s, then [`Event`]s carrying [`Row`]s) and formats
//! nothing; the caller turns them into progress lines and report files. The one thing a
//! newcomer must know: a mutant's file is restored by a guard, and the restore is *proved* by
//! reading the bytes back, before the next mutant may start in that worktree. A suite that
//! rewrote the file itself, a full disk, a panic: all end the run rather than let the next
//! mutant be judged against a tree that is not the reviewed one.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use report::runner::{self, Job, DEFAULT_TIMEOUT};
use report::{Counts, Outcome, RunRecord};

use crate::anchor::{self, Found};
use crate::checkout::Checkout;
use crate::record::{Baseline, Row, SuiteRun};
use crate::spec::{Expect, Mutant, Spec, Suite};
use crate::verdict::Verdict;

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

/// What the baseline found.
#[derive(Debug)]
pub struct BaselineResult {
    pub baselines: Vec<Baseline>,
    pub passed: bool,
    pub interrupted: bool,
    /// The per-suite mutant timeout and baseline counts, for the mutant runs.
    pub timeouts: BTreeMap<String, Duration>,
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
    let per_copy: Vec<Result<Vec<RunRecord>>> = std::thread::scope(|s| {
        let handles: Vec<_> = checkouts
            .iter()
            .enumerate()
            .map(|(j, co)| {
                s.spawn(move || -> Result<Vec<RunRecord>> {
                    let mut records = Vec::new();
                    for suite in suites {
                        let name = if j == 0 {
                            format!("baseline.{}.log", slug(&suite.name))
                        } else {
                            format!("baseline.{}.copy{j}.log", slug(&suite.name))
                        };
                        let record = run_suite(
                            suite,
                            co.path(),
                            &out.join("logs").join(name),
                            baseline_timeout(cli_timeout, suite),
                        )?;
                        let stop = record.outcome() != Outcome::Passed;
                        records.push(record);
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
    let per_copy: Vec<Vec<RunRecord>> = per_copy.into_iter().collect::<Result<_>>()?;

    let mut result = BaselineResult {
        baselines: Vec::new(),
        passed: true,
        interrupted: false,
        timeouts: BTreeMap::new(),
        counts: BTreeMap::new(),
    };
    for (i, suite) in suites.iter().enumerate() {
        // The slowest copy sets the timeout; a failure in any copy fails the baseline.
        let records: Vec<&RunRecord> = per_copy.iter().filter_map(|r| r.get(i)).collect();
        let Some(first) = records.first() else {
            break;
        };
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
        result.timeouts.insert(suite.name.clone(), timeout);
        result.counts.insert(suite.name.clone(), first.counts);
        result.baselines.push(Baseline {
            suite: suite.name.clone(),
            status: worst.status_text(),
            passed,
            duration_secs: first.duration_secs,
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
    pub mutants: Vec<&'a Mutant>,
    pub baseline: &'a BaselineResult,
    pub out: PathBuf,
}

/// Runs the planned mutants, one worker per working copy, each taking the next mutant in spec
/// order; `on_event` is called on this thread for every event. Stops taking mutants once an
/// interrupt arrives (the runner has already killed the suites in flight).
pub fn run_mutants(
    plan: &Plan,
    checkouts: &[Checkout],
    mut on_event: impl FnMut(Event),
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Event>();
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = checkouts
            .iter()
            .map(|co| {
                let tx = tx.clone();
                let (next, failed) = (&next, &failed);
                s.spawn(move || -> Result<()> {
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
                        match run_one(plan, m, co) {
                            Ok(Some(row)) => {
                                let _ = tx.send(Event::Finished(Box::new(row)));
                            }
                            Ok(None) => return Ok(()),
                            Err(e) => {
                                failed.store(true, Ordering::SeqCst);
                                return Err(e);
                            }
                        }
                    }
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

/// Puts a file's original bytes back: on [`Restore::restore`], which proves it, or on drop
/// (an early return or a panic), best effort.
struct Restore<'a> {
    path: &'a Path,
    original: &'a [u8],
    done: bool,
}

impl Restore<'_> {
    fn restore(mut self) -> Result<()> {
        self.done = true;
        fs::write(self.path, self.original)
            .with_context(|| format!("restoring {}", self.path.display()))?;
        // The proof: the bytes on disk are the original bytes. Cheap (one file) and exact.
        let now =
            fs::read(self.path).with_context(|| format!("re-reading {}", self.path.display()))?;
        if now != self.original {
            bail!(
                "{} is not back to its original bytes after restoring it",
                self.path.display()
            );
        }
        Ok(())
    }
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::write(self.path, self.original);
        }
    }
}

/// One mutant in one working copy; `None` when the run was interrupted during it.
fn run_one(plan: &Plan, m: &Mutant, co: &Checkout) -> Result<Option<Row>> {
    let path = co.file(&m.file)?;
    let original = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
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
    };
    let span = match anchor::find_anchor(&original, m.anchor.as_bytes()) {
        Found::Once(span) => span,
        Found::Not(n) => {
            row.matches = n;
            row.verdict = Verdict::Skipped { matches: n };
            return Ok(Some(row));
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
        original: &original,
        done: false,
    };
    fs::write(&path, &mutated).with_context(|| format!("writing {}", path.display()))?;
    let mut runs = Vec::new();
    for (k, suite_name) in m.suites().enumerate() {
        let suite = &plan.spec.suites[suite_name];
        let log_name = if k == 0 {
            format!("{:03}-{}.log", m.index + 1, slug(&m.name))
        } else {
            format!(
                "{:03}-{}.{}.log",
                m.index + 1,
                slug(&m.name),
                slug(suite_name)
            )
        };
        let timeout = plan.baseline.timeouts[suite_name];
        let record = run_suite(
            suite,
            co.path(),
            &plan.out.join("logs").join(log_name),
            timeout,
        )?;
        if record.interrupted {
            guard.restore()?;
            return Ok(None);
        }
        let baseline_counts = plan.baseline.counts.get(suite_name).copied().flatten();
        runs.push(suite_run(
            &plan.out,
            suite_name,
            m.expect,
            &record,
            timeout,
            baseline_counts,
        ));
    }
    guard.restore()?;
    let mut runs = runs.into_iter();
    let main = runs.next().expect("a mutant has its own suite");
    row.verdict = main.verdict;
    row.run = Some(main);
    row.also = runs.collect();
    Ok(Some(row))
}

fn suite_run(
    out: &Path,
    suite: &str,
    expect: Expect,
    record: &RunRecord,
    timeout: Duration,
    baseline_counts: Option<Counts>,
) -> SuiteRun {
    SuiteRun {
        suite: suite.to_string(),
        verdict: Verdict::judge(expect, record.outcome()).unwrap_or(Verdict::Error),
        status: record.status_text(),
        exit_code: record.exit_code,
        signal: record.signal.clone(),
        start: record.start,
        end: record.end,
        duration_secs: record.duration_secs,
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
fn run_suite(suite: &Suite, dir: &Path, log: &Path, timeout: Duration) -> Result<RunRecord> {
    let scratch =
        report::scratch::ScratchDir::new("tmp").context("creating the suite's scratch TMPDIR")?;
    let job_for = |script: &str, log: &Path| {
        let mut job = Job::shell(script, dir, log).timeout(timeout);
        for (k, v) in &suite.env {
            job = job.env(k, v);
        }
        job.tmpdir(scratch.path())
    };
    let mut record = None;
    if let Some(build) = &suite.build {
        let build_log = log.with_extension("build.log");
        let built = runner::run(&job_for(build, &build_log))
            .with_context(|| format!("creating the log {}", build_log.display()))?;
        if built.outcome() != Outcome::Passed {
            record = Some(build_failed(built));
        }
    }
    let record = match record {
        Some(r) => r,
        None => runner::run(&job_for(&suite.run, log))
            .with_context(|| format!("creating the log {}", log.display()))?,
    };
    // Read-only folders a suite left are made writable first; removal is never a verdict, and
    // what cannot be removed now goes with the session at the end of the run.
    let _ = scratch.remove();
    Ok(record)
}

/// A failed build as the suite's record: the suite never ran, so it "could not start" (an
/// `error`, never a kill), with the build's own status kept in the record's text. An
/// interrupted or hung build keeps its own outcome.
fn build_failed(mut built: RunRecord) -> RunRecord {
    if !built.interrupted && !built.hang {
        let status = built.status_text();
        built.spawn_error = Some(format!("build failed ({status})"));
    }
    built
}

/// `log` relative to `out`, with `/`, for reports that move with their folder.
fn relative(out: &Path, log: &Path) -> String {
    log.strip_prefix(out)
        .unwrap_or(log)
        .to_string_lossy()
        .into_owned()
}

/// A file-name-safe form of a name: lower-case letters, digits and `-`, at most 48 characters.
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches('-');
    let s: String = s.chars().take(48).collect();
    if s.is_empty() {
        "mutant".into()
    } else {
        s
    }
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
    fn slugs_are_file_safe() {
        assert_eq!(slug("after inclusive"), "after-inclusive");
        assert_eq!(
            slug("copy-edit: colon -> semicolon"),
            "copy-edit-colon-semicolon"
        );
        assert_eq!(slug("///"), "mutant");
    }
}
