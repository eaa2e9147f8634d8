//! One suite run, the one way both tools run one: its `build` step first under its own
//! timeout, then `sh -c RUN`, each in its own process group through the shared runner, in a
//! scratch `TMPDIR` of its own with the runners' caches pointed into it.
//!
//! What differs between the tools is handed in, not decided here: the environment (gate.toml's
//! `[env]` under the suite's own), the timeouts (gate's are the file's; mutants derives its own
//! from the baseline), `--echo`, and how the run shares the machine's cores ([`Share`]: mutants'
//! `--jobs` hands every child its jobserver and lets one build at a time hold the build slot).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use report::results::Source;
use report::{Outcome, RunRecord};
use runner::Job;

use super::Suite;

/// How long a suite's two steps may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub run: Duration,
    pub build: Duration,
}

/// A suite ready to run: what its two steps are, with the environment and limits its tool
/// gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteJob {
    /// Run as `sh -c` in the checkout's root.
    pub run: String,
    pub build: Option<String>,
    /// The whole environment the suite is given: the file-wide `[env]` with the suite's own
    /// over it.
    pub env: BTreeMap<String, String>,
    pub results: Source,
    pub timeouts: Timeouts,
    /// `--echo`: the output copied to stderr as it is written.
    pub echo: bool,
}

impl SuiteJob {
    /// `suite` run as `run` (its own command, or one file its glob matched), with `env` under
    /// its own variables.
    pub fn of(
        suite: &Suite,
        run: &str,
        env: &BTreeMap<String, String>,
        timeouts: Timeouts,
    ) -> SuiteJob {
        let mut all = env.clone();
        all.extend(suite.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        SuiteJob {
            run: run.to_string(),
            build: suite.build.clone(),
            env: all,
            results: suite.results.clone(),
            timeouts,
            echo: false,
        }
    }
}

/// How a run shares the machine with the other runs going on at once.
pub trait Share {
    /// The job with what this run hands every child (mutants' jobserver).
    fn hand(&self, job: Job) -> Job {
        job
    }

    /// Waits for `build`'s turn to run and runs `build_it` in it; `None` when the wait was
    /// interrupted (the build never started).
    fn build_turn(
        &self,
        build: &str,
        build_it: &mut dyn FnMut() -> io::Result<RunRecord>,
    ) -> Option<io::Result<RunRecord>> {
        let _ = build;
        Some(build_it())
    }
}

/// A run alone on the machine: nothing handed, no turn waited for (gate's suites, one at a time).
pub struct Alone;

impl Share for Alone {}

/// A suite's run: its record, and its build step's when it has one.
#[derive(Clone, Debug)]
pub struct Ran {
    /// The suite's run; when its build did not pass, the build's own run, as one that could not
    /// start (`spawn_error` says why: `build failed (exit 2)`), with no run time. An interrupted
    /// build keeps its own record: the run is stopping, nothing is judged.
    pub record: RunRecord,
    /// The build step, when the suite has one and it started.
    pub build: Option<Built>,
}

/// A build step as it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Built {
    /// Its wall time, in seconds (not counting the wait for its turn).
    pub secs: f64,
    pub log: PathBuf,
    /// Why it did not pass (`build failed (exit 2)`, `build timed out after 30s ...`), so the
    /// suite never ran; `None` for a build that passed or was interrupted.
    pub failed: Option<String>,
}

impl Ran {
    /// Whether the build step failed or timed out, so the suite never ran.
    pub fn build_failed(&self) -> bool {
        self.build.as_ref().is_some_and(|b| b.failed.is_some())
    }

    /// The build step's wall time, when it ran.
    pub fn build_secs(&self) -> Option<f64> {
        self.build.as_ref().map(|b| b.secs)
    }
}

/// The build's log beside the suite's: `01-bus.log`'s is `01-bus.build.log`.
pub fn build_log(log: &Path) -> PathBuf {
    log.with_extension("build.log")
}

/// Runs `job` in `dir`, its output to `log` (the build's to [`build_log`]).
///
/// The scratch folder is why two runs at once (mutants' `--jobs`) cannot meet in `/tmp`: a
/// suite that writes a fixed temp name would otherwise see the other's file, and a verdict
/// could depend on timing. It is removed afterwards, best effort (never a verdict).
///
/// Errors only when a log or the scratch folder cannot be made; a command that cannot start
/// is a record that says so.
pub fn run_suite(job: &SuiteJob, dir: &Path, log: &Path, share: &dyn Share) -> Result<Ran> {
    run_suite_watched(job, dir, log, share, None)
}

