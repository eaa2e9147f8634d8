//! Which tests a mutant's suite ran first, when the suite has a `select` template and the run
//! a coverage map ([`Selection`]), and the one rule that makes `not covered` out of a record.
//!
//! A suite run with a selection is either the covering tests' own run, which counts only as a
//! kill (`whole` false), or the whole suite's run (`whole` true) after covering tests that did
//! not fail, or in place of none: so every survivor, and every `not covered`, is the whole
//! suite's word, and a wrong map can make a run slower, never a verdict wrong.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use report::Counts;

use super::strict::required;
use crate::verdict::Verdict;

/// How many selected tests a row names; the count says how many there were.
pub(crate) const NAMED: usize = 20;

/// The tests a coverage map says reach a mutant's lines, and what ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Selection {
    /// `files` or `tests`: what the suite's `select` template takes.
    #[schemars(regex(pattern = r"^(files|tests)$"))]
    pub items: String,
    /// How many tests reach the mutated lines (0: none does).
    pub count: usize,
    /// The first of them (up to 20), as the `select` command was handed them.
    pub tests: Vec<String>,
    /// Every test reaches the mutated lines: they run outside any test (at module level, or,
    /// in a map by function, in no function or in a file the build never compiled; `count`
    /// 0), or every test the map knows runs them (`count` all of them). Either way the whole
    /// suite ran at once.
    pub every: bool,
    /// The covering tests' own run, when it did not fail and the whole suite ran after it;
    /// `None` when this suite run is that run, or none ran.
    #[serde(deserialize_with = "required")]
    pub covering: Option<Covering>,
    /// Whether this suite run is the whole suite's (`run`); false when it is the covering tests'
    /// run, which killed the mutant.
    pub whole: bool,
    /// The covering tests' run on the unmutated code, when it did not pass (tests that need
    /// others run before them, say): their failure with the mutant would prove nothing, so
    /// they did not run with it and the whole suite decided. Absent when they passed.
    #[schemars(extend("x-optional" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmutated: Option<Covering>,
    /// For a map that ran every test alone on the unmutated code (cargo's by test), the first
    /// covering test that failed with the mutant, run alone with it: a kill stands only when
    /// it failed alone too (it passed alone without the mutant); else the whole suite decided.
    /// Absent when no such run was made.
    #[schemars(extend("x-optional" = true))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone: Option<Alone>,
}

/// The first failed covering test's run alone with the mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Alone {
    /// The test, as the `select` command was handed it.
    pub test: String,
    /// Whether it failed alone (a failed test reported, or a hang).
    pub failed: bool,
    /// `exit 101`, `exit 0`.
    pub status: String,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
}

/// A run of the covering tests that did not decide: with the mutant, one that did not fail
/// before the whole suite ran; without it, one that did not pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Covering {
    /// `exit 0`, `not started (...)`.
    pub status: String,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    #[serde(deserialize_with = "required")]
    pub counts: Option<Counts>,
    #[schemars(regex(pattern = r"^logs/"))]
    pub log: String,
}

impl Selection {
    /// The verdict of a suite run with this selection, from `judged`, what its own record
    /// gives: a survivor of the whole suite that no test covers is `not covered`; a run of the
    /// covering tests alone that is no kill (it never is: they would have been confirmed by
    /// the whole suite) contradicts itself, an `error`.
    pub fn verdict(&self, judged: Verdict) -> Verdict {
        match (self.whole, judged) {
            (true, Verdict::Survived) if self.count == 0 && !self.every => Verdict::NotCovered,
            (true, v) => v,
            (false, v) if v.is_kill() && self.count > 0 => v,
            (false, Verdict::Unviable) => Verdict::Unviable,
            (false, _) => Verdict::Error,
        }
    }

