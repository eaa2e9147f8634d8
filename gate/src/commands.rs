//! Each `gate` subcommand: raw arguments in, library calls, a report out, an [`Exit`] back.
//!
//! Errors (bad input, a patch that does not apply, an unknown revision) are printed once as
//! one line and exit 2; findings (a manifest mismatch, drift, a failed suite) are outcomes and
//! exit 1; an interrupt cleans up and exits 130.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use report::{ColorChoice, Exit, Format, Painter, Timestamp};

use crate::cli::{Cli, Command};
use crate::suite::{self, SuiteResult};
use crate::summary::{self, CandidateFacts, GateReport, Rerun};
use crate::{cites, demo};
use candidate::apply::{self, Candidate, Place};
use candidate::config::Config;
use candidate::git::Git;
use candidate::{pack, worktree};

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
            dir,
            json,
        } => cmd_check(&manifest, &dir, json),
        Command::Cites { head, file, json } => cmd_cites(&repo()?, &head, file.as_deref(), json),
        Command::Clean => cmd_clean(),
        Command::Demo { keep } => demo::run(keep),
        Command::Completions { shell } => {
            report::manual::print_completions(shell, <Cli as clap::CommandFactory>::command());
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

/// `gate clean`: what [`worktree::clean_stale`] removes at every start, and the kept
/// checkouts, each only when its owner marker still says it is gatekit's.
fn cmd_clean() -> Result<Exit> {
    let stale = worktree::clean_stale();
    println!("removed {} of killed runs", plural(stale, "checkout"));
    let mut failed = false;
    for kept in worktree::clean_kept() {
        let path = report::escape::path(&kept.path);
        match kept.result {
            Ok(true) => println!("removed   {path} (kept)"),
            Ok(false) => println!("left      {path}: no longer a gatekit checkout (forgotten)"),
            Err(e) => {
                failed = true;
                eprintln!("gate: could not remove {path}: {e}");
            }
        }
    }
    Ok(Exit::from_held(!failed))
}

fn cmd_pack(repo: &Git, base: &str, out: &Path, paths: &[String]) -> Result<Exit> {
    worktree::clean_stale();
    let packed = pack::pack(repo, base, out, paths)?;
    println!(
        "patch     {}  sha256 {}",
        packed.patch.display(),
        packed.patch_sha256
    );
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
    println!(
        "manifest  {}  {}{}",
        packed.manifest.display(),
        plural(packed.entries, "path"),
        if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        }
    );
    println!("base      {}", packed.base);
    for l in &packed.left_out {
        let dir = if l.dir.is_empty() { "./" } else { &l.dir };
        println!(
            "left out {}: staged, but {} (not part of the candidate)",
            report::escape::text(dir),
            l.why
        );
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
    worktree::clean_stale();
    let prepared = apply::prepare(repo, candidate)?;
    let place = Place::Keep(at);
    let applied = apply::apply(repo, prepared, &place)?;
    let facts = CandidateFacts::from_applied(&applied);
    let findings = facts.findings();
    if json {
        let value = serde_json::json!({
            "version": summary::REPORT_VERSION,
            "tool": "gate",
            "command": "apply",
            "at": Timestamp::now(),
            "candidate": facts,
            "verdict": if findings.is_empty() { "PASS" } else { "FAIL" },
            "findings": findings,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let paint = Painter::new(color.for_stdout());
        print!("{}", summary::render_candidate(&facts));
        if findings.is_empty() {
            println!(
                "verdict   {}: the candidate applies cleanly, its manifest holds, no drift",
                paint.verdict("PASS")
            );
        } else {
            println!(
                "verdict   {}: {}",
                paint.verdict("FAIL"),
                findings.join("; ")
            );
        }
    }
    Ok(Exit::from_held(findings.is_empty()))
}

/// `gate run`'s options.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub config: PathBuf,
    pub out: PathBuf,
    pub only: Vec<String>,
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

fn cmd_run(repo: &Git, s: &RunSettings, output: &RunOutput) -> Result<Exit> {
    let report = run_gate(repo, s)?;
    if let Some(path) = &output.junit {
        write_junit(path, &report)?;
    }
    match output.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Markdown => print!("{}", report.render_markdown()),
        Format::Text => print!(
            "{}",
            report.render_painted(Painter::new(output.color.for_stdout()))
        ),
    }
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::from_held(report.passed())
    })
}

