//! A mutant's own suite run through its `select` template: the tests the coverage map says
//! reach the mutated lines run first, and only a failure there decides (`killed`); when they
//! pass, or no test reaches the lines, or every test does (lines run outside any test), the
//! whole suite runs and its record decides (`SURVIVED`, `not covered`, or `killed` when the map
//! was wrong). So a map can make a run slower, never a verdict wrong.
//!
//! Never for a control (`expect = "survive"`), a comparison suite, or a suite without a map:
//! they run whole, as the baseline does.

use std::path::Path;

use anyhow::Result;

use report::first_failure::FirstFailure;

use super::suite::{relative, run_suite, run_suite_fail_fast, Ran};
use super::Plan;
use crate::anchor::Span;
use crate::coverage::Reach;
use crate::record::{Covering, Selection, NAMED};
use crate::spec::{Expect, Mutant, Suite};
use crate::verdict::Verdict;

/// Runs the suite `name` for `m` (its own suite when `own`), with the mutant swapped in at `span`:
/// through its covering tests first when it can, else whole. The selection is `None` when the
/// suite ran whole as it always did (no template, no map, a control, a comparison suite).
/// Each run stops at its first failed test when the suite's `fail_fast` holds for this run
/// (never for a control): the failure it stopped at comes back too.
pub(super) fn run_mutant_suite(
    plan: &Plan,
    m: &Mutant,
    name: &str,
    own: bool,
    span: &Span,
    dir: &Path,
    log: &Path,
) -> Result<(Ran, Option<Selection>, Option<FirstFailure>)> {
    let suite = &plan.spec.suites[name];
    let timeouts = plan.baseline.timeouts[name];
    // A control runs whole: its verdict is that the suite passes, which only the whole run
    // can say.
    let fail_fast = plan.baseline.fail_fast.contains(name) && !m.is_control();
    let go = |s: &Suite, log: &Path| -> Result<(Ran, Option<FirstFailure>)> {
        match fail_fast {
            true => run_suite_fail_fast(s, dir, log, timeouts, plan.cores),
            false => Ok((run_suite(s, dir, log, timeouts, plan.cores)?, None)),
        }
    };
    let whole = |s: &Suite| go(s, log);
    let (Some(select), Some(map), true, Expect::Kill) =
        (&suite.select, plan.coverage.get(&suite.name), own, m.expect)
    else {
        let (ran, first) = whole(suite)?;
        return Ok((ran, None, first));
    };
    let lines = span.start_line as u32..=span.end_line as u32;
    let (tests, every) = match map.reach(&m.file, lines) {
        Reach::Every => (Vec::new(), true),
        Reach::Tests(tests) => match map.as_items(tests, select.items) {
            Some(tests) => (tests, false),
            // The map cannot name its tests as the template takes them.
            None => {
                let (ran, first) = whole(suite)?;
                return Ok((ran, None, first));
            }
        },
    };
    let mut selection = Selection {
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
    };
    if tests.is_empty() {
        let (ran, first) = whole(suite)?;
        return Ok((ran, Some(selection), first));
    }
    let scratch = runner::scratch::ScratchDir::new("select")?;
    let command = select.command(&tests, &scratch.path().join("tests.txt"))?;
    let Some(command) = command else {
        // Too many to pass, or not passable as words: the whole suite, which decides anyway.
        let _ = scratch.remove();
        let (ran, first) = whole(suite)?;
        return Ok((ran, Some(selection), first));
    };
    let mut covering = suite.clone();
    covering.command = candidate::suite::Command::Run(command);
    let covering_log = log.with_extension("select.log");
    let (first, stopped_at) = go(&covering, &covering_log)?;
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
    if noticed || record.run.ended.is_interrupted() || first.build_failed() {
        selection.whole = false;
        return Ok((first, Some(selection), stopped_at));
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
    let (mut ran, stopped_at) = whole(&rest)?;
    ran.build = first.build;
    Ok((ran, Some(selection), stopped_at))
}
