//! The whole `gate run`, apart from how it is shown, as a session of phases, each a function
//! with a typed result, all after the first under the output folder's lock:
//!
//! 1. `admit`: gate.toml valid, the output plan checked, the candidate's files read
//!    (`Admitted`); nothing has started;
//! 2. the report files proved writable, and the `Mode` resolved once: a fresh summary, or a
//!    rerun appending to the summary's report, proved to be of this candidate;
//! 3. `checkout`: the candidate applied to a checkout of its own, the suites chosen, the
//!    plan completed and checked again, a fresh folder cleared (`Checkout`);
//! 4. the report opened, written incomplete before anything runs;
//! 5. `prepare::ready`: the cache restored, the `[worktree]` setup (a failed one ends the run
//!    here, recorded as a failed precondition);
//! 6. `suites::run`: each suite in order, the report written after each (`Ran`);
//! 7. `verify`: a rerun's manifest checked again, `--canary` on a green first run
//!    (`Verified`);
//! 8. `conclude`: the linked folders compared, the verdict judged, the cache saved, the
//!    checkout removed, and the report's files written last (`Ended`).
//!
//! The run never prints: it emits what happens as `Event`s to the one reporter its command
//! made, and gate's renderer words them (see `progress`).
//!
//! Nothing starts before the gate.toml is valid, the candidate's files are read, the output
//! folder is locked and proved writable, and (for `--only`) the candidate is proved to be the
//! summary's own: a refusal leaves an existing summary byte for byte as it was.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use files::lock::OutLock;
use files::outputs::Plan;
use report::Timestamp;

use crate::canary::Canaries;
use crate::prepare::{self, Ready, Setup};
use crate::progress::{Event, Shows, Words};
use crate::record::GateReport;
use crate::suite::{self, Planned, SuiteResult};
use candidate::apply::{self, Candidate, Place};
use candidate::checkout as checkouts;
use candidate::config::Config;
use candidate::git::Git;
use candidate::linked::Fingerprint;

mod mode;
mod outputs;
mod suites;

use mode::Mode;
use outputs::ReportFiles;
use suites::Ran;

/// `gate run`'s options.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub config: PathBuf,
    /// `--base`, `--patch`, `--manifest`: in place of gate.toml's.
    pub overrides: candidate::config::Overrides,
    pub out: PathBuf,
    pub only: Vec<String>,
    /// With `only`: start a new summary instead of appending to the one in `out`.
    pub fresh: bool,
    pub keep: bool,
    pub echo: bool,
    pub json: bool,
    /// `--canary`: prove the suites read the checkout (see the canary module).
    pub canary: bool,
    /// `--attest FILE [--sign-key KEY]` (written by the command once the run is done).
    pub attest: Option<crate::attest::Attest>,
}

/// File names in `gate run`'s output folder.
pub(crate) const SUMMARY_FILE: &str = "gate-summary.txt";
pub(crate) const REPORT_FILE: &str = "gate.json";

/// A finished `gate run`: the report, and the error of writing its files, if any (see
/// `cmd_run`). Holds the output folder's lock until it is dropped.
pub struct Gated {
    pub report: GateReport,
    pub write_error: Option<anyhow::Error>,
    /// The sha256 of gate.toml as the run read it (for an attestation's configuration).
    pub config_sha256: String,
    _lock: OutLock,
}

/// The whole `gate run`: apply, run the suites, write the report. Nothing is started before
/// the gate.toml is valid, the candidate's files are read, the output folder is locked for
/// this run alone and proved writable, and (for `--only`) the candidate is proved to be the
/// summary's own; a refusal leaves an existing summary byte for byte as it was. What happens
/// as it goes is said on stderr in gate's words (for a caller that shows the report itself,
/// such as `gatekit demo`; `gate run` hands its own reporter to `run_shown`).
pub fn run_gate(repo: &Git, s: &RunSettings, junit: Option<&Path>) -> Result<Gated> {
    let mut shows = Shows::new(Words, report::ColorChoice::Never, s.json);
    run_shown(repo, s, junit, &mut shows)
}

