//! A red baseline said: each failed suite's why (its failed tests and first error lines, or its
//! log's last lines when it names none), then what git ignores in the user's tree that the
//! checkout lacks (`candidate::ignored`), the usual reason a suite green there is red here.

use super::note::Note;
use super::{Out, Session};

impl Session {
    /// Says why the baseline is red, after it was recorded in the report.
    pub(super) fn say_red(&self, out: &mut Out) {
        for b in self.report.baseline.iter().filter(|b| !b.passed) {
            // Why, as the record says it: the failed tests and the first error line of
            // each (`Cannot find package ...` is above a runner's summary block, not in
            // it); the log's last lines when it names no test and no error.
            let log = self.out.join(&b.log);
            let text = match b.why.is_empty() {
                true => runner::read_tail(&log, 1 << 20).unwrap_or_default(),
                false => String::new(),
            };
            let lines: Vec<&str> = text.lines().collect();
            out.emit(&Note::BaselineFailed {
                suite: &b.suite,
                status: &b.status,
                why: b.why.iter().chain(&b.notes).map(String::as_str).collect(),
                tail: lines[lines.len().saturating_sub(12)..].to_vec(),
                log: &log,
            });
        }
        let missing = candidate::ignored::missing(
            self.source.repo(),
            self.checkouts[0].path(),
            &[self.out.as_path()],
        );
        if !missing.is_empty() {
            out.emit(&Note::IgnoredMissing { paths: &missing });
        }
    }
}
