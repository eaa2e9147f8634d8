//! A mutant's own suite run through its `select` template: the tests the coverage map says
//! reach the mutated lines run first, and only a failure there decides (`killed`); when they
//! pass, or no test reaches the lines, or every test does (lines run outside any test), the
//! whole suite runs and its record decides (`SURVIVED`, `not covered`, or `killed` when the map
//! was wrong). So a map can make a run slower, never a verdict wrong.
//!
//! Never for a control (`expect = "survive"`), a comparison suite, or a suite without a map:
//! they run whole, as the baseline does.
//!
//! When the suite's timeout was derived from the baseline, the covering run gets one derived
//! from what its own tests took in the coverage run (`timeout::covering_timeout`): a mutant
//! that hangs a few quick tests is called a hang in seconds, not after the whole suite's bound.
//!
//! The whole suite passed in the baseline, but a selection of its tests need not: a test that
//! needs another run before it (state one leaves for the next) fails alone. So before a mutant
//! is swapped in, its covering tests run once on the unmutated code ([`check_unmutated`], once
//! per selection and run, kept in [`Checks`]); a selection that does not pass there never runs
//! with a mutant, and the whole suite decides. For a suite that builds, every selection is
//! checked before the first mutant ([`check_first`]), built once.
//!
//! A map that ran every test alone on the unmutated code (cargo's by test) needs no such check:
//! a kill by the covering tests is proved by the first test that failed, run alone with the
//! mutant ([`confirm_alone`]): it passed alone without the mutant, so the mutant is the one
//! difference. Checking a selection of a hundred tests that every run reaches would cost
//! building the unmutated code back and running all of them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Result;

use report::first_failure::FirstFailure;

use super::suite::{relative, run_suite, run_suite_fail_fast, Ran};
use super::timeout::{covering_timeout, Timeouts};
use super::Plan;
use crate::anchor::Span;
use crate::coverage::Reach;
use crate::record::{Covering, Selection, NAMED};
use crate::spec::{Expect, Mutant, Suite};
use crate::verdict::Verdict;

/// A mutant's run of one suite, as [`run_mutant_suite`] made it.
pub(super) struct SuiteResult {
    pub ran: Ran,
    /// `None` when the suite ran whole as it always did (no template, no map, a control, a
    /// comparison suite).
    pub selection: Option<Selection>,
    /// The failed test the run stopped at, when it stopped at one.
    pub first: Option<FirstFailure>,
    /// The timeout the run that decided had: the covering run's own when it was that run.
    pub timeout: Duration,
}

/// How each selection ran on the unmutated code in this run, by suite and tests: `None` when
/// it passed, else its run (see [`check_unmutated`]).
#[derive(Debug, Default)]
pub(crate) struct Checks(Mutex<BTreeMap<CheckKey, Option<Covering>>>);

/// A selection: its suite's name and its tests, as the template takes them.
type CheckKey = (String, Vec<String>);

impl Checks {
    fn get(&self, key: &CheckKey) -> Option<Option<Covering>> {
        files::sync::lock(&self.0).get(key).cloned()
    }

    fn put(&self, key: CheckKey, failed: Option<Covering>) {
        files::sync::lock(&self.0).insert(key, failed);
    }
}

/// What `select` makes of a mutant's suite run: the whole suite (with the selection to record,
/// if any), or its covering tests first.
enum Selected {
    Whole(Option<Selection>),
    Covering {
        tests: Vec<String>,
        selection: Selection,
        estimate: Option<Duration>,
        /// The map ran every test alone on the unmutated code (see [`confirm_alone`]): no
        /// selection is checked there first.
        alone: bool,
    },
}

