//! The first phase of a session: everything before the first suite runs.
//!
//! The order matters: every check that can refuse the input (the spec, gate.toml, the `--only`
//! names, the repository, a link git can see, a file outside the tree) runs before the lock on
//! `--out` is taken, so bad input leaves nothing behind; the previous report is read (or
//! cleared) only once the lock is held.

use std::path::Path;

use anyhow::{Context, Result};

use candidate::config::Config;
use candidate::git::Git;
use cmdline::Exit;
use report::Timestamp;

use super::incremental;
use super::note::Note;
use super::{identity, previous, Out, Session, Settings};
use crate::checkout::{self, Checkout, DirState, Prep, Source};
use crate::record::{CandidateFacts, ManifestCheck, RunReport, Tally, Unjudged};
use crate::render::Sources;
use crate::spec::Spec;

impl Session {
    /// The spec and gate.toml read, the mutants selected, the checkouts made, a
    /// candidate's manifest checked (`Err(exit)` when it does not hold: nothing is written),
    /// the lock on `--out` taken, and the report started or reopened.
    pub(crate) fn prepare(
        mut settings: Settings,
        inherited: Option<jobserver::Client>,
        reporter: &mut Out,
    ) -> Result<Result<Session, Exit>> {
        let (spec, config, worktree_file) = read_input(&settings, reporter)?;
        let selected = settings.selection.select(&spec)?;
        let repo = checkout::open_repo(settings.dir.clone())?;
        candidate::setup::require_ignored(&spec.worktree, &repo, &worktree_file)
            .map_err(anyhow::Error::msg)?;
        let outputs = candidate::cache::paths_for(&spec.worktree, &repo);
        let store = (!settings.no_cache && !outputs.is_empty())
            .then(|| candidate::cache::Store::for_repo(repo.dir()));
        // A run killed with SIGKILL could not remove its checkouts; the next run does.
        candidate::checkout::clean_stale();
        let out = identity::absolute(&settings.out);
        // Every path this run reads and writes, refused now (exit 2) if one would land on
        // another, on an input, in `.git` or through a link: see `files::outputs`.
        let mut plan = files::outputs::Plan::new();
        match &settings.suggested {
            // Written by this run into --out, so the report can be made again from it.
            Some(_) => {
                plan.file_in(&out, crate::suggest::SPEC_FILE);
            }
            None => {
                plan.input("spec", &spec.file);
            }
        }
        if let Some(config) = &config {
            config.plan_inputs(&mut plan);
        }
        repo.forbid_outputs_in(&mut plan)?;
        crate::render::plan_outputs(&mut plan, &out);
        crate::render::plan_sarif(&mut plan, settings.sarif.as_deref());
        super::attest::plan(settings.attest.as_ref(), &mut plan)?;
        plan.check()?;
        let head = super::attest::candidate_head(settings.attest.as_ref(), &repo, config.as_ref())?;
        let setup_env = config.as_ref().map(|c| c.env.clone()).unwrap_or_default();
        let origin = Origin::of(&repo, config, &out)?;
        let copies = settings.jobs.min(selected.len()).max(1);
        let checkouts = checkout::make(&origin.source, copies)?;
        if let Some(a) = settings.attest.as_mut() {
            let commit = head.as_deref().unwrap_or(&origin.commit);
            let patch = origin.files.as_ref().map(|(patch, _)| patch.as_str());
            a.subjects = Some(super::attest::subjects(checkouts[0].tree(), commit, patch));
        }
        let cores = shared_cores(&settings, copies, inherited, reporter);
        let candidate = match candidate_facts(
            settings.candidate.as_deref(),
            &checkouts,
            origin.files,
            reporter,
        ) {
            Ok(facts) => facts,
            Err(refused) => return Ok(Err(refused)),
        };
        let sources = read_sources(&spec, &selected, checkouts[0].path())?;
        let tree = checkouts[0].tree().to_string();
        let code_tree = previous::code_tree(&checkouts[0], repo.dir(), &spec.file)?;
        let (facts, toolchains) = incremental::tree_facts(&spec, &checkouts[0])?;

        // One run per --out, held to the end: taken once the input is known good (a bad spec
        // leaves no --out behind) and before anything is written there.
        let _lock = files::lock::OutLock::acquire(&out)?;
        files::outputs::own(&out)
            .with_context(|| format!("{}: cannot take the output folder", out.display()))?;
        // `--incremental`: the rows of the report here that still hold are kept, and only the
        // rest of the selection is judged (read under the lock: no other run is writing it).
        let planned = selected.len();
        let (selected, reused) = if settings.selection.incremental {
            match incremental::prior(&out) {
                Ok(prior) => {
                    let kept = super::cover::KeptMaps::since(
                        &prior,
                        &spec,
                        (&checkouts[0], repo.dir()),
                        &sources,
                        settings.no_cache,
                    );
                    let now = kept.now(&code_tree, candidate.as_ref(), &facts, &toolchains);
                    let found = incremental::staleness(&prior, &spec, &selected, &now);
                    let keep: Vec<usize> = found
                        .iter()
                        .filter(|(_, why)| why.is_none())
                        .map(|(i, _)| *i)
                        .collect();
                    reporter.emit(&Note::Reused {
                        kept: keep.len(),
                        planned,
                    });
                    let stale: Vec<(&str, &incremental::Stale)> = found
                        .iter()
                        .filter_map(|(i, why)| {
                            Some((spec.mutants[*i].name.as_str(), why.as_ref()?))
                        })
                        .collect();
                    if !stale.is_empty() {
                        reporter.emit(&Note::Rejudged(&stale));
                    }
                    let rest = selected
                        .iter()
                        .copied()
                        .filter(|i| !keep.contains(i))
                        .collect();
                    (rest, Some((prior, keep)))
                }
                Err(why) => {
                    reporter.emit(&Note::NothingToReuse(&why));
                    (selected, None)
                }
            }
        } else {
            (selected, None)
        };
        let mut report = RunReport {
            version: crate::record::REPORT_VERSION,
            tool: "mutants".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            spec: spec.file.display().to_string(),
            spec_sha256: spec.sha256.clone(),
            dir: repo.dir().display().to_string(),
            commit: origin.commit,
            tree,
            code_tree,
            inputs: facts.inputs,
            file_blobs: facts.file_blobs,
            lockfiles: facts.lockfiles,
            toolchains,
            carried: origin.carried,
            candidate,
            start: Timestamp::now(),
            end: Timestamp::now(),
            jobs: checkouts.len(),
            shard: settings.selection.shard,
            planned,
            baseline: Vec::new(),
            baseline_failed: false,
            precondition: None,
            canaries: Vec::new(),
            canaries_skipped: settings.no_canary,
            canaries_left_out: Vec::new(),
            linked_changed: Vec::new(),
            reused: Vec::new(),
            interrupted: false,
            // Incomplete, with the code of a run cut short, until `finish` says otherwise: a
            // run killed at any point leaves a report that says so.
            complete: false,
            unjudged: selected
                .iter()
                .map(|&i| Unjudged {
                    index: spec.mutants[i].index,
                    name: spec.mutants[i].name.clone(),
                    file: spec.mutants[i].file.clone(),
                })
                .collect(),
            mutants: Vec::new(),
            tally: Tally::default(),
            exit_code: Exit::Interrupted.code(),
            setup: None,
        };
        // `--only`/`--from` update an existing report of the same spec and tree in place
        // (every other row kept); anything else starts afresh.
        let previous = if settings.selection.updates_in_place() {
            previous::read(&out)?
        } else {
            None
        };
        let rerun = previous.is_some();
        let reused = match reused {
            // Rows kept, and the rest judged into the same folder: the kept rows' logs stay.
            Some((prior, keep)) if !keep.is_empty() => {
                report.mutants = incremental::kept_rows(prior, &spec, &keep);
                report.settle();
                true
            }
            _ => false,
        };
        // The last run's times, read back typed, set the order mutants are taken in; a report
        // that cannot be read (another version) only leaves the spec's order.
        let times = match &previous {
            Some(prev) => previous::times(prev),
            None => previous::read(&out)
                .ok()
                .flatten()
                .map(|p| previous::times(&p))
                .unwrap_or_default(),
        };
        let order = previous::longest_first(&selected, &spec, &times);
        match previous {
            Some(prev) => {
                previous::same_run(
                    &prev,
                    &previous::Judged {
                        spec: &spec,
                        selected: &selected,
                        code_tree: &report.code_tree,
                        commit: &report.commit,
                        tree: &report.tree,
                        candidate: report.candidate.as_ref(),
                    },
                    &out,
                )?;
                let again: Vec<&str> = selected
                    .iter()
                    .map(|&i| spec.mutants[i].name.as_str())
                    .collect();
                report.mutants = prev
                    .mutants
                    .into_iter()
                    .filter(|r| !again.contains(&r.name.as_str()))
                    .collect();
                report.planned = prev.planned.max(report.mutants.len() + selected.len());
                // A mutant the updated report never judged stays unjudged unless this run
                // judges it: an `--only` rerun cannot make a cut-short report look whole.
                report.unjudged.extend(prev.unjudged);
                report.start = prev.start;
                report.settle();
            }
            None if reused => {}
            None => previous::clear(&out)?,
        }
        if let Some(suggested) = &settings.suggested {
            let file = out.join(crate::suggest::SPEC_FILE);
            files::atomic::write_text_atomic(&file, &suggested.text)
                .with_context(|| format!("writing {}", file.display()))?;
        }
        let kept_rows = report.mutants.len();
        let prep = Prep {
            linked: candidate::linked::Fingerprint::take(repo.dir(), &spec.worktree.link),
            worktree: spec.worktree.clone(),
            source: repo.dir().to_path_buf(),
            env: setup_env,
            logs: out.join("logs"),
        };
        Ok(Ok(Session {
            settings,
            spec,
            selected,
            source: origin.source,
            checkouts,
            prep,
            out,
            report,
            sources,
            rerun,
            kept_rows,
            outputs,
            store,
            snapshot: None,
            floors: Default::default(),
            restored: false,
            order,
            cores,
            _lock,
        }))
    }
}

