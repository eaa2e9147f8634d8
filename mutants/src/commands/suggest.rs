//! `mutants suggest`, and the proposing half of `run --suggested`: the arguments as a
//! [`Request`], the proposals made, and the spec shown, written or handed to the run.
//!
//! Bad input (an unknown REV, a DIR that is not a repository, a PATH outside it, an `--out`
//! that exists without `--force`, several suites and no `--suite`) is one line and exit 2
//! with nothing written. A change that leaves nothing to propose (no source file touched,
//! every one skipped) says so on stderr, writes no spec and exits 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use cmdline::Exit;

use crate::cli::{RunArgs, SuggestArgs};
use crate::session::Suggested;
use crate::suggest::output::{comments, JsonOut, SpecOut};
use crate::suggest::{self, Request, Source, Suggestion};

/// `mutants suggest`.
pub(super) fn suggest(args: SuggestArgs) -> Result<Exit> {
    // A candidate is applied in a checkout of ours: an interrupt removes it.
    files::interrupt::cleans_up();
    candidate::checkout::clean_stale();
    if let Some(out) = &args.out {
        // Said before any work: a spec is never overwritten unasked.
        if !args.force && std::fs::symlink_metadata(out).is_ok() {
            bail!(
                "{}: exists; a spec is never overwritten without --force",
                files::escape::path(out)
            );
        }
    }
    let source = match (&args.candidate, &args.diff) {
        (Some(config), _) => Source::Candidate {
            config: config.clone(),
            overrides: candidate::config::Overrides {
                base: args.base.clone(),
                patch: args.patch.clone(),
                manifest: args.manifest.clone(),
            },
        },
        (None, Some(rev)) => Source::Diff { rev: rev.clone() },
        (None, None) => Source::Whole {
            paths: args.paths.clone(),
        },
    };
    let request = Request {
        source,
        dir: args.dir.clone(),
        suite: args.pick.suite.clone(),
        all: args.pick.all,
    };
    let s = suggest::suggest(&request)?;
    say_found(&s);
    stop_if_interrupted()?;
    if let Some(out) = &args.out {
        let mut plan = files::outputs::Plan::new();
        for (what, path) in &s.inputs {
            plan.input(what, path);
        }
        s.repo.forbid_outputs_in(&mut plan)?;
        plan.file("--out", out);
        plan.check()?;
    }
    if !args.json {
        say_skipped(&s);
    }
    if s.entries.is_empty() {
        cmdline::errln!("mutants: {}; no spec written", nothing_to_propose(&s));
        if args.json {
            cmdline::outln!("{}", JsonOut::of(&s).to_text()?.trim_end())?;
        }
        return Ok(Exit::Ok);
    }
    let shown = args.out.as_deref().map(|p| p.display().to_string());
    let text = SpecOut::of(&s).to_toml(&comments(&s, shown.as_deref()))?;
    match &args.out {
        Some(out) => {
            files::atomic::write_text_atomic(out, &text)
                .with_context(|| format!("writing {}", files::escape::path(out)))?;
        }
        None if !args.json => cmdline::exit::print(&text)?,
        None => {}
    }
    if args.json {
        cmdline::exit::print(&JsonOut::of(&s).to_text()?)?;
    }
    cmdline::errln!(
        "mutants: {} and {} proposed in {}{}",
        report::text::plural(s.mutants(), "mutant"),
        report::text::plural(s.controls(), "control"),
        report::text::plural(s.files.len() - s.skipped().count(), "file"),
        args.out
            .as_deref()
            .map(|o| format!("; spec in {}", files::escape::path(o)))
            .unwrap_or_default()
    );
    if s.suite.placeholder {
        cmdline::errln!(
            "mutants: suite {:?} is a placeholder: write the command that runs your tests in its `run`",
            s.suite.name
        );
    }
    Ok(Exit::Ok)
}

/// An interrupt while proposing (a candidate's checkout is removed on the way out) ends the
/// command with 130 before anything is written.
fn stop_if_interrupted() -> Result<()> {
    if files::interrupt::requested() {
        return Err(runner::stop::Interrupted.into());
    }
    Ok(())
}

