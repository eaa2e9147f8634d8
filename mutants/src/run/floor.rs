//! The floor: a suite's runner started with no test selected (its `floor` command), timed in the
//! first checkout right after the green baseline. It is the least a mutant can cost with a
//! process per mutant, so a run can say how far above it each suite's time per mutant is (see
//! [`crate::record::Floor`]). It measures and never judges: a floor that fails is said and
//! recorded, and every verdict stays as it is.

use std::path::Path;

use anyhow::Result;

use super::cores::Cores;
use super::suite::{relative, run_suite};
use super::timeout::Timeouts;
use crate::checkout::Checkout;
use crate::record::Floor;
use crate::spec::Suite;
use report::text::slug;
use report::Outcome;

/// How many times a floor runs; the median is kept, so one slow start (a cold disk cache, a
/// busy core) does not set it.
pub(crate) const FLOOR_RUNS: usize = 3;

/// Times `suite`'s floor command in `co`: in the suite's environment, with its scratch `TMPDIR`,
/// under the mutant timeout, without its `build` step (built by the baseline already). `None`
/// when the suite names no floor; an interrupted floor is one that failed, and the run stops as
/// it would anywhere else.
pub(crate) fn measure(
    suite: &Suite,
    co: &Checkout,
    timeouts: Timeouts,
    out: &Path,
    cores: &Cores,
) -> Result<Option<Floor>> {
    let Some(command) = &suite.floor else {
        return Ok(None);
    };
    let mut timed = suite.clone();
    timed.command = candidate::suite::Command::Run(command.clone());
    timed.build = None;
    let mut runs = Vec::new();
    let mut floor = Floor {
        command: command.clone(),
        runs: Vec::new(),
        secs: None,
        failed: None,
        per_mutant_secs: None,
        multiple: None,
        log: String::new(),
    };
    for k in 1..=FLOOR_RUNS {
        let log = out
            .join("logs")
            .join(format!("floor.{}.{k}.log", slug(&suite.name, "mutant")));
        let ran = run_suite(&timed, co.path(), &log, timeouts, cores)?;
        floor.log = relative(out, &ran.record.run.log);
        if ran.record.outcome() != Outcome::Passed {
            floor.failed = Some(ran.record.status_text());
            break;
        }
        runs.push(ran.record.run.duration_secs);
    }
    if floor.failed.is_none() {
        floor.secs = median(&runs);
    }
    floor.runs = runs;
    Ok(Some(floor))
}

/// The middle value (the mean of the two middle ones for an even count); `None` for none.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_keeps_the_middle_run() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 0.5, 9.0]), Some(3.0));
        assert_eq!(median(&[1.0, 4.0, 2.0, 3.0]), Some(2.5));
    }
}
