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
