//! gatekit's command line, shared by the three tools: the [`exit`] policy (gatekit's exit codes,
//! the one mapping from a typed error to a code, [`run_tool`](exit::run_tool), and stdout that a
//! closed pipe ends quietly), the [`cli`] pieces flattened into each tool's clap
//! definitions, the [`manual`] (man pages and completions), the one [`output`] seam (a run's
//! typed events rendered by its tool and written by one [`Reporter`](output::Reporter), which
//! also ends every run with its exit code), and [`progress`] lines on a terminal.
//!
//! A crate of its own, at the top of the libraries, because clap, clap_complete, clap_mangen and
//! indicatif are for a program's front end only: the crates below it (`candidate`, `report`,
//! `runner`, `files`) raise typed errors and produce records without them.

pub mod cli;
pub mod exit;
pub mod manual;
pub mod output;
pub mod progress;

pub use exit::Exit;
pub use output::{Document, Render, Reporter, Shown};
