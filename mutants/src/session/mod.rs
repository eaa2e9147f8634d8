//! One `mutants run`, start to end, as a [`Session`]: the state a run owns (the spec, the
//! checkouts, the lock on `--out`, the report so far) and a method per phase.
//!
//! The phases, in order: [`Session::prepare`] (read the spec and gate.toml, make the working
//! copies, take the lock, start or reopen the report), [`Session::set_up`] (the `[worktree]`
//! links and setup in every checkout), [`Session::baseline`] (every suite unmutated: a red one
//! stops the run with exit 4), [`Session::judge`] (each mutant through the engine, the report
//! rewritten after each), [`Session::recheck`] (a candidate's manifest again: proof every
//! mutant was restored), and [`Session::finish`] (checkouts removed, the final report written
//! and printed). The engine ([`crate::run`]) does the work; the session records it and says it
//! as typed [`Note`]s to the run's one reporter ([`Out`]), which ends the run with its exit code.
//!
//! Errors before the lock (a bad spec, an unknown `--only` name, a DIR that is not a
//! repository) leave nothing in `--out`; an interrupt at any phase cleans up, writes the partial
//! report and exits 130.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};

use cmdline::Exit;
use files::lock::OutLock;
use report::{Painter, Timestamp};

use crate::checkout::{Checkout, Prep, Source};
use crate::record::{ManifestCheck, RunReport, SetupFacts};
use crate::render::{self, lines::Lines, Sources};
use crate::run::{self, BaselineResult, Event, Plan};
use crate::spec::{Mutant, Spec};

mod attest;
mod canaries;
mod cover;
mod dry;
mod identity;
mod implicit;
pub(crate) mod incremental;
pub(crate) mod note;
mod prepare;
mod previous;
mod red;
mod settings;
mod warm;

use note::Note;
pub(crate) use settings::{Selection, Settings, Suggested};

/// The run's one writer of stderr and stdout (see `cmdline::output`): the session hands it
/// [`Note`]s, [`Lines`] says what they read as.
pub(crate) type Out = cmdline::Reporter<Lines>;

/// Runs one `mutants run` through its phases and returns its exit code.
pub(crate) fn run(settings: Settings) -> Result<Exit> {
    // Before any file of ours is opened: the descriptors a make that runs us names are checked
    // to be its jobserver's while no other can have taken their numbers.
    let inherited = settings.jobserver.then(run::cores::inherited).flatten();
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    files::interrupt::cleans_up();
    let paint = Painter::new(settings.color.for_stderr());
    let mut out = Out::new(Lines { paint }, settings.color, false);
    if settings.selection.dry_run {
        let exit = dry::run(settings, &mut out)?;
        return Ok(out.finish(exit));
    }
    let exit = run_phases(settings, inherited, &mut out)?;
    Ok(out.finish(exit))
}

/// The phases in order, each saying what it does through `out`.
fn run_phases(
    settings: Settings,
    inherited: Option<jobserver::Client>,
    out: &mut Out,
) -> Result<Exit> {
    let mut session = match Session::prepare(settings, inherited, out)? {
        Ok(session) => session,
        Err(refused) => return Ok(refused),
    };
    // The report is on disk, incomplete, before any setup or suite runs: a run killed from
    // here on leaves one that says so (an `--only` rerun's replaces the report it updates,
    // which must not stand as this run's), and a folder that cannot take it stops the run now.
    render::write_all(
        &session.report,
        &session.sources,
        &session.out,
        session.settings.sarif.as_deref(),
    )?;
    session.restore_cache(out);
    if let Err(e) = session.set_up(out) {
        if cmdline::exit::Stop::of(&e) == cmdline::exit::Stop::Precondition {
            // A failed setup (exit 4) is recorded as what happened, the checkouts removed
            // first, before the error is said as any stop is; `finish` also compares the
            // user's linked folders, which a setup that failed may have written into.
            session.report.precondition = Some(precondition_line(&e));
            session.finish(Exit::Precondition, out)?;
        } else if let Some(changed) = session.prep.linked.changed() {
            out.emit(&Note::LinkedChanged(&changed));
        }
        return Err(e);
    }
    let baseline = match session.baseline(out)? {
        Ok(baseline) => baseline,
        Err(stop) => return session.finish(stop, out),
    };
    if let Err(stop) = session.canaries(&baseline, out)? {
        return session.finish(stop, out);
    }
    let coverage = match session.cover(&baseline, out)? {
        Ok(maps) => maps,
        Err(stop) => return session.finish(stop, out),
    };
    match session.judge(&baseline, &coverage, out) {
        Ok(()) => {}
        Err(Stopped::Engine(e)) => {
            session.report.interrupted = files::interrupt::requested();
            // The report says the code the run ends with (74 for a git or disk failure mid-run,
            // 70 for a bug), as the process does: never a finding's 1.
            let _ = session.finish(cmdline::exit::Stop::of(&e).exit(), out);
            return Err(e);
        }
        Err(Stopped::Writing(e)) => return Err(e),
    }
    session.recheck(out)?;
    let timings = run::timings(&baseline, &session.floors);
    session.save_cache(timings, out);
    let exit = if files::interrupt::requested() {
        Exit::Interrupted
    } else {
        Exit::from_held(session.report.held())
    };
    session.finish(exit, out)
}