    /// What ran, in a line: `2 covering tests selected (a.test.mjs, b.test.mjs)`, `then the
    /// whole suite`, `no test covers it`.
    /// `hung`: the run this selection describes hung (a covering run that hung killed with a
    /// hang: `they hung`, not `they failed`).
    pub fn text_of(&self, hung: bool) -> String {
        let named = || {
            let mut names = self.tests.join(", ");
            if self.count > self.tests.len() {
                names.push_str(&format!(", {} more", self.count - self.tests.len()));
            }
            names
        };
        let tests = report::text::plural(self.count, "covering test");
        if self.every && self.count == 0 {
            return "every test reaches the mutated lines (run outside any test, or read when the code is built): the whole suite ran".into();
        }
        if self.every {
            return format!("every test covers it ({tests}): the whole suite ran");
        }
        if self.count == 0 {
            return "no test covers it: the whole suite ran".into();
        }
        if let (Some(u), true) = (&self.unmutated, self.whole) {
            return format!(
                "{tests} selected ({}) fail without the mutant too ({} in {}, {}): the whole suite ran",
                named(),
                u.status,
                crate::render::secs_text(u.duration_secs),
                u.log
            );
        }
        let alone = |a: &Alone| {
            format!(
                "{} {} alone ({} in {}, {})",
                a.test,
                if a.failed { "failed" } else { "passed" },
                a.status,
                crate::render::secs_text(a.duration_secs),
                a.log
            )
        };
        match (&self.covering, self.whole) {
            (_, false) if hung => format!("{tests} selected ({}): they hung", named()),
            (_, false) => match &self.alone {
                Some(a) => format!("{tests} selected ({}): they failed; {}", named(), alone(a)),
                None => format!("{tests} selected ({}): they failed", named()),
            },
            (Some(c), true) => format!(
                "{tests} selected ({}): {} in {}{}, then the whole suite ran",
                named(),
                c.status,
                crate::render::secs_text(c.duration_secs),
                match &self.alone {
                    Some(a) => format!("; {} with the mutant", alone(a)),
                    None => String::new(),
                }
            ),
            (None, true) => format!(
                "{tests} ({}), too many to pass: the whole suite ran",
                named()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(count: usize, every: bool, whole: bool) -> Selection {
        Selection {
            items: "files".into(),
            count,
            tests: (0..count.min(NAMED)).map(|i| format!("t{i}.mjs")).collect(),
            every,
            covering: None,
            whole,
            unmutated: None,
            alone: None,
        }
    }

    #[test]
    fn not_covered_is_only_a_whole_suites_survivor_that_no_test_covers() {
        let s = Verdict::Survived;
        assert_eq!(selection(0, false, true).verdict(s), Verdict::NotCovered);
        assert_eq!(selection(2, false, true).verdict(s), Verdict::Survived);
        assert_eq!(selection(0, true, true).verdict(s), Verdict::Survived);
        assert_eq!(
            selection(0, false, true).verdict(Verdict::Killed),
            Verdict::Killed
        );
        // The covering tests alone decide only a kill.
        assert_eq!(selection(2, false, false).verdict(s), Verdict::Error);
        assert_eq!(
            selection(2, false, false).verdict(Verdict::KilledHang),
            Verdict::KilledHang
        );
        assert_eq!(
            selection(0, false, false).verdict(Verdict::Killed),
            Verdict::Error
        );
        assert!(selection(25, false, false)
            .text_of(false)
            .contains("5 more"));
        assert!(selection(2, false, false)
            .text_of(true)
            .ends_with("they hung"));
        assert!(selection(2, false, false)
            .text_of(false)
            .ends_with("they failed"));
    }

    #[test]
    fn a_run_alone_is_said_with_its_outcome() {
        let alone = |failed: bool| Alone {
            test: "tests::adds".into(),
            failed,
            status: if failed { "exit 101" } else { "exit 0" }.into(),
            duration_secs: 0.25,
            log: "logs/002-m.alone.log".into(),
        };
        let mut killed = selection(2, false, false);
        killed.alone = Some(alone(true));
        assert!(killed.text_of(false).ends_with(
            "they failed; tests::adds failed alone (exit 101 in 0.25s, logs/002-m.alone.log)"
        ));
        let mut whole = selection(2, false, true);
        whole.alone = Some(alone(false));
        whole.covering = Some(Covering {
            status: "exit 101".into(),
            duration_secs: 1.0,
            counts: None,
            log: "logs/002-m.select.log".into(),
        });
        let text = whole.text_of(false);
        assert!(
            text.contains("tests::adds passed alone (exit 0 in 0.25s, logs/002-m.alone.log) with the mutant, then the whole suite ran"),
            "{text}"
        );
    }
}
