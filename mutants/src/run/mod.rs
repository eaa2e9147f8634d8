//! The engine: the unmutated baseline, then each mutant swapped in, judged and restored.
//!
//! The engine produces values (a [`BaselineResult`], then [`Event`]s carrying [`Row`]s) and
//! formats nothing; the session records them and the renderers show them. The one thing a
//! newcomer must know: a mutant's file is restored by a guard, and the restore is *proved* by
//! reading the bytes back, before the next mutant may start in that checkout. A suite that
//! rewrote the file itself, a full disk, a panic: all end the run rather than let the next
//! mutant be judged against a tree that is not the reviewed one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::checkout::{self, Checkout, Source};
use crate::record::Row;
use crate::spec::{Mutant, Spec};
use mutant::run_one;

mod baseline;
pub(crate) mod canary;
pub(crate) mod cores;
pub(crate) mod floor;
mod mutant;
mod select;
mod suite;
mod timeout;

// The parts of the engine: `baseline` runs the suites unmutated, `mutant` judges one mutant in
// one checkout, `suite` runs one suite through the shared runner, `timeout` says how long each may
// take, `cores` shares the machine between the jobs (a jobserver and a build slot).
pub(crate) use baseline::{baseline, timings, BaselineResult};
pub(crate) use cores::Cores;
pub(crate) use select::{check_first, to_check_first};

/// What the engine tells its caller as mutants run.
#[derive(Debug)]
pub(crate) enum Event {
    Started {
        index: usize,
        name: String,
    },
    Finished(Box<Row>),
    /// Checkout `checkout` (after the first) builds cold: the first checkout's build outputs
    /// could not be copied into it (`error`).
    ColdBuild {
        checkout: usize,
        error: String,
    },
    /// Checkout `checkout` (after the first) is not green unmutated: `suite` ended `status`
    /// (its log at `log`), so it takes no mutant and the others judge them all.
    NotGreen {
        checkout: usize,
        suite: String,
        status: String,
        log: PathBuf,
    },
    /// The setup of a fresh checkout (at `checkout`) changed it: `what`, put right.
    SetupChanged {
        checkout: PathBuf,
        what: String,
    },
    /// A second passed with no other event.
    Tick,
}

/// How often [`Event::Tick`] comes while mutants run.
const TICK: Duration = Duration::from_secs(1);

/// Everything a mutant run needs besides the mutant.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    pub spec: &'a Spec,
    /// Where a fresh checkout comes from, when a suite spoiled one, and what it needs.
    pub source: &'a Source,
    pub prep: &'a checkout::Prep,
    /// In the order they are taken (longest first when a previous run timed them).
    pub mutants: Vec<&'a Mutant>,
    pub baseline: &'a BaselineResult,
    pub out: PathBuf,
    /// How the checkouts after the first join: the first checkout's build outputs to fill them from
    /// (none when there is nothing to hand over, or it was handed over already), and the
    /// suites each runs unmutated before its first mutant.
    pub warm: Warm<'a>,
    /// The jobserver and build slot every job's commands share.
    pub cores: &'a Cores,
    /// Each suite's coverage map, by suite name, for a suite with a `select` template whose
    /// map could be made (see `run::select`).
    pub coverage: &'a BTreeMap<String, crate::coverage::Map>,
    /// How each covering selection ran on the unmutated code (see `run::select`).
    pub checks: select::Checks,
}

/// What a checkout after the first needs before it takes a mutant.
#[derive(Debug)]
pub(crate) struct Warm<'a> {
    pub snapshot: Option<&'a candidate::cache::Snapshot>,
    pub suites: Vec<&'a crate::spec::Suite>,
    pub cli_timeout: Option<Duration>,
}