/// [`run_gate`], what happens as it goes emitted to `shows`.
pub(crate) fn run_shown(
    repo: &Git,
    s: &RunSettings,
    junit: Option<&Path>,
    shows: &mut Shows,
) -> Result<Gated> {
    let admitted = admit(repo, s, junit)?;
    let config_sha256 = admitted.config.sha256.clone();
    let created = !s.out.exists();
    let lock = OutLock::acquire(&s.out)?;
    let ended = files::outputs::own(&s.out)
        .with_context(|| format!("{}: cannot take the output folder", s.out.display()))
        .and_then(|()| session(repo, s, junit, admitted, shows));
    let record = s.out.join(files::outputs::RECORD_FILE);
    if ended.is_err() && created && std::fs::symlink_metadata(&record).is_err() {
        // A run that failed before it wrote anything leaves no output folder behind.
        let _ = std::fs::remove_file(s.out.join(files::lock::LOCK_FILE));
        let _ = std::fs::remove_dir(&s.out);
    }
    let Ended {
        report,
        write_error,
    } = ended?;
    Ok(Gated {
        report,
        write_error,
        config_sha256,
        _lock: lock,
    })
}

/// What the first phase admits: a valid gate.toml, the output plan as checked before the
/// checkout exists, and the candidate's files read once.
struct Admitted {
    config: Config,
    plan: Plan,
    prepared: apply::Prepared,
}

/// Phase 1, before the lock: everything that can refuse the run without touching anything.
fn admit(repo: &Git, s: &RunSettings, junit: Option<&Path>) -> Result<Admitted> {
    let config = Config::load_with(&s.config, &s.overrides)?;
    config.require_suites()?;
    candidate::setup::require_ignored(&config.worktree, repo, &config.file)
        .map_err(anyhow::Error::msg)?;
    let plan = outputs::plan(repo, s, junit, &config)?;
    plan.check()?;
    let candidate = Candidate {
        base: config.base.clone(),
        patch: config.patch.clone(),
        manifest: config.manifest.clone(),
        head: config.head.clone(),
    };
    checkouts::clean_stale();
    let prepared = apply::prepare(repo, &candidate)?;
    Ok(Admitted {
        config,
        plan,
        prepared,
    })
}

/// A run that ended: its report, and the error of its last write, if any.
struct Ended {
    report: GateReport,
    write_error: Option<anyhow::Error>,
}

/// Phases 2 to 8, under the lock.
fn session(
    repo: &Git,
    s: &RunSettings,
    junit: Option<&Path>,
    admitted: Admitted,
    shows: &mut Shows,
) -> Result<Ended> {
    let Admitted {
        config,
        mut plan,
        prepared,
    } = admitted;
    let files = ReportFiles::proved(&s.out, junit)?;
    let mode = Mode::resolve(s, &prepared)?;
    let checkout = checkout(repo, s, &config, &mut plan, &mode, prepared)?;
    let mut report = mode.open_report(
        checkout.started,
        &checkout.applied,
        checkout.names.clone(),
        checkout.planned.iter().map(|p| p.name.clone()).collect(),
    );
    // The report exists, marked incomplete, before the setup and the first suite start, and is
    // rewritten so after each suite: a run killed at any point leaves a report that says it was
    // cut short, never the last run's (an earlier PASS in this folder is replaced now).
    let mut writes = Writes {
        files,
        warned: false,
    };
    writes.progress(&report, shows);
    let Ready {
        cache,
        reused,
        linked,
        setup,
    } = prepare::ready(
        repo,
        &config,
        checkout.dir(),
        (&s.out, &mode.setup_log()),
        shows,
    )?;
    let (fact, failed) = match setup {
        Setup::Ready(fact) => (fact, None),
        Setup::Failed { fact, why } => (fact, Some(why)),
    };
    if mode.is_fresh() {
        report.reused = reused;
        report.setup = fact;
    }
    if let Some(why) = failed {
        let stopped = Stopped {
            why: &why,
            linked: &linked,
        };
        return Ok(stopped.end(report, checkout, &mode, &writes, shows));
    }
    let ran = suites::run(
        &checkout.planned,
        checkout.dir(),
        &config,
        &s.out,
        &mode,
        s.echo,
        shows,
        |result, shows| {
            report.record(result);
            writes.progress(&report, shows);
        },
    )?;
    let verified = verify(&checkout, &config, &mode, s, &report, ran, shows)?;
    // A suite red in the checkout is most often red for a file git ignores in the user's tree
    // (a generated version file, a `.venv`): the checkout never has those.
    if ran == Ran::Through && !report.suites.iter().all(SuiteResult::passed) {
        let missing = candidate::ignored::missing(repo, checkout.dir(), &[s.out.as_path()]);
        if !missing.is_empty() {
            shows.emit(&Event::IgnoredMissing { paths: &missing });
        }
    }
    let after = After {
        ran,
        verified,
        linked: &linked,
        cache,
    };
    Ok(after.conclude(report, checkout, &mode, &writes, shows))
}