/// The covering tests of `m` at `span` in the suite `name` (its own suite when `own`), as the
/// template takes them; a control, a comparison suite, a suite without a template or a map,
/// and a mutant the map cannot name tests for run whole.
fn plan_for(plan: &Plan, m: &Mutant, name: &str, own: bool, span: &Span) -> Selected {
    let suite = &plan.spec.suites[name];
    let (Some(select), Some(map), true, Expect::Kill) =
        (&suite.select, plan.coverage.get(&suite.name), own, m.expect)
    else {
        return Selected::Whole(None);
    };
    let alone = map.runs_tests_alone();
    let lines = span.start_line as u32..=span.end_line as u32;
    let (tests, every, estimate) = match map.reach(&m.file, lines) {
        Reach::Every => (Vec::new(), true, None),
        Reach::Tests(tests) => {
            let estimate = map.estimate(&tests);
            match map.as_items(tests, select.items) {
                Some(tests) => {
                    // A selection of every test is the whole suite: it runs once, as `run`.
                    let all = map.as_items(map.all_tests(), select.items);
                    let every = !tests.is_empty() && all.is_some_and(|a| a.len() == tests.len());
                    (tests, every, estimate)
                }
                // The map cannot name its tests as the template takes them.
                None => return Selected::Whole(None),
            }
        }
    };
    let selection = Selection {
        items: match select.items {
            candidate::suite::Items::Files => "files",
            candidate::suite::Items::Tests => "tests",
        }
        .into(),
        count: tests.len(),
        tests: tests.iter().take(NAMED).cloned().collect(),
        every,
        covering: None,
        whole: true,
        unmutated: None,
        alone: None,
    };
    if tests.is_empty() || every {
        return Selected::Whole(Some(selection));
    }
    Selected::Covering {
        tests,
        selection,
        estimate,
        alone,
    }
}

/// The covering run's suite (its `select` command over `tests`, the list file in `scratch`)
/// and timeouts; `None` when the tests cannot be passed (too many, not passable as words).
fn covering_suite(
    plan: &Plan,
    name: &str,
    tests: &[String],
    estimate: Option<Duration>,
    scratch: &Path,
) -> Result<Option<(Suite, Timeouts)>> {
    let suite = &plan.spec.suites[name];
    let Some(select) = &suite.select else {
        return Ok(None);
    };
    let Some(command) = select.command(tests, &scratch.join("tests.txt"))? else {
        return Ok(None);
    };
    let mut covering = suite.clone();
    covering.command = candidate::suite::Command::Run(command);
    let timeouts = plan.baseline.timeouts[name];
    let covering_timeouts = match (plan.baseline.derived.contains(name), estimate) {
        (true, Some(estimate)) => Timeouts {
            run: covering_timeout(timeouts.run, estimate),
            ..timeouts
        },
        _ => timeouts,
    };
    Ok(Some((covering, covering_timeouts)))
}

/// What [`check_unmutated`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checked {
    /// Nothing to check (no covering run), or this run checked the selection already.
    Nothing,
    Passed,
    Failed,
    Interrupted,
}

/// Runs `m`'s covering tests in its own suite on the unmutated code in the checkout at `dir`,
/// unless this run has already (see the module's comment), and keeps how they did; their log
/// is `log` with `.unmutated.log`. Call it before the mutant is swapped in. An interrupted run
/// keeps nothing.
pub(super) fn check_unmutated(
    plan: &Plan,
    m: &Mutant,
    span: &Span,
    dir: &Path,
    log: &Path,
) -> Result<Checked> {
    let name = m.suite.as_str();
    let Selected::Covering {
        tests,
        estimate,
        alone: false,
        ..
    } = plan_for(plan, m, name, true, span)
    else {
        return Ok(Checked::Nothing);
    };
    let key = (name.to_string(), tests);
    if plan.checks.get(&key).is_some() {
        return Ok(Checked::Nothing);
    }
    let scratch = runner::scratch::ScratchDir::new("select")?;
    let Some((covering, timeouts)) = covering_suite(plan, name, &key.1, estimate, scratch.path())?
    else {
        let _ = scratch.remove();
        return Ok(Checked::Nothing);
    };
    let check_log = log.with_extension("unmutated.log");
    let fail_fast = plan.baseline.fail_fast.contains(name);
    let ran = match fail_fast {
        true => run_suite_fail_fast(&covering, dir, &check_log, timeouts, plan.cores)?.0,
        false => run_suite(&covering, dir, &check_log, timeouts, plan.cores)?,
    };
    let _ = scratch.remove();
    let record = &ran.record;
    if record.run.ended.is_interrupted() {
        return Ok(Checked::Interrupted);
    }
    let failed = (record.outcome() != report::Outcome::Passed).then(|| Covering {
        status: record.status_text(),
        duration_secs: record.run.duration_secs,
        counts: record.counts,
        log: relative(&plan.out, &check_log),
    });
    let checked = match failed {
        Some(_) => Checked::Failed,
        None => Checked::Passed,
    };
    plan.checks.put(key, failed);
    Ok(checked)
}

