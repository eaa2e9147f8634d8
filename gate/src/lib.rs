//! `gate`: prove a candidate (a patch, its base commit and a sha256 manifest) is what was
//! reviewed, and that its suites pass.
//!
//! The binary is glue over the `candidate` library (git, checkouts of their own, gate.toml,
//! apply, pack) and `report`: `suite` runs suites, [`record`] is the report and its verdict,
//! `text`, `markdown` and `junit` render it, `progress` renders the events the suite and canary
//! loops emit, `cites` answers "was this head cited?" (of a text, and of a pull request's
//! GitHub surfaces with `surfaces`), `attest` and `verify` make and check the signed statement of a run, and [`commands`] maps each subcommand onto them.
//!
//! It never links `mutants` or `probe` (what tools share lives in the libraries below them),
//! and never writes to the user's checkout, index or repository.

pub mod attest;
mod canary;
mod cites;
pub mod cli;
pub mod commands;
mod json;
mod junit;
mod markdown;
mod prepare;
mod progress;
pub mod record;
pub mod run;
mod suite;
mod surfaces;
mod text;
mod verify;
