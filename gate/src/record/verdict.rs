//! The gate's answer in a word and its colour, and the one rule that turns a report into the
//! code `gate run` exits with ([`GateReport::exit`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use cmdline::Exit;
use report::color::Style;

use super::{Finding, GateReport};

/// The gate's answer: `PASS`, `FAIL`, `INTERRUPTED`, or `INCOMPLETE` (a report written while
/// its run was still going, left so when the run was killed), as gate.json and every
/// rendering say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Verdict {
    #[serde(rename = "PASS")]
    Pass,
    #[serde(rename = "FAIL")]
    Fail,
    #[serde(rename = "INTERRUPTED")]
    Interrupted,
    #[serde(rename = "INCOMPLETE")]
    Incomplete,
}

impl Verdict {
    /// An interrupted run is no verdict on the candidate; otherwise any finding fails it.
    pub(crate) fn of(interrupted: bool, findings: &[Finding]) -> Verdict {
        if interrupted {
            Verdict::Interrupted
        } else if findings.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    /// The word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Interrupted => "INTERRUPTED",
            Verdict::Incomplete => "INCOMPLETE",
        }
    }

    /// The colour its meaning calls for on a terminal.
    pub fn style(self) -> Style {
        match self {
            Verdict::Pass => Style::Good,
            Verdict::Fail => Style::Bad,
            Verdict::Interrupted | Verdict::Incomplete => Style::Warn,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl GateReport {
    /// The code `gate run` ends with for this report, `unwritten` naming the files of it that
    /// could not be written (each already said): the one rule, read by the record's
    /// `exit_code` and by the command alike. Only a PASS is 0; a FAIL is 4 when a precondition
    /// failed (the setup, a canary, a linked folder that changed) and 1 otherwise; a run that
    /// did not finish is 130 whether a signal stopped it or it never got to say. A PASS whose
    /// files did not all land takes the failed write's code (74): a pass comes with its record.
    pub(crate) fn exit(&self, unwritten: &[anyhow::Error]) -> Exit {
        let judged = match self.verdict {
            Verdict::Pass => Exit::Ok,
            Verdict::Fail if self.precondition_failed() => Exit::Precondition,
            Verdict::Fail => Exit::Findings,
            Verdict::Interrupted | Verdict::Incomplete => Exit::Interrupted,
        };
        cmdline::exit::after_writing(judged, unwritten)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_pass_only_without_findings_and_interrupted_trumps_them() {
        let finding = vec![Finding::Drift(1)];
        assert_eq!(Verdict::of(false, &[]), Verdict::Pass);
        assert_eq!(Verdict::of(false, &finding), Verdict::Fail);
        assert_eq!(Verdict::of(true, &[]), Verdict::Interrupted);
        assert_eq!(Verdict::of(true, &finding), Verdict::Interrupted);
        // Serialized as the words gate.json has always held.
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Interrupted] {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{v}\""));
        }
        assert_eq!(Verdict::Pass.style(), Style::Good);
        assert_eq!(Verdict::Fail.style(), Style::Bad);
        assert_eq!(Verdict::Interrupted.style(), Style::Warn);
    }

    /// A report of the given verdict, and of a failed precondition when `precondition`.
    fn judged(verdict: Verdict, precondition: bool) -> GateReport {
        use crate::record::fixtures::{report, suite};
        let mut r = match verdict {
            Verdict::Pass => report(&["a"], vec![suite("a", 0)]),
            _ => report(&["a"], vec![suite("a", 1)]),
        };
        if precondition {
            r.precondition = Some("worktree setup failed (exit 1)".into());
        }
        r.interrupted = verdict == Verdict::Interrupted;
        r.complete = verdict != Verdict::Incomplete && !r.interrupted;
        r.judge();
        assert_eq!(r.verdict, verdict, "{:?}", r.findings);
        r
    }

    fn full_disk() -> anyhow::Error {
        anyhow::Error::new(std::io::Error::other("No space left on device"))
            .context("writing out/gate.json")
    }

    #[test]
    fn a_pass_exits_0_and_its_record_says_so() {
        let r = judged(Verdict::Pass, false);
        assert_eq!(r.exit(&[]), Exit::Ok);
        assert_eq!(r.exit_code, 0);
    }

    #[test]
    fn a_pass_whose_files_did_not_land_exits_74() {
        let r = judged(Verdict::Pass, false);
        assert_eq!(r.exit(&[full_disk()]), Exit::Io);
    }

    #[test]
    fn a_fail_exits_1_whether_or_not_its_files_landed() {
        let r = judged(Verdict::Fail, false);
        assert_eq!(r.exit(&[]), Exit::Findings);
        assert_eq!(r.exit(&[full_disk()]), Exit::Findings);
        assert_eq!(r.exit_code, 1);
    }

    #[test]
    fn a_fail_on_a_failed_precondition_exits_4() {
        let r = judged(Verdict::Fail, true);
        assert_eq!(r.exit(&[]), Exit::Precondition);
        assert_eq!(r.exit(&[full_disk()]), Exit::Precondition);
        assert_eq!(r.exit_code, 4);
        // A linked folder that changed and a canary no suite noticed are preconditions too.
        let mut linked = judged(Verdict::Pass, false);
        linked.linked_changed.push("node_modules changed".into());
        linked.judge();
        assert_eq!(linked.exit(&[]), Exit::Precondition);
        let mut canary = judged(Verdict::Pass, false);
        canary.canaries = Some(Vec::new());
        canary.judge();
        assert_eq!(canary.exit(&[]), Exit::Precondition);
    }

    #[test]
    fn an_interrupted_run_exits_130_even_with_a_failed_precondition() {
        for precondition in [false, true] {
            let r = judged(Verdict::Interrupted, precondition);
            assert_eq!(r.exit(&[]), Exit::Interrupted);
            assert_eq!(r.exit(&[full_disk()]), Exit::Interrupted);
            assert_eq!(r.exit_code, 130);
        }
    }

    #[test]
    fn an_incomplete_report_exits_130_never_0() {
        let r = judged(Verdict::Incomplete, false);
        assert_eq!(r.exit(&[]), Exit::Interrupted);
        assert_eq!(r.exit(&[full_disk()]), Exit::Interrupted);
        assert_eq!(r.exit_code, 130);
    }
}
