//! Each `gate` subcommand: raw arguments in, library calls, a report out, an [`Exit`] back.
//!
//! Errors (bad input, a patch that does not apply, an unknown revision) are printed once as
//! one line and exit 2; findings (a manifest mismatch, drift, a failed suite) are outcomes and
//! exit 1; an interrupt cleans up and exits 130.
//!
//! Data goes to stdout through [`report::outln!`] (never `println!`), so a reader that closes
//! the pipe early ends the command quietly; every piece of outside text printed (paths, revs)
//! goes through [`report::escape`].

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use report::escape::{path as esc_path, text as esc};
use report::lock::OutLock;
use report::outln;
use report::{ColorChoice, Exit, Format, Painter, Timestamp};

use crate::cites;
use crate::cli::{Cli, Command};
use crate::record::{self, CandidateFacts, GateReport, Rerun, SetupFact, Verdict};
use crate::suite::{self, SuiteResult};
use candidate::apply::{self, Candidate, Place};
use candidate::config::Config;
use candidate::git::Git;
use candidate::{pack, worktree};
use report::text::plural;

/// Runs the parsed command line and returns the exit code, printing any error.
pub fn run(cli: Cli) -> Exit {
    report::exit::run_tool("gate", || dispatch(cli))
}

fn dispatch(cli: Cli) -> Result<Exit> {
    let repo_dir = cli.repo.clone();
    let color = cli.color;
    let repo = || -> Result<Git> {
        let dir = match &repo_dir {
            Some(d) => d.clone(),
            None => std::env::current_dir().context("current directory")?,
        };
        Ok(Git::open(&dir)?)
    };
    match cli.command {
        Command::Pack { base, out, paths } => cmd_pack(&repo()?, &base, &out, &paths),
        Command::Apply {
            base,
            patch,
            manifest,
            head,
            worktree,
            json,
        } => {
            let candidate = Candidate {
                base,
                patch,
                manifest,
                head,
            };
            cmd_apply(&repo()?, &candidate, worktree, json, color)
        }
        Command::Run {
            config,
            out,
            only,
            fresh,
            keep,
            echo,
            json,
            format,
            junit,
        } => {
            let format = format.with_json_flag(json);
            let settings = RunSettings {
                config,
                out,
                only,
                fresh,
                keep,
                echo,
                json: format == Format::Json,
            };
            let output = RunOutput {
                format,
                junit,
                color,
            };
            cmd_run(&repo()?, &settings, &output)
        }
        Command::Check {
            manifest,
            args,
            quiet,
            status,
            ignore_missing,
            warn: _,
            strict: _,
            json,
        } => {
            let (manifest, dir) = match (manifest, args.as_slice()) {
                (Some(m), []) => (m, PathBuf::from(".")),
                (Some(m), [dir]) => (m, dir.clone()),
                (Some(_), _) => bail!("gate check: with --manifest, give at most one DIR"),
                (None, []) => {
                    bail!("gate check: name the manifest (FILE, `-` for stdin, or --manifest FILE)")
                }
                (None, [m]) => (m.clone(), PathBuf::from(".")),
                (None, [m, dir]) => (m.clone(), dir.clone()),
                (None, _) => bail!("gate check: give at most a manifest and a DIR"),
            };
            let show = if status {
                Show::Nothing
            } else if quiet {
                Show::Problems
            } else {
                Show::All
            };
            cmd_check(&manifest, &dir, json, show, ignore_missing)
        }
        Command::Hash { paths, tag } => cmd_hash(&paths, tag),
        Command::Cites { head, file, json } => cmd_cites(&repo()?, &head, file.as_deref(), json),
        Command::Clean => cmd_clean(),
        Command::Completions { shell } => {
            report::manual::write_completions(shell, <Cli as clap::CommandFactory>::command())?;
            Ok(Exit::Ok)
        }
        Command::Man { out } => {
            report::manual::write_man_pages(
                <Cli as clap::CommandFactory>::command(),
                out.as_deref(),
            )?;
            Ok(Exit::Ok)
        }
    }
}

