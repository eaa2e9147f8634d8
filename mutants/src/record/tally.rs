//! Counts of each verdict, in the order every report lists them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use report::text::plural;

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
    /// Survivors no test covers (`not covered`): findings, as survivors are. Absent in reports
    /// written before the verdict existed.
    #[serde(default)]
    pub not_covered: usize,
    pub skipped: usize,
    pub control_held: usize,
    pub control_killed: usize,
    pub error: usize,
    /// Generated mutants whose build failed: counted on their own, never as killed.
    pub unviable: usize,
    /// Rows whose claim still says `TODO:` (whatever their verdict): claims to name yet.
    pub claims_not_named: usize,
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
                Verdict::NotCovered => t.not_covered += 1,
                Verdict::Skipped { .. } => t.skipped += 1,
                Verdict::ControlHeld => t.control_held += 1,
                Verdict::ControlKilled => t.control_killed += 1,
                Verdict::Error => t.error += 1,
                Verdict::Unviable => t.unviable += 1,
            }
            if !r.claim_named {
                t.claims_not_named += 1;
            }
        }
        t
    }
}

impl Tally {
    /// Each kind of verdict with its count, in the order every report lists them (good news
    /// first), as (count, the tally's word, a verdict of that kind): a skip is counted as
    /// `skipped`, whatever its number of matches.
    pub fn counts(&self) -> [(usize, &'static str, Verdict); 9] {
        [
            (self.killed, "killed", Verdict::Killed),
            (self.killed_hang, "killed (hang)", Verdict::KilledHang),
            (self.control_held, "control held", Verdict::ControlHeld),
            (self.survived, "SURVIVED", Verdict::Survived),
            (self.not_covered, "not covered", Verdict::NotCovered),
            (
                self.control_killed,
                "CONTROL KILLED",
                Verdict::ControlKilled,
            ),
            (self.skipped, "skipped", Verdict::Skipped { matches: 0 }),
            (self.error, "error", Verdict::Error),
            (self.unviable, "unviable", Verdict::Unviable),
        ]
    }
}

impl std::fmt::Display for Tally {
    /// `12 mutants: 9 killed, 1 killed (hang), 1 control held, 1 SURVIVED`, and `; 3 claims
    /// not named yet` while any claim still says `TODO:`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .counts()
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, word, _)| format!("{n} {word}"))
            .collect();
        write!(f, "{} mutants: {}", self.total, parts.join(", "))?;
        if self.claims_not_named > 0 {
            write!(
                f,
                "; {} not named yet",
                plural(self.claims_not_named, "claim")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unviable_rows_and_claims_not_named_are_counted_on_their_own() {
        let mut rows = vec![
            Row::sample(0, "a", Verdict::Killed),
            Row::sample(1, "b", Verdict::Unviable),
            Row::sample(2, "c", Verdict::Unviable),
        ];
        rows[1].claim_named = false;
        let t = Tally::of(&rows);
        assert_eq!((t.killed, t.unviable, t.error), (1, 2, 0));
        assert_eq!(t.claims_not_named, 1);
        assert_eq!(
            t.to_string(),
            "3 mutants: 1 killed, 2 unviable; 1 claim not named yet"
        );
        rows[0].claim_named = false;
        assert!(Tally::of(&rows)
            .to_string()
            .ends_with("; 2 claims not named yet"));
    }
}
