//! How a run ended: the one enum ([`Ended`]) every record of a run holds, the process's own
//! [`Status`] inside each case, and the [`Outcome`] a judge reads from it.
//!
//! One enum rather than flags (`hang`, `interrupted`, a spawn error, an exit code) so that no
//! caller can make a run both a hang and a pass, and a caller that turns a failed build into
//! "could not start" keeps the build's exit code by construction.

use serde::{Deserialize, Serialize};

/// How a run ended, as a judge reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Exit code 0.
    Passed,
    /// Any other exit code, or death by a signal we did not send.
    Failed,
    /// Still running at the timeout: its group was killed. Never a pass.
    Hang,
    /// The command could not be started (spawn failed, or the shell's 126/127).
    CouldNotStart,
    /// Stopped because the tool was interrupted.
    Interrupted,
}

/// What the operating system said of a process's end: its exit code when it exited on its own,
/// or the signal that ended it (e.g. `SIGKILL`); both empty for a process never started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
}

/// How a run ended: exactly one of these, each with the process's own status, so no caller
/// can make a run both a hang and a pass, or lose the exit code of a build it calls failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The process ended by itself, or was stopped by its caller (its status says how); a run
    /// not started yet has an empty status.
    Exited(Status),
    /// Still running at the timeout: its group was killed (the status is how it then died).
    Hang(Status),
    /// The tool was interrupted while it ran, and its group was killed.
    Interrupted(Status),
    /// Its observer (the caller's, see [`crate::Observer`]) asked for it to stop, and its group
    /// was killed as a hung one is: a failure the caller saw in its output, never a pass.
    Stopped(Status),
    /// It could not be started, or a step it needed failed (`why`); the status is the step's.
    CouldNotStart { why: String, status: Status },
}

impl Ended {
    /// A process that exited by itself with `code`.
    pub fn exited(code: i32) -> Ended {
        Ended::Exited(Status {
            exit_code: Some(code),
            signal: None,
        })
    }

    /// The process's own status, whichever way the run ended.
    pub fn status(&self) -> &Status {
        match self {
            Ended::Exited(s) | Ended::Hang(s) | Ended::Interrupted(s) | Ended::Stopped(s) => s,
            Ended::CouldNotStart { status, .. } => status,
        }
    }

    pub fn exit_code(&self) -> Option<i32> {
        self.status().exit_code
    }

    pub fn signal(&self) -> Option<&str> {
        self.status().signal.as_deref()
    }

    pub fn is_hang(&self) -> bool {
        matches!(self, Ended::Hang(_))
    }

    pub fn is_interrupted(&self) -> bool {
        matches!(self, Ended::Interrupted(_))
    }

    /// Whether its observer stopped it.
    pub fn is_stopped(&self) -> bool {
        matches!(self, Ended::Stopped(_))
    }

    /// Why the run could not start, when it could not.
    pub fn could_not_start(&self) -> Option<&str> {
        match self {
            Ended::CouldNotStart { why, .. } => Some(why),
            _ => None,
        }
    }

    /// How the process ended, as a judge reads it from the runner's view alone. A record's
    /// judge (in `report`) adds one rule on top: an exit 0 whose log says tests failed is no
    /// pass. The shell's 126 and 127 (not executable, not found) could not start.
    pub fn outcome(&self) -> Outcome {
        match self {
            Ended::Interrupted(_) => Outcome::Interrupted,
            Ended::Hang(_) => Outcome::Hang,
            Ended::Stopped(_) => Outcome::Failed,
            Ended::CouldNotStart { .. } => Outcome::CouldNotStart,
            Ended::Exited(s) => match s.exit_code {
                Some(126 | 127) => Outcome::CouldNotStart,
                Some(0) => Outcome::Passed,
                _ => Outcome::Failed,
            },
        }
    }

    /// The run as its flat record fields say it (`interrupted`, `hang`, `stopped`,
    /// `spawn_error`, and the status), the same precedence as [`Ended::outcome`]: what a report
    /// read back holds.
    pub fn from_fields(
        interrupted: bool,
        hang: bool,
        stopped: bool,
        spawn_error: Option<String>,
        status: Status,
    ) -> Ended {
        if interrupted {
            Ended::Interrupted(status)
        } else if hang {
            Ended::Hang(status)
        } else if stopped {
            Ended::Stopped(status)
        } else if let Some(why) = spawn_error {
            Ended::CouldNotStart { why, status }
        } else {
            Ended::Exited(status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: Option<i32>, signal: Option<&str>) -> Status {
        Status {
            exit_code: code,
            signal: signal.map(str::to_string),
        }
    }

    #[test]
    fn each_way_a_run_ends_is_one_outcome() {
        assert_eq!(Ended::exited(0).outcome(), Outcome::Passed);
        assert_eq!(Ended::exited(1).outcome(), Outcome::Failed);
        assert_eq!(Ended::exited(126).outcome(), Outcome::CouldNotStart);
        assert_eq!(Ended::exited(127).outcome(), Outcome::CouldNotStart);
        let segv = Ended::Exited(status(None, Some("SIGSEGV")));
        assert_eq!(segv.outcome(), Outcome::Failed);
        assert_eq!(segv.signal(), Some("SIGSEGV"));
        // A hang or an interrupt is never a pass, whatever the status the kill left.
        let hang = Ended::Hang(status(Some(0), None));
        assert_eq!(hang.outcome(), Outcome::Hang);
        assert!(hang.is_hang() && !hang.is_interrupted());
        let stopped = Ended::Interrupted(status(None, Some("SIGTERM")));
        assert_eq!(stopped.outcome(), Outcome::Interrupted);
        // Stopped by its observer: a failure it saw, never a pass nor a hang.
        let observed = Ended::Stopped(status(None, Some("SIGTERM")));
        assert_eq!(observed.outcome(), Outcome::Failed);
        assert!(observed.is_stopped() && !observed.is_hang());
        // A failed build keeps its own exit code inside "could not start".
        let unbuilt = Ended::CouldNotStart {
            why: "build failed (exit 3)".into(),
            status: status(Some(3), None),
        };
        assert_eq!(unbuilt.outcome(), Outcome::CouldNotStart);
        assert_eq!(unbuilt.exit_code(), Some(3));
        assert_eq!(unbuilt.could_not_start(), Some("build failed (exit 3)"));
    }

    #[test]
    fn flat_fields_read_back_by_the_judges_precedence() {
        let s = || status(Some(1), None);
        assert_eq!(
            Ended::from_fields(true, true, true, Some("x".into()), s()),
            Ended::Interrupted(s())
        );
        assert_eq!(
            Ended::from_fields(false, true, true, Some("x".into()), s()),
            Ended::Hang(s())
        );
        assert_eq!(
            Ended::from_fields(false, false, false, Some("x".into()), s()),
            Ended::CouldNotStart {
                why: "x".into(),
                status: s()
            }
        );
        assert_eq!(
            Ended::from_fields(false, false, false, None, s()),
            Ended::Exited(s())
        );
        assert_eq!(
            Ended::from_fields(false, false, true, Some("x".into()), s()),
            Ended::Stopped(s())
        );
    }
}
