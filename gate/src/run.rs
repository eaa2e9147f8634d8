//! The whole `gate run`, apart from how it is shown: the candidate applied to a checkout of
//! its own, the `[worktree]` setup, each suite in order, and the record written (`gate.json`
//! and `gate-summary.txt`), all under the output folder's lock.
//!
//! Nothing starts before the gate.toml is valid, the candidate's files are read, the output
//! folder is locked and proved writable, and (for `--only`) the candidate is proved to be the
//! summary's own: a refusal leaves an existing summary byte for byte as it was.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use files::lock::OutLock;
use report::Timestamp;

use crate::prepare::{cache_for, prepare_checkout, Setup};
use crate::progress::{Event, Lines};
use crate::record::{CandidateFacts, GateReport, Rerun};
use crate::suite::{self, SuiteResult};
use candidate::apply::{self, Candidate, Place};
use candidate::checkout;
use candidate::config::Config;
use candidate::git::Git;

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
/// summary's own; a refusal leaves an existing summary byte for byte as it was.
pub fn run_gate(repo: &Git, s: &RunSettings, junit: Option<&Path>) -> Result<Gated> {
    let config = Config::load_with(&s.config, &s.overrides)?;
    config.require_suites()?;
    candidate::setup::require_ignored(&config.worktree, repo, &config.file)
        .map_err(anyhow::Error::msg)?;
    outputs_plan(repo, s, junit, &config)?.check()?;
    let candidate = Candidate {
        base: config.base.clone(),
        patch: config.patch.clone(),
        manifest: config.manifest.clone(),
        head: config.head.clone(),
    };
    checkout::clean_stale();
    let prepared = apply::prepare(repo, &candidate)?;
    let manifest_sha256 = prepared.manifest_sha256.clone();
    let created = !s.out.exists();
    let lock = OutLock::acquire(&s.out)?;
    let gated = files::outputs::own(&s.out)
        .with_context(|| format!("{}: cannot take the output folder", s.out.display()))
        .and_then(|()| locked_run(repo, s, junit, &config, prepared, &manifest_sha256));
    let record = s.out.join(files::outputs::RECORD_FILE);
    if gated.is_err() && created && std::fs::symlink_metadata(&record).is_err() {
        // A run that failed before it wrote anything leaves no output folder behind.
        let _ = std::fs::remove_file(s.out.join(files::lock::LOCK_FILE));
        let _ = std::fs::remove_dir(&s.out);
    }
    let (report, write_error) = gated?;
    Ok(Gated {
        report,
        write_error,
        config_sha256: config.sha256.clone(),
        _lock: lock,
    })
}

