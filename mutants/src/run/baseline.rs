//! The baseline: every suite the selected mutants use, run unmutated in every checkout
//! before any mutant. A red or hung baseline would make every mutant look killed, so it stops
//! the run; a green one sets each suite's mutant timeout.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};

use report::first_failure::FirstFailure;
use report::{Counts, Outcome, RunRecord};

use super::cores::Cores;
use super::suite::{relative, run_suite, stops_when_green, Ran};
use super::timeout::{
    baseline_build_timeout, baseline_timeout, mutant_build_timeout, mutant_timeout, Timeouts,
};
use crate::checkout::Checkout;
use crate::record::Baseline;
use crate::spec::Suite;
use report::text::slug;

/// What the baseline found.
#[derive(Debug)]
pub(crate) struct BaselineResult {
    pub baselines: Vec<Baseline>,
    pub passed: bool,
    pub interrupted: bool,
    /// The per-suite mutant timeouts and baseline counts, for the mutant runs.
    pub timeouts: BTreeMap<String, Timeouts>,
    pub counts: BTreeMap<String, Option<Counts>>,
    /// The suites whose mutants stop at their first failed test: those with `fail_fast`
    /// whose green baseline would not have stopped.
    pub fail_fast: BTreeSet<String>,
    /// The suites with `fail_fast` whose green baseline's log would have stopped (the
    /// failure the reader saw in it): their mutants run whole.
    pub fail_fast_off: Vec<(String, FirstFailure)>,
    /// The suites whose mutant timeout was derived from the baseline (neither `--timeout` nor
    /// the spec's): their covering runs get one derived from their own tests' times.
    pub derived: BTreeSet<String>,
}

/// Runs every suite unmutated in the given checkouts, in parallel (the session hands it
/// the first checkout only: the others get its build and run their own baseline as they join, see
/// [`super::ready`]). The first checkout's records are the ones reported.
///
/// `floors` are the slowest cold times kept with a restored cache (`run:SUITE`,
/// `build:SUITE`, seconds): a baseline that was fast because its build was restored must not
/// make the derived timeouts tighter than a cold run would, or a mutant whose rebuild takes a
/// cold build's time would be called a hang.
pub(crate) fn baseline(
    suites: &[&Suite],
    checkouts: &[Checkout],
    cli_timeout: Option<Duration>,
    out: &Path,
    floors: &BTreeMap<String, f64>,
    cores: &Cores,
) -> Result<BaselineResult> {
    let per_copy: Vec<Result<Vec<Ran>>> = std::thread::scope(|s| {
        let handles: Vec<_> = checkouts
            .iter()
            .enumerate()
            .map(|(j, co)| {
                s.spawn(move || -> Result<Vec<Ran>> {
                    let mut records = Vec::new();
                    for suite in suites {
                        let ran = run_baseline(suite, co, j, cli_timeout, out, cores)?;
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
        fail_fast: BTreeSet::new(),
        fail_fast_off: Vec::new(),
        derived: BTreeSet::new(),
    };
    for (i, suite) in suites.iter().enumerate() {
        // The slowest checkout sets the timeout; a failure in any checkout fails the baseline.
        let rans: Vec<&Ran> = per_copy.iter().filter_map(|r| r.get(i)).collect();
        let records: Vec<&RunRecord> = rans.iter().map(|r| &r.record).collect();
        let Some(first) = records.first() else {
            break;
        };
        let floor = |kind: &str| {
            let secs = floors.get(&format!("{kind}:{}", suite.name)).copied();
            Duration::from_secs_f64(secs.unwrap_or(0.0).clamp(0.0, 1e9))
        };
        let slowest_build = rans
            .iter()
            .filter_map(|r| r.build_secs())
            .map(|s| Duration::from_secs_f64(s.max(0.0)))
            .max()
            .unwrap_or_default()
            .max(floor("build"));

        let slowest = records
            .iter()
            .map(|r| r.duration())
            .max()
            .unwrap_or_default()
            .max(floor("run"));
        let worst = records
            .iter()
            .find(|r| r.outcome() != Outcome::Passed)
            .unwrap_or(first);
        let passed = worst.outcome() == Outcome::Passed;
        result.interrupted |= records.iter().any(|r| r.run.ended.is_interrupted());
        result.passed &= passed;
        let (timeout, source) = mutant_timeout(cli_timeout, suite, slowest);
        if cli_timeout.is_none() && suite.timeout.is_none() {
            result.derived.insert(suite.name.clone());
        }
        result.timeouts.insert(
            suite.name.clone(),
            Timeouts {
                run: timeout,
                build: mutant_build_timeout(suite, slowest_build),
            },
        );
        result.counts.insert(suite.name.clone(), first.counts);
        // The exactness guard: the reader that stops a mutant's run must see no failure in the
        // same suite's whole, passing output.
        if passed && suite.fail_fast {
            match records
                .iter()
                .find_map(|r| stops_when_green(suite, &r.run.log))
            {
                Some(seen) => result.fail_fast_off.push((suite.name.clone(), seen)),
                None => {
                    result.fail_fast.insert(suite.name.clone());
                }
            }
        }
        result.baselines.push(Baseline {
            suite: suite.name.clone(),
            status: worst.status_text(),
            passed,
            duration_secs: first.run.duration_secs,
            build_secs: rans[0].build_secs(),
            counts: worst.counts,
            strays_killed: worst.run.strays_killed,
            mutant_timeout_secs: timeout.as_secs_f64(),
            timeout_source: source,
            log: relative(out, &worst.run.log),
            why: if passed {
                Vec::new()
            } else {
                worst.why.clone()
            },
            notes: worst.notes(&relative(out, &worst.run.log)),
            floor: None,
        });
    }
    // A checkout that stopped early (its first suite failed) left the later suites unrun.
    if result.baselines.len() < suites.len() {
        result.passed = false;
    }
    Ok(result)
}

/// One suite's baseline in copy `j` (logs `baseline.SUITE.log`, `baseline.SUITE.copyJ.log`).
pub(super) fn run_baseline(
    suite: &Suite,
    co: &Checkout,
    j: usize,
    cli_timeout: Option<Duration>,
    out: &Path,
    cores: &Cores,
) -> Result<Ran> {
    let name = if j == 0 {
        format!("baseline.{}.log", slug(&suite.name, "mutant"))
    } else {
        format!("baseline.{}.checkout{j}.log", slug(&suite.name, "mutant"))
    };
    run_suite(
        suite,
        co.path(),
        &out.join("logs").join(name),
        Timeouts {
            run: baseline_timeout(cli_timeout, suite),
            build: baseline_build_timeout(suite),
        },
        cores,
    )
}

/// This baseline's times as the cache keeps them (`run:SUITE`, `build:SUITE`), each the
/// larger of this run's and `floors`.
pub(crate) fn timings(
    result: &BaselineResult,
    floors: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    let mut out = floors.clone();
    for b in &result.baselines {
        let mut keep = |k: String, v: f64| {
            let e = out.entry(k).or_insert(0.0);
            *e = e.max(v);
        };
        keep(format!("run:{}", b.suite), b.duration_secs);
        if let Some(build) = b.build_secs {
            keep(format!("build:{}", b.suite), build);
        }
    }
    out
}
