//! One mutant in one checkout: swapped in, its suites run, judged, and the file restored
//! and the restore proved before the checkout takes another mutant.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use report::first_failure::FirstFailure;
use report::Counts;

use super::suite::{relative, Ran};
use super::Plan;
use crate::anchor::{self, Found};
use crate::checkout::Checkout;
use crate::record::{Row, SuiteRun};
use crate::spec::Mutant;
use crate::swap::Swapped;
use crate::verdict::Verdict;
use crate::watch::{Rerun, Warm};
use report::text::slug;

/// What one mutant left: its row (`None` when the run was interrupted during it), and whether
/// its checkout is spoiled and must be made again.
pub(super) struct Done {
    pub(super) row: Option<Row>,
    pub(super) spoiled: bool,
}

/// One mutant in one checkout.
///
/// `restored_before` says what of the checkout had to be put back before this mutant (see
/// [`Checkout::make_whole`]); after the mutant's suites, the checkout is proved whole again, and
/// what the suites changed besides the mutated file is put back and said in the row.
pub(super) fn run_one(
    plan: &Plan,
    m: &Mutant,
    co: &Checkout,
    restored_before: Option<String>,
    warms: &mut Warms,
) -> Result<Done> {
    let mut file = Swapped::read(co.path(), &m.file)?;
    let original = file.original();
    let mut row = Row {
        index: m.index,
        name: m.name.clone(),
        site: m.site.clone(),
        file: m.file.clone(),
        undoes: m.undoes.clone(),
        claim_named: m.claim_named(),
        operator: m.operator.clone(),
        context: m.context.clone(),
        control: m.is_control(),
        anchor: m.anchor.clone(),
        replace: m.replace.clone(),
        identity: crate::spec::identity::of(plan.spec, m),
        verdict: Verdict::Error,
        matches: 0,
        span: None,
        run: None,
        also: Vec::new(),
        diff: None,
        rerun: None,
        reused: None,
        restored_before,
        restored_after: None,
    };
    let span = match anchor::find_anchor(original, m.anchor.as_bytes()) {
        Found::Once(span) => span,
        Found::Not(n) => {
            row.matches = n;
            row.verdict = Verdict::Skipped { matches: n };
            return Ok(Done {
                row: Some(row),
                spoiled: false,
            });
        }
    };
    row.matches = 1;
    row.span = Some(span);
    row.diff = Some(anchor::diff(&m.file, original, &span, m.replace.as_bytes()));
    let mutated = anchor::swap(original, &span, m.replace.as_bytes());
    // Its covering tests, on the unmutated code first (once per selection and run): only a
    // selection that passes there can kill it.
    let own_log = super::select::own_log(plan, m);
    super::select::check_unmutated(plan, m, &span, co.path(), &own_log)?;
    let mut warm = warms.take_for(plan, m, co);
    file.put(&mutated, "the mutant")?;
    let mut runs = Vec::new();
    let mut changed = None;
    for (k, suite_name) in m.suites().enumerate() {
        let log_name = if k == 0 {
            format!("{:03}-{}.log", m.index + 1, slug(&m.name, "mutant"))
        } else {
            format!(
                "{:03}-{}.{}.log",
                m.index + 1,
                slug(&m.name, "mutant"),
                slug(suite_name, "mutant")
            )
        };
        let timeouts = plan.baseline.timeouts[suite_name];
        let log = plan.out.join("logs").join(log_name);
        // The mutant's own suite is rerun by its warm runner first, when it has one: a kill
        // it saw stands; anything else is judged by the cold run below.
        let mut rerun = None;
        let mut warm_record = None;
        if let (0, Some(w)) = (k, warm.as_mut()) {
            match w.rerun(&m.file, &log) {
                Rerun::Killed { record, warm } => {
                    warm_record = Some(*record);
                    rerun = Some(warm);
                }
                Rerun::Cold(w) => rerun = Some(w),
            }
        }
        let warm_killed = warm_record.is_some();
        let (ran, selection, first, timeout) = match warm_record {
            Some(record) => {
                let ran = Ran {
                    record,
                    build: None,
                };
                (ran, None, None, timeouts.run)
            }
            None => {
                let r = super::select::run_mutant_suite(
                    plan,
                    m,
                    suite_name,
                    k == 0,
                    &span,
                    co.path(),
                    &log,
                )?;
                (r.ran, r.selection, r.first, r.timeout)
            }
        };
        if ran.record.run.ended.is_interrupted() {
            let spoiled = file.restore()?.is_err();
            return Ok(Done { row: None, spoiled });
        }
        let baseline_counts = plan.baseline.counts.get(suite_name).copied().flatten();
        let mut run = suite_run(
            &plan.out,
            suite_name,
            m,
            (&ran, first),
            timeout,
            baseline_counts,
        );
        run.warm = rerun;
        if warm_killed {
            run.status = "failed in the warm rerun".into();
            run.verdict = run.judged(m.expect, m.operator.is_some());
        }
        if selection.is_some() {
            run.selection = selection;
            run.verdict = run.judged(m.expect, m.operator.is_some());
        }
        // A suite that replaced or deleted the file proves nothing, whatever it exited with,
        // and the tree is no longer the one under review: stop here.
        if let Err(c) = file.check() {
            run.status = c.to_string();
            run.file_changed = Some(c.to_string());
            run.verdict = run.judged(m.expect, m.operator.is_some());
            runs.push(run);
            changed = Some(c);
            break;
        }
        runs.push(run);
    }
    let spoiled = match changed {
        Some(_) => {
            file.abandon();
            true
        }
        None => match file.restore()? {
            // The mutated file is back; now the rest of the checkout: a suite that rewrote a
            // golden file or left a new module must not decide the next mutant's verdict.
            Ok(()) => match co.make_whole() {
                Ok(None) => {
                    if let Some(w) = warm.as_mut() {
                        w.back(&m.file);
                    }
                    false
                }
                Ok(Some(what)) => {
                    row.restored_after = Some(format!("its suite changed {what}; restored"));
                    false
                }
                Err(e) => {
                    row.restored_after = Some(format!(
                        "its suite changed the checkout and it could not be restored ({e:#}); a fresh checkout was made"
                    ));
                    true
                }
            },
            // Replaced after the check (by a process the suite left behind): the same error.
            Err(c) => {
                if let Some(last) = runs.last_mut() {
                    last.status = c.to_string();
                    last.file_changed = Some(c.to_string());
                    last.verdict = last.judged(m.expect, m.operator.is_some());
                }
                true
            }
        },
    };
    if let Some(w) = warm {
        warms.put_back(w);
    }
    let mut runs = runs.into_iter();
    row.run = runs.next();
    row.also = runs.collect();
    // A checkout spoiled only by what the suite did besides the mutated file (it was judged on the
    // whole tree) keeps its verdict; one whose mutated file was replaced proves nothing: the
    // row's own records say which (see `Row::judged`).
    row.verdict = row.judged();
    Ok(Done {
        row: Some(row),
        spoiled,
    })
}