/// Runs the planned mutants, one worker per checkout, each taking the next mutant in spec
/// order; `on_event` is called on this thread for every event. Stops taking mutants once an
/// interrupt arrives (the runner has already killed the suites in flight).
///
/// A checkout whose suite replaced or deleted the mutated file is discarded and a fresh one
/// made in its place (in `checkouts`) before that worker takes its next mutant: nothing in a
/// tree a suite has rearranged can be trusted, and the next mutant must be judged against the
/// reviewed tree.
pub(crate) fn run_mutants(
    plan: &Plan,
    checkouts: &mut [Checkout],
    mut on_event: impl FnMut(Event),
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Event>();
    let errors: Vec<anyhow::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = checkouts
            .iter_mut()
            .enumerate()
            .map(|(j, co)| {
                let tx = tx.clone();
                let (next, failed) = (&next, &failed);
                s.spawn(move || -> Result<()> {
                    let share = match j {
                        0 => cores::Share::First,
                        _ => plan.cores.join(),
                    };
                    let result = match j {
                        0 => work(plan, j, co, next, failed, &tx),
                        _ => ready(plan, j, co, &tx).and_then(|green| match green {
                            true => work(plan, j, co, next, failed, &tx),
                            false => Ok(()),
                        }),
                    };
                    // Done with mutants, by any way out: its share of the cores goes to the
                    // checkouts still judging.
                    plan.cores.leave(share);
                    if result.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    result
                })
            })
            .collect();
        drop(tx);
        // A mutant's suite may run for minutes: a tick once a second lets the caller keep a
        // live line's clock moving while no other event arrives.
        loop {
            match rx.recv_timeout(TICK) {
                Ok(event) => on_event(event),
                Err(mpsc::RecvTimeoutError::Timeout) => on_event(Event::Tick),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some(anyhow::anyhow!("a mutant worker panicked")),
            })
            .collect()
    });
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// One worker: takes mutants until none is left, rebuilding its checkout when a suite spoiled it.
fn work(
    plan: &Plan,
    j: usize,
    co: &mut Checkout,
    next: &AtomicUsize,
    failed: &AtomicBool,
    tx: &mpsc::Sender<Event>,
) -> Result<()> {
    // The checkout's warm runners (suites with `watch`), stopped when this worker ends.
    let mut warms = mutant::Warms::new(j);
    loop {
        if files::interrupt::requested() || failed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let i = next.fetch_add(1, Ordering::SeqCst);
        let Some(m) = plan.mutants.get(i) else {
            return Ok(());
        };
        let _ = tx.send(Event::Started {
            index: m.index,
            name: m.name.clone(),
        });
        // Proved whole before every mutant: a setup, a baseline, a warm fill or an earlier
        // suite may have left it other than the tree under review.
        let restored_before = match co.make_whole() {
            Ok(found) => found,
            Err(e) => {
                warms.stop_all();
                renew(plan, co, m.index, tx)?;
                Some(format!(
                    "the checkout could not be restored ({e:#}); a fresh checkout was made"
                ))
            }
        };
        if restored_before.is_some() {
            // Files changed under the warm runners: what they print next is not a mutant's.
            warms.stop_all();
        }
        let done = run_one(plan, m, co, restored_before, &mut warms)?;
        if done.spoiled {
            warms.stop_all();
            renew(plan, co, m.index, tx)?;
        }
        match done.row {
            Some(row) => {
                let _ = tx.send(Event::Finished(Box::new(row)));
            }
            None => return Ok(()),
        }
    }
}

/// Replaces a checkout that cannot be trusted any more by a fresh one, set up and warmed like the
/// first (the old checkout is dropped here, which removes it; its links are removed, never
/// followed).
fn renew(plan: &Plan, co: &mut Checkout, index: usize, tx: &mpsc::Sender<Event>) -> Result<()> {
    *co = checkout::make(plan.source, 1)
        .context("making a fresh checkout after a suite spoiled one")?
        .pop()
        .context("no checkout was made")?;
    let applied = plan
        .prep
        .apply(co, &format!("setup.rebuilt-{}.log", index + 1))?;
    if let Some(what) = applied.changed {
        let _ = tx.send(Event::SetupChanged {
            checkout: co.path().to_path_buf(),
            what,
        });
    }
    if let Some(snap) = plan.warm.snapshot {
        // Best effort: without the outputs the checkout only builds cold.
        let _ = snap.fill(co.path());
    }
    Ok(())
}

/// Copy `j` (after the first) made ready while the first checkout already judges: filled with the
/// first checkout's build outputs, then every suite run unmutated there. `false` when it is not
/// green (an [`Event::NotGreen`]): it takes no mutant, and the others judge them all.
fn ready(plan: &Plan, j: usize, co: &Checkout, tx: &mpsc::Sender<Event>) -> Result<bool> {
    if let Some(snap) = plan.warm.snapshot {
        if let Err(e) = snap.fill(co.path()) {
            let _ = tx.send(Event::ColdBuild {
                checkout: j,
                error: e.to_string(),
            });
        }
    }
    for suite in &plan.warm.suites {
        let ran =
            baseline::run_baseline(suite, co, j, plan.warm.cli_timeout, &plan.out, plan.cores)?;
        if ran.record.run.ended.is_interrupted() {
            return Ok(false);
        }
        if ran.record.outcome() != report::Outcome::Passed {
            let _ = tx.send(Event::NotGreen {
                checkout: j,
                suite: suite.name.clone(),
                status: ran.record.status_text(),
                log: ran.record.run.log.clone(),
            });
            return Ok(false);
        }
    }
    Ok(true)
}
