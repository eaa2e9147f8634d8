//! `mutants`: exact-anchor mutation runs that cannot be fooled by a hang, a red baseline or a
//! brittle suite.
//!
//! A reviewer writes each mutant by hand (an exact string in a file, swapped for another, tied
//! to the claim it undoes); the tool proves the suite notices every one and does not notice the
//! controls. The binary is glue over these modules: [`spec`] reads mutants.toml, [`anchor`]
//! finds and swaps anchors in bytes, [`checkout`] makes the private worktrees, [`run`] is the
//! engine (baseline, then each mutant judged and restored), [`verdict`] names the outcome,
//! [`record`] holds the rows the engine produces, [`output`], [`html`] and [`junit`] render
//! them,
//! [`shard`] and [`merge`] split and join runs, and [`commands`] maps each subcommand onto
//! them. Processes run through `report`'s process-group runner, so nothing is left behind.

pub mod anchor;
pub mod checkout;
pub mod cli;
pub mod commands;
pub mod html;
pub mod junit;
pub mod merge;
pub mod output;
pub mod record;
pub mod run;
pub mod shard;
pub mod spec;
pub mod stdout;
pub mod swap;
pub mod verdict;
