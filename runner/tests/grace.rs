//! The runner's last resort: a process that ignores SIGTERM still ends, by SIGKILL after the
//! grace, and is reported as a hang.

use std::time::Duration;

use crate::common::{alive, pid_from, within};
use runner::{Job, Outcome};

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
    assert_eq!(rec.ended.signal(), Some("SIGKILL"), "{rec:?}");
    assert!(
        !alive(pid_from(&pidfile)),
        "the shell that ignored SIGTERM lives"
    );
}
