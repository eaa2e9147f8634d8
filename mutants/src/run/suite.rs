//! One suite run through the shared runner: its `build` step first, then `sh -c RUN`, each in
//! its own process group, under its timeout, in a scratch `TMPDIR` of its own.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use report::{Outcome, RunRecord};
use runner::Job;

use super::cores::Cores;
use super::timeout::Timeouts;
use crate::spec::Suite;

/// A suite's record and, when it has a `build` step, how long that took and whether it failed.
#[derive(Debug)]
pub(crate) struct Ran {
    pub record: RunRecord,
    pub build_secs: Option<f64>,
    /// The `build` step failed or timed out, so the suite never ran (the record says why):
    /// what makes a generated mutant `unviable` rather than `error`.
    pub build_failed: bool,
}

/// Runs one suite through the shared runner: `sh -c RUN` in `dir`, its own process group,
/// its timeout, output to `log`, and a scratch `TMPDIR` of its own.
///
/// The scratch folder is why two mutants running at once (`--jobs`) cannot meet in `/tmp`: a
/// suite that writes a fixed temp name would otherwise see the other mutant's file, and a
/// verdict could depend on timing. It is removed afterwards, best effort (never a verdict).
///
/// A `build` step runs first under its own timeout (`timeouts.build`); a build that fails or
/// runs past it is the suite's record as an `error` (see [`build_failed`]). Both commands are
/// handed the run's jobserver, and a build that cannot use it waits for the build slot first
/// (see [`super::cores`]): that wait is not the build's time, and an interrupt during it is
/// the suite's record as `interrupted`, the build never started.
pub(super) fn run_suite(
    suite: &Suite,
    dir: &Path,
    log: &Path,
    timeouts: Timeouts,
    cores: &Cores,
) -> Result<Ran> {
    let scratch =
        runner::scratch::ScratchDir::new("tmp").context("creating the suite's scratch TMPDIR")?;
    let job_for = |script: &str, log: &Path, timeout: Duration| {
        let mut job = Job::shell(script, dir, log).timeout(timeout);
        if let Some(client) = cores.client() {
            job = job.jobserver(client.clone());
        }
        for (k, v) in &suite.env {
            job = job.env(k, v);
        }
        fresh_caches(job.tmpdir(scratch.path()), scratch.path(), &suite.env)
    };
    let mut record = None;
    let mut build_secs = None;
    if let Some(build) = &suite.build {
        let build_log = log.with_extension("build.log");
        let job = job_for(build, &build_log, timeouts.build);
        let Some(_slot) = cores.build_slot(build) else {
            let _ = scratch.remove();
            let mut record = RunRecord::not_yet_run(job.argv(), dir.to_path_buf(), build_log);
            record.interrupted = true;
            return Ok(Ran {
                record,
                build_secs: None,
                build_failed: false,
            });
        };
        let built = report::record::run(&job)
            .with_context(|| format!("creating the log {}", build_log.display()))?;
        build_secs = Some(built.duration_secs);
        if built.outcome() != Outcome::Passed {
            record = Some(build_failed(built, timeouts.build));
        }
    }
    // An interrupted build keeps its own outcome: the run is stopping, nothing is judged.
    let build_failed = record.as_ref().is_some_and(|r| !r.interrupted);
    let record = match record {
        Some(r) => r,
        None => {
            report::record::run_reading(&job_for(&suite.run, log, timeouts.run), &suite.results)
                .with_context(|| format!("creating the log {}", log.display()))?
        }
    };
    // Read-only folders a suite left are made writable first; removal is never a verdict, and
    // what cannot be removed now goes with the session at the end of the run.
    let _ = scratch.remove();
    Ok(Ran {
        record,
        build_secs,
        build_failed,
    })
}

/// Points the runner caches a verdict could come from at the run's scratch folder, so each run
/// starts with them empty, as on a CI machine, whatever an earlier run in the same checkout
/// left (the project's `.gitignore` keeps them out of the wholeness check):
/// - pytest's (`.pytest_cache`): `--lf` would run only the tests the last mutant broke, and
///   `--sw` would start from the last failure. `-o cache_dir=` goes first in `PYTEST_ADDOPTS`,
///   before the suite's own or the user's (a `cache_dir` on the command line still wins: the
///   suite asked for it);
/// - jest's (`cacheDirectory`) already lives under `os.tmpdir()`, which `TMPDIR` points here.
///
/// Python's bytecode needs no folder of its own: every write to a checkout's file gets a time
/// no earlier content had ([`candidate::fresh`]), which is what `.pyc` files are checked by.
fn fresh_caches(job: Job, scratch: &Path, env: &std::collections::BTreeMap<String, String>) -> Job {
    const PYTEST: &str = "PYTEST_ADDOPTS";
    let theirs = env
        .get(PYTEST)
        .cloned()
        .or_else(|| std::env::var(PYTEST).ok())
        .unwrap_or_default();
    let dir = scratch.join("pytest-cache").display().to_string();
    // pytest splits the variable as a shell would.
    let quoted = format!("'cache_dir={}'", dir.replace('\'', r"'\''"));
    job.env(PYTEST, format!("-o {quoted} {theirs}").trim_end())
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
pub(super) fn relative(out: &Path, log: &Path) -> String {
    log.strip_prefix(out)
        .unwrap_or(log)
        .to_string_lossy()
        .into_owned()
}
