//! One suite run in a mutants checkout: the one suite run ([`candidate::suite::run_suite`]:
//! its `build` step first, then `sh -c RUN`, each in its own process group, under its
//! timeout, in a scratch `TMPDIR` of its own), sharing the cores through [`Cores`].

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};

pub(crate) use candidate::suite::Ran;
use candidate::suite::SuiteJob;

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
    let Some(run) = suite.run() else {
        // The spec reader refuses a `glob` suite at its line.
        bail!("suite {:?} has no `run` command", suite.name);
    };
    let job = SuiteJob::of(suite, run, &BTreeMap::new(), timeouts);
    candidate::suite::run_suite(&job, dir, log, cores)
}

/// `log` relative to `out`, with `/`, for reports that move with their folder.
pub(super) fn relative(out: &Path, log: &Path) -> String {
    log.strip_prefix(out)
        .unwrap_or(log)
        .to_string_lossy()
        .into_owned()
}