fn locked_run(
    repo: &Git,
    s: &RunSettings,
    junit: Option<&Path>,
    config: &Config,
    prepared: apply::Prepared,
    manifest_sha256: &str,
) -> Result<(GateReport, Option<anyhow::Error>)> {
    writable_folder(&s.out, "the output folder")?;
    if let Some(path) = junit {
        writable_file(path)?;
    }
    let previous = if s.only.is_empty() || s.fresh {
        None
    } else {
        load_previous(&s.out)?
    };
    let summary_path = s.out.join(REPORT_FILE);
    if let Some(prev) = &previous {
        let c = &prev.candidate;
        same_as_summary(&summary_path, "base commit", &prepared.base, &c.base)?;
        // The summary's drift answer is for its head: a moved head needs a summary of its own.
        same_as_summary(&summary_path, "head commit", &prepared.head, &c.head)?;
        same_as_summary(
            &summary_path,
            "patch sha256",
            &prepared.patch_sha256,
            &c.patch_sha256,
        )?;
        same_as_summary(
            &summary_path,
            "manifest sha256",
            manifest_sha256,
            &c.manifest_sha256,
        )?;
    }
    let started = Timestamp::now();
    let mut applied = apply::apply(repo, prepared, &Place::Run)?;
    applied.checkout.keep(s.keep);
    if let Some(prev) = &previous {
        if applied.tree != prev.candidate.tree {
            bail!(
                "{}: tree id {} differs from the summary's {}: one summary describes one tree, \
                 so --only cannot append to it (pass --fresh to start a new summary)",
                summary_path.display(),
                applied.tree,
                files::escape::text(&prev.candidate.tree)
            );
        }
    }
    let mut planned = suite::expand(&config.suites, applied.checkout.path())?;
    let mut names: Vec<String> = previous
        .as_ref()
        .map(|p| p.planned.clone())
        .unwrap_or_default();
    for p in &planned {
        if !names.contains(&p.name) {
            names.push(p.name.clone());
        }
    }
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
    let prefix = match &previous {
        Some(prev) => format!("rerun-{}-", prev.reruns.len() + 1),
        None => String::new(),
    };
    // The guard again, now that the checkout and the suites' log names are known: no output
    // inside the checkout under test, no log onto a file no run recorded. Still before any
    // suite (or the setup) runs.
    let mut plan = outputs_plan(repo, s, junit, config)?;
    plan.forbid("the checkout under test", applied.checkout.path());
    plan.file_in(&s.out, &setup_log_name(previous.as_ref()));
    for (i, p) in planned.iter().enumerate() {
        for log in p.logs(&log_name(&prefix, i, &p.name)) {
            plan.file_in(&s.out, &format!("logs/{log}"));
        }
    }
    plan.check()?;
    if previous.is_none() {
        // A fresh summary: what earlier runs wrote here goes (only that; see `outputs`), once
        // nothing can refuse this run any more: a refusal (exit 2) removes nothing.
        files::outputs::clear_previous(&s.out)
            .with_context(|| format!("clearing {}", s.out.display()))?;
    }
    let logs = s.out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    // The report exists, marked incomplete, before the setup and the first suite start, and is
    // rewritten so after each suite: a run killed at any point leaves a report that says it was
    // cut short, never the last run's (an earlier PASS in this folder is replaced now). A write
    // that fails is said and the run goes on: the last write decides, and a verdict is never
    // hidden by a report that could not be written (see `cmd_run`).
    let first_run = previous.is_none();
    let mut report = match previous {
        Some(mut report) => {
            report.reruns.push(Rerun {
                at: started,
                // As applied; checked again after the suites, below.
                manifest: applied.verification.summary(),
                tree: applied.tree.clone(),
                suites: Vec::new(),
            });
            report.planned = names;
            report
        }
        None => GateReport::new(
            started,
            CandidateFacts::from_applied(&applied, manifest_sha256),
            names,
            Vec::new(),
            false,
        ),
    };
    report.scheduled = planned.iter().map(|p| p.name.clone()).collect();
    report.interrupted = false;
    // A precondition is the latest run's: a rerun whose setup passes clears an earlier failure.
    report.precondition = None;
    report.complete = false;
    report.judge();
    let files = ReportFiles { out: &s.out, junit };
    let mut warned = false;
    let mut write_progress = |report: &GateReport| {
        if let Err(e) = files.write(report) {
            // The final write says whether the report could be written (an error and a
            // non-zero exit if not); this one keeps what is on disk honest while the run goes,
            // so its failure is said once and the suites go on.
            if !std::mem::replace(&mut warned, true) {
                cmdline::errln!(
                    "gate: warning: {} (the run goes on; its last write decides)",
                    cmdline::exit::one_line(e.as_ref())
                );
            }
        }
    };
    write_progress(&report);
    // `[worktree] cache`, when gate.toml names it (no ecosystem default here: one checkout
    // judged once per candidate should not fill the cache folder unasked): restored before
    // the setup, saved after the suites. Cargo still decides what is fresh.
    let (cache, reused) = cache_for(repo, config, applied.checkout.path());
    if first_run {
        report.reused = reused;
    }
    // The user's linked folders as they are before the checkout gets its copies: compared
    // once the suites and canaries are done (see `candidate::linked`).
    let linked = candidate::linked::Fingerprint::take(repo.dir(), &config.worktree.link);
    let setup = prepare_checkout(
        repo,
        config,
        applied.checkout.path(),
        &s.out,
        // This rerun's number (its Rerun is already in the report), or 0 for a first run.
        if first_run { 0 } else { report.reruns.len() },
    )
    .inspect_err(|_| {
        if let Some(changed) = linked.changed() {
            cmdline::errln!("gate: {changed}");
        }
    })?;
    let (setup, failed) = match setup {
        Setup::Ready(fact) => (fact, None),
        Setup::Failed { fact, why } => (fact, Some(why)),
    };
    if first_run {
        report.setup = setup;
    }
    if let Some(why) = failed {
        // A failed precondition (exit 4): said as any stop is, and recorded as what happened,
        // the checkout removed first so the record says so truly. The attestation follows
        // (see `cmd_run`), so an earlier PASS at its path never outlives this run.
        cmdline::errln!("gate: {why}");
        // A setup that failed may still have written into the user's linked folder.
        if let Some(changed) = linked.changed() {
            cmdline::errln!("gate: {changed}");
            report.linked_changed.push(changed);
        }
        // Its first line (the log's tail follows it on stderr and stays in the log).
        let first = why.lines().next().unwrap_or_default();
        report.precondition = Some(first.trim_end_matches(':').to_string());
        report.finished = Timestamp::now();
        report.complete = true;
        report.judge();
        remove_checkout(applied, &mut report, first_run);
        let written = files.write(&report);
        return Ok((report, written.err()));
    }
    let interrupted = run_suites(
        &planned,
        applied.checkout.path(),
        config,
        &logs,
        &prefix,
        s.json,
        s.echo,
        |result| {
            report.record(result);
            write_progress(&report);
        },
    )?;

    if !first_run {
        // The manifest as it stands now, after these suites ran in the checkout.
        let now = applied.recheck()?;
        if let Some(rerun) = report.reruns.last_mut() {
            rerun.manifest = now.summary();
        }
    }
    let mut interrupted = interrupted;
    // Only a green first run needs the proof: a red one is FAIL already.
    if s.canary && first_run && !interrupted && report.suites.iter().all(SuiteResult::passed) {
        let found = crate::canary::run(&applied, &planned, config, &logs, s.json, s.echo)?;
        report.canaries = Some(found.runs);
        report.canary_left_out = found.left_out;
        interrupted |= found.interrupted;
    }
    if let Some(changed) = linked.changed() {
        cmdline::errln!("gate: {changed}");
        report.linked_changed.push(changed);
    }
    report.finished = Timestamp::now();
    report.interrupted = interrupted;
    report.complete = !interrupted;
    report.judge();
    if let Some((store, paths)) = cache.filter(|_| !files::interrupt::requested()) {
        let saved =
            candidate::cache::Snapshot::take(applied.checkout.path(), &paths, store.staging())
                .and_then(|snap| store.commit(snap));
        if let Err(e) = saved {
            cmdline::errln!("gate: cache: not saved ({e})");
        }
    }
    remove_checkout(applied, &mut report, first_run);
    let written = files.write(&report);
    Ok((report, written.err()))
}