/// The `[worktree]` table applied to a new checkout: links from the user's checkout, then the
/// setup step through the runner. A link missing at its source, or a setup that fails, is a
/// failed precondition (exit 4): no suite could be judged there.
fn prepare_checkout(
    repo: &Git,
    config: &Config,
    checkout: &Path,
    out: &Path,
    previous: Option<&GateReport>,
) -> Result<Option<SetupFact>> {
    let w = &config.worktree;
    if w.is_empty() {
        return Ok(None);
    }
    candidate::setup::link_into(w, repo.dir(), checkout)
        .map_err(report::exit::PreconditionFailed::new)?;
    let name = match previous {
        Some(prev) => format!("logs/rerun-{}-00-setup.log", prev.reruns.len() + 1),
        None => "logs/00-setup.log".to_string(),
    };
    let Some(record) = candidate::setup::run_setup(w, checkout, &config.env, &out.join(&name))
        .context("running worktree.setup")?
    else {
        return Ok(Some(SetupFact {
            command: String::new(),
            status: "no setup".into(),
            duration_secs: 0.0,
            log: String::new(),
            linked: w.link.clone(),
        }));
    };
    if record.outcome() != report::Outcome::Passed {
        return Err(
            report::exit::PreconditionFailed::new(candidate::setup::failure_text(&record)).into(),
        );
    }
    report::errln!(
        "gate: worktree setup passed in {:.1}s ({name})",
        record.duration_secs
    );
    Ok(Some(SetupFact {
        command: w.setup.clone().unwrap_or_default(),
        status: record.status_text(),
        duration_secs: record.duration_secs,
        log: name,
        linked: w.link.clone(),
    }))
}

/// `gate clean`: what [`worktree::clean_stale`] removes at every start, and the kept
/// checkouts, each only when its owner marker still says it is gatekit's.
fn cmd_clean() -> Result<Exit> {
    let stale = worktree::clean_stale();
    outln!("removed {} of killed runs", plural(stale, "checkout"))?;
    let mut failed = false;
    for kept in worktree::clean_kept() {
        let path = report::escape::path(&kept.path);
        match kept.result {
            Ok(true) => outln!("removed   {path} (kept)")?,
            Ok(false) => outln!("left      {path}: no longer a gatekit checkout (forgotten)")?,
            Err(e) => {
                failed = true;
                let _ = writeln!(std::io::stderr(), "gate: could not remove {path}: {e}");
            }
        }
    }
    Ok(Exit::from_held(!failed))
}

fn cmd_pack(repo: &Git, base: &str, out: &Path, paths: &[String]) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    report::interrupt::cleans_up();
    worktree::clean_stale();
    let packed = pack::pack(repo, base, out, paths)?;
    if report::interrupt::requested() {
        // pack never writes after an interrupt (it checks before its one write of the pair);
        // one that came after the write leaves a whole candidate, and the exit says so.
        let _ = writeln!(
            std::io::stderr(),
            "gate: interrupted (after the candidate was written)"
        );
        return Ok(Exit::Interrupted);
    }
    outln!(
        "patch     {}  sha256 {}",
        esc_path(&packed.patch),
        packed.patch_sha256
    )?;
    let mut notes = Vec::new();
    if packed.deleted > 0 {
        notes.push(format!(
            "{} deleted: no line, apply checks they are gone",
            plural(packed.deleted, "path")
        ));
    }
    if packed.submodules > 0 {
        notes.push(format!(
            "{}: no line, bound by the tree id",
            plural(packed.submodules, "submodule bump")
        ));
    }
    outln!(
        "manifest  {}  {}{}",
        esc_path(&packed.manifest),
        plural(packed.entries, "path"),
        if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        }
    )?;
    outln!("base      {}", packed.base)?;
    for l in &packed.left_out {
        let dir = if l.dir.is_empty() { "./" } else { &l.dir };
        outln!(
            "left out {}: staged, but {} (not part of the candidate)",
            report::escape::text(dir),
            l.why
        )?;
    }
    Ok(Exit::Ok)
}