/// The least time a warm runner's first run or a rerun is given, however fast the baseline.
const WARM_LIMIT_LEAST: Duration = Duration::from_secs(10);

/// A checkout's warm runners, one per suite with a `watch`, kept between its mutants.
#[derive(Default)]
pub(super) struct Warms {
    by_suite: std::collections::BTreeMap<String, Warm>,
    checkout: usize,
}

impl Warms {
    pub(super) fn new(checkout: usize) -> Warms {
        Warms {
            by_suite: Default::default(),
            checkout,
        }
    }

    /// Stops every runner: the checkout changed under them, or is replaced.
    pub(super) fn stop_all(&mut self) {
        self.by_suite.clear();
    }

    /// The warm runner that reruns `m`, ready and green before its swap (or off, to say why it
    /// runs cold): one for a mutant (never a control) whose own suite has a `watch` and no
    /// `build` step. Every other live runner is stopped: the swap would start a rerun in it
    /// that nobody reads.
    fn take_for(&mut self, plan: &Plan, m: &Mutant, co: &Checkout) -> Option<Warm> {
        let suite = &plan.spec.suites[&m.suite];
        let wanted = !m.is_control() && suite.watch.is_some() && suite.build.is_none();
        let mut own = self.by_suite.remove(&m.suite);
        self.stop_all();
        if !wanted {
            return None;
        }
        // A rerun runs at most what the cold run would: past twice the baseline's time it is a
        // doubt (a hang is the cold run's to find, under the mutant timeout).
        let baseline = plan
            .baseline
            .baselines
            .iter()
            .find(|b| b.suite == m.suite)
            .map_or(0.0, |b| b.duration_secs);
        let limit = Duration::from_secs_f64((2.0 * baseline).clamp(0.0, 1e9))
            .max(WARM_LIMIT_LEAST)
            .min(plan.baseline.timeouts[&m.suite].run);
        let logs = plan.out.join("logs");
        let mut warm = own
            .take()
            .or_else(|| Warm::of(suite, self.checkout, co.path(), &logs, limit))?;
        warm.ready(plan.cores);
        Some(warm)
    }

    fn put_back(&mut self, warm: Warm) {
        self.by_suite.insert(warm.suite().to_string(), warm);
    }
}

fn suite_run(
    out: &Path,
    suite: &str,
    m: &Mutant,
    (ran, first): (&Ran, Option<FirstFailure>),
    timeout: Duration,
    baseline_counts: Option<Counts>,
) -> SuiteRun {
    let record = &ran.record;
    // The test it stopped at leads the failed tests (a reader of the cut log may not name it:
    // pytest names its failures at the end), with its error line when it was printed.
    let mut failed_tests = record.failed_tests.clone();
    let mut first_error = record.first_error.clone();
    if let Some(first) = &first {
        failed_tests.retain(|t| t != &first.test);
        failed_tests.insert(0, first.test.clone());
        first_error = first.error.clone().or(first_error);
    }
    let mut run = SuiteRun {
        suite: suite.to_string(),
        verdict: Verdict::Error,
        status: record.status_text(),
        exit_code: record.run.ended.exit_code(),
        signal: record.run.ended.signal().map(str::to_string),
        hang: record.run.ended.is_hang(),
        not_started: record.run.ended.could_not_start().map(str::to_string),
        build_failed: ran.build_failed(),
        file_changed: None,
        start: record.start(),
        end: record.end(),
        duration_secs: record.run.duration_secs,
        build_secs: ran.build_secs(),
        timeout_secs: timeout.as_secs_f64(),
        baseline_counts,
        counts: record.counts,
        failed_tests,
        first_error,
        first_failure: first,
        selection: None,
        strays_killed: record.run.strays_killed,
        log: relative(out, &record.run.log),
        warm: None,
    };
    run.verdict = run.judged(m.expect, m.operator.is_some());
    run
}
