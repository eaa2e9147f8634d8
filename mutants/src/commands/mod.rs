//! Each `mutants` subcommand: clap's arguments turned into typed settings, the work handed to
//! the module that does it (`check`, `session`, `merge`), an [`Exit`]
//! back. Nothing below this layer sees the command line.
//!
//! Errors (a bad spec, an unknown `--only` name, a DIR that is not a repository) print one line
//! and exit 2 before anything is written; a red or hung baseline, or a candidate whose manifest
//! does not hold, exits 4; findings (a survivor, a killed control, a skipped or error row) are
//! outcomes and exit 1; an interrupt cleans up, writes the partial report and exits 130.

use anyhow::{Context, Result};

use cmdline::Exit;
use report::ColorChoice;

use crate::cli::{Cli, Command, RunArgs};
use crate::session::{self, Selection, Settings};

mod check;
mod suggest;

/// Runs the parsed command line and returns the exit code, printing any error: the one entry
/// point of the `mutants` binary.
pub fn run(cli: Cli) -> Exit {
    cmdline::exit::run_tool("mutants", || dispatch(cli))
}

fn dispatch(cli: Cli) -> Result<Exit> {
    let color = cli.color.color;
    match cli.command {
        Command::Check { target, json } => check::check(&target.spec, target.dir, json),
        Command::List { target, json } => check::list(&target.spec, target.dir, json),
        Command::Run(args) => {
            let suggested = match args.suggested {
                true => match suggest::for_run(&args)? {
                    Some(s) => Some(s),
                    // Nothing proposed: nothing to run, and nothing is wrong.
                    None => return Ok(Exit::Ok),
                },
                false => None,
            };
            session::run(settings(*args, suggested, color))
        }
        Command::Suggest(args) => suggest::suggest(*args),
        Command::Merge {
            dirs,
            out,
            spec,
            allowed_signers,
            sarif,
            output,
        } => {
            let against = crate::merge::Against {
                spec,
                allowed_signers,
                sarif,
            };
            crate::merge::merge(&dirs, &out, &against, output.chosen(), color)
        }
        Command::Clean { dir, all } => clean(dir, all),
        Command::Describe(describe) => {
            describe.run(<Cli as clap::CommandFactory>::command())?;
            Ok(Exit::Ok)
        }
    }
}

/// `mutants run`'s arguments as the session's settings.
fn settings(
    args: RunArgs,
    suggested: Option<(std::path::PathBuf, session::Suggested)>,
    color: ColorChoice,
) -> Settings {
    let format = args.stdout_format();
    let (spec, suggested) = match suggested {
        Some((spec, s)) => (spec, Some(s)),
        None => (suggest::spec_path(args.spec.as_deref()), None),
    };
    Settings {
        spec,
        suggested,
        dir: args.dir,
        candidate: args.candidate,
        overrides: candidate::config::Overrides {
            base: args.base,
            patch: args.patch,
            manifest: args.manifest,
        },
        jobs: usize::from(args.jobs),
        timeout: args.timeout,
        selection: Selection {
            only: args.only,
            from: args.from,
            shard: args.shard,
            incremental: args.incremental,
            dry_run: args.dry_run,
        },
        out: args.out,
        keep: args.keep,
        no_cache: args.no_cache,
        no_canary: args.no_canary,
        jobserver: !args.no_jobserver,
        format,
        color,
        sarif: args.sarif,
        attest: args.attest.map(|file| crate::attest::Attest {
            file,
            key: args.sign_key,
            subjects: None,
        }),
    }
}

/// `mutants clean`: the repository's cache (or every one's) removed, each folder named.
fn clean(dir: Option<std::path::PathBuf>, all: bool) -> Result<Exit> {
    let repo = if all {
        None
    } else {
        Some(crate::checkout::open_repo(dir)?)
    };
    let cleaned =
        candidate::cache::clean(repo.as_ref().map(|r| r.dir())).context("removing the cache")?;
    let mut removed = Vec::new();
    for c in &cleaned {
        let dir = files::escape::path(&c.dir);
        if c.live.is_empty() {
            cmdline::outln!("removed {dir}")?;
            removed.push(&c.dir);
        } else {
            let pids: Vec<String> = c.live.iter().map(u32::to_string).collect();
            cmdline::outln!(
                "emptied {dir}, but for what running runs use (pid {})",
                pids.join(", ")
            )?;
        }
    }
    cmdline::errln!(
        "mutants: {} removed from {}",
        report::text::plural(removed.len(), "cache"),
        files::escape::path(&runner::scratch::cache_dir().join("worktrees"))
    );
    Ok(Exit::Ok)
}
