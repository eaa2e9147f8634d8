//! The verdict on one mutant, in exactly the words the user guide's verdict page uses.
//!
//! The one rule a newcomer must know: a suite that could not start (exit 126/127, a spawn
//! failure) is `error`, never `killed`. A missing `node` makes every suite "fail", and counting
//! that as a kill would make a broken setup look like a perfect score.

use std::fmt;
use std::str::FromStr;

use report::color::Style;
use report::Outcome;

use crate::spec::Expect;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The suite failed: it noticed the mutant.
    Killed,
    /// The suite ran past its timeout; its group was killed. A mutant that makes a test loop
    /// forever is noticed, but it is reported as the hang it was.
    KilledHang,
    /// The suite passed with the mutant in place.
    Survived,
    /// No test covers the mutated lines (the suite's coverage map, with `select`), and the whole
    /// suite passed with the mutant in place: a survivor no test even ran (Stryker's
    /// NoCoverage). A finding, as a survivor is.
    NotCovered,
    /// The anchor did not occur exactly once, so nothing was swapped.
    Skipped { matches: usize },
    /// A control the suite did not notice, as it should.
    ControlHeld,
    /// A control the suite noticed: the suite is brittle (or the control was not a no-op).
    ControlKilled,
    /// The suite could not start, or the run went wrong: no judgement.
    Error,
    /// A generated mutant (one with an `operator`) whose `build` step failed or timed out:
    /// the proposal does not compile, so there is nothing to judge and nothing wrong with the
    /// suite (cargo-mutants' word). Not a finding, never a kill.
    Unviable,
}

impl Verdict {
    /// The verdict for a mutant (or control) whose suite ended with `outcome`.
    /// `Interrupted` has no verdict: the caller drops the row.
    pub fn judge(expect: Expect, outcome: Outcome) -> Option<Verdict> {
        let v = match (expect, outcome) {
            (_, Outcome::Interrupted) => return None,
            (_, Outcome::CouldNotStart) => Verdict::Error,
            (Expect::Kill, Outcome::Failed) => Verdict::Killed,
            (Expect::Kill, Outcome::Hang) => Verdict::KilledHang,
            (Expect::Kill, Outcome::Passed) => Verdict::Survived,
            (Expect::Survive, Outcome::Passed) => Verdict::ControlHeld,
            (Expect::Survive, Outcome::Failed | Outcome::Hang) => Verdict::ControlKilled,
        };
        Some(v)
    }

    /// [`Verdict::judge`] on what a suite run's record tells, with one more rule: a suite whose
    /// own process died of SIGKILL that the runner did not send (no hang, no interrupt) is
    /// `error`. No failing test ends a suite's shell that way; the OOM killer or another
    /// process did, and counting that as the suite noticing the mutant could hide a survivor.
    pub fn judge_record(expect: Expect, record: &report::RunRecord) -> Option<Verdict> {
        let outcome = record.outcome();
        // A SIGKILL nobody here sent (the kernel's out-of-memory killer) proves nothing; the
        // one a stop at the first failure ends with is ours, after the suite failed.
        let ours = record.run.ended.is_stopped();
        if outcome == Outcome::Failed && !ours && record.run.ended.signal() == Some("SIGKILL") {
            return Some(Verdict::Error);
        }
        Verdict::judge(expect, outcome)
    }

    /// Whether this row holds, that is, is no finding: a mutant killed (by failure or hang), a
    /// control held, or a generated mutant that does not build (`unviable`: reported, never
    /// counted as killed). Survivors, killed controls, skipped and error rows are findings.
    pub fn holds(self) -> bool {
        matches!(
            self,
            Verdict::Killed | Verdict::KilledHang | Verdict::ControlHeld | Verdict::Unviable
        )
    }

    /// Whether the suite noticed the mutant: killed, or killed by a hang.
    pub fn is_kill(self) -> bool {
        matches!(self, Verdict::Killed | Verdict::KilledHang)
    }

    /// The colour of this verdict's kind on a terminal: a kill or a held control is good news,
    /// a survivor, a killed control or an error is bad, a skip is a warning.
    pub fn style(self) -> Style {
        match self {
            Verdict::ControlHeld | Verdict::Killed | Verdict::KilledHang => Style::Good,
            Verdict::Survived | Verdict::NotCovered | Verdict::ControlKilled | Verdict::Error => {
                Style::Bad
            }
            Verdict::Skipped { .. } | Verdict::Unviable => Style::Warn,
        }
    }

    /// A short class name for styling (`killed`, `hang`, `survived`, ...).
    pub fn class(self) -> &'static str {
        match self {
            Verdict::Killed => "killed",
            Verdict::KilledHang => "hang",
            Verdict::Survived => "survived",
            Verdict::NotCovered => "not-covered",
            Verdict::Skipped { .. } => "skipped",
            Verdict::ControlHeld => "held",
            Verdict::ControlKilled => "control-killed",
            Verdict::Error => "error",
            Verdict::Unviable => "unviable",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Killed => f.write_str("killed"),
            Verdict::KilledHang => f.write_str("killed (hang)"),
            Verdict::Survived => f.write_str("SURVIVED"),
            Verdict::NotCovered => f.write_str("not covered"),
            Verdict::Skipped { matches } => write!(f, "skipped ({matches} matches)"),
            Verdict::ControlHeld => f.write_str("control held"),
            Verdict::ControlKilled => f.write_str("CONTROL KILLED"),
            Verdict::Error => f.write_str("error"),
            Verdict::Unviable => f.write_str("unviable"),
        }
    }
}

