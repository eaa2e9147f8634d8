//! The typed errors that stop a tool's work before anything could be judged. The tools'
//! command line (`cmdline`'s exit policy) maps them to exit codes by their type, never by
//! their text; they live down here so that the code that raises them (a setup step, a red
//! baseline, a wait cut short by Ctrl-C) needs no command-line crate.

/// The work stopped at Ctrl-C or SIGTERM after cleaning up (exit 130). Defined beside the
/// interrupt flag, in `files`, whose input reader is the lowest code that raises it.
pub use files::interrupt::Interrupted;

/// A precondition that failed (a setup step, a red baseline): nothing could be judged, exit 4.
/// Its text may span lines (a log's tail), and is printed whole.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PreconditionFailed(String);

impl PreconditionFailed {
    /// The text may quote outside words (a server's, a log's): every control character but the
    /// line breaks is written as an escape here, once for every tool, so it cannot drive the
    /// terminal (escaping twice changes nothing: an escape holds no control character).
    pub fn new(text: impl Into<String>) -> PreconditionFailed {
        let text: String = text.into();
        let lines: Vec<_> = text.split('\n').map(files::escape::text).collect();
        PreconditionFailed(lines.join("\n"))
    }
}

/// gatekit's own bug: an invariant the code relies on did not hold (exit 70, as cargo-mutants
/// and the BSD `sysexits` call an internal software error). Raised where the code can see its
/// own mistake; a panic ends a tool the same way.
#[derive(Debug, thiserror::Error)]
#[error("internal error (a bug in gatekit): {0}")]
pub struct Bug(pub String);
