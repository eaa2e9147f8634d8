//! `mutants`: exact-anchor mutation runs that cannot be fooled by a hang, a red baseline or a
//! brittle suite.
//!
//! A reviewer writes each mutant (an exact string in a file, swapped for another, tied to the
//! claim it undoes), by hand or from `suggest`'s proposals for a change's lines; the tool proves
//! the suite notices every one and does not notice the controls. The one public entry is
//! [`commands::run`] over a parsed [`cli::Cli`]; everything else is the crate's own:
//! - `cli` (the command line as typed) and `commands` (each subcommand: arguments to typed
//!   settings, the work handed on, an exit code back; `check` and `list` live there);
//! - `spec` reads mutants.toml (`origin`: a generated mutant's operator, a claim not named yet),
//!   `anchor` finds and swaps anchors in bytes, `swap` writes a file
//!   in place only when it is still the same file, `checkout` makes the private checkouts;
//! - `session` is one `mutants run` (its state and a method per phase), over `run`, the engine
//!   (baseline, then each mutant judged and restored), which emits `record` values: the rows
//!   and the report, with each `verdict` typed; `coverage` maps which tests run which lines
//!   (node's V8 coverage, coverage.py's contexts), so a suite's `select` runs those first;
//! - `render` turns the record into every output (text, Markdown, JSON, Stryker, HTML, JUnit,
//!   SARIF, review findings, progress lines);
//! - `suggest` turns a change (a candidate, a diff, whole files) into spec entries through the
//!   `syntax` crate's proposals;
//! - `shard` and `merge` split and join runs; `attest` states a run's verdicts for signing.
//!
//! Processes run through `runner`'s process-group runner, so nothing is left behind. It never
//! links `gate` or `probe`, and never writes to the user's tree, index or repository: every
//! mutant is swapped in a checkout of its own.

mod anchor;
mod attest;
mod checkout;
pub mod cli;
pub mod commands;
mod coverage;
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
mod watch;