/// The whole `gate run`: apply, run the suites, write the report. Returns the report.
pub fn run_gate(repo: &Git, s: &RunSettings) -> Result<GateReport> {
    let config = Config::load(&s.config)?;
    let candidate = Candidate {
        base: config.base.clone(),
        patch: config.patch.clone(),
        manifest: config.manifest.clone(),
        head: config.head.clone(),
    };
    worktree::clean_stale();
    let prepared = apply::prepare(repo, &candidate)?;
    let previous = if s.only.is_empty() {
        None
    } else {
        load_previous(&s.out)?
    };
    let started = Timestamp::now();
    let mut applied = apply::apply(repo, prepared, &Place::Run)?;
    applied.worktree.keep(s.keep);
    let mut planned = suite::expand(&config.suites, applied.worktree.path())?;
    if !s.only.is_empty() {
        for name in &s.only {
            if !planned.iter().any(|p| &p.name == name) {
                let names: Vec<&str> = planned.iter().map(|p| p.name.as_str()).collect();
                bail!(
                    "{}: no suite named {name:?} (suites: {})",
                    config.file.display(),
                    names.join(", ")
                );
            }
        }
        planned.retain(|p| s.only.contains(&p.name));
    }
    let logs = s.out.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;

    let mut results: Vec<SuiteResult> = Vec::new();
    let mut interrupted = false;
    let total = planned.len();
    let mut progress = report::progress::Progress::new(total, s.json);
    for (i, p) in planned.iter().enumerate() {
        if report::interrupt::requested() {
            interrupted = true;
            break;
        }
        let prefix = if previous.is_some() { "rerun-" } else { "" };
        let log = logs.join(format!("{prefix}{}", suite::log_name(i, &p.name).display()));
        let result = progress.during(&format!("suite {} running", p.name), || {
            suite::run_suite(p, applied.worktree.path(), &config.env, &log, s.echo)
        })?;
        progress.finished(&format!(
            "[{}/{total}] {:<24} {:<12} {:>8}  {}",
            i + 1,
            p.name,
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

    let report = match previous {
        Some(mut report) => {
            // The manifest as it stands now, after these suites ran in the worktree.
            let now = applied.recheck()?;
            report.reruns.push(Rerun {
                at: started,
                manifest: now.summary().to_string(),
                tree: applied.tree.clone(),
                suites: results,
            });
            report.finished = Timestamp::now();
            report.interrupted = interrupted;
            report.judge();
            report
        }
        None => GateReport::new(
            started,
            CandidateFacts::from_applied(&applied),
            results,
            interrupted,
        ),
    };
    report::json::write_atomic(&s.out.join(REPORT_FILE), &report)
        .with_context(|| format!("writing {}", s.out.join(REPORT_FILE).display()))?;
    report::json::write_text_atomic(&s.out.join(SUMMARY_FILE), &report.render())
        .with_context(|| format!("writing {}", s.out.join(SUMMARY_FILE).display()))?;
    drop(applied);
    Ok(report)
}

/// Writes `report` as JUnit XML to `path` (atomically; its folder is made if missing).
pub fn write_junit(path: &Path, report: &GateReport) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    report::json::write_text_atomic(path, &summary::junit(report).render())
        .with_context(|| format!("writing {}", path.display()))
}

fn load_previous(out: &Path) -> Result<Option<GateReport>> {
    let path = out.join(REPORT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let report: GateReport = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{}: not a gate report this version can append to",
                    path.display()
                )
            })?;
            Ok(Some(report))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn cmd_check(manifest: &Path, dir: &Path, json: bool) -> Result<Exit> {
    let parsed = apply::read_manifest(manifest)?;
    let verification =
        manifests::verify(dir, &parsed).with_context(|| format!("{}", manifest.display()))?;
    if json {
        let value = serde_json::json!({
            "version": summary::REPORT_VERSION,
            "tool": "gate",
            "command": "check",
            "at": Timestamp::now(),
            "manifest": manifest.display().to_string(),
            "result": verification,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{verification}");
    }
    Ok(Exit::from_held(verification.all_ok()))
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
    if json {
        let value = serde_json::json!({
            "version": summary::REPORT_VERSION,
            "tool": "gate",
            "command": "cites",
            "head_rev": head,
            "result": found,
            "cited": found.is_cited(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let list = |ts: &[cites::Token]| {
            ts.iter()
                .map(|t| match t.matched {
                    Some(cites::Match::Commit) => format!("{} (line {}, commit)", t.text, t.line),
                    Some(cites::Match::Tree) => format!("{} (line {}, tree)", t.text, t.line),
                    None => format!("{} (line {})", t.text, t.line),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!("head    {head_sha}  ({head})");
        println!("tree    {tree}");
        if found.is_cited() {
            println!("cited   yes: {}", list(&found.cited));
        } else {
            println!("cited   NO");
        }
        if found.others.is_empty() {
            if found.cited.is_empty() {
                println!("others  none: the text holds no hex token of 7+ characters at all");
            } else {
                println!("others  none");
            }
        } else {
            println!("others  {}", list(&found.others));
        }
    }
    Ok(Exit::from_held(found.is_cited()))
}

/// `1 path`, `3 paths`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
