//! The exit codes of SPEC.md, shared by every tool.
//!
//! A finding (a failed check, a survived mutant, a moved threshold) is not an error: it is an
//! outcome that maps to 1. Errors that stopped the tool from judging at all map to 2 (bad input)
//! or 4 (a precondition such as a red baseline).

/// What a run of any gatekit tool ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: everything held.
    Ok,
    /// 1: findings: a check failed, a mutant survived, a control was killed, a threshold moved.
    Findings,
    /// 2: bad usage or bad input; nothing was written or changed.
    Usage,
    /// 4: a baseline or precondition failed, so nothing could be judged.
    Precondition,
    /// 130: interrupted by SIGINT or SIGTERM, after cleaning up.
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Findings => 1,
            Exit::Usage => 2,
            Exit::Precondition => 4,
            Exit::Interrupted => 130,
        }
    }

    /// `Ok` when `held`, otherwise `Findings`.
    pub fn from_held(held: bool) -> Exit {
        if held {
            Exit::Ok
        } else {
            Exit::Findings
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(e.code())
    }
}

/// Prints an error that stopped `tool` from judging, once, as one line with its causes
/// (`gate: error: patch build.patch: No such file or directory`), and returns its exit code:
/// 130 when the run was interrupted, else 2 (bad usage or input).
pub fn fail(tool: &str, error: &(dyn std::error::Error + 'static)) -> Exit {
    if crate::interrupt::requested() {
        eprintln!("{tool}: interrupted");
        return Exit::Interrupted;
    }
    eprintln!("{tool}: error: {}", one_line(error));
    Exit::Usage
}

/// A tool's whole run: route Ctrl-C and SIGTERM to the interrupt flag, do the work, print an
/// error that stopped it once (see [`fail`]), and sweep what its runs left behind.
pub fn run_tool<E>(tool: &str, work: impl FnOnce() -> Result<Exit, E>) -> Exit
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    crate::interrupt::install();
    // A run that died with SIGKILL could clean nothing: its processes and scratch are ours to
    // remove now, before this run starts its own.
    let stale = crate::scratch::clean_stale();
    if stale.processes > 0 {
        eprintln!(
            "{tool}: killed {} process(es) left by a gatekit run that was killed",
            stale.processes
        );
    }
    let exit = match work() {
        Ok(exit) => exit,
        Err(e) => {
            let e: Box<dyn std::error::Error + Send + Sync> = e.into();
            fail(tool, &*e)
        }
    };
    sweep_strays(tool);
    crate::scratch::finish();
    exit
}

/// The last thing a tool does: kill what its runs left behind (see
/// [`crate::runner::sweep`]) and say so on stderr when there was anything.
pub fn sweep_strays(tool: &str) {
    let killed = crate::runner::sweep();
    if killed > 0 {
        eprintln!("{tool}: killed {killed} stray process(es) that outlived their runs");
    }
}

/// An error and its causes on one line, `: `-separated, without repeats (many errors quote
/// their source in their own message).
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading gate.toml")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn an_error_chain_is_one_line() {
        let e = Outer(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such\nfile",
        ));
        assert_eq!(one_line(&e), "reading gate.toml: no such file");
    }
}
