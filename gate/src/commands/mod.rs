//! Each `gate` subcommand: raw arguments in, library calls, a report out, an [`Exit`] back.
//! One file per command (`pack`, `apply`, `run`, `manifest` for check and hash, `cites`,
//! `verify`);
//! `gate clean` and the dispatch live here.
//!
//! Errors (bad input, a patch that does not apply, an unknown revision) are printed once as
//! one line and exit 2; findings (a manifest mismatch, drift, a failed suite) are outcomes and
//! exit 1; an interrupt cleans up and exits 130.
//!
//! Data goes to stdout through [`cmdline::outln!`] (never `println!`), so a reader that closes
//! the pipe early changes neither the exit code nor the files written; every piece of outside text printed (paths, revs)
//! goes through [`files::escape`].

mod apply;
mod cites;
mod manifest;
mod pack;
mod run;
mod verify;

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Result};

use cmdline::outln;
use cmdline::Exit;
use report::text::plural;
use report::Format;

use crate::cli::{Cli, Command};
use candidate::apply::Candidate;
use candidate::checkout;
use candidate::git::Git;

/// Runs the parsed command line and returns the exit code, printing any error.
pub fn run(cli: Cli) -> Exit {
    cmdline::exit::run_tool("gate", || dispatch(cli))
}

fn dispatch(cli: Cli) -> Result<Exit> {
    let repo_dir = cli.repo.clone();
    let color = cli.color.color;
    let repo = || -> Result<Git> { Git::open_or_hint(repo_dir.as_deref(), "--repo") };
    match cli.command {
        Command::Pack { base, out, paths } => pack::cmd_pack(&repo()?, &base, &out, &paths),
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
            apply::cmd_apply(&repo()?, &candidate, worktree, json, color)
        }
        Command::Run {
            config,
            base,
            patch,
            manifest,
            out,
            only,
            fresh,
            keep,
            canary,
            echo,
            output,
            junit,
            attest,
            sign_key,
        } => {
            let format = output.chosen();
            let settings = crate::run::RunSettings {
                config,
                overrides: candidate::config::Overrides {
                    base,
                    patch,
                    manifest,
                },
                out,
                only,
                fresh,
                keep,
                echo,
                json: format == Format::Json,
                canary,
                attest: attest.map(|file| crate::attest::Attest {
                    file,
                    key: sign_key,
                }),
            };
            let output = run::RunOutput {
                format,
                junit,
                color,
            };
            run::cmd_run(&repo()?, &settings, &output)
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
                manifest::Show::Nothing
            } else if quiet {
                manifest::Show::Problems
            } else {
                manifest::Show::All
            };
            manifest::cmd_check(&manifest, &dir, json, show, ignore_missing)
        }
        Command::Hash { paths, tag } => manifest::cmd_hash(&paths, tag),
        Command::Cites {
            head,
            file,
            github_reviews,
            github_issue_comments,
            github_review_comments,
            json,
        } => {
            let github = cites::GithubFiles {
                reviews: github_reviews,
                issue_comments: github_issue_comments,
                review_comments: github_review_comments,
            };
            cites::cmd_cites(&repo()?, &head, file.as_deref(), &github, json)
        }
        Command::Verify {
            attestation,
            allowed_signers,
            head,
            tree,
            json,
        } => {
            let against = match tree {
                Some(id) => verify::Against::Tree(id),
                None => verify::Against::Head(head),
            };
            verify::cmd_verify(
                repo_dir.as_deref(),
                &attestation,
                allowed_signers.as_deref(),
                &against,
                json,
            )
        }
        Command::Clean => cmd_clean(),
        Command::Describe(describe) => {
            describe.run(<Cli as clap::CommandFactory>::command())?;
            Ok(Exit::Ok)
        }
    }
}

/// `gate clean`: what [`checkout::clean_stale`] removes at every start, and the kept
/// checkouts, each only when its owner marker still says it is gatekit's.
fn cmd_clean() -> Result<Exit> {
    let stale = checkout::clean_stale();
    outln!("removed {} of killed runs", plural(stale, "checkout"))?;
    let mut failed = false;
    for kept in checkout::clean_kept() {
        let path = files::escape::path(&kept.path);
        match kept.result {
            Ok(checkout::Fate::Removed) => outln!("removed   {path} (kept)")?,
            Ok(checkout::Fate::NotOurs) => {
                outln!("left      {path}: no longer a gatekit checkout (forgotten)")?
            }
            Ok(checkout::Fate::InUse(pid)) => {
                outln!("left      {path}: its run is still running (pid {pid})")?
            }
            Err(e) => {
                failed = true;
                let _ = writeln!(std::io::stderr(), "gate: could not remove {path}: {e}");
            }
        }
    }
    Ok(Exit::from_held(!failed))
}

/// `exit` for work that is done, once its result is printed. A reader that closed stdout early
/// (`gate check ... | head -1`) is no error (see [`cmdline::exit::print`]), so a finding is
/// never lost to a closed pipe; any other failure to print is an error.
pub(crate) fn finished(printed: Result<()>, exit: Exit) -> Result<Exit> {
    printed.map(|()| exit)
}
