//! `mutants`: exact-anchor mutation runs that cannot be fooled by a hang, a red baseline or a
//! brittle suite.
//!
//! A reviewer writes each mutant by hand (an exact string in a file, swapped for another, tied
//! to the claim it undoes); the tool proves the suite notices every one and does not notice the
//! controls. The one public entry is [`commands::run`] over a parsed [`cli::Cli`]; everything
//! else is the crate's own:
//! - `cli` (the command line as typed) and `commands` (each subcommand: arguments to typed
//!   settings, the work handed on, an exit code back; `check` and `list` live there);
//! - `spec` reads mutants.toml (`origin`: a generated mutant's operator, a claim not named yet),
//!   `anchor` finds and swaps anchors in bytes, `swap` writes a file
//!   in place only when it is still the same file, `checkout` makes the private checkouts;
//! - `session` is one `mutants run` (its state and a method per phase), over `run`, the engine
//!   (baseline, then each mutant judged and restored), which emits `record` values: the rows
//!   and the report, with each `verdict` typed;
//! - `render` turns the record into every output (text, Markdown, JSON, Stryker, HTML, JUnit,
//!   progress lines);
//! - `shard` and `merge` split and join runs; `attest` states a run's verdicts for signing.
//!
//! Processes run through `report`'s process-group runner, so nothing is left behind.

mod anchor;
mod attest;
mod checkout;
pub mod cli;
pub mod commands;
mod merge;
mod origin;
mod record;
mod render;
mod run;
mod session;
mod shard;
mod spec;
mod suggest;
mod swap;
mod verdict;