/// For a map that ran every test alone on the unmutated code, a kill by the covering tests is
/// proved the same way, on the same terms: `test`, the first that failed with the mutant, runs
/// alone with it (the `select` command with just that test, in the checkout at `dir`, its log
/// `log` with `.alone.log`). Where `test` passed alone without the mutant and fails alone with
/// it, the mutant is the one difference between the two runs, and the kill stands; anything
/// else (no test named, one that did not pass alone, one that passes alone now) leaves it to
/// the whole suite. This costs one test's run, where checking the whole selection without the
/// mutant would cost building the unmutated code back and running every covering test.
/// `None` when no run was made.
fn confirm_alone(
    plan: &Plan,
    name: &str,
    test: Option<&str>,
    (dir, log): (&Path, &Path),
    timeouts: Timeouts,
) -> Result<Option<crate::record::Alone>> {
    let suite = &plan.spec.suites[name];
    let (Some(test), Some(map), Some(select)) =
        (test, plan.coverage.get(name), suite.select.as_ref())
    else {
        return Ok(None);
    };
    if !map.passed_alone(test) {
        return Ok(None);
    }
    let scratch = runner::scratch::ScratchDir::new("select")?;
    let Some(command) = select.command(&[test.to_string()], &scratch.path().join("tests.txt"))?
    else {
        let _ = scratch.remove();
        return Ok(None);
    };
    let mut one = suite.clone();
    one.command = candidate::suite::Command::Run(command);
    // The build already ran with the mutant in place.
    one.build = None;
    let alone_log = log.with_extension("alone.log");
    let ran = run_suite(&one, dir, &alone_log, timeouts, plan.cores)?;
    let _ = scratch.remove();
    let record = &ran.record;
    if record.run.ended.is_interrupted() {
        return Ok(None);
    }
    let failed = match Verdict::judge_record(Expect::Kill, record) {
        Some(Verdict::KilledHang) => true,
        Some(Verdict::Killed) => {
            record.counts.is_some_and(|c| c.failed > 0) || !record.failed_tests.is_empty()
        }
        _ => false,
    };
    Ok(Some(crate::record::Alone {
        test: test.to_string(),
        failed,
        status: record.status_text(),
        duration_secs: record.run.duration_secs,
        log: relative(&plan.out, &alone_log),
    }))
}

/// The mutants whose covering selections are checked before the first mutant (see
/// [`check_first`]), each selection once, with where their anchors are in the checkout at
/// `dir`: those whose own suite builds, in a build step or in cargo's own run.
pub(crate) fn to_check_first<'a>(plan: &Plan<'a>, dir: &Path) -> Vec<(&'a Mutant, Span)> {
    let builds = |s: &Suite| s.build.is_some() || s.select.as_ref().is_some_and(|t| t.runs_cargo());
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = Vec::new();
    for &m in &plan.mutants {
        if !builds(&plan.spec.suites[&m.suite]) {
            continue;
        }
        let Ok(text) = std::fs::read(dir.join(&m.file)) else {
            continue;
        };
        let crate::anchor::Found::Once(span) =
            crate::anchor::find_anchor(&text, m.anchor.as_bytes())
        else {
            continue;
        };
        if let Selected::Covering {
            tests,
            alone: false,
            ..
        } = plan_for(plan, m, &m.suite, true, &span)
        {
            if seen.insert((m.suite.clone(), tests)) {
                todo.push((m, span));
            }
        }
    }
    todo
}

/// Checks the selections of `todo` (from [`to_check_first`]) on the unmutated code in the
/// checkout at `dir`, one after the other, before the first mutant: a suite's build step
/// builds the unmutated code once for all of them, where a check made as each mutant comes
/// would first build back the code the last mutant changed. How many did not pass; `None`
/// when the run was interrupted (the mutants' run then stops at once).
pub(crate) fn check_first(
    plan: &Plan,
    dir: &Path,
    todo: &[(&Mutant, Span)],
) -> Result<Option<usize>> {
    let mut failed = 0;
    for (m, span) in todo {
        match check_unmutated(plan, m, span, dir, &own_log(plan, m))? {
            Checked::Interrupted => return Ok(None),
            Checked::Failed => failed += 1,
            Checked::Passed | Checked::Nothing => {}
        }
    }
    Ok(Some(failed))
}

/// Where `m`'s run of its own suite logs (`logs/001-NAME.log`).
pub(super) fn own_log(plan: &Plan, m: &Mutant) -> std::path::PathBuf {
    plan.out.join("logs").join(format!(
        "{:03}-{}.log",
        m.index + 1,
        report::text::slug(&m.name, "mutant")
    ))
}

