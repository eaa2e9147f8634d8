//! The runner against real child processes: exits, hangs, escapes, daemons holding stdout.

use std::fs;
use std::time::{Duration, Instant};

use crate::common::{alive, pid_from, within};
use report::runner::{self, Job, Outcome, Program};

#[test]
fn exit_code_log_and_counts_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell(
        "echo hello; echo oops >&2; echo '3 passed, 1 failed'; exit 3",
        dir.path(),
        &log,
    );
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.exit_code, Some(3));
    assert_eq!(rec.outcome(), Outcome::Failed);
    assert!(!rec.hang);
    assert_eq!(rec.strays_killed, 0);
    let counts = rec.counts.expect("counts");
    assert_eq!((counts.passed, counts.failed), (3, 1));
    let text = fs::read_to_string(&log).unwrap();
    assert!(text.contains("hello") && text.contains("oops"));
    assert_eq!(rec.argv[0], "sh");
    assert!(rec.start.to_string().ends_with('Z'));
}

#[test]
fn environment_is_set_and_stdin_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("echo \"v=$GK_X\"; cat; echo end", dir.path(), &log).env("GK_X", "42");
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.outcome(), Outcome::Passed);
    assert_eq!(fs::read_to_string(&log).unwrap(), "v=42\nend\n");
}

#[test]
fn a_hang_is_killed_with_its_group_and_reported_as_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    // A child in the same group that ignores SIGTERM: only SIGKILL after the grace ends it.
    let script = format!(
        "sh -c 'trap \"\" TERM; echo $$ > {}; while :; do sleep 1; done' & wait",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log)
        .timeout(Duration::from_millis(500))
        .grace(Duration::from_millis(300));
    let rec = within(30, move || runner::run(&job).unwrap());
    assert!(rec.hang);
    assert_eq!(rec.outcome(), Outcome::Hang);
    assert!(
        rec.duration_secs >= 0.5 && rec.duration_secs < 5.0,
        "{}",
        rec.duration_secs
    );
    assert!(!alive(pid_from(&pidfile)), "the group member survived");
}

#[test]
fn a_child_that_escapes_the_group_with_setsid_is_killed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 1000' & sleep 0.3; exit 0",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.outcome(), Outcome::Passed);
    let pid = pid_from(&pidfile);
    assert!(!alive(pid), "escaped process {pid} is still running");
    assert_eq!(rec.strays_killed, 1);
}

#[test]
fn a_hang_whose_child_escaped_the_group_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "setsid sh -c 'trap \"\" TERM; echo $$ > {}; while :; do sleep 1; done' & sleep 1000",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log)
        .timeout(Duration::from_millis(600))
        .grace(Duration::from_millis(200));
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.outcome(), Outcome::Hang);
    let pid = pid_from(&pidfile);
    assert!(!alive(pid), "escaped process {pid} is still running");
    // The escaped shell, and its `sleep 1` when one is running.
    assert!(rec.strays_killed >= 1);
}

#[test]
fn a_daemon_holding_stdout_open_does_not_hang_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("setsid sleep 1000 & echo started", dir.path(), &log)
        .echo(true)
        .timeout(Duration::from_secs(60));
    let started = Instant::now();
    let rec = within(30, move || runner::run(&job).unwrap());
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(rec.outcome(), Outcome::Passed);
    assert_eq!(rec.strays_killed, 1);
    assert!(!rec.hang);
}

#[test]
fn commands_that_cannot_start_are_not_failures_or_passes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("no-such-command-gatekit", dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.exit_code, Some(127));
    assert_eq!(rec.outcome(), Outcome::CouldNotStart);

    let log = dir.path().join("argv.log");
    let job = Job::new(
        Program::Argv(vec!["/nonexistent/gatekit-bin".into()]),
        dir.path(),
        &log,
    );
    let rec = within(30, move || runner::run(&job).unwrap());
    assert!(rec.spawn_error.is_some());
    assert_eq!(rec.outcome(), Outcome::CouldNotStart);
}

#[test]
fn death_by_signal_is_recorded_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("kill -SEGV $$", dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.signal.as_deref(), Some("SIGSEGV"));
    assert_eq!(rec.exit_code, None);
    assert_eq!(rec.outcome(), Outcome::Failed);
}

#[test]
fn an_escaped_child_that_dies_on_sigterm_still_counts_as_a_stray() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 1000' & sleep 1000",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log)
        .timeout(Duration::from_millis(500))
        .grace(Duration::from_secs(2));
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.outcome(), Outcome::Hang);
    assert!(!alive(pid_from(&pidfile)));
    assert_eq!(rec.strays_killed, 1);
}

#[test]
fn a_nested_run_extends_the_tag_and_still_finds_its_strays() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    // As if this runner ran inside an outer gatekit run.
    let script = format!(
        "echo \"tag=$GATEKIT_RUN\"; setsid sh -c 'echo $$ > {}; exec sleep 1000' & sleep 0.3",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log).env("GATEKIT_RUN", "outer-run");
    // A second run in flight meanwhile, so the adopted-orphan rule (one run only) cannot be
    // what finds the stray: only the extended tag can.
    let other_dir = dir.path().to_path_buf();
    let other = std::thread::spawn(move || {
        let job = Job::shell("sleep 2", &other_dir, other_dir.join("other.log"));
        runner::run(&job).unwrap()
    });
    std::thread::sleep(Duration::from_millis(100));
    let rec = within(30, move || runner::run(&job).unwrap());
    other.join().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("tag=outer-run:"), "{text}");
    assert!(
        !alive(pid_from(&pidfile)),
        "the nested run's stray survived"
    );
    assert_eq!(rec.strays_killed, 1);
}
