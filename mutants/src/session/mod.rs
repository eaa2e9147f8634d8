//! One `mutants run`, start to end, as a [`Session`]: the state a run owns (the spec, the
//! checkouts, the lock on `--out`, the report so far) and a method per phase.
//!
//! The phases, in order: [`Session::prepare`] (read the spec and gate.toml, make the working
//! copies, take the lock, start or reopen the report), [`Session::set_up`] (the `[worktree]`
//! links and setup in every checkout), [`Session::baseline`] (every suite unmutated: a red one
//! stops the run with exit 4), [`Session::judge`] (each mutant through the engine, the report
//! rewritten after each), [`Session::recheck`] (a candidate's manifest again: proof every
//! mutant was restored), and [`Session::finish`] (checkouts removed, the final report written
//! and printed). The engine ([`crate::run`]) does the work; the session records and shows it.
//!
//! Errors before the lock (a bad spec, an unknown `--only` name, a DIR that is not a
//! repository) leave nothing in `--out`; an interrupt at any phase cleans up, writes the partial
//! report and exits 130.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};

use cmdline::progress::Progress;
use cmdline::Exit;
use files::lock::OutLock;
use report::{Painter, Timestamp};

use crate::checkout::{Checkout, Prep, Source};
use crate::record::{ManifestCheck, RunReport, SetupFacts};
use crate::render::{self, progress, Sources};
use crate::run::{self, BaselineResult, Event, Plan};
use crate::spec::{Mutant, Spec};

mod attest;
mod canaries;
mod identity;
mod prepare;
mod previous;
mod settings;
mod warm;

pub(crate) use settings::{Selection, Settings, Suggested};