fn cmd_apply(
    repo: &Git,
    candidate: &Candidate,
    at: Option<PathBuf>,
    json: bool,
    color: ColorChoice,
) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    report::interrupt::cleans_up();
    worktree::clean_stale();
    let prepared = apply::prepare(repo, candidate)?;
    let manifest_sha256 = file_sha256(&candidate.manifest)?;
    if report::interrupt::requested() {
        bail!("interrupted");
    }
    let place = Place::Keep(at);
    let applied = apply::apply(repo, prepared, &place)?;
    if report::interrupt::requested() {
        // Nothing half-made is left behind: the worktree the user would keep goes too.
        let _ = applied.worktree.remove();
        let _ = writeln!(std::io::stderr(), "gate: interrupted");
        return Ok(Exit::Interrupted);
    }
    let facts = CandidateFacts::from_applied(&applied, &manifest_sha256);
    let findings = facts.findings();
    let print = || -> Result<()> {
        if json {
            let value = serde_json::json!({
                "version": record::REPORT_VERSION,
                "tool": "gate",
                "command": "apply",
                "at": Timestamp::now(),
                "candidate": facts,
                "verdict": Verdict::of(false, &findings),
                "findings": findings,
            });
            outln!("{}", serde_json::to_string_pretty(&value)?)?;
        } else {
            let paint = Painter::new(color.for_stdout());
            report::exit::print(&crate::text::render_candidate(&facts))?;
            let verdict = Verdict::of(false, &findings);
            let word = paint.paint(verdict.as_str(), verdict.style());
            if findings.is_empty() {
                outln!(
                    "verdict   {word}: the candidate applies cleanly, its manifest holds, no drift"
                )?;
            } else {
                outln!("verdict   {word}: {}", esc(&findings.join("; ")))?;
            }
        }
        Ok(())
    };
    finished(print(), Exit::from_held(findings.is_empty()))
}

/// `gate run`'s options.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub config: PathBuf,
    pub out: PathBuf,
    pub only: Vec<String>,
    /// With `only`: start a new summary instead of appending to the one in `out`.
    pub fresh: bool,
    pub keep: bool,
    pub echo: bool,
    pub json: bool,
}

/// How `gate run` shows its report: what goes on stdout, where a JUnit copy goes, and colour.
/// Apart from [`RunSettings`] because these only render a finished report.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    pub format: Format,
    pub junit: Option<PathBuf>,
    pub color: ColorChoice,
}

/// File names in `gate run`'s output folder.
pub const SUMMARY_FILE: &str = "gate-summary.txt";
pub const REPORT_FILE: &str = "gate.json";

/// `gate run`: the run itself ([`run_gate`]), then the JUnit copy and what goes on stdout,
/// all under the output folder's lock.
///
/// A report that cannot be written once the suites ran never hides the verdict: the summary is
/// still printed on stdout, the failed write is named on stderr, and the exit code is the
/// verdict's (1 for FAIL, 130 when interrupted) — except that a PASS whose record could not be
/// written exits 2, because a pass must come with its record.
fn cmd_run(repo: &Git, s: &RunSettings, output: &RunOutput) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    report::interrupt::cleans_up();
    let gated = run_gate(repo, s, output.junit.as_deref())?;
    let report = &gated.report;
    let mut write_errors: Vec<anyhow::Error> = gated.write_error.into_iter().collect();
    if let Some(path) = &output.junit {
        if let Err(e) = write_junit(path, report) {
            write_errors.push(e);
        }
    }
    let printed = match output.format {
        Format::Json => serde_json::to_string_pretty(report)
            .map_err(anyhow::Error::from)
            .and_then(|json| Ok(report::outln!("{json}")?)),
        Format::Markdown => Ok(report::exit::print(&report.render_markdown())?),
        Format::Text => Ok(report::exit::print(
            &report.render_painted(Painter::new(output.color.for_stdout())),
        )?),
    };
    let verdict = if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::from_held(report.passed())
    };
    let on_stdout = match printed {
        Ok(()) => "; the report on stdout is complete",
        // The reader of stdout went away: the work is done and its files are written.
        Err(e) if report::exit::is_stdout_closed(e.as_ref()) => "",
        Err(e) => {
            write_errors.push(e.context("printing the report on stdout"));
            ""
        }
    };
    if write_errors.is_empty() {
        return Ok(verdict);
    }
    for e in &write_errors {
        let _ = writeln!(
            std::io::stderr(),
            "gate: error: {} (the verdict {} stands{on_stdout})",
            report::exit::one_line(e.as_ref()),
            report.verdict
        );
    }
    Ok(if verdict == Exit::Ok {
        Exit::Usage
    } else {
        verdict
    })
}

