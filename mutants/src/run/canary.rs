//! Canaries: the proof that a suite reads the files of the checkout it runs in.
//!
//! Every verdict assumes the suite loads the checkout under review. A suite that imports the
//! user's own checkout instead (an editable install in a linked virtualenv, an absolute path
//! baked into a build output or a cache, a runner that reads a global install) passes with any
//! mutant in place: every mutant SURVIVES and every control holds, about code nobody mutated.
//! So before the first mutant of each mutated file, that file is made unloadable (its bytes
//! replaced by a line no language parses) and each suite its mutants name runs once: it must
//! fail. One that still passes stops the run with exit 4 before any verdict is given.
//!
//! Files that only controls touch get no canary: a control's file (a README) is exactly one
//! the suite is expected not to read.

use anyhow::{Context, Result};

use report::Outcome;

use super::suite::{relative, run_suite, run_suite_fail_fast};
use super::Plan;
use crate::checkout::Checkout;
use crate::record::{Canary, CanaryVerdict};
use crate::spec::Mutant;
use crate::swap::Swapped;
use report::text::slug;

use candidate::canary::UNLOADABLE;

/// Each (file, suite) pair a canary must prove, in spec order: the files of the mutants that
/// expect a kill, each with every suite one of its mutants names as its own.
pub(crate) fn planned(mutants: &[&Mutant]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut sorted: Vec<&&Mutant> = mutants.iter().filter(|m| !m.is_control()).collect();
    sorted.sort_by_key(|m| m.index);
    for m in sorted {
        let pair = (m.file.clone(), m.suite.clone());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    pairs
}

/// Runs one canary in `co`: `file` made unloadable, `suite` run, the file restored and the checkout
/// proved whole. `Ok(None)` when an interrupt arrived during it.
pub(crate) fn run_canary(
    plan: &Plan,
    co: &Checkout,
    file: &str,
    suite_name: &str,
) -> Result<Option<Canary>> {
    let mut swapped = Swapped::read(co.path(), file)?;
    swapped.put(UNLOADABLE, "the canary")?;
    let log = plan.out.join("logs").join(format!(
        "canary.{}.{}.log",
        slug(file, "file"),
        slug(suite_name, "suite")
    ));
    let suite = &plan.spec.suites[suite_name];
    let timeouts = plan.baseline.timeouts[suite_name];
    // A canary only needs the suite to fail: it may stop at its first failure as a mutant does.
    let ran = if plan.baseline.fail_fast.contains(suite_name) {
        run_suite_fail_fast(suite, co.path(), &log, timeouts, plan.cores).map(|(ran, _)| ran)
    } else {
        run_suite(suite, co.path(), &log, timeouts, plan.cores)
    };
    // Put back whatever the suite did, before anything else can go wrong: a file the suite
    // replaced is not ours to write (the checkout is then made whole from the tree below).
    let _replaced = swapped.restore().context("after its canary")?;
    co.make_whole()
        .context("restoring the checkout after a canary")?;
    let ran = ran?;
    let build_secs = ran.build_secs();
    let record = ran.record;
    let verdict = match record.outcome() {
        Outcome::Interrupted => return Ok(None),
        Outcome::Passed => CanaryVerdict::Survived,
        // Failed, hung, or its build failed on the file: in every case the suite read it.
        _ => CanaryVerdict::Killed,
    };
    Ok(Some(Canary {
        file: file.to_string(),
        suite: suite_name.to_string(),
        verdict,
        status: record.status_text(),
        start: record.start(),
        duration_secs: record.run.duration_secs + build_secs.unwrap_or(0.0),
        log: relative(&plan.out, &record.run.log),
    }))
}
