//! The command line as typed (clap derive; the doc comments are the help text).
//!
//! These structs are raw arguments; [`crate::commands`] validates them into settings before
//! anything runs, so a bad spec or a bad option exits 2 with nothing written.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::record::Shard;

/// Exact-anchor mutation runs: prove a suite notices each hand-written mutant, and that it does
/// not notice the controls.
#[derive(Debug, Parser)]
#[command(name = "mutants", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count each anchor in its file; exit 1 if any does not occur exactly once.
    Check {
        /// The spec (mutants.toml).
        spec: PathBuf,
        /// The git repository the spec's files are in [default: the current directory].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Print the counts as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the baseline, then every mutant, in private worktrees; write the report.
    Run(RunArgs),
    /// Join the outputs of `run --shard K/N` into one report, as a single run would write it.
    Merge {
        /// The output folders of the shards.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged report goes.
        #[arg(long, default_value = "mutants-out")]
        out: PathBuf,
        /// Print mutants.json on stdout instead of the table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The spec (mutants.toml).
    pub spec: PathBuf,
    /// The git repository to mutate a worktree of (HEAD plus uncommitted changes)
    /// [default: the current directory].
    #[arg(long, conflicts_with = "candidate")]
    pub dir: Option<PathBuf>,
    /// Build the worktree from a candidate as `gate apply` does (gate.toml: base, patch,
    /// manifest), and check its manifest before the first mutant and after the last.
    #[arg(long, value_name = "GATE_TOML")]
    pub candidate: Option<PathBuf>,
    /// Run N mutants at once, each in its own worktree.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Timeout for every mutant's suite run (e.g. 90s, 5m); overrides the spec's and the
    /// derived one (max(20s, 5x baseline)).
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Run only this mutant (repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Run from this mutant to the end of the spec.
    #[arg(long, value_name = "NAME")]
    pub from: Option<String>,
    /// Run the K-th of N deterministic shares (e.g. 2/4).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Where the report and logs go.
    #[arg(long, default_value = "mutants-out")]
    pub out: PathBuf,
    /// Leave the worktrees in place (their paths are printed).
    #[arg(long)]
    pub keep: bool,
    /// Print mutants.json on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = report::duration::parse(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("a timeout must be more than zero".into());
    }
    Ok(d)
}