/// A finished `gate run`: the report, and the error of writing its files, if any (see
/// `cmd_run`). Holds the output folder's lock until it is dropped.
pub struct Gated {
    pub report: GateReport,
    pub write_error: Option<anyhow::Error>,
    _lock: OutLock,
}

/// The whole `gate run`: apply, run the suites, write the report. Nothing is started before
/// the gate.toml is valid, the candidate's files are read, the output folder is locked for
/// this run alone and proved writable, and (for `--only`) the candidate is proved to be the
/// summary's own; a refusal leaves an existing summary byte for byte as it was.
pub fn run_gate(repo: &Git, s: &RunSettings, junit: Option<&Path>) -> Result<Gated> {
    let config = Config::load(&s.config)?;
    config.require_suites()?;
    candidate::setup::require_ignored(&config.worktree, repo, &config.file)
        .map_err(anyhow::Error::msg)?;
    let candidate = Candidate {
        base: config.base.clone(),
        patch: config.patch.clone(),
        manifest: config.manifest.clone(),
        head: config.head.clone(),
    };
    worktree::clean_stale();
    let prepared = apply::prepare(repo, &candidate)?;
    let manifest_sha256 = file_sha256(&config.manifest)?;
    let created = !s.out.exists();
    let lock = OutLock::acquire(&s.out)?;
    let gated = locked_run(repo, s, junit, &config, prepared, &manifest_sha256);
    if gated.is_err() && created {
        // A run that failed before it wrote anything leaves no output folder behind.
        let _ = std::fs::remove_file(s.out.join(report::lock::LOCK_FILE));
        let _ = std::fs::remove_dir(&s.out);
    }
    let (report, write_error) = gated?;
    Ok(Gated {
        report,
        write_error,
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
    applied.worktree.keep(s.keep);
    if let Some(prev) = &previous {
        if applied.tree != prev.candidate.tree {
            bail!(
                "{}: tree id {} differs from the summary's {}: one summary describes one tree, \
                 so --only cannot append to it (pass --fresh to start a new summary)",
                summary_path.display(),
                applied.tree,
                report::escape::text(&prev.candidate.tree)
            );
        }
    }
    let mut planned = suite::expand(&config.suites, applied.worktree.path())?;
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
                    report::escape::text(name),
                    report::escape::text(&names.join(", "))
                );
            }
        }
        planned.retain(|p| s.only.contains(&p.name));
    }
    let logs = s.out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let setup = prepare_checkout(
        repo,
        config,
        applied.worktree.path(),
        &s.out,
        previous.as_ref(),
    )?;

    let mut results: Vec<SuiteResult> = Vec::new();
    let mut interrupted = false;
    let total = planned.len();
    let mut progress = report::progress::Progress::new(total, s.json);
    let prefix = match &previous {
        Some(prev) => format!("rerun-{}-", prev.reruns.len() + 1),
        None => String::new(),
    };
    for (i, p) in planned.iter().enumerate() {
        if report::interrupt::requested() {
            interrupted = true;
            break;
        }
        let log = logs.join(format!("{prefix}{}", suite::log_name(i, &p.name).display()));
        let shown = report::escape::text(&p.name);
        let result = progress.during(&format!("suite {shown} running"), || {
            suite::run_suite(p, applied.worktree.path(), &config.env, &log, s.echo)
        })?;
        progress.finished(&format!(
            "[{}/{total}] {:<24} {:<12} {:>8}  {}",
            i + 1,
            shown,
            result.result_text(),
            report::duration::human(result.record.duration()),
            result.counts_text()
        ));
        let stop = result.record.interrupted;
        results.push(result);
        if stop {
            interrupted = true;
            break;
        }
    }
    progress.clear();
    if report::interrupt::requested() {
        interrupted = true;
    }

    let first_run = previous.is_none();
    let mut report = match previous {
        Some(mut report) => {
            // The manifest as it stands now, after these suites ran in the worktree.
            let now = applied.recheck()?;
            report.reruns.push(Rerun {
                at: started,
                manifest: now.summary(),
                tree: applied.tree.clone(),
                suites: results,
            });
            report.planned = names;
            report.finished = Timestamp::now();
            report.interrupted = interrupted;
            report.judge();
            report
        }
        None => {
            let mut report = GateReport::new(
                started,
                CandidateFacts::from_applied(&applied, manifest_sha256),
                names,
                results,
                interrupted,
            );
            report.setup = setup;
            report
        }
    };
    // Removed before the report is written, so "(removed)" is said only of what is gone.
    let kept = applied.worktree.kept();
    let removed = !kept && applied.worktree.remove().is_ok();
    if first_run {
        report.candidate.worktree_removed = removed;
    }
    let written = report::json::write_atomic(&s.out.join(REPORT_FILE), &report)
        .with_context(|| format!("writing {}", s.out.join(REPORT_FILE).display()))
        .and_then(|()| {
            report::json::write_text_atomic(&s.out.join(SUMMARY_FILE), &report.render())
                .with_context(|| format!("writing {}", s.out.join(SUMMARY_FILE).display()))
        });
    Ok((report, written.err()))
}

