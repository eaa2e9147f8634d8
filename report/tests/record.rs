//! A run's record reads its log: the counts a runner printed, and the one judge rule that an
//! exit 0 whose runner reports failures is no pass.

use std::fs;

use crate::common::within;
use report::record;
use runner::{Job, Outcome};

#[test]
fn exit_code_log_and_counts_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell(
        "echo hello; echo oops >&2; echo '3 passed, 1 failed'; exit 3",
        dir.path(),
        &log,
    );
    let rec = within(30, move || record::run(&job).unwrap());
    assert_eq!(rec.run.ended.exit_code(), Some(3));
    assert_eq!(rec.outcome(), Outcome::Failed);
    assert!(!rec.run.ended.is_hang());
    assert_eq!(rec.run.strays_killed, 0);
    let counts = rec.counts.expect("counts");
    assert_eq!((counts.passed, counts.failed), (3, 1));
    let text = fs::read_to_string(&log).unwrap();
    assert!(text.contains("hello") && text.contains("oops"));
    assert_eq!(rec.run.argv[0], "sh");
    assert!(rec.start().to_string().ends_with('Z'));
}

#[test]
fn a_run_whose_runner_reports_failures_but_exits_0_is_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("echo '1 passed, 2 failed'; exit 0", dir.path(), &log);
    let rec = within(30, move || record::run(&job).unwrap());
    assert_eq!(rec.run.ended.exit_code(), Some(0));
    assert_eq!(rec.failures_despite_exit_0(), Some(2));
    assert_eq!(rec.outcome(), Outcome::Failed);
    assert_eq!(
        rec.status_text(),
        "exit 0 but 2 failed: the counts and the exit disagree"
    );
    // Counts with no failure, or no counts at all, leave exit 0 the pass it is.
    let job = Job::shell("echo '3 passed'; exit 0", dir.path(), &log);
    let rec = within(30, move || record::run(&job).unwrap());
    assert_eq!(
        (rec.outcome(), rec.status_text().as_str()),
        (Outcome::Passed, "exit 0")
    );
}