/// Removes the run's checkout (unless kept) before the report is written, so "(removed)" is
/// said only of what is gone.
fn remove_checkout(applied: apply::Applied, report: &mut GateReport, first_run: bool) {
    let kept = applied.checkout.kept();
    let removed = !kept && applied.checkout.remove().is_ok();
    if first_run {
        report.candidate.worktree_removed = removed;
    }
}

/// Where a run's report goes: `gate-summary.txt` and `gate.json` in the output folder, and the
/// JUnit copy when one is asked for.
struct ReportFiles<'a> {
    out: &'a Path,
    junit: Option<&'a Path>,
}

impl ReportFiles<'_> {
    /// Writes every file of `report`, each atomically, gate.json last: a report that says it
    /// is complete is only ever on disk once its summary and JUnit copy are, and a write that
    /// fails (a full disk) stops there, leaving the earlier gate.json that says it is not.
    fn write(&self, report: &GateReport) -> Result<()> {
        let summary = self.out.join(SUMMARY_FILE);
        files::atomic::write_text_atomic(&summary, &report.render())
            .with_context(|| format!("writing {}", summary.display()))?;
        if let Some(path) = self.junit {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            files::atomic::write_text_atomic(path, &crate::junit::render(report))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let json = self.out.join(REPORT_FILE);
        report::json::write_atomic(&json, report)
            .with_context(|| format!("writing {}", json.display()))
    }
}