/// The candidate applied to a checkout of its own, and the suites this run runs there.
struct Checkout {
    applied: apply::Applied,
    /// The suites this run runs, in order (`--only` applied).
    planned: Vec<Planned>,
    /// Every suite the summary needs (see [`Mode::planned`]).
    names: Vec<String>,
    started: Timestamp,
}

impl Checkout {
    fn dir(&self) -> &Path {
        self.applied.checkout.path()
    }
}

/// Phase 3: the candidate applied, the tree proved to be the summary's (a rerun), the suites
/// expanded and chosen, and the output guard again, now that the checkout and the logs' names
/// are known (no output inside the checkout under test, no log onto a file no run recorded);
/// then, for a fresh summary, what earlier runs wrote in `--out` cleared. Still before any
/// suite (or the setup) runs.
fn checkout(
    repo: &Git,
    s: &RunSettings,
    config: &Config,
    plan: &mut Plan,
    mode: &Mode,
    prepared: apply::Prepared,
) -> Result<Checkout> {
    let started = Timestamp::now();
    let mut applied = apply::apply(repo, prepared, &Place::Run)?;
    applied.checkout.keep(s.keep);
    mode.check_tree(&applied.tree)?;
    let mut planned = suite::expand(&config.suites, applied.checkout.path())?;
    let names = mode.planned(planned.iter().map(|p| p.name.as_str()));
    if !s.only.is_empty() {
        for name in &s.only {
            if !planned.iter().any(|p| &p.name == name) {
                let names: Vec<&str> = planned.iter().map(|p| p.name.as_str()).collect();
                bail!(
                    "{}: no suite named \"{}\" (suites: {})",
                    config.file.display(),
                    files::escape::text(name),
                    files::escape::text(&names.join(", "))
                );
            }
        }
        planned.retain(|p| s.only.contains(&p.name));
    }
    plan.forbid("the checkout under test", applied.checkout.path());
    plan.file_in(&s.out, &mode.setup_log());
    for (i, p) in planned.iter().enumerate() {
        // A suite's log, and its build's log when it has a build step.
        for log in p.logs(&mode.suite_log(i, &p.name)) {
            plan.file_in(&s.out, &log);
        }
    }
    plan.check()?;
    if mode.is_fresh() {
        // A fresh summary: what earlier runs wrote here goes (only that; see `outputs`), once
        // nothing can refuse this run any more: a refusal (exit 2) removes nothing.
        files::outputs::clear_previous(&s.out)
            .with_context(|| format!("clearing {}", s.out.display()))?;
    }
    let logs = s.out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    Ok(Checkout {
        applied,
        planned,
        names,
        started,
    })
}

/// What checking the candidate after its suites found.
struct Verified {
    /// A rerun's manifest as it stands after its suites ran in the checkout.
    manifest: Option<manifests::Summary>,
    /// `--canary` on a first run whose every suite passed.
    canaries: Option<Canaries>,
}

/// Phase 7: the candidate checked again now that the suites ran in its checkout.
fn verify(
    checkout: &Checkout,
    config: &Config,
    mode: &Mode,
    s: &RunSettings,
    report: &GateReport,
    ran: Ran,
    shows: &mut Shows,
) -> Result<Verified> {
    let manifest = match mode {
        Mode::Rerun(_) => Some(checkout.applied.recheck()?.summary()),
        Mode::Fresh => None,
    };
    // Only a green first run needs the proof: a red one is FAIL already.
    let green = ran == Ran::Through && report.suites.iter().all(SuiteResult::passed);
    let canaries = if s.canary && mode.is_fresh() && green {
        let logs = s.out.join("logs");
        Some(crate::canary::run(
            &checkout.applied,
            &checkout.planned,
            config,
            &logs,
            s.echo,
            shows,
        )?)
    } else {
        None
    };
    Ok(Verified { manifest, canaries })
}