/// Runs one `mutants run` through its phases and returns its exit code.
pub(crate) fn run(settings: Settings) -> Result<Exit> {
    // Before any file of ours is opened: the descriptors a make that runs us names are checked
    // to be its jobserver's while no other can have taken their numbers.
    let inherited = settings.jobserver.then(run::cores::inherited).flatten();
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    files::interrupt::cleans_up();
    let mut session = match Session::prepare(settings, inherited)? {
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
    session.restore_cache();
    if let Err(e) = session.set_up() {
        if cmdline::exit::Stop::of(&e) == cmdline::exit::Stop::Precondition {
            // A failed setup (exit 4) is recorded as what happened, the checkouts removed
            // first, before the error is said as any stop is; `finish` also compares the
            // user's linked folders, which a setup that failed may have written into.
            session.report.precondition = Some(precondition_line(&e));
            session.finish(Exit::Precondition)?;
        } else if let Some(changed) = session.prep.linked.changed() {
            cmdline::errln!("mutants: {changed}");
        }
        return Err(e);
    }
    let baseline = match session.baseline()? {
        Ok(baseline) => baseline,
        Err(stop) => return session.finish(stop),
    };
    if let Err(stop) = session.canaries(&baseline)? {
        return session.finish(stop);
    }
    match session.judge(&baseline) {
        Ok(()) => {}
        Err(Stopped::Engine(e)) => {
            session.report.interrupted = files::interrupt::requested();
            // The report says the code the run ends with (74 for a git or disk failure mid-run,
            // 70 for a bug), as the process does: never a finding's 1.
            let _ = session.finish(cmdline::exit::Stop::of(&e).exit());
            return Err(e);
        }
        Err(Stopped::Writing(e)) => return Err(e),
    }
    session.recheck()?;
    session.save_cache(run::timings(&baseline, &session.floors));
    let exit = if files::interrupt::requested() {
        Exit::Interrupted
    } else {
        Exit::from_held(session.report.held())
    };
    session.finish(exit)
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
    pub(crate) fn set_up(&mut self) -> Result<()> {
        if self.prep.worktree.is_empty() {
            // No setup, but the tree is still proved before the baseline.
            for co in &self.checkouts {
                self.prep.apply(co, "setup.log")?;
            }
            return Ok(());
        }
        let prep = &self.prep;
        let secs: Vec<Result<Option<f64>>> = std::thread::scope(|s| {
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
        let secs: Vec<f64> = secs
            .into_iter()
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
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
    pub(crate) fn baseline(&mut self) -> Result<Result<BaselineResult, Exit>> {
        let suites = self.spec.suites_used(self.mutants());
        self.say_cores(&suites);
        cmdline::errln!(
            "mutants: baseline: {} suite(s) in {} checkout(s)",
            suites.len(),
            self.checkouts.len()
        );
        let names: Vec<String> = suites
            .iter()
            .map(|s| files::escape::text(&s.name).into_owned())
            .collect();
        let mut live = Progress::new(1, false);
        let label = format!("baseline: {} running unmutated", names.join(", "));
        // The first checkout's baseline, under the live line (run again cold below if needed).
        let mut first_baseline = |me: &Self| {
            live.during(&label, || {
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
        let mut baseline = first_baseline(self)?;
        if !baseline.passed && !baseline.interrupted && self.restored {
            cmdline::errln!("mutants: cache: the baseline failed on restored build outputs; discarding them and running it again cold");
            candidate::cache::remove_outputs(self.checkouts[0].path(), &self.outputs);
            self.floors.clear();
            self.restored = false;
            baseline = first_baseline(self)?;
        }
        live.clear();
        self.report.baseline = baseline.baselines.clone();
        if baseline.interrupted || files::interrupt::requested() {
            return Ok(Err(Exit::Interrupted));
        }
        if !baseline.passed {
            self.report.baseline_failed = true;
            for b in self.report.baseline.iter().filter(|b| !b.passed) {
                cmdline::errln!(
                    "mutants: baseline failed: suite {:?} {} without any mutant; no mutant judged",
                    b.suite,
                    files::escape::text(&b.status),
                );
                // Why, as the record says it: the failed tests and the first error line of
                // each (`Cannot find package ...` is above a runner's summary block, not in
                // it); the log's last lines when it names no test and no error.
                let log = self.out.join(&b.log);
                if b.why.is_empty() {
                    let text = runner::read_tail(&log, 1 << 20).unwrap_or_default();
                    let lines: Vec<&str> = text.lines().collect();
                    for line in &lines[lines.len().saturating_sub(12)..] {
                        cmdline::errln!("  | {}", files::escape::terminal_line(line));
                    }
                }
                for line in b.why.iter().chain(&b.notes) {
                    cmdline::errln!("  {}", files::escape::text(line));
                }
                cmdline::errln!("  log {}", files::escape::path(&log));
            }
            return Ok(Err(Exit::Precondition));
        }
        self.report.end = Timestamp::now();
        render::write_all(
            &self.report,
            &self.sources,
            &self.out,
            self.settings.sarif.as_deref(),
        )?;
        self.warm_copies();
        Ok(Ok(baseline))
    }

    /// How the jobs share the cores, on stderr: the jobserver, and the build slot when a
    /// suite's build will take it.
    fn say_cores(&self, suites: &[&crate::spec::Suite]) {
        let jobs = report::text::plural(self.checkouts.len(), "job");
        match self.cores.origin() {
            Some(run::cores::Jobserver::Own { tokens }) => cmdline::errln!(
                "mutants: jobserver: {} shared by {jobs} on {}",
                report::text::plural(tokens, "token"),
                report::text::plural(run::cores::available(), "core")
            ),
            Some(run::cores::Jobserver::Inherited) => cmdline::errln!(
                "mutants: jobserver: the one this run was started under (MAKEFLAGS), for {jobs}"
            ),
            None => {}
        }
        let slotted = suites.iter().filter_map(|s| s.build.as_deref());
        if self.cores.has_slot() && slotted.clone().any(|b| !run::cores::speaks_jobserver(b)) {
            cmdline::errln!("mutants: build slot: builds other than cargo run one job at a time");
        }
    }

    /// Each selected mutant through the engine, `--jobs` at once: every finished row goes into
    /// the report, the report files are rewritten, and the progress line moves on.
    pub(crate) fn judge(&mut self, baseline: &BaselineResult) -> Result<(), Stopped> {
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
        };
        let total = plan.mutants.len();
        let (report, sources, out, kept_rows) =
            (&mut self.report, &self.sources, &self.out, self.kept_rows);
        let sarif = self.settings.sarif.as_deref();
        let mut live = Progress::new(total, false);
        let paint = Painter::new(self.settings.color.for_stderr());
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
                    let line = progress::finished_line(&row, done, total, paint);
                    let mut row = *row;
                    if rerun {
                        row.rerun = Some(row.run.as_ref().map_or_else(Timestamp::now, |r| r.start));
                    }
                    report.mutants.push(row);
                    report.settle();
                    report.end = Timestamp::now();
                    if let Err(e) = render::write_all(report, sources, out, sarif) {
                        write_error.get_or_insert(e);
                    }
                    live.finished(&line);
                }
                Event::ColdBuild { .. } | Event::NotGreen { .. } => {
                    cmdline::errln!("{}", progress::checkout_line(&event));
                }
                Event::Tick => {}
            }
            live.status(&progress::live_status(&report.tally, &running));
        });
        live.clear();
        result.map_err(Stopped::Engine)?;
        match write_error {
            Some(e) => Err(Stopped::Writing(e)),
            None => Ok(()),
        }
    }

    /// A candidate's manifest checked again in every checkout after the last mutant: the proof
    /// that every mutant was restored (the worst checkout's check is the one recorded).
    pub(crate) fn recheck(&mut self) -> Result<()> {
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
            cmdline::errln!("mutants: candidate manifest after the last mutant: {a}");
            c.manifest_after = Some(a);
        }
        Ok(())
    }

    /// Removes (or keeps) the checkouts, writes the final report and prints it.
    pub(crate) fn finish(mut self, exit: Exit) -> Result<Exit> {
        let mut checkouts = std::mem::take(&mut self.checkouts);
        if self.settings.keep {
            for co in &mut checkouts {
                co.keep(true);
                cmdline::errln!("mutants: kept checkout {}", files::escape::path(co.path()));
            }
        }
        // Checkouts go first, so an interrupted run has cleaned up before it reports.
        drop(checkouts);
        // A linked folder of the user's that changed while the run went: whatever the
        // verdicts, they were given beside a damaged install (see `candidate::linked`).
        let exit = match self.prep.linked.changed() {
            Some(changed) if exit != Exit::Interrupted => {
                cmdline::errln!("mutants: {changed}");
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
        render::print(report, self.settings.format, self.settings.color)?;
        if self.settings.suggested.is_some() && self.settings.format == report::Format::Text {
            // The survivors as review findings, with the change each is about (the Markdown
            // summary shows them itself).
            cmdline::exit::show(&render::findings::text(report));
        }
        // After the report is shown: a statement that cannot be written or signed is an
        // error (exit 2), but never hides the verdict.
        if let Some(a) = &self.settings.attest {
            attest::write(a, report)?;
        }
        cmdline::errln!("mutants: report in {}", files::escape::path(&self.out));
        if exit == Exit::Interrupted {
            cmdline::errln!(
                "mutants: interrupted after {} of {} mutants; checkouts removed",
                report.mutants.len(),
                report.planned
            );
        }
        Ok(exit)
    }
}