/// The first line of a failed precondition (its log's tail follows on stderr), for the record.
fn precondition_line(e: &anyhow::Error) -> String {
    let text = e
        .chain()
        .find_map(|c| c.downcast_ref::<runner::stop::PreconditionFailed>())
        .map_or_else(|| e.to_string(), ToString::to_string);
    let first = text.lines().next().unwrap_or_default();
    first.trim_end_matches(':').to_string()
}

/// Why [`Session::judge`] stopped before the last mutant.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// The engine failed (a restore that could not be proved, a checkout that could not be made):
    /// the session still writes what it finished.
    Engine(anyhow::Error),
    /// The report could not be written after a mutant: nothing more can be recorded.
    Writing(anyhow::Error),
}

/// A run in progress: everything its phases share.
#[derive(Debug)]
pub(crate) struct Session {
    settings: Settings,
    spec: Spec,
    /// The mutants this run judges, as indices into `spec.mutants`, in spec order.
    selected: Vec<usize>,
    source: Source,
    checkouts: Vec<Checkout>,
    prep: Prep,
    /// `--out`, absolute.
    out: PathBuf,
    report: RunReport,
    sources: Sources,
    /// Whether this run updates an existing report in place: its rows are marked as reruns.
    rerun: bool,
    /// Rows kept from the report this run updates in place (`--only`, `--from`).
    kept_rows: usize,
    /// The build folders handed between copies and cached (`[worktree] cache`, or the
    /// ecosystem's default); empty: none.
    outputs: Vec<String>,
    /// The repository's cache, unless `--no-cache` (or nothing to cache).
    store: Option<candidate::cache::Store>,
    /// The first checkout's build outputs after its baseline, for the other checkouts and the cache.
    snapshot: Option<candidate::cache::Snapshot>,
    /// The slowest cold times kept with a restored cache (see [`run::baseline`]).
    floors: BTreeMap<String, f64>,
    /// Whether the first checkout's outputs came from the cache.
    restored: bool,
    /// The order mutants are taken in: indices into `spec.mutants`, longest first when a
    /// previous report in `--out` timed them (the report's rows stay in spec order).
    order: Vec<usize>,
    /// The jobserver and build slot the jobs share (see `run::Cores`).
    cores: run::Cores,
    /// One run per `--out`, held to the end of [`Session::finish`].
    _lock: OutLock,
}

impl Session {
    /// The mutants this run judges.
    fn mutants(&self) -> Vec<&Mutant> {
        self.selected
            .iter()
            .map(|&i| &self.spec.mutants[i])
            .collect()
    }

