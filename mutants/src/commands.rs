//! Each `mutants` subcommand: raw arguments validated into settings, the engine run, its rows
//! handed to the outputs, an [`Exit`] back.
//!
//! Errors (a bad spec, an unknown `--only` name, a DIR that is not a repository) print one line
//! and exit 2 before anything is written; a red or hung baseline, or a candidate whose manifest
//! does not hold, exits 4; findings (a survivor, a killed control, a skipped or error row) are
//! outcomes and exit 1; an interrupt cleans up, writes the partial report and exits 130.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use candidate::config::Config;
use candidate::git::Git;
use report::progress::{step_status, Progress};
use report::{ColorChoice, Exit, Format, Painter, Timestamp};

use crate::anchor::count_anchor;
use crate::checkout::{self, Checkout, DirState, Source};
use crate::cli::{Cli, Command, RunArgs};
use crate::merge;
use crate::output::{self, Sources};
use crate::record::{CandidateFacts, RunReport, Tally};
use crate::run::{self, Event, Plan};
use crate::spec::{Mutant, Spec};
use report::text::short_id as short;

/// Runs the parsed command line and returns the exit code, printing any error.
pub fn run(cli: Cli) -> Exit {
    report::exit::run_tool("mutants", || dispatch(cli))
}

fn dispatch(cli: Cli) -> Result<Exit> {
    let color = cli.color;
    match cli.command {
        Command::Check { spec, dir, json } => cmd_check(&spec, dir, json),
        Command::List { spec, dir, json } => cmd_list(&spec, dir, json),
        Command::Run(args) => cmd_run(args, color),
        Command::Merge {
            dirs,
            out,
            json,
            format,
        } => merge::cmd_merge(&dirs, &out, format.with_json_flag(json), color),
        Command::Completions { shell } => {
            // Rendered whole first: clap_complete panics on a write error, and a closed
            // stdout (`| head -1`) must end quietly.
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let name = cmd.get_name().to_string();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, name, &mut script);
            crate::stdout::write_bytes(&script)?;
            Ok(Exit::Ok)
        }
        Command::Man { out } => {
            crate::stdout::quiet(report::manual::write_man_pages(
                <Cli as clap::CommandFactory>::command(),
                out.as_deref(),
            ))?;
            Ok(Exit::Ok)
        }
    }
}

/// Prints a finished report on stdout in the chosen format: `mutants.json` as written, the
/// Markdown summary, or the text table (its verdicts painted when `color` says so).
pub fn print_report(
    report: &RunReport,
    out: &Path,
    format: Format,
    color: ColorChoice,
) -> Result<()> {
    let text = match format {
        Format::Json => fs::read_to_string(out.join("mutants.json"))?,
        Format::Markdown => output::render_markdown(report),
        Format::Text => output::render_painted(report, Painter::new(color.for_stdout())),
    };
    crate::stdout::print(&text)?;
    Ok(())
}

fn open_repo(dir: Option<PathBuf>) -> Result<Git> {
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir().context("current directory")?,
    };
    Ok(Git::open(&dir)?)
}

/// `mutants check`: every anchor counted in DIR's files as they are (uncommitted edits
/// included, as a run would see them). A file is found under the rule `run` uses
/// ([`crate::swap::file_in`]): one that leads out of the tree through a link, or is not a regular
/// file, is a spec error (exit 2), never read.
fn cmd_check(spec_path: &Path, dir: Option<PathBuf>, json: bool) -> Result<Exit> {
    let spec = Spec::load(spec_path)?;
    let repo = open_repo(dir)?;
    let mut table = report::Table::new(["Mutant", "File", "Matches"]);
    let mut rows = Vec::new();
    let mut bad = 0;
    let mut complaints = Vec::new();
    for m in &spec.mutants {
        let count = match spec_file(&spec, m, repo.dir())? {
            Some(path) => {
                let bytes = crate::swap::read_regular(&path)
                    .with_context(|| format!("reading {}", report::escape::path(&path)))?
                    .bytes;
                Some(count_anchor(&bytes, m.anchor.as_bytes()))
            }
            None => None,
        };
        let shown = count.map_or_else(|| "file missing".to_string(), |n| n.to_string());
        if count != Some(1) {
            bad += 1;
            let file = report::escape::text(&m.file);
            let what = match count {
                Some(n) => format!("occurs {n} times in {file}"),
                None => format!("cannot be looked for: {file} is missing"),
            };
            complaints.push(format!(
                "{}:{}: anchor of {:?} {what} (it must occur exactly once)",
                report::escape::path(&spec.file),
                m.line,
                m.name
            ));
        }
        table.row([m.name.clone(), m.file.clone(), shown]);
        rows.push(serde_json::json!({
            "name": m.name, "file": m.file, "line": m.line, "matches": count,
        }));
    }
    for c in complaints {
        report::errln!("{c}");
    }
    if json {
        let mut text = serde_json::to_string_pretty(&serde_json::json!({
            "spec": spec.file.display().to_string(), "mutants": rows, "bad": bad,
        }))?;
        text.push('\n');
        crate::stdout::print(&text)?;
    } else {
        let mut text = table.render_text();
        text.push_str(&format!(
            "{} anchors, {}\n",
            spec.mutants.len(),
            if bad == 0 {
                "each found exactly once".to_string()
            } else {
                format!("{bad} not found exactly once")
            }
        ));
        crate::stdout::print(&text)?;
    }
    Ok(Exit::from_held(bad == 0))
}

