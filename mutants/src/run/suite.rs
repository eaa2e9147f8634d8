//! One suite run in a mutants checkout: the one suite run ([`candidate::suite::run_suite`]:
//! its `build` step first, then `sh -c RUN`, each in its own process group, under its
//! timeout, in a scratch `TMPDIR` of its own), sharing the cores through [`Cores`]; whole, or
//! stopped at its first failed test ([`run_suite_fail_fast`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Result};

pub(crate) use candidate::suite::Ran;
use candidate::suite::SuiteJob;
use report::first_failure::{FirstFailure, Reader};
use report::results::Source;

use super::cores::Cores;
use super::timeout::Timeouts;
use crate::spec::Suite;

/// Runs one suite in `dir`, its output to `log` (its build's beside it, `.build.log`).
///
/// A `build` step runs first under its own timeout (`timeouts.build`); a build that fails or
/// runs past it is the suite's record as "could not start" (an `error`, `unviable` for a
/// generated mutant: [`Ran::build_failed`]). Both commands are handed the run's jobserver,
/// and a build that cannot use it waits for the build slot first (see [`super::cores`]): that
/// wait is not the build's time, and an interrupt during it is the suite's record as
/// `interrupted`, the build never started. The spec's suites already hold gate.toml's `[env]`
/// under their own (`--candidate`), so no file-wide environment is added here.
pub(super) fn run_suite(
    suite: &Suite,
    dir: &Path,
    log: &Path,
    timeouts: Timeouts,
    cores: &Cores,
) -> Result<Ran> {
    run_watched(suite, dir, log, timeouts, cores, None)
}

/// [`run_suite`], stopped once the runner's report of its first failed test is complete
/// ([`report::first_failure`]): the failure it stopped at, when it stopped (a suite that
/// ended by itself first, or whose output the reader cannot read, ran whole: `None`).
///
/// Only for a run whose failure decides nothing but `killed`: a mutant's, a canary's. The
/// baseline and controls run whole (their callers call [`run_suite`]).
pub(super) fn run_suite_fail_fast(
    suite: &Suite,
    dir: &Path,
    log: &Path,
    timeouts: Timeouts,
    cores: &Cores,
) -> Result<(Ran, Option<FirstFailure>)> {
    let tap = suite.results == Source::Tap;
    let reader = Arc::new(Mutex::new(Reader::new(tap)));
    let watch: runner::Watch = reader.clone();
    let ran = run_watched(suite, dir, log, timeouts, cores, Some(watch))?;
    let first = match ran.record.run.ended.is_stopped() {
        true => files::sync::lock(&reader).found().cloned(),
        false => None,
    };
    Ok((ran, first))
}

fn run_watched(
    suite: &Suite,
    dir: &Path,
    log: &Path,
    timeouts: Timeouts,
    cores: &Cores,
    watch: Option<runner::Watch>,
) -> Result<Ran> {
    let Some(run) = suite.run() else {
        // The spec reader refuses a `glob` suite at its line.
        bail!("suite {:?} has no `run` command", suite.name);
    };
    let job = SuiteJob::of(suite, run, &BTreeMap::new(), timeouts);
    candidate::suite::run_suite_watched(&job, dir, log, cores, watch)
}

/// Whether `suite`'s passing baseline log (`log`) would already have stopped at a first
/// failure: a reader that sees a failure in a green run's output cannot be trusted to stop a
/// mutant's, so the suite's mutants run whole. The failure it would have stopped at, if any.
pub(super) fn stops_when_green(suite: &Suite, log: &Path) -> Option<FirstFailure> {
    let bytes = std::fs::read(log).ok()?;
    Reader::replay(
        &String::from_utf8_lossy(&bytes),
        suite.results == Source::Tap,
    )
}

/// `log` relative to `out`, with `/`, for reports that move with their folder.
pub(super) fn relative(out: &Path, log: &Path) -> String {
    log.strip_prefix(out)
        .unwrap_or(log)
        .to_string_lossy()
        .into_owned()
}