    /// `[worktree]`: links and the setup in every checkout, side by side, before its
    /// baseline; their times go in the report.
    pub(crate) fn set_up(&mut self, out: &mut Out) -> Result<()> {
        if self.prep.worktree.is_empty() {
            // No setup, but the tree is still proved before the baseline.
            for co in &self.checkouts {
                let applied = self.prep.apply(co, "setup.log")?;
                say_setup_changed(co, &applied, out);
            }
            return Ok(());
        }
        let prep = &self.prep;
        let applied: Vec<Result<crate::checkout::SetUp>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .checkouts
                .iter()
                .enumerate()
                .map(|(j, co)| {
                    s.spawn(move || {
                        let name = if j == 0 {
                            "setup.log".to_string()
                        } else {
                            format!("setup.checkout{j}.log")
                        };
                        prep.apply(co, &name)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| bail!("a setup thread panicked"))
                })
                .collect()
        });
        // Said for every checkout whose setup went through, even when another's failed.
        for (co, a) in self.checkouts.iter().zip(&applied) {
            if let Ok(a) = a {
                say_setup_changed(co, a, out);
            }
        }
        let applied = applied.into_iter().collect::<Result<Vec<_>>>()?;
        let secs: Vec<f64> = applied.iter().filter_map(|a| a.secs).collect();
        self.report.setup = Some(SetupFacts {
            command: prep.worktree.setup.clone().unwrap_or_default(),
            linked: prep.worktree.link.clone(),
            secs,
        });
        Ok(())
    }

    /// Every suite the selected mutants use, unmutated, in every checkout. `Err(exit)` when the run
    /// must stop there: interrupted, or a suite failed or hung (exit 4: a red baseline would
    /// make every mutant look killed). A green baseline is written to the report at once.
    pub(crate) fn baseline(&mut self, out: &mut Out) -> Result<Result<BaselineResult, Exit>> {
        let suites = self.spec.suites_used(self.mutants());
        self.say_cores(&suites, out);
        out.emit(&Note::BaselineStarts {
            suites: suites.len(),
            checkouts: self.checkouts.len(),
        });
        let names: Vec<String> = suites.iter().map(|s| s.name.clone()).collect();
        out.steps(1);
        let running = Note::BaselineRunning { suites: &names };
        // The first checkout's baseline, under the live line (run again cold below if needed).
        let first_baseline = |me: &Self, out: &mut Out| {
            out.during(&running, || {
                run::baseline(
                    &suites,
                    &me.checkouts[..1],
                    me.settings.timeout,
                    &me.out,
                    &me.floors,
                    &me.cores,
                )
            })
        };
        let mut baseline = first_baseline(self, out)?;
        if !baseline.passed && !baseline.interrupted && self.restored {
            out.emit(&Note::BaselineAgainCold);
            candidate::cache::remove_outputs(self.checkouts[0].path(), &self.outputs);
            self.floors.clear();
            self.restored = false;
            baseline = first_baseline(self, out)?;
        }
        out.clear();
        self.report.baseline = baseline.baselines.clone();
        if baseline.interrupted || files::interrupt::requested() {
            return Ok(Err(Exit::Interrupted));
        }
        if !baseline.passed {
            self.report.baseline_failed = true;
            self.say_red(out);
            return Ok(Err(Exit::Precondition));
        }
        for (suite, seen) in &baseline.fail_fast_off {
            out.emit(&Note::FailFastOff {
                suite,
                test: &seen.test,
            });
        }
        let floored: Vec<crate::spec::Suite> = suites.iter().map(|s| (*s).clone()).collect();
        self.floors(&floored, &baseline, out)?;
        if files::interrupt::requested() {
            return Ok(Err(Exit::Interrupted));
        }
        self.report.end = Timestamp::now();
        render::write_all(
            &self.report,
            &self.sources,
            &self.out,
            self.settings.sarif.as_deref(),
        )?;
        self.warm_copies(out);
        Ok(Ok(baseline))
    }

    /// Each suite's floor, timed in the first checkout after its green baseline (or kept in
    /// the cache from a run of the same code, suite and toolchains), with a note each; a floor
    /// that fails is said, never a reason to stop.
    fn floors(
        &mut self,
        suites: &[crate::spec::Suite],
        baseline: &BaselineResult,
        out: &mut Out,
    ) -> Result<()> {
        for suite in suites.iter().filter(|s| s.floor.is_some()) {
            let key = run::floor::Key {
                code_tree: &self.report.code_tree,
                suite,
                toolchains: &self.report.toolchains,
            };
            let kept = match self.settings.no_cache {
                true => None,
                false => run::floor::kept(&key, &self.out),
            };
            let floor = match kept {
                Some(floor) => floor,
                None => {
                    let timeouts = baseline.timeouts[&suite.name];
                    let running = Note::FloorRunning { suite: &suite.name };
                    let floor = out.during(&running, || {
                        run::floor::measure(
                            suite,
                            &self.checkouts[0],
                            timeouts,
                            &self.out,
                            &self.cores,
                        )
                    })?;
                    out.clear();
                    let Some(floor) = floor else { continue };
                    if files::interrupt::requested() {
                        return Ok(());
                    }
                    if !self.settings.no_cache {
                        run::floor::keep(&key, &floor, &self.report.start.to_string());
                    }
                    floor
                }
            };
            out.emit(&Note::Floor {
                suite: &suite.name,
                floor: &floor,
                log: &self.out.join(&floor.log),
            });
            if let Some(b) = self
                .report
                .baseline
                .iter_mut()
                .find(|b| b.suite == suite.name)
            {
                b.floor = Some(floor);
            }
        }
        Ok(())
    }

    /// How the jobs share the cores, on stderr: the jobserver, and the build slot when a
    /// suite's build will take it.
    fn say_cores(&self, suites: &[&crate::spec::Suite], out: &mut Out) {
        let jobs = self.checkouts.len();
        match self.cores.origin() {
            Some(run::cores::Jobserver::Own { tokens }) => out.emit(&Note::JobserverOwn {
                tokens,
                jobs,
                cores: run::cores::available(),
            }),
            Some(run::cores::Jobserver::Inherited) => out.emit(&Note::JobserverInherited { jobs }),
            None => {}
        }
        let slotted = suites.iter().filter_map(|s| s.build.as_deref());
        if self.cores.has_slot() && slotted.clone().any(|b| !run::cores::speaks_jobserver(b)) {
            out.emit(&Note::BuildSlot);
        }
    }

    /// Each selected mutant through the engine, `--jobs` at once: every finished row goes into
    /// the report, the report files are rewritten, and the progress line moves on.
    pub(crate) fn judge(
        &mut self,
        baseline: &BaselineResult,
        coverage: &BTreeMap<String, crate::coverage::Map>,
        out: &mut Out,
    ) -> Result<(), Stopped> {
        let rerun = self.rerun;
        let plan = Plan {
            spec: &self.spec,
            source: &self.source,
            prep: &self.prep,
            mutants: self.order.iter().map(|&i| &self.spec.mutants[i]).collect(),
            baseline,
            out: self.out.clone(),
            warm: run::Warm {
                snapshot: self.snapshot.as_ref(),
                suites: self.spec.suites_used(self.mutants()),
                cli_timeout: self.settings.timeout,
            },
            cores: &self.cores,
            coverage,
            checks: Default::default(),
        };
        // The covering selections of suites that build, checked on the unmutated code while
        // the first checkout's build is of it (see `run::select`). An interrupt stops the
        // mutants' run below at once.
        if let Some(co) = self.checkouts.first() {
            let todo = run::to_check_first(&plan, co.path());
            if !todo.is_empty() {
                out.steps(1);
                let count = todo.len();
                let checked = out.during(&Note::Checking { count }, || {
                    run::check_first(&plan, co.path(), &todo)
                });
                out.clear();
                if let Some(failed) = checked.map_err(Stopped::Engine)? {
                    out.emit(&Note::Checked { count, failed });
                }
            }
        }
        let total = plan.mutants.len();
        let (report, sources, dir, kept_rows) =
            (&mut self.report, &self.sources, &self.out, self.kept_rows);
        let sarif = self.settings.sarif.as_deref();
        out.steps(total);
        let mut running: BTreeMap<usize, (String, Instant)> = BTreeMap::new();
        let mut write_error = None;
        let result = run::run_mutants(&plan, &mut self.checkouts, |event| {
            match event {
                Event::Started { index, name } => {
                    running.insert(index, (name, Instant::now()));
                }
                Event::Finished(row) => {
                    running.remove(&row.index);
                    let done = report.mutants.len() + 1 - kept_rows;
                    let mut row = *row;
                    if rerun {
                        row.rerun = Some(row.run.as_ref().map_or_else(Timestamp::now, |r| r.start));
                    }
                    let index = row.index;
                    report.mutants.push(row);
                    report.settle();
                    report.end = Timestamp::now();
                    if let Err(e) = render::write_all(report, sources, dir, sarif) {
                        write_error.get_or_insert(e);
                    }
                    // The row just judged: settling sorts the rows by index, so the last one is
                    // another mutant's whenever a later one finished first (`--jobs`).
                    if let Some(row) = report.mutants.iter().find(|r| r.index == index) {
                        out.emit(&Note::Judged { row, done, total });
                    }
                }
                Event::ColdBuild { .. } | Event::NotGreen { .. } | Event::SetupChanged { .. } => {
                    out.emit(&Note::Engine(&event));
                }
                Event::Tick => {}
            }
            out.emit(&Note::Judging {
                tally: &report.tally,
                running: &running,
            });
        });
        out.clear();
        result.map_err(Stopped::Engine)?;
        match write_error {
            Some(e) => Err(Stopped::Writing(e)),
            None => Ok(()),
        }
    }

    /// A candidate's manifest checked again in every checkout after the last mutant: the proof
    /// that every mutant was restored (the worst checkout's check is the one recorded).
    pub(crate) fn recheck(&mut self, out: &mut Out) -> Result<()> {
        if self.report.candidate.is_none() || files::interrupt::requested() {
            return Ok(());
        }
        let mut after: Option<ManifestCheck> = None;
        for co in &self.checkouts {
            if let Some(v) = co.recheck()? {
                if after.is_none() || !v.all_ok() {
                    after = Some(ManifestCheck(v.summary()));
                }
            }
        }
        if let (Some(c), Some(a)) = (self.report.candidate.as_mut(), after) {
            out.emit(&Note::ManifestAfter(&a));
            c.manifest_after = Some(a);
        }
        Ok(())
    }

    /// Removes (or keeps) the checkouts, writes the final report and prints it.
    pub(crate) fn finish(mut self, exit: Exit, out: &mut Out) -> Result<Exit> {
        let mut checkouts = std::mem::take(&mut self.checkouts);
        if self.settings.keep {
            for co in &mut checkouts {
                co.keep(true);
                out.emit(&Note::Kept(co.path()));
            }
        }
        // Checkouts go first, so an interrupted run has cleaned up before it reports.
        drop(checkouts);
        // A linked folder of the user's that changed while the run went: whatever the
        // verdicts, they were given beside a damaged install (see `candidate::linked`).
        let exit = match self.prep.linked.changed() {
            Some(changed) if exit != Exit::Interrupted => {
                out.emit(&Note::LinkedChanged(&changed));
                self.report.linked_changed.push(changed);
                Exit::Precondition
            }
            _ => exit,
        };
        let report = &mut self.report;
        report.interrupted |= exit == Exit::Interrupted;
        report.settle();
        report.end = Timestamp::now();
        // Complete only now, in the last write: every planned mutant judged by a run that
        // reached its end.
        report.complete = !report.interrupted && report.all_judged();
        report.exit_code = exit.code();
        render::write_all(
            report,
            &self.sources,
            &self.out,
            self.settings.sarif.as_deref(),
        )?;
        out.show_document(&render::Shown(report), self.settings.format)?;
        if self.settings.suggested.is_some() && self.settings.format == report::Format::Text {
            // The survivors as review findings, with the change each is about (the Markdown
            // summary shows them itself).
            out.show(&render::findings::text(report));
        }
        // After the report is shown: a statement that cannot be written or signed is an
        // error (exit 2), but never hides the verdict.
        if let Some(a) = &self.settings.attest {
            attest::write(a, report)?;
        }
        out.emit(&Note::ReportIn(&self.out));
        if exit == Exit::Interrupted {
            out.emit(&Note::Interrupted {
                judged: report.mutants.len(),
                planned: report.planned,
            });
        }
        Ok(exit)
    }
}

/// What the setup did to a checkout it left other than the tree under review, said.
fn say_setup_changed(co: &Checkout, applied: &crate::checkout::SetUp, out: &mut Out) {
    if let Some(what) = &applied.changed {
        out.emit(&Note::SetupChanged {
            checkout: co.path(),
            what,
        });
    }
}