/// Runs each planned suite in order in `dir`, its log `logs/{prefix}NN-name.log`, emitting
/// its progress events, handing each result to `record` as it ends; stops at an interrupt. Returns whether
/// it was interrupted.
#[allow(clippy::too_many_arguments)]
fn run_suites(
    planned: &[suite::Planned],
    dir: &Path,
    config: &Config,
    logs: &Path,
    prefix: &str,
    quiet: bool,
    echo: bool,
    mut record: impl FnMut(SuiteResult),
) -> Result<bool> {
    let mut interrupted = false;
    let total = planned.len();
    let mut lines = Lines::new(total, quiet);
    for (i, p) in planned.iter().enumerate() {
        if files::interrupt::requested() {
            interrupted = true;
            break;
        }
        let log = logs.join(log_name(prefix, i, &p.name));
        let result = lines.during(&Event::SuiteStarted { name: &p.name }, || {
            suite::run_suite(p, dir, &config.env, &log, echo)
        })?;
        lines.emit(&Event::SuiteFinished {
            index: i,
            total,
            name: &p.name,
            result: &result,
        });
        let stop = result.record.interrupted;
        record(result);
        if stop {
            interrupted = true;
            break;
        }
    }
    lines.clear();
    Ok(interrupted || files::interrupt::requested())
}

/// Suite `i`'s log name in `logs/` (`{prefix}NN-name.log`).
fn log_name(prefix: &str, i: usize, name: &str) -> String {
    format!("{prefix}{}", suite::log_name(i, name).display())
}

/// The setup's log, below `--out`.
fn setup_log_name(previous: Option<&GateReport>) -> String {
    match previous {
        Some(prev) => format!("logs/rerun-{}-00-setup.log", prev.reruns.len() + 1),
        None => "logs/00-setup.log".to_string(),
    }
}

/// Every path `gate run` reads or writes, for the one output guard: gate.toml, the patch and
/// the manifest in; `--out` with its report files and logs, and `--junit`, out; never in the
/// repository's `.git`.
fn outputs_plan(
    repo: &Git,
    s: &RunSettings,
    junit: Option<&Path>,
    config: &Config,
) -> Result<files::outputs::Plan> {
    let mut plan = files::outputs::Plan::new();
    config.plan_inputs(&mut plan);
    repo.forbid_outputs_in(&mut plan)?;
    plan.folder("--out", &s.out)
        .file_in(&s.out, REPORT_FILE)
        .file_in(&s.out, SUMMARY_FILE)
        .folder_in(&s.out, "logs");
    if let Some(path) = junit {
        plan.file("--junit", path);
    }
    if let Some(a) = &s.attest {
        candidate::attest::plan(&mut plan, &a.file, a.key.as_deref());
    }
    Ok(plan)
}

/// Refuses a rerun whose candidate is not the summary's (`what` differs).
fn same_as_summary(summary: &Path, what: &str, ours: &str, theirs: &str) -> Result<()> {
    if ours == theirs {
        return Ok(());
    }
    let theirs = if theirs.is_empty() {
        "(none recorded)".into()
    } else {
        files::escape::text(theirs)
    };
    bail!(
        "{}: {what} differs from the summary's ({ours} here, {theirs} in the summary): one \
         summary describes one tree, so --only cannot append to it (pass --fresh to start a \
         new summary)",
        summary.display()
    )
}

/// Proves `dir` can take files before any work starts: it is made if missing, and a probe file
/// is created in it and removed.
fn writable_folder(dir: &Path, what: &str) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create {what}", dir.display()))?;
    tempfile::Builder::new()
        .prefix(".gatekit-probe-")
        .tempfile_in(dir)
        .with_context(|| format!("{}: cannot write in {what}", dir.display()))?;
    Ok(())
}

/// Proves a report file can be written at `path`: its folder is writable and it is not a
/// folder itself.
fn writable_file(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{}: is a folder, not a file to write", path.display());
    }
    let parent = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p,
        None => Path::new("."),
    };
    writable_folder(parent, "the folder of the report file")
}

fn load_previous(out: &Path) -> Result<Option<GateReport>> {
    let path = out.join(REPORT_FILE);
    match files::input::read(&path) {
        Ok(bytes) => {
            let report: GateReport = serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{}: not a gate report this version can append to (pass --fresh to start a new summary)",
                    path.display()
                )
            })?;
            Ok(Some(report))
        }
        Err(files::input::InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}