/// Why there is no spec: no source file in the change, or every one skipped.
fn nothing_to_propose(s: &Suggestion) -> String {
    if s.files.iter().all(|f| f.language.is_none()) {
        format!("no source file in {}", s.about)
    } else {
        format!("no mutant proposed for {}", s.about)
    }
}

/// What proposing met that the reader must know whatever the format: suites of the file read
/// that no spec can run, a candidate whose manifest does not hold.
fn say_found(s: &Suggestion) {
    if let Some(left) = &s.suite.left_out {
        cmdline::errln!(
            "mutants: suite(s) {} of {} left out: a `glob` suite has no one command a spec can run",
            left.suites.join(", "),
            left.of
        );
    }
    if let Some(summary) = &s.not_holding {
        cmdline::errln!(
            "mutants: the candidate does not hold: manifest {summary} (`mutants run --candidate` will refuse it)"
        );
    }
}

/// Each file skipped and each proposal dropped, with why, on stderr.
fn say_skipped(s: &Suggestion) {
    for f in s.skipped() {
        cmdline::errln!(
            "mutants: skipped {}: {}",
            files::escape::text(&f.file),
            files::escape::text(f.skipped.as_deref().unwrap_or_default())
        );
    }
    for f in s.files.iter().filter(|f| f.dropped > 0) {
        cmdline::errln!(
            "mutants: dropped {} in {}: the file no longer parsed after the swap",
            report::text::plural(f.dropped, "proposal"),
            files::escape::text(&f.file)
        );
    }
}

/// `run --suggested`: the proposals for the run's --candidate, --diff or --dir, as the spec
/// the run writes to `OUT/suggested.toml` and runs; `Ok(None)` when there is nothing to run
/// (said on stderr).
pub(super) fn for_run(args: &RunArgs) -> Result<Option<(PathBuf, Suggested)>> {
    let source = match (&args.candidate, &args.diff, &args.dir) {
        (Some(config), _, _) => Source::Candidate {
            config: config.clone(),
            overrides: candidate::config::Overrides {
                base: args.base.clone(),
                patch: args.patch.clone(),
                manifest: args.manifest.clone(),
            },
        },
        (None, Some(rev), _) => Source::Diff { rev: rev.clone() },
        (None, None, Some(_)) => Source::Whole { paths: Vec::new() },
        (None, None, None) => bail!(
            "run --suggested proposes for a change: name one with --candidate GATE_TOML, --diff REV or --dir DIR"
        ),
    };
    let request = Request {
        source,
        dir: args.dir.clone(),
        suite: args.suite.clone(),
        all: args.all,
    };
    files::interrupt::cleans_up();
    candidate::checkout::clean_stale();
    let s = suggest::suggest(&request)?;
    say_found(&s);
    stop_if_interrupted()?;
    say_skipped(&s);
    if s.entries.is_empty() {
        cmdline::errln!("mutants: {}; nothing to run", nothing_to_propose(&s));
        return Ok(None);
    }
    if s.suite.placeholder {
        bail!(
            "no suite to run the proposals under: define one in DIR's mutants.toml ([suites.NAME] run = ...) or gate.toml ([[suite]])"
        );
    }
    let spec = args.out.join(suggest::SPEC_FILE);
    let text = SpecOut::of(&s).to_toml(&comments(&s, Some(&spec.display().to_string())))?;
    let context: BTreeMap<String, String> = s
        .entries
        .iter()
        .filter_map(|e| Some((e.name.clone(), e.hunk.clone()?)))
        .collect();
    cmdline::errln!(
        "mutants: {} and {} proposed in {}; spec in {}",
        report::text::plural(s.mutants(), "mutant"),
        report::text::plural(s.controls(), "control"),
        report::text::plural(s.files.len() - s.skipped().count(), "file"),
        files::escape::path(&spec)
    );
    Ok(Some((spec, Suggested { text, context })))
}

/// The spec a run reads: SPEC, or mutants.toml.
pub(super) fn spec_path(spec: Option<&Path>) -> PathBuf {
    spec.map_or_else(|| PathBuf::from("mutants.toml"), Path::to_path_buf)
}
