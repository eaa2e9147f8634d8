//! Claims of the README that gatekit's own mutants (mutants.toml) showed no test pinned.

use std::time::Duration;

mod common;

use common::{alive, pid_from, within};
use report::counts;
use report::runner::{self, Job, Outcome};

#[test]
fn a_main_process_that_ignores_sigterm_gets_sigkill_after_the_grace() {
    // The shell itself ignores SIGTERM (and its `sleep`s inherit that): only the SIGKILL after
    // the grace ends it, and without it the runner would wait for it forever.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "trap '' TERM; echo $$ > {}; while :; do sleep 1; done",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log)
        .timeout(Duration::from_millis(500))
        .grace(Duration::from_millis(300));
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.outcome(), Outcome::Hang);
    assert!(rec.duration_secs < 5.0, "{}", rec.duration_secs);
    assert_eq!(rec.signal.as_deref(), Some("SIGKILL"), "{rec:?}");
    assert!(
        !alive(pid_from(&pidfile)),
        "the shell that ignored SIGTERM lives"
    );
}

#[test]
fn cargo_test_closing_lines_give_passed_failed_and_ignored_in_that_order() {
    let log = "test result: FAILED. 5 passed; 2 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.10s\n";
    let c = counts::read(log).expect("counts");
    assert_eq!((c.passed, c.failed, c.skipped), (5, 2, 3));
}
