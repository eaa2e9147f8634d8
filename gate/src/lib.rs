//! `gate`: prove a candidate (a patch, its base commit and a sha256 manifest) is what was
//! reviewed, and that its suites pass.
//!
//! The binary is glue over the `candidate` library (git, checkouts of their own, gate.toml,
//! apply, pack) and `report`: `suite` runs suites, [`record`] is the report and its verdict,
//! `text`, `markdown` and `junit` render it, `cites` answers "was this head cited?", and
//! [`commands`] maps each subcommand onto them.

mod canary;
mod cites;
pub mod cli;
pub mod commands;
mod json;
mod junit;
mod markdown;
pub mod record;
pub mod run;
mod suite;
mod text;