/// [`run_suite`], with `watch` fed the suite's output as it is written (never its build's): it
/// may stop the run (mutants' first failure, see [`runner::Observer`]).
pub fn run_suite_watched(
    job: &SuiteJob,
    dir: &Path,
    log: &Path,
    share: &dyn Share,
    watch: Option<runner::Watch>,
) -> Result<Ran> {
    let scratch =
        runner::scratch::ScratchDir::new("tmp").context("creating the suite's scratch TMPDIR")?;
    let job_for = |script: &str, log: &Path, timeout: Duration| {
        let mut child = Job::shell(script, dir, log).timeout(timeout).echo(job.echo);
        for (k, v) in &job.env {
            child = child.env(k, v);
        }
        let child = share.hand(child.tmpdir(scratch.path()));
        fresh_caches(child, scratch.path(), &job.env)
    };
    let mut built = None;
    if let Some(build) = &job.build {
        let log = build_log(log);
        let child = job_for(build, &log, job.timeouts.build);
        let ran = share.build_turn(build, &mut || report::record::run(&child));
        let Some(ran) = ran else {
            let _ = scratch.remove();
            let mut record = RunRecord::not_yet_run(child.argv(), dir.to_path_buf(), log);
            record.run.ended = runner::Ended::Interrupted(runner::Status::default());
            return Ok(Ran {
                record,
                build: None,
            });
        };
        let record = ran.with_context(|| format!("creating the log {}", log.display()))?;
        let failed = build_failed(&record, job.timeouts.build);
        built = Some(Built {
            secs: record.run.duration_secs,
            log,
            failed: failed.clone(),
        });
        if record.outcome() != Outcome::Passed {
            let _ = scratch.remove();
            return Ok(Ran {
                record: as_not_started(record, failed),
                build: built,
            });
        }
    }
    let mut child = job_for(&job.run, log, job.timeouts.run);
    if let Some(watch) = watch {
        child = child.watch(watch);
    }
    let record = report::record::run_reading(&child, &job.results)
        .with_context(|| format!("creating the log {}", log.display()))?;
    // Read-only folders a suite left are made writable first; removal is never a verdict, and
    // what cannot be removed now goes with the session at the end of the run.
    let _ = scratch.remove();
    Ok(Ran {
        record,
        build: built,
    })
}

/// Why a build's record is not a pass, as a row says it; `None` for one that passed or was
/// interrupted (the run is stopping).
fn build_failed(built: &RunRecord, timeout: Duration) -> Option<String> {
    match built.outcome() {
        Outcome::Passed | Outcome::Interrupted => None,
        Outcome::Hang => Some(format!(
            "build timed out after {} (its process group was killed)",
            report::duration::human(timeout)
        )),
        _ => Some(format!("build failed ({})", built.status_text())),
    }
}

/// A failed or hung build as the suite's record: the suite never ran, so it "could not start"
/// (never a hang, never a kill), with the build's own status in its text and no run time.
fn as_not_started(mut built: RunRecord, failed: Option<String>) -> RunRecord {
    if let Some(why) = failed {
        // The build's own status stays with its words; the hang (if it was one) is the
        // build's, not the suite's.
        let status = built.run.ended.status().clone();
        built.run.ended = runner::Ended::CouldNotStart { why, status };
        built.run.duration_secs = 0.0;
    }
    built
}

/// Points the runner caches a verdict could come from at the run's scratch folder, so each run
/// starts with them empty, as on a CI machine, whatever an earlier run in the same checkout
/// left (the project's `.gitignore` keeps them out of the wholeness check):
/// - pytest's (`.pytest_cache`): `--lf` would run only the tests the last run broke, and
///   `--sw` would start from the last failure. `-o cache_dir=` goes last in `PYTEST_ADDOPTS`,
///   after the suite's own and the environment's, so it wins over a `cache_dir` they name (a
///   CI job's, or an outer mutants run's, shared by every run); one on the suite's own command
///   line still wins: the suite asked for it;
/// - jest's (`cacheDirectory`) already lives under `os.tmpdir()`, which `TMPDIR` points here.
///
/// Python's bytecode needs no folder of its own: every write to a checkout's file gets a time
/// no earlier content had ([`crate::fresh`]), which is what `.pyc` files are checked by.
fn fresh_caches(job: Job, scratch: &Path, env: &BTreeMap<String, String>) -> Job {
    const PYTEST: &str = "PYTEST_ADDOPTS";
    let theirs = env
        .get(PYTEST)
        .cloned()
        .or_else(|| std::env::var(PYTEST).ok())
        .unwrap_or_default();
    let dir = scratch.join("pytest-cache").display().to_string();
    // pytest splits the variable as a shell would.
    let quoted = format!("'cache_dir={}'", dir.replace('\'', r"'\''"));
    job.env(PYTEST, format!("{theirs} -o {quoted}").trim_start())
}
