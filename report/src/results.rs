//! Where a suite's counts and failed tests are read from, and the reading: the log's closing
//! lines (the default, [`crate::counts`] and [`crate::failures`]), the JUnit XML report its
//! runner writes (`junit = "reports/junit.xml"`, [`crate::junit_read`]), or the TAP its
//! runner prints (`tap = true`, [`crate::tap`]).
//!
//! A suite that names its runner's own report gets every count and every failed test's full id
//! and first error line from it. A JUnit file this run did not write (missing, older than the
//! run's start, a link, not XML) is never read as this run's: the record says so and the
//! counts come from the log.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::counts::{self, Counts};
use crate::errors::Failed;
use crate::{failures, junit_read, tap};

/// Where a suite's results are read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// The runner's closing lines in its log.
    #[default]
    Log,
    /// The JUnit XML file the runner writes, relative to the checkout's root.
    Junit(PathBuf),
    /// The runner prints TAP on stdout.
    Tap,
}

impl Source {
    /// `junit = PATH` as a config writes it, by the one path rule ([`files::path`]): relative to
    /// the checkout, never absolute, never climbing; the message is a predicate (`is absolute
    /// ...`) for the caller to locate.
    pub fn junit(path: &str) -> Result<Source, files::path::PathError> {
        let rel = files::path::relative(path)?;
        if rel.names_folder() {
            // A report is a file; `reports/` names none.
            return Err(files::path::PathError::NoName);
        }
        Ok(Source::Junit(rel.as_path().to_path_buf()))
    }
}

/// What was read about a run's tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Results {
    pub counts: Option<Counts>,
    /// The failed tests the source names, in order, each once, with the line that says why.
    pub failed: Vec<Failed>,
    /// The first error lines of the log, for a failure that names no test.
    pub log_errors: Vec<String>,
    /// The report read, when it was not the log (`reports/junit.xml`, `TAP`).
    pub from: Option<String>,
    /// Why the report the suite names was not read (`reports/junit.xml was not written by
    /// this run`); the counts then come from the log.
    pub missing: Option<String>,
}

/// The largest JUnit file read: a report bigger than this is refused, not read in part.
const MAX_JUNIT: u64 = 64 << 20;

/// A file's mtime may trail the clock read just before the run by the kernel's coarse tick.
const MTIME_SLACK: Duration = Duration::from_millis(10);

/// Reads a run's results from `source`: `log` is the log's text (its tail), `dir` the folder
/// the run ran in (the checkout), `since` when it started.
pub fn read(source: &Source, log: &str, dir: &Path, since: SystemTime) -> Results {
    let mut results = match source {
        Source::Log => from_log(log),
        Source::Tap => {
            let tap = tap::read(log);
            Results {
                counts: Some(tap.counts),
                failed: tap.failed,
                from: Some("TAP".to_string()),
                ..Results::default()
            }
        }
        Source::Junit(rel) => match junit_file(dir, rel, since) {
            Ok(report) => Results {
                counts: Some(report.counts),
                failed: report.failed,
                from: Some(rel.display().to_string()),
                ..Results::default()
            },
            Err(why) => Results {
                missing: Some(format!(
                    "{} {why}: counts and names from the log",
                    rel.display()
                )),
                ..from_log(log)
            },
        },
    };
    // A failure whose report says nothing of why (node's `test failed` for a file that did
    // not load) is looked for in the log, where the runner printed the cause.
    if results.failed.iter().any(|f| f.error.is_none()) && !matches!(source, Source::Log) {
        let found = failures::errors_in_log(log, &results.failed);
        for (failed, error) in results.failed.iter_mut().zip(found) {
            if failed.error.is_none() {
                failed.error = error;
            }
        }
    }
    if results.failed.is_empty() {
        results.log_errors = failures::log_errors(log);
    }
    results
}

impl Results {
    /// A TAP stream whose plan does not hold (see [`tap::plan_problem`]) failed: one more
    /// failure, named `TAP plan`, with why.
    pub(crate) fn hold_to_tap_plan(&mut self, log: &str) {
        let Some(why) = tap::plan_problem(log) else {
            return;
        };
        let counts = self.counts.get_or_insert_with(Counts::default);
        counts.failed = counts.failed.saturating_add(1);
        self.failed.push(Failed {
            name: "TAP plan".to_string(),
            error: Some(format!("the TAP stream's plan does not hold: {why}")),
        });
    }
}

/// The log's closing lines, and its failed tests (TAP's when the log is TAP).
fn from_log(log: &str) -> Results {
    let failed = if tap::is_tap(log) {
        tap::read(log).failed
    } else {
        let names = failures::failed_tests(log);
        let named: Vec<Failed> = names
            .into_iter()
            .map(|name| Failed { name, error: None })
            .collect();
        let errors = failures::errors_in_log(log, &named);
        named
            .into_iter()
            .zip(errors)
            .map(|(f, error)| Failed {
                name: f.name,
                error,
            })
            .collect()
    };
    Results {
        counts: counts::read(log),
        failed,
        ..Results::default()
    }
}