/// Refuses a rerun whose candidate is not the summary's (`what` differs).
fn same_as_summary(summary: &Path, what: &str, ours: &str, theirs: &str) -> Result<()> {
    if ours == theirs {
        return Ok(());
    }
    let theirs = if theirs.is_empty() {
        "(none recorded)".into()
    } else {
        report::escape::text(theirs)
    };
    bail!(
        "{}: {what} differs from the summary's ({ours} here, {theirs} in the summary): one \
         summary describes one tree, so --only cannot append to it (pass --fresh to start a \
         new summary)",
        summary.display()
    )
}

/// The sha256 of a file's bytes, as lowercase hex.
fn file_sha256(path: &Path) -> Result<String> {
    use sha2::Digest as _;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(candidate::apply::hex(&sha2::Sha256::digest(&bytes)))
}

/// Proves `dir` can take files before any work starts: it is made if missing, and a probe file
/// is created in it and removed.
pub fn writable_folder(dir: &Path, what: &str) -> Result<()> {
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
pub fn writable_file(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{}: is a folder, not a file to write", path.display());
    }
    let parent = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p,
        None => Path::new("."),
    };
    writable_folder(parent, "the folder of the report file")
}

/// Writes `report` as JUnit XML to `path` (atomically; its folder is made if missing).
pub fn write_junit(path: &Path, report: &GateReport) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    report::json::write_text_atomic(path, &crate::junit::junit(report).render())
        .with_context(|| format!("writing {}", path.display()))
}

fn load_previous(out: &Path) -> Result<Option<GateReport>> {
    let path = out.join(REPORT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let report: GateReport = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{}: not a gate report this version can append to (pass --fresh to start a new summary)",
                    path.display()
                )
            })?;
            Ok(Some(report))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// What `gate check` prints: every line, only what is not OK (`--quiet`), or nothing
/// (`--status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Show {
    All,
    Problems,
    Nothing,
}

/// `gate hash PATH...`: `sha256sum PATH...` with gatekit's path rules (relative, no `..`, no
/// link out of the current folder) and parallel hashing; the lines go to stdout.
fn cmd_hash(paths: &[PathBuf], tag: bool) -> Result<Exit> {
    use std::os::unix::ffi::OsStrExt;
    let names: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .collect();
    let manifest = manifests::manifest_for(Path::new("."), &names)?;
    let entries: Vec<manifests::Entry> = manifest
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if tag {
                e.form = manifests::Form::Tagged;
            }
            e
        })
        .collect();
    let bytes = manifests::write(&entries);
    finished(
        report::exit::print_bytes(&bytes).map_err(Into::into),
        Exit::Ok,
    )
}