impl FromStr for Verdict {
    type Err = String;

    fn from_str(s: &str) -> Result<Verdict, String> {
        Ok(match s {
            "killed" => Verdict::Killed,
            "killed (hang)" => Verdict::KilledHang,
            "SURVIVED" => Verdict::Survived,
            "not covered" => Verdict::NotCovered,
            "control held" => Verdict::ControlHeld,
            "CONTROL KILLED" => Verdict::ControlKilled,
            "error" => Verdict::Error,
            "unviable" => Verdict::Unviable,
            other => {
                let matches = other
                    .strip_prefix("skipped (")
                    .and_then(|r| r.strip_suffix(" matches)"))
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("unknown verdict {other:?}"))?;
                Verdict::Skipped { matches }
            }
        })
    }
}

impl schemars::JsonSchema for Verdict {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Verdict".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        report::schema::string_with_pattern(
            "The verdict words of the user guide.",
            r"^(killed|killed \(hang\)|SURVIVED|not covered|control held|CONTROL KILLED|error|unviable|skipped \([0-9]+ matches\))$",
        )
    }
}

impl serde::Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_verdict_is_coloured_by_its_kind() {
        assert_eq!(Verdict::Killed.style(), Style::Good);
        assert_eq!(Verdict::KilledHang.style(), Style::Good);
        assert_eq!(Verdict::ControlHeld.style(), Style::Good);
        assert_eq!(Verdict::Survived.style(), Style::Bad);
        assert_eq!(Verdict::NotCovered.style(), Style::Bad);
        assert_eq!(Verdict::ControlKilled.style(), Style::Bad);
        assert_eq!(Verdict::Error.style(), Style::Bad);
        assert_eq!(Verdict::Skipped { matches: 2 }.style(), Style::Warn);
        assert_eq!(Verdict::Unviable.style(), Style::Warn);
    }

    #[test]
    fn words_round_trip() {
        for v in [
            Verdict::Killed,
            Verdict::KilledHang,
            Verdict::Survived,
            Verdict::NotCovered,
            Verdict::Skipped { matches: 0 },
            Verdict::Skipped { matches: 2 },
            Verdict::ControlHeld,
            Verdict::ControlKilled,
            Verdict::Error,
            Verdict::Unviable,
        ] {
            assert_eq!(v.to_string().parse::<Verdict>(), Ok(v));
        }
        assert_eq!(
            Verdict::Skipped { matches: 2 }.to_string(),
            "skipped (2 matches)"
        );
        assert_eq!(Verdict::KilledHang.to_string(), "killed (hang)");
    }

    #[test]
    fn a_sigkill_is_an_error_unless_it_stopped_the_run_at_its_first_failure() {
        let mut record = report::RunRecord::not_yet_run(Vec::new(), "wt".into(), "log".into());
        let sigkill = runner::Status {
            exit_code: None,
            signal: Some("SIGKILL".into()),
        };
        record.run.ended = runner::Ended::Exited(sigkill.clone());
        assert_eq!(
            Verdict::judge_record(Expect::Kill, &record),
            Some(Verdict::Error)
        );
        // A suite that ignored the stop's SIGTERM got the SIGKILL from us, after it failed.
        record.run.ended = runner::Ended::Stopped(sigkill);
        assert_eq!(
            Verdict::judge_record(Expect::Kill, &record),
            Some(Verdict::Killed)
        );
    }

    #[test]
    fn a_suite_that_could_not_start_is_never_a_kill() {
        assert_eq!(
            Verdict::judge(Expect::Kill, Outcome::CouldNotStart),
            Some(Verdict::Error)
        );
        assert_eq!(
            Verdict::judge(Expect::Survive, Outcome::CouldNotStart),
            Some(Verdict::Error)
        );
        assert_eq!(
            Verdict::judge(Expect::Kill, Outcome::Hang),
            Some(Verdict::KilledHang)
        );
        assert_eq!(
            Verdict::judge(Expect::Survive, Outcome::Hang),
            Some(Verdict::ControlKilled)
        );
        assert_eq!(Verdict::judge(Expect::Kill, Outcome::Interrupted), None);
        assert!(!Verdict::Error.holds());
        assert!(!Verdict::Survived.holds());
        assert!(!Verdict::NotCovered.holds() && !Verdict::NotCovered.is_kill());
        assert!(Verdict::KilledHang.holds() && Verdict::ControlHeld.holds());
        assert!(!Verdict::Skipped { matches: 1 }.holds());
        // Unviable is no finding, and never a kill.
        assert!(Verdict::Unviable.holds() && !Verdict::Unviable.is_kill());
    }
}