/// The JUnit report at `dir/rel`, when this run wrote it; else why not, as a predicate.
fn junit_file(dir: &Path, rel: &Path, since: SystemTime) -> Result<junit_read::Report, String> {
    let reached = files::walk::below(dir, rel).map_err(|_| "is behind a link".to_string())?;
    match reached.end {
        files::walk::End::File => {}
        files::walk::End::Missing => return Err("was not written by this run".into()),
        files::walk::End::Link => return Err("is a link, not read".into()),
        _ => return Err("is not a regular file".into()),
    }
    let file = std::fs::File::open(&reached.path).map_err(|e| format!("cannot be read: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read: {e}"))?;
    let written = meta.modified().map_err(|e| format!("has no mtime: {e}"))?;
    if written + MTIME_SLACK < since {
        return Err("was not written by this run (it is older than the run)".into());
    }
    if meta.len() > MAX_JUNIT {
        return Err(format!("is over {} MiB, not read", MAX_JUNIT >> 20));
    }
    let mut bytes = Vec::new();
    file.take(MAX_JUNIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    let text = String::from_utf8_lossy(&bytes);
    junit_read::read(&text).map_err(|e| format!("is {e}"))
}

impl Results {
    /// The names of the failed tests, in order.
    pub fn names(&self) -> Vec<String> {
        self.failed.iter().map(|f| f.name.clone()).collect()
    }

    /// The line that says why the run failed: its first failed test's, else the log's first.
    pub fn first_error(&self) -> Option<String> {
        match self.failed.first() {
            Some(f) => f.error.clone(),
            None => self.log_errors.first().cloned(),
        }
    }

    /// Why the run failed, a line each: every failed test named (at most
    /// [`failures::WHY_TESTS`]) with the line that says why, then how many more; or, when no
    /// test is named, the log's first error lines.
    pub fn why(&self) -> Vec<String> {
        if self.failed.is_empty() {
            return self.log_errors.clone();
        }
        let mut out: Vec<String> = self
            .failed
            .iter()
            .take(failures::WHY_TESTS)
            .map(|f| match &f.error {
                Some(e) => format!("{}: {e}", f.name),
                None => f.name.clone(),
            })
            .collect();
        if self.failed.len() > failures::WHY_TESTS {
            out.push(format!(
                "+{} more failed tests",
                self.failed.len() - failures::WHY_TESTS
            ));
        }
        out
    }
}

/// Why a run failed, read from its log alone (see [`Results::why`]).
pub fn why(log: &str) -> Vec<String> {
    read(&Source::Log, log, Path::new("."), SystemTime::UNIX_EPOCH).why()
}

/// The failed tests' names as every rendering shows them: the first `shown`, then how many
/// more were named; and when the runner named fewer tests than failed, how many it did not
/// name and the log that holds them, so a list is never shorter than the count without saying
/// so. `shown` 0 leaves the names out (for a rendering that lists them elsewhere) and keeps the
/// note. `failed` is the count the runner gave (none when it gave none).
pub fn names_text(names: &[String], failed: Option<u64>, shown: usize, log: &str) -> String {
    let named = names.len() as u64;
    let mut text = names
        .iter()
        .take(shown)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    // `shown` 0 is for a rendering that lists the names elsewhere (Stryker's `killedBy`).
    if names.len() > shown && shown > 0 {
        text.push_str(&format!(", +{} more", names.len() - shown));
    }
    if let Some(note) = unnamed_text(named, failed, log) {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&note);
    }
    text
}

/// `48 of 53 failed tests not named: see LOG` when the runner named fewer tests than failed
/// (`53 failed tests, none named: see LOG` when it named none); `None` when none is missing.
pub fn unnamed_text(named: u64, failed: Option<u64>, log: &str) -> Option<String> {
    let failed = failed?;
    if failed <= named {
        return None;
    }
    let unnamed = failed - named;
    Some(if named == 0 {
        let tests = if failed == 1 { "test" } else { "tests" };
        format!("{failed} failed {tests}, none named: see {log}")
    } else {
        format!("{unnamed} of {failed} failed tests not named: see {log}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_names_shorter_than_the_count_says_how_many_are_unnamed_and_where() {
        let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(
            names_text(&names, Some(53), 3, "logs/x.log"),
            "a, b, c, +2 more; 48 of 53 failed tests not named: see logs/x.log"
        );
        assert_eq!(names_text(&names, Some(5), 3, "l"), "a, b, c, +2 more");
        assert_eq!(names_text(&names[..1], None, 3, "l"), "a");
        assert_eq!(
            names_text(&[], Some(7), 3, "logs/x.log"),
            "7 failed tests, none named: see logs/x.log"
        );
        assert_eq!(names_text(&[], Some(0), 3, "l"), "");
        assert_eq!(
            names_text(&names, Some(6), 0, "l"),
            "1 of 6 failed tests not named: see l"
        );
    }
}