fn cmd_check(
    manifest: &Path,
    dir: &Path,
    json: bool,
    show: Show,
    ignore_missing: bool,
) -> Result<Exit> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => bail!(
            "{}: not a folder (the folder the manifest's paths are relative to)",
            esc_path(dir)
        ),
        Err(e) => return Err(e).with_context(|| format!("{}: the folder to check", esc_path(dir))),
    }
    let parsed = if manifest == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading the manifest from stdin")?;
        apply::parse_manifest(&bytes, "standard input")?
    } else {
        apply::read_manifest(manifest)?
    };
    let mut verification =
        manifests::verify(dir, &parsed).with_context(|| format!("{}", manifest.display()))?;
    let mut ignored = 0;
    if ignore_missing {
        let before = verification.entries.len();
        verification
            .entries
            .retain(|e| e.status != manifests::Status::Missing);
        ignored = before - verification.entries.len();
        if verification.entries.is_empty() {
            report::errln!(
                "gate: {}: no file was verified ({ignored} missing, ignored)",
                esc_path(manifest)
            );
            return Ok(Exit::Findings);
        }
    }
    let print = || -> Result<()> {
        if json {
            let value = serde_json::json!({
                "version": record::REPORT_VERSION,
                "tool": "gate",
                "command": "check",
                "at": Timestamp::now(),
                "manifest": manifest.display().to_string(),
                "result": verification,
            });
            outln!("{}", serde_json::to_string_pretty(&value)?)?;
        } else {
            // The lines are sha256sum's (a name with a line break is already `\`-escaped);
            // any other control character a name holds is shown as an escape.
            if show != Show::Nothing {
                // One write for all the lines: a manifest of 100,000 files would otherwise be
                // 100,000 write calls, more than the hashing costs.
                let mut text = String::new();
                for e in &verification.entries {
                    if show == Show::All || e.status != manifests::Status::Ok {
                        text.push_str(&report::markdown::controls(&e.to_string()));
                        text.push('\n');
                    }
                }
                report::exit::print(&text)?;
                let note = if ignored > 0 {
                    format!(" ({ignored} missing, ignored)")
                } else {
                    String::new()
                };
                // --quiet is silent when everything held, as sha256sum's is.
                if show == Show::All || !verification.all_ok() {
                    outln!("{}{note}", verification.summary())?;
                }
            }
        }
        Ok(())
    };
    finished(print(), Exit::from_held(verification.all_ok()))
}

/// `exit` for work that is done, once its result is printed: a reader that closed stdout early
/// (`gate check ... | head -1`) does not change it, so a finding is never lost to a closed
/// pipe; any other failure to print is an error.
fn finished(printed: Result<()>, exit: Exit) -> Result<Exit> {
    match printed {
        Err(e) if report::exit::is_stdout_closed(e.as_ref()) => Ok(exit),
        other => other.map(|()| exit),
    }
}

fn cmd_cites(repo: &Git, head: &str, file: Option<&Path>, json: bool) -> Result<Exit> {
    let head_sha = repo.commit_id(head).context("head")?;
    let text = match file {
        Some(path) => {
            let bytes = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading stdin")?;
            String::from_utf8_lossy(&buf).into_owned()
        }
    };
    let tree = repo
        .text(["rev-parse", "--verify", &format!("{head_sha}^{{tree}}")])
        .context("head's tree")?;
    let found = cites::find(&head_sha, &tree, &text);
    let print = || -> Result<()> {
        if json {
            let value = serde_json::json!({
                "version": record::REPORT_VERSION,
                "tool": "gate",
                "command": "cites",
                "head_rev": head,
                "result": found,
                "cited": found.is_cited(),
            });
            outln!("{}", serde_json::to_string_pretty(&value)?)?;
        } else {
            let list = |ts: &[cites::Token]| {
                ts.iter()
                    .map(|t| match t.matched {
                        Some(cites::Match::Commit) => {
                            format!("{} (line {}, commit)", t.text, t.line)
                        }
                        Some(cites::Match::Tree) => format!("{} (line {}, tree)", t.text, t.line),
                        None => format!("{} (line {})", t.text, t.line),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            outln!("head    {head_sha}  ({})", esc(head))?;
            outln!("tree    {tree}")?;
            if found.is_cited() {
                outln!("cited   yes: {}", list(&found.cited))?;
            } else {
                outln!("cited   NO")?;
            }
            if found.others.is_empty() {
                if found.cited.is_empty() {
                    outln!("others  none: the text holds no hex token of 7+ characters at all")?;
                } else {
                    outln!("others  none")?;
                }
            } else {
                outln!("others  {}", list(&found.others))?;
            }
        }
        Ok(())
    };
    finished(print(), Exit::from_held(found.is_cited()))
}