/// The jobserver and build slot for `copies` jobs. A pool that cannot be made (no pipe to be
/// had) leaves each build its own cores, as before there was one.
fn shared_cores(
    settings: &Settings,
    copies: usize,
    inherited: Option<jobserver::Client>,
    out: &mut Out,
) -> crate::run::Cores {
    let available = crate::run::cores::available();
    crate::run::Cores::new(available, copies, settings.jobserver, inherited).unwrap_or_else(|e| {
        out.emit(&Note::NoJobserver(&e));
        crate::run::Cores::default()
    })
}

/// The spec and gate.toml, each read once (the candidate's checkouts are built from this
/// reading), and the file whose `[worktree]` applies. With a candidate, gate.toml's checkout
/// settings reach the run as they reach gate's, so the mutants run in the checkout the
/// candidate was gated in: its `[env]` reaches every suite (a suite's own `env` wins), and its
/// `[worktree]` (setup, links, cache) applies unless the spec has a `[worktree]` of its own,
/// which then wins whole. Which one applies is said on stderr.
pub(super) fn read_input(
    settings: &Settings,
    out: &mut Out,
) -> Result<(Spec, Option<Config>, std::path::PathBuf)> {
    let mut spec = match &settings.suggested {
        Some(suggested) => {
            let mut spec = Spec::parse(&suggested.text, &settings.spec)?;
            for m in &mut spec.mutants {
                m.context = suggested.context.get(&m.name).cloned();
            }
            spec
        }
        None => Spec::load(&settings.spec)?,
    };
    let config = settings
        .candidate
        .as_deref()
        .map(|path| Config::load_with(path, &settings.overrides))
        .transpose()?;
    let mut worktree_file = spec.file.clone();
    if let Some(config) = &config {
        for suite in spec.suites.values_mut() {
            for (k, v) in &config.env {
                suite.env.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        // A table that says anything, a cache alone included.
        let says = |w: &candidate::setup::WorktreeSetup| !w.is_empty() || w.cache.is_some();
        match (!says(&spec.worktree), !says(&config.worktree)) {
            (true, false) => {
                spec.worktree = config.worktree.clone();
                worktree_file = config.file.clone();
                out.emit(&Note::WorktreeFromConfig {
                    theirs: &config.file,
                });
            }
            (false, false) => out.emit(&Note::WorktreeOverConfig {
                ours: &spec.file,
                theirs: &config.file,
            }),
            (false, true) => out.emit(&Note::WorktreeFromSpec { ours: &spec.file }),
            (true, true) => {}
        }
        // The same for `[canary]`: the candidate's generated files are the same files.
        if spec.canary.is_empty() && !config.canary.is_empty() {
            spec.canary = config.canary.clone();
        }
    }
    Ok((spec, config, worktree_file))
}

/// Where the checkouts come from, and what the report says about it.
pub(super) struct Origin {
    pub source: Source,
    /// The commit the checkouts start at: DIR's HEAD, or the candidate's base.
    pub commit: String,
    /// What of DIR's uncommitted state is carried (none for a candidate).
    pub carried: Option<String>,
    /// A candidate's patch and manifest files, hashed.
    pub files: Option<(String, String)>,
}

impl Origin {
    pub(super) fn of(repo: &Git, config: Option<Config>, out: &Path) -> Result<Origin> {
        Ok(match config {
            Some(config) => {
                // Read once: every checkout is applied from these bytes, and the report's sha256s
                // are of the very bytes applied.
                let candidate = candidate::apply::Candidate {
                    base: config.base.clone(),
                    patch: config.patch.clone(),
                    manifest: config.manifest.clone(),
                    head: config.head.clone(),
                };
                let prepared = candidate::apply::prepare(repo, &candidate)?;
                Origin {
                    commit: prepared.base.clone(),
                    carried: None,
                    files: Some((
                        prepared.patch_sha256.clone(),
                        prepared.manifest_sha256.clone(),
                    )),
                    source: Source::Candidate {
                        repo: repo.clone(),
                        prepared: Box::new(prepared),
                    },
                }
            }
            None => {
                let state = DirState::read(repo.clone(), Some(out))?;
                Origin {
                    commit: state.commit.clone(),
                    carried: Some(state.describe()),
                    files: None,
                    source: Source::Dir(state),
                }
            }
        })
    }
}

/// A candidate's facts for the report, its manifest checked in every checkout first: `Err` (exit 4)
/// when any copy does not hold, `Ok(None)` without a candidate.
pub(super) fn candidate_facts(
    config: Option<&Path>,
    checkouts: &[Checkout],
    files: Option<(String, String)>,
    out: &mut Out,
) -> Result<Option<CandidateFacts>, Exit> {
    let (Some(config), Some(applied)) = (config, checkouts.first().and_then(Checkout::applied))
    else {
        return Ok(None);
    };
    let before = ManifestCheck(applied.verification.summary());
    out.emit(&Note::ManifestBefore(&before));
    for co in checkouts {
        if let Some(a) = co.applied() {
            if !a.verification.all_ok() {
                out.emit(&Note::CandidateDoesNotHold(&a.verification.summary()));
                return Err(Exit::Precondition);
            }
        }
    }
    let (patch_sha256, manifest_sha256) = files.unwrap_or_default();
    Ok(Some(CandidateFacts {
        config: config.display().to_string(),
        base: applied.prepared.base.clone(),
        tree: applied.tree.clone(),
        patch_sha256,
        manifest_sha256,
        manifest_before: before,
        manifest_after: None,
    }))
}

/// The original text of every selected mutant's file in `root`, for `mutation-report.json`.
/// Every mutated file must be in the tree: one the path rule refuses is a spec error, reported
/// at the mutant's line.
pub(super) fn read_sources(spec: &Spec, selected: &[usize], root: &Path) -> Result<Sources> {
    let mut sources = Sources::new();
    for m in selected.iter().map(|&i| &spec.mutants[i]) {
        let path = crate::swap::file_in(root, &m.file)
            .map_err(|e| spec.error_at(m.line, format!("{e:#}")))?;
        let bytes = crate::swap::read_regular(&path)
            .with_context(|| format!("reading {}", files::escape::path(&path)))?
            .bytes;
        sources
            .entry(m.file.clone())
            .or_insert_with(|| String::from_utf8_lossy(&bytes).into_owned());
    }
    Ok(sources)
}
