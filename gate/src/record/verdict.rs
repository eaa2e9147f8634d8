//! The gate's answer in a word, with its exit code and colour.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use report::color::Style;

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
    pub(crate) fn of(interrupted: bool, findings: &[String]) -> Verdict {
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

    /// The exit code `gate run` gives it: only a PASS is 0, and a run that did not finish is
    /// 130 whether a signal stopped it or it never got to say.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => cmdline::Exit::Ok.code(),
            Verdict::Fail => cmdline::Exit::Findings.code(),
            Verdict::Interrupted | Verdict::Incomplete => cmdline::Exit::Interrupted.code(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_pass_only_without_findings_and_interrupted_trumps_them() {
        let finding = vec!["drift: 1 commit(s) since base touch candidate paths".to_string()];
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
}
