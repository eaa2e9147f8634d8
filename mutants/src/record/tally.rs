//! Counts of each verdict, in the order every report lists them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::verdict::Verdict;

use super::row::Row;

/// Counts of each verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tally {
    pub total: usize,
    pub killed: usize,
    pub killed_hang: usize,
    pub survived: usize,
    pub skipped: usize,
    pub control_held: usize,
    pub control_killed: usize,
    pub error: usize,
}

impl Tally {
    pub fn of(rows: &[Row]) -> Tally {
        let mut t = Tally {
            total: rows.len(),
            ..Tally::default()
        };
        for r in rows {
            match r.verdict {
                Verdict::Killed => t.killed += 1,
                Verdict::KilledHang => t.killed_hang += 1,
                Verdict::Survived => t.survived += 1,
                Verdict::Skipped { .. } => t.skipped += 1,
                Verdict::ControlHeld => t.control_held += 1,
                Verdict::ControlKilled => t.control_killed += 1,
                Verdict::Error => t.error += 1,
            }
        }
        t
    }
}

impl Tally {
    /// Each kind of verdict with its count, in the order every report lists them (good news
    /// first), as (count, the tally's word, a verdict of that kind): a skip is counted as
    /// `skipped`, whatever its number of matches.
    pub fn counts(&self) -> [(usize, &'static str, Verdict); 7] {
        [
            (self.killed, "killed", Verdict::Killed),
            (self.killed_hang, "killed (hang)", Verdict::KilledHang),
            (self.control_held, "control held", Verdict::ControlHeld),
            (self.survived, "SURVIVED", Verdict::Survived),
            (
                self.control_killed,
                "CONTROL KILLED",
                Verdict::ControlKilled,
            ),
            (self.skipped, "skipped", Verdict::Skipped { matches: 0 }),
            (self.error, "error", Verdict::Error),
        ]
    }
}

impl std::fmt::Display for Tally {
    /// `12 mutants: 9 killed, 1 killed (hang), 1 control held, 1 SURVIVED`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .counts()
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, word, _)| format!("{n} {word}"))
            .collect();
        write!(f, "{} mutants: {}", self.total, parts.join(", "))
    }
}
