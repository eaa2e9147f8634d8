//! The suites phase: each planned suite run in order in the checkout, its log named by the
//! run's mode, its progress emitted as events, each result handed on as it ends.

use std::path::Path;

use anyhow::Result;

use candidate::config::Config;

use super::mode::Mode;
use crate::progress::{Event, Shows};
use crate::suite::{self, Planned, SuiteResult};

/// How the suites phase ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ran {
    /// Every planned suite ran.
    Through,
    /// An interrupt stopped it: the suites after the one it cut short were not run.
    Interrupted,
}

/// Runs each of `planned` in order in `dir`, its log `--out`'s `mode.suite_log(...)` (`echo`:
/// tailed to the terminal), handing each result to `record` as it ends; stops at an interrupt.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    planned: &[Planned],
    dir: &Path,
    config: &Config,
    out: &Path,
    mode: &Mode,
    echo: bool,
    shows: &mut Shows,
    mut record: impl FnMut(SuiteResult, &mut Shows),
) -> Result<Ran> {
    let mut interrupted = false;
    let total = planned.len();
    shows.steps(total);
    for (i, p) in planned.iter().enumerate() {
        if files::interrupt::requested() {
            interrupted = true;
            break;
        }
        let log = out.join(mode.suite_log(i, &p.name));
        let result = shows.during(&Event::SuiteStarted { name: &p.name }, || {
            suite::run_suite(p, dir, &config.env, &log, echo)
        })?;
        shows.emit(&Event::SuiteFinished {
            index: i,
            total,
            name: &p.name,
            result: &result,
        });
        let stop = result.record.run.ended.is_interrupted();
        record(result, shows);
        if stop {
            interrupted = true;
            break;
        }
    }
    shows.clear();
    Ok(if interrupted || files::interrupt::requested() {
        Ran::Interrupted
    } else {
        Ran::Through
    })
}