/// `mutants list`: each mutant with the lines its anchor spans in DIR's file (`12` or `12-14`),
/// or why it has none; its files found under the same rule as `check` and `run`. Exits 0: a
/// listing is not a check (bad input still exits 2).
fn cmd_list(spec_path: &Path, dir: Option<PathBuf>, json: bool) -> Result<Exit> {
    let spec = Spec::load(spec_path)?;
    let repo = open_repo(dir)?;
    let mut table = report::Table::new(["Mutant", "File", "Lines", "Suite"]);
    let mut rows = Vec::new();
    for m in &spec.mutants {
        let found = match spec_file(&spec, m, repo.dir())? {
            Some(path) => {
                let bytes = crate::swap::read_regular(&path)
                    .with_context(|| format!("reading {}", report::escape::path(&path)))?
                    .bytes;
                Some(crate::anchor::find_anchor(&bytes, m.anchor.as_bytes()))
            }
            None => None,
        };
        let (lines, span) = match &found {
            None => ("file missing".to_string(), None),
            Some(crate::anchor::Found::Once(s)) if s.start_line == s.end_line => {
                (s.start_line.to_string(), Some(s))
            }
            Some(crate::anchor::Found::Once(s)) => {
                (format!("{}-{}", s.start_line, s.end_line), Some(s))
            }
            Some(crate::anchor::Found::Not(n)) => (format!("{n} matches"), None),
        };
        table.row([m.name.clone(), m.file.clone(), lines, m.suite.clone()]);
        rows.push(serde_json::json!({
            "name": m.name, "file": m.file, "line": m.line, "suite": m.suite,
            "control": m.is_control(),
            "start_line": span.map(|s| s.start_line), "end_line": span.map(|s| s.end_line),
        }));
    }
    let text = if json {
        let mut t = serde_json::to_string_pretty(&serde_json::json!({
            "spec": spec.file.display().to_string(), "mutants": rows,
        }))?;
        t.push('\n');
        t
    } else {
        table.render_text()
    };
    crate::stdout::print(&text)?;
    Ok(Exit::Ok)
}

/// The mutant's file in `root` under the one path rule, `None` when nothing is there at all;
/// anything else the rule refuses (a link out of the tree, a folder) is a spec error at the
/// mutant's line.
fn spec_file(spec: &Spec, m: &Mutant, root: &Path) -> Result<Option<PathBuf>> {
    if fs::symlink_metadata(root.join(&m.file))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return Ok(None);
    }
    crate::swap::file_in(root, &m.file)
        .map(Some)
        .map_err(|e| spec.error_at(m.line, format!("{e:#}")).into())
}

/// The mutants `--only`, `--from` and `--shard` leave, in spec order.
fn select<'a>(spec: &'a Spec, args: &RunArgs) -> Result<Vec<&'a Mutant>> {
    for name in args.only.iter().chain(args.from.iter()) {
        if !spec.mutants.iter().any(|m| &m.name == name) {
            bail!("{}: no mutant is named {name:?}", spec.file.display());
        }
    }
    let start = match &args.from {
        Some(name) => spec
            .mutants
            .iter()
            .position(|m| &m.name == name)
            .unwrap_or(0),
        None => 0,
    };
    let picked: Vec<&Mutant> = spec.mutants[start..]
        .iter()
        .filter(|m| args.only.is_empty() || args.only.contains(&m.name))
        .collect();
    Ok(match args.shard {
        Some(shard) => shard.select(picked),
        None => picked,
    })
}

