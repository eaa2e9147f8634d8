//! `gate`: prove a candidate (a patch, its base commit and a sha256 manifest) is what was
//! reviewed, and that its suites pass.
//!
//! The binary is glue over these modules: [`git`] runs git, [`worktree`] makes and cleans up
//! detached worktrees, [`config`] reads gate.toml, [`candidate`] applies and checks a
//! candidate, [`pack`] makes one, [`suite`] runs suites, [`summary`] is the report,
//! [`cites`] answers "was this head cited?", and [`commands`] maps each subcommand onto them.
//! `mutants` reuses the candidate and worktree modules to build its own worktrees.

pub mod cites;
pub mod cli;
pub mod commands;
pub mod demo;
pub mod suite;
pub mod summary;