/// What phase 8 concludes from, after the suites.
struct After<'a> {
    ran: Ran,
    verified: Verified,
    linked: &'a Fingerprint,
    cache: Option<prepare::Cache>,
}

impl After<'_> {
    /// Phase 8: what the verification found recorded, the linked folders compared, the verdict
    /// judged; then the cache saved (not after an interrupt), the checkout removed, and the
    /// report's files written.
    fn conclude(
        self,
        mut report: GateReport,
        checkout: Checkout,
        mode: &Mode,
        writes: &Writes,
        shows: &mut Shows,
    ) -> Ended {
        let mut interrupted = self.ran == Ran::Interrupted;
        if let (Some(now), Some(rerun)) = (self.verified.manifest, report.reruns.last_mut()) {
            rerun.manifest = now;
        }
        if let Some(found) = self.verified.canaries {
            report.canaries = Some(found.runs);
            report.canary_left_out = found.left_out;
            interrupted |= found.interrupted;
        }
        record_linked(self.linked, &mut report, shows);
        report.finished = Timestamp::now();
        report.interrupted = interrupted;
        report.complete = !interrupted;
        report.judge();
        if let Some(cache) = self.cache.filter(|_| !files::interrupt::requested()) {
            prepare::save(cache, checkout.dir(), shows);
        }
        remove_checkout(checkout, &mut report, mode);
        writes.last(report)
    }
}

/// A run stopped by its `[worktree]` setup (or a link missing at its source): `why`, whole.
struct Stopped<'a> {
    why: &'a str,
    linked: &'a Fingerprint,
}

impl Stopped<'_> {
    /// Phase 5's other end: a failed precondition (exit 4), said as any stop is and recorded
    /// as what happened, the checkout removed first so the record says so truly. The
    /// attestation follows (see `cmd_run`), so an earlier PASS at its path never outlives this
    /// run.
    fn end(
        self,
        mut report: GateReport,
        checkout: Checkout,
        mode: &Mode,
        writes: &Writes,
        shows: &mut Shows,
    ) -> Ended {
        shows.emit(&Event::PreconditionFailed { why: self.why });
        // A setup that failed may still have written into the user's linked folder.
        record_linked(self.linked, &mut report, shows);
        // Its first line (the log's tail follows it on stderr and stays in the log).
        let first = self.why.lines().next().unwrap_or_default();
        report.precondition = Some(first.trim_end_matches(':').to_string());
        report.finished = Timestamp::now();
        report.complete = true;
        report.judge();
        remove_checkout(checkout, &mut report, mode);
        writes.last(report)
    }
}

/// A linked folder of the user's that changed while the run went: said, and recorded (a
/// failed precondition).
fn record_linked(linked: &Fingerprint, report: &mut GateReport, shows: &mut Shows) {
    if let Some(changed) = linked.changed() {
        shows.emit(&Event::LinkedChanged { what: &changed });
        report.linked_changed.push(changed);
    }
}

/// Removes the run's checkout (unless kept) before the report is written, so "(removed)" is
/// said only of what is gone (a fact of the first run's checkout, which a rerun's never
/// rewrites).
fn remove_checkout(checkout: Checkout, report: &mut GateReport, mode: &Mode) {
    let applied = checkout.applied;
    let kept = applied.checkout.kept();
    let removed = !kept && applied.checkout.remove().is_ok();
    if mode.is_fresh() {
        report.candidate.worktree_removed = removed;
    }
}

/// The report's files, written as the run goes and at its end.
struct Writes<'a> {
    files: ReportFiles<'a>,
    /// Whether a failed write while the run went was said already.
    warned: bool,
}

impl Writes<'_> {
    /// A write while the run goes: one that fails is said once and the suites go on, since the
    /// last write decides and a verdict is never hidden by a report that could not be written
    /// (see `cmd_run`).
    fn progress(&mut self, report: &GateReport, shows: &mut Shows) {
        if let Err(error) = self.files.write(report) {
            if !std::mem::replace(&mut self.warned, true) {
                shows.emit(&Event::ReportNotWritten { error: &error });
            }
        }
    }

    /// The last write: whether it failed goes with the report (an error and a non-zero exit
    /// for a PASS; see `GateReport::exit`).
    fn last(&self, report: GateReport) -> Ended {
        let write_error = self.files.write(&report).err();
        Ended {
            report,
            write_error,
        }
    }
}