/// An absolute form of `path` that matches what git prints for the same folder, even before
/// the folder exists (its parent is canonicalized when the folder cannot be).
fn absolute(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (
        abs.parent().and_then(|p| p.canonicalize().ok()),
        abs.file_name(),
    ) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => abs,
    }
}

/// The report files and logs a previous run left in `out`: replaced, not mixed with ours.
/// The report an `--only`/`--from` run updates: `OUT/mutants.json` read strictly, or `None`
/// when there is none yet (then the run starts one).
fn previous_report(out: &Path) -> Result<Option<RunReport>> {
    let path = out.join("mutants.json");
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("{}: {e}", report::escape::path(&path)),
    };
    crate::merge::parse_shard(&bytes).map(Some).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot update this report in place: {e} (use another --out)",
            report::escape::path(&path)
        )
    })
}

/// Refuses to update a report of another spec, commit, tree or candidate: one report judges
/// one tree, so rows of two cannot stand in one table.
fn same_run(
    prev: &RunReport,
    spec_sha256: &str,
    commit: &str,
    tree: &str,
    candidate: Option<&CandidateFacts>,
    out: &Path,
) -> Result<()> {
    let cand =
        |c: Option<&CandidateFacts>| c.map(|c| (c.patch_sha256.clone(), c.manifest_sha256.clone()));
    let differs = if prev.spec_sha256 != spec_sha256 {
        Some(format!(
            "the spec changed (sha256 {} in the report, {} now)",
            short(&prev.spec_sha256),
            short(spec_sha256)
        ))
    } else if prev.tree != tree {
        Some(format!(
            "the tree changed ({} in the report, {} now)",
            short(&prev.tree),
            short(tree)
        ))
    } else if prev.commit != commit {
        Some(format!(
            "the commit changed ({} in the report, {} now)",
            short(&prev.commit),
            short(commit)
        ))
    } else if cand(prev.candidate.as_ref()) != cand(candidate) {
        Some("the candidate changed (its patch or manifest)".to_string())
    } else {
        None
    };
    match differs {
        Some(why) => bail!(
            "{}: --only/--from update a report in place only for the same spec and tree: {why}; run all mutants, or use another --out",
            report::escape::path(&out.join("mutants.json"))
        ),
        None => Ok(()),
    }
}

fn clear_previous(out: &Path) -> Result<()> {
    for name in [
        "mutants.json",
        "mutants.txt",
        "mutation-report.json",
        "mutants.html",
        "junit.xml",
    ] {
        let _ = fs::remove_file(out.join(name));
    }
    let logs = out.join("logs");
    // A link (or a file) where the logs folder goes is removed, never followed: clearing and
    // writing logs through it would delete and write files wherever it points.
    if fs::symlink_metadata(&logs).is_ok_and(|m| !m.file_type().is_dir()) {
        fs::remove_file(&logs)
            .with_context(|| format!("removing {}", report::escape::path(&logs)))?;
    }
    if let Ok(entries) = fs::read_dir(&logs) {
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "log") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))
}

