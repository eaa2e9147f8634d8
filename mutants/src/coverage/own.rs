//! The coverage collector's own commands (`cargo metadata`, a runner's list of its tests, one
//! test file's or one test's run with coverage), run in the checkout as the suite's commands
//! run: its environment, scratch folder and timeouts, without its build step (the baseline
//! built).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use candidate::suite::{Share, SuiteJob, Timeouts};

use crate::spec::Suite;

/// One of the collector's own commands (`cargo metadata`, a runner's list of its test files, a
/// test file's run with coverage) in the checkout at `root`, as the suite's commands run: its
/// environment, scratch folder and timeouts, without its build step (the baseline built).
pub(super) fn run_own(
    suite: &Suite,
    command: &str,
    root: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &dyn Share,
) -> Result<candidate::suite::Ran> {
    run_own_with(suite, command, BTreeMap::new(), root, log, timeouts, share)
}

/// [`run_own`] with `env` over the suite's own variables.
pub(super) fn run_own_with(
    suite: &Suite,
    command: &str,
    env: BTreeMap<String, String>,
    root: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &dyn Share,
) -> Result<candidate::suite::Ran> {
    let mut job = SuiteJob::of(suite, command, &BTreeMap::new(), timeouts);
    job.build = None;
    job.env.extend(env);
    candidate::suite::run_suite(&job, root, log, share)
}