/// Runs the suite `name` for `m` (its own suite when `own`), with the mutant swapped in at `span`:
/// through its covering tests first when it can, else whole. Each run stops at its first
/// failed test when the suite's `fail_fast` holds for this run (never for a control).
pub(super) fn run_mutant_suite(
    plan: &Plan,
    m: &Mutant,
    name: &str,
    own: bool,
    span: &Span,
    dir: &Path,
    log: &Path,
) -> Result<SuiteResult> {
    let suite = &plan.spec.suites[name];
    let timeouts = plan.baseline.timeouts[name];
    // A control runs whole: its verdict is that the suite passes, which only the whole run
    // can say.
    let fail_fast = plan.baseline.fail_fast.contains(name) && !m.is_control();
    let go = |s: &Suite, log: &Path, timeouts| -> Result<(Ran, Option<FirstFailure>)> {
        match fail_fast {
            true => run_suite_fail_fast(s, dir, log, timeouts, plan.cores),
            false => Ok((run_suite(s, dir, log, timeouts, plan.cores)?, None)),
        }
    };
    let whole = |s: &Suite, selection| -> Result<SuiteResult> {
        let (ran, first) = go(s, log, timeouts)?;
        Ok(SuiteResult {
            ran,
            selection,
            first,
            timeout: timeouts.run,
        })
    };
    let (tests, mut selection, estimate, alone) = match plan_for(plan, m, name, own, span) {
        Selected::Whole(selection) => return whole(suite, selection),
        Selected::Covering {
            tests,
            selection,
            estimate,
            alone,
        } => (tests, selection, estimate, alone),
    };
    // Covering tests that did not pass without the mutant prove nothing with it.
    if let (false, Some(Some(failed))) =
        (alone, plan.checks.get(&(name.to_string(), tests.clone())))
    {
        selection.unmutated = Some(failed);
        return whole(suite, Some(selection));
    }
    let scratch = runner::scratch::ScratchDir::new("select")?;
    let Some((covering, covering_timeouts)) =
        covering_suite(plan, name, &tests, estimate, scratch.path())?
    else {
        // Too many to pass, or not passable as words: the whole suite, which decides anyway.
        let _ = scratch.remove();
        return whole(suite, Some(selection));
    };
    let covering_log = log.with_extension("select.log");
    let (first, stopped_at) = go(&covering, &covering_log, covering_timeouts)?;
    let _ = scratch.remove();
    // A kill by the covering tests decides; so does a build that failed (nothing ran) and an
    // interrupt (nothing is judged). A failed run counts as a kill only when the runner
    // reported a failed test: a command that ran none (an id the runner does not know, an
    // option it refuses: pytest's exit 4) noticed nothing, and the whole suite decides. A run
    // stopped at its first failure named that test.
    let record = &first.record;
    let noticed = match Verdict::judge_record(Expect::Kill, record) {
        Some(Verdict::KilledHang) => true,
        Some(Verdict::Killed) => {
            stopped_at.is_some()
                || record.counts.is_some_and(|c| c.failed > 0)
                || !record.failed_tests.is_empty()
        }
        _ => false,
    };
    let confirmed = match (noticed, alone) {
        (true, true) => {
            let test = stopped_at
                .as_ref()
                .map(|f| f.test.clone())
                .or_else(|| record.failed_tests.first().cloned());
            let run = confirm_alone(plan, name, test.as_deref(), (dir, log), covering_timeouts)?;
            let confirmed = run.as_ref().is_some_and(|a| a.failed);
            selection.alone = run;
            confirmed
        }
        (noticed, false) => noticed,
        (false, true) => false,
    };
    if confirmed || record.run.ended.is_interrupted() || first.build_failed() {
        selection.whole = false;
        return Ok(SuiteResult {
            ran: first,
            selection: Some(selection),
            first: stopped_at,
            timeout: covering_timeouts.run,
        });
    }
    selection.covering = Some(Covering {
        status: first.record.status_text(),
        duration_secs: first.record.run.duration_secs,
        counts: first.record.counts,
        log: relative(&plan.out, &covering_log),
    });
    // The build already ran with the mutant in place.
    let mut rest = suite.clone();
    rest.build = None;
    let mut judged = whole(&rest, Some(selection))?;
    judged.ran.build = first.build;
    Ok(judged)
}