fn cmd_run(args: RunArgs, color: ColorChoice) -> Result<Exit> {
    // It polls the interrupt flag and cleans up (children killed, nothing half-written).
    report::interrupt::cleans_up();
    let mut spec = Spec::load(&args.spec)?;
    let mut setup_env = BTreeMap::new();
    // gate.toml is read once, here; the candidate's checkouts are built from this reading.
    let config = args.candidate.as_deref().map(Config::load).transpose()?;
    // With a candidate, gate.toml's `[env]` reaches every suite as it reaches gate's (a suite's
    // own `env` wins), so the mutants run under the environment the candidate was gated in.
    if let Some(config) = &config {
        for suite in spec.suites.values_mut() {
            for (k, v) in &config.env {
                suite.env.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        setup_env = config.env.clone();
    }
    let spec = spec;
    let selected = select(&spec, &args)?;
    let repo = open_repo(args.dir.clone())?;
    candidate::setup::require_ignored(&spec.worktree, &repo, &spec.file)
        .map_err(anyhow::Error::msg)?;
    // A run killed with SIGKILL could not remove its worktrees; the next run does.
    candidate::worktree::clean_stale();
    let out = absolute(&args.out);
    let mut candidate_files = None;
    let (source, commit, carried, config_path) = match (&args.candidate, config) {
        (Some(path), Some(config)) => {
            let base = repo.commit_id(&config.base).context("candidate base")?;
            candidate_files = Some((sha256_of(&config.patch)?, sha256_of(&config.manifest)?));
            let source = Source::Candidate {
                repo: repo.clone(),
                config,
            };
            (source, base, None, Some(path.display().to_string()))
        }
        _ => {
            let state = DirState::read(repo.clone(), Some(&out))?;
            let commit = state.commit.clone();
            let carried = state.describe();
            (Source::Dir(state), commit, Some(carried), None)
        }
    };
    let copies = usize::from(args.jobs).min(selected.len()).max(1);
    let mut checkouts = checkout::make(&source, copies)?;

    let candidate = match (&config_path, checkouts.first()) {
        (Some(config), Some(Checkout::Candidate(applied))) => {
            let before = applied.verification.summary().to_string();
            report::errln!("mutants: candidate manifest before the first mutant: {before}");
            for co in &checkouts {
                if let Checkout::Candidate(a) = co {
                    if !a.verification.all_ok() {
                        report::errln!(
                            "mutants: the candidate does not hold: manifest {}",
                            a.verification.summary()
                        );
                        return Ok(Exit::Precondition);
                    }
                }
            }
            let (patch_sha256, manifest_sha256) = candidate_files.clone().unwrap_or_default();
            Some(CandidateFacts {
                config: config.clone(),
                base: applied.prepared.base.clone(),
                tree: applied.tree.clone(),
                patch_sha256,
                manifest_sha256,
                manifest_before: before,
                manifest_after: None,
            })
        }
        _ => None,
    };

    // Every mutated file must be in the tree: a spec error, reported at the mutant's line.
    let mut sources = Sources::new();
    for m in &selected {
        let path = crate::swap::file_in(checkouts[0].path(), &m.file)
            .map_err(|e| spec.error_at(m.line, format!("{e:#}")))?;
        let bytes = crate::swap::read_regular(&path)
            .with_context(|| format!("reading {}", report::escape::path(&path)))?
            .bytes;
        sources
            .entry(m.file.clone())
            .or_insert_with(|| String::from_utf8_lossy(&bytes).into_owned());
    }

    let tree = match &candidate {
        Some(c) => c.tree.clone(),
        None => tree_of(checkouts[0].path())?,
    };
    // One run per --out, held to the end: taken once the input is known good (a bad spec
    // leaves no --out behind) and before anything is written there.
    let _lock = report::lock::OutLock::acquire(&out)?;
    // `--only`/`--from` update an existing report of the same spec and tree in place (every
    // other row kept); anything else starts afresh.
    let previous = if args.only.is_empty() && args.from.is_none() {
        None
    } else {
        previous_report(&out)?
    };
    if let Some(prev) = &previous {
        same_run(prev, &spec.sha256, &commit, &tree, candidate.as_ref(), &out)?;
    } else {
        clear_previous(&out)?;
    }
    let mut report = RunReport {
        version: crate::record::REPORT_VERSION,
        tool: "mutants".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        spec: spec.file.display().to_string(),
        spec_sha256: spec.sha256.clone(),
        dir: repo.dir().display().to_string(),
        commit,
        tree,
        carried,
        candidate,
        start: Timestamp::now(),
        end: Timestamp::now(),
        jobs: checkouts.len(),
        shard: args.shard,
        planned: selected.len(),
        baseline: Vec::new(),
        baseline_failed: false,
        interrupted: false,
        mutants: Vec::new(),
        tally: Tally::default(),
        exit_code: 0,
        setup: None,
    };
    let rerun = previous.is_some();
    if let Some(prev) = previous {
        let again: Vec<&str> = selected.iter().map(|m| m.name.as_str()).collect();
        report.mutants = prev
            .mutants
            .into_iter()
            .filter(|r| !again.contains(&r.name.as_str()))
            .collect();
        report.planned = prev.planned.max(report.mutants.len() + selected.len());
        report.start = prev.start;
        report.settle();
    }
    let kept_rows = report.mutants.len();

    // `[worktree]`: links and the setup in every working copy, side by side, before its baseline.
    let prep = checkout::Prep {
        worktree: spec.worktree.clone(),
        source: repo.dir().to_path_buf(),
        env: setup_env,
        logs: out.join("logs"),
    };
    if !prep.worktree.is_empty() {
        let secs: Vec<Result<Option<f64>>> = std::thread::scope(|s| {
            let handles: Vec<_> = checkouts
                .iter()
                .enumerate()
                .map(|(j, co)| {
                    let prep = &prep;
                    s.spawn(move || {
                        let name = if j == 0 {
                            "setup.log".to_string()
                        } else {
                            format!("setup.copy{j}.log")
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
        report.setup = Some(crate::record::SetupFacts {
            command: prep.worktree.setup.clone().unwrap_or_default(),
            linked: prep.worktree.link.clone(),
            secs,
        });
    }

    let suites = spec.suites_used(selected.iter().copied());
    report::errln!(
        "mutants: baseline: {} suite(s) in {} worktree(s)",
        suites.len(),
        checkouts.len()
    );
    let mut baseline_progress = Progress::new(1, false);
    let baseline = baseline_progress.during(
        &format!("baseline: {} running unmutated", suite_names(&suites)),
        || run::baseline(&suites, &checkouts, args.timeout, &out),
    )?;
    baseline_progress.clear();
    report.baseline = baseline.baselines.clone();
    if baseline.interrupted || report::interrupt::requested() {
        return finish(
            report,
            &sources,
            &out,
            checkouts,
            &args,
            color,
            Exit::Interrupted,
        );
    }
    if !baseline.passed {
        report.baseline_failed = true;
        for b in report.baseline.iter().filter(|b| !b.passed) {
            report::errln!(
                "mutants: baseline failed: suite {:?} {} without any mutant (log {}); no mutant judged",
                b.suite,
                report::escape::text(&b.status),
                report::escape::path(&out.join(&b.log))
            );
            // The log's last lines, so the cause (`Cannot find package ...`) is on screen.
            let tail = report::runner::read_tail(&out.join(&b.log), 4096).unwrap_or_default();
            let lines: Vec<&str> = tail.lines().collect();
            for line in &lines[lines.len().saturating_sub(12)..] {
                report::errln!("  | {}", report::escape::terminal_line(line));
            }
        }
        return finish(
            report,
            &sources,
            &out,
            checkouts,
            &args,
            color,
            Exit::Precondition,
        );
    }
    report.end = Timestamp::now();
    output::write_all(&report, &sources, &out)?;

    let plan = Plan {
        spec: &spec,
        source: &source,
        prep: &prep,
        mutants: selected,
        baseline: &baseline,
        out: out.clone(),
    };
    let mut progress = Progress::new(plan.mutants.len(), false);
    let paint = Painter::new(color.for_stderr());
    let mut running: BTreeMap<usize, (String, Instant)> = BTreeMap::new();
    let mut write_error = None;
    let result = run::run_mutants(&plan, &mut checkouts, |event| {
        match event {
            Event::Started { index, name } => {
                running.insert(index, (name, Instant::now()));
            }
            Event::Finished(row) => {
                running.remove(&row.index);
                let done = report.mutants.len() + 1 - kept_rows;
                let line = progress_line(&row, done, plan.mutants.len(), paint);
                let mut row = *row;
                if rerun {
                    row.rerun = Some(row.run.as_ref().map_or_else(Timestamp::now, |r| r.start));
                }
                report.mutants.push(row);
                report.settle();
                report.end = Timestamp::now();
                if let Err(e) = output::write_all(&report, &sources, &out) {
                    write_error.get_or_insert(e);
                }
                progress.finished(&line);
            }
            Event::Tick => {}
        }
        progress.status(&live_status(&report.tally, &running));
    });
    progress.clear();
    if let Err(e) = result {
        report.interrupted = report::interrupt::requested();
        let _ = finish(
            report,
            &sources,
            &out,
            checkouts,
            &args,
            color,
            Exit::Findings,
        );
        return Err(e);
    }
    if let Some(e) = write_error {
        return Err(e);
    }

    // The proof that every mutant was restored: the manifest holds again in every copy.
    if report.candidate.is_some() && !report::interrupt::requested() {
        let mut after = None;
        for co in &checkouts {
            if let Some(v) = co.recheck()? {
                let s = v.summary();
                if after.is_none() || !v.all_ok() {
                    after = Some(s.to_string());
                }
            }
        }
        if let (Some(c), Some(a)) = (report.candidate.as_mut(), after) {
            report::errln!("mutants: candidate manifest after the last mutant: {a}");
            c.manifest_after = Some(a);
        }
    }
    let exit = if report::interrupt::requested() {
        Exit::Interrupted
    } else {
        Exit::from_held(report.held())
    };
    finish(report, &sources, &out, checkouts, &args, color, exit)
}

/// A file's sha256, hex.
fn sha256_of(path: &Path) -> Result<String> {
    let file = fs::File::open(path).with_context(|| report::escape::path(path))?;
    Ok(manifests::hash_reader(file)
        .with_context(|| report::escape::path(path))?
        .to_hex())
}

/// The git tree id of a working copy's content as a run sees it: HEAD with every change and
/// every file git does not ignore, hashed through a throwaway index so the copy's own index
/// stays as it is.
fn tree_of(dir: &Path) -> Result<String> {
    let scratch = tempfile::tempdir().context("creating a scratch index folder")?;
    let index = scratch.path().join("index");
    let git = |args: &[&str]| -> Result<String> {
        let out = Git::at(dir)
            .command(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .context("running git")?;
        if !out.status.success() {
            bail!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // The copy's own index, copied, carries the stat cache: `add -A` then hashes only what
    // changed. Without one, the tree starts from HEAD.
    let own = Git::at(dir)
        .text(["rev-parse", "--git-path", "index"])
        .ok()
        .map(|p| dir.join(p.trim()));
    if !own.is_some_and(|p| fs::copy(p, &index).is_ok()) {
        git(&["read-tree", "HEAD"])?;
    }
    git(&["add", "-A"])?;
    git(&["write-tree"]).context("hashing the working copy's tree")
}

/// The suites' names, for the baseline's progress line.
fn suite_names(suites: &[&crate::spec::Suite]) -> String {
    let names: Vec<String> = suites
        .iter()
        .map(|s| report::escape::text(&s.name).into_owned())
        .collect();
    names.join(", ")
}

/// The live line's status: the tally so far and the mutant running longest, with its seconds
/// (`2 killed, 0 survived; running after inclusive (12s) +1 more`).
fn live_status(tally: &Tally, running: &BTreeMap<usize, (String, Instant)>) -> String {
    let mut s = format!(
        "{} killed, {} survived",
        tally.killed + tally.killed_hang,
        tally.survived
    );
    if let Some((name, since)) = running.values().min_by_key(|(_, since)| *since) {
        s.push_str("; running ");
        s.push_str(&step_status(&report::escape::text(name), since.elapsed()));
        if running.len() > 1 {
            s.push_str(&format!(" +{} more", running.len() - 1));
        }
    }
    s
}

/// `[3/12] killed          after inclusive (0.31s, 12 pass -> 1 failed)`
fn progress_line(row: &crate::record::Row, done: usize, total: usize, paint: Painter) -> String {
    let detail = match &row.run {
        Some(run) => {
            let counts = run.counts_text();
            format!(
                " ({}{}{})",
                crate::output::time_text(run.duration_secs, run.build_secs),
                if counts.is_empty() {
                    String::new()
                } else {
                    format!(", {counts}")
                },
                if run.strays_killed > 0 {
                    format!(", {} strays killed", run.strays_killed)
                } else {
                    String::new()
                }
            )
        }
        None => String::new(),
    };
    let word = row.verdict.to_string();
    // Padded before painting: escape sequences would count as width.
    let pad = " ".repeat(16usize.saturating_sub(word.chars().count()));
    format!(
        "[{done}/{total}] {}{pad} {}{detail}",
        paint.verdict(&word),
        report::escape::text(&row.name)
    )
}

/// Removes (or keeps) the worktrees, writes the final report and prints it.
fn finish(
    mut report: RunReport,
    sources: &Sources,
    out: &Path,
    mut checkouts: Vec<Checkout>,
    args: &RunArgs,
    color: ColorChoice,
    exit: Exit,
) -> Result<Exit> {
    if args.keep {
        for co in &mut checkouts {
            co.keep(true);
            report::errln!("mutants: kept worktree {}", report::escape::path(co.path()));
        }
    }
    // Worktrees go first, so an interrupted run has cleaned up before it reports.
    drop(checkouts);
    report.interrupted |= exit == Exit::Interrupted;
    report.settle();
    report.end = Timestamp::now();
    report.exit_code = exit.code();
    output::write_all(&report, sources, out)?;
    print_report(&report, out, args.stdout_format(), color)?;
    report::errln!("mutants: report in {}", report::escape::path(out));
    if exit == Exit::Interrupted {
        report::errln!(
            "mutants: interrupted after {} of {} mutants; worktrees removed",
            report.mutants.len(),
            report.planned
        );
    }
    Ok(exit)
}
