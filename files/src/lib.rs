//! What gatekit's tools read and write on disk, and the rules they read and write by: the one
//! [`path`] rule for every relative path read from a file or a flag, the one [`walk`] that
//! reaches a path inside a root through no link, the one [`input`] reader (a file, a FIFO or
//! standard input, cut short by Ctrl-C), the [`outputs`] guard every `--out` path passes and the
//! record of what a run wrote there, files written whole or not at all ([`atomic`]), the `--out`
//! [`lock`], and errors [`located`] at a file and line.
//!
//! The path rule and the walk were written four times over the workspace, and the copies
//! differed (only one refused `.`, only one knew a path's length limit, one refused a link that
//! another followed). Every caller now asks here, and words the answer for its own file and key.
//!
//! Three small pieces live here because everything above needs them and they need nothing: the
//! process-wide [`interrupt`] flag (the input reader stops on it, as does the runner), the
//! [`escape`] that makes outside text (a path, a line a child printed) safe to print, and the
//! one poison-free [`sync::lock`].
//!
//! A crate of its own, at the bottom of the workspace, so that every crate that touches the
//! disk (the runner's logs, candidate's checkouts, the tools' reports) keeps one set of rules
//! without pulling in a runner, a renderer or a command-line parser.
//!
//! It must not run a process, render a report or parse a command line: everything above reads
//! and writes through it, so it depends on nothing of gatekit's.

pub mod atomic;
pub mod escape;
pub mod input;
pub mod interrupt;
pub mod located;
pub mod lock;
pub mod outputs;
pub mod path;
pub mod sync;
pub mod walk;
