//! The runner against real child processes: exits, hangs, escapes, daemons holding stdout.

use std::fs;
use std::time::{Duration, Instant};

use crate::common::{alive, pid_from, within};
use runner::{Job, Outcome, Program};

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
    assert!(rec.ended.is_hang());
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
fn a_child_that_left_the_group_and_ended_on_its_own_leaves_no_zombie() {
    // git's detached `gc --auto` does this: it calls setsid and ends by itself, its parent gone
    // first, so it becomes ours (the subreaper's) and is neither in the run's group nor killed.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "(setsid sh -c 'echo $$ > {}' &); sleep 0.3; exit 0",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.outcome(), Outcome::Passed);
    let pid = pid_from(&pidfile);
    let me = std::process::id().to_string();
    // Gone, or (the pid taken again) someone else's: never a zombie child of this process.
    if let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) {
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, r)| r.split_whitespace().collect());
        assert!(
            !(fields.first() == Some(&"Z") && fields.get(1) == Some(&me.as_str())),
            "{pid} is still a zombie of ours after its run: {stat}"
        );
    }
    assert_eq!(
        rec.strays_killed, 0,
        "it ended on its own: no stray was killed"
    );
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
    assert!(!rec.ended.is_hang());
}

#[test]
fn commands_that_cannot_start_are_not_failures_or_passes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("no-such-command-gatekit", dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.ended.exit_code(), Some(127));
    assert_eq!(rec.outcome(), Outcome::CouldNotStart);

    let log = dir.path().join("argv.log");
    let job = Job::new(
        Program::Argv(vec!["/nonexistent/gatekit-bin".into()]),
        dir.path(),
        &log,
    );
    let rec = within(30, move || runner::run(&job).unwrap());
    assert!(rec.ended.could_not_start().is_some());
    assert_eq!(rec.outcome(), Outcome::CouldNotStart);
}

#[test]
fn death_by_signal_is_recorded_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let job = Job::shell("kill -SEGV $$", dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    assert_eq!(rec.ended.signal(), Some("SIGSEGV"));
    assert_eq!(rec.ended.exit_code(), None);
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

// ---- the piped mode: a child the caller talks to -------------------------------------------

/// Reads one line from a piped child's stdout.
fn read_line(reader: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    line
}

#[test]
fn a_piped_child_answers_on_its_pipes_and_its_stderr_goes_to_the_log() {
    use std::io::{BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let script = "while read l; do echo \"got $l\"; echo \"tag=$GATEKIT_RUN\"; echo \"err $l\" >&2; done; exit 3";
    let job = Job::shell(script, dir.path(), &log);
    let rec = within(30, move || {
        let mut child = runner::start_piped(&job).unwrap();
        let mut stdin = child.take_stdin().unwrap();
        let mut stdout = BufReader::new(child.take_stdout().unwrap());
        writeln!(stdin, "hello").unwrap();
        assert_eq!(read_line(&mut stdout), "got hello\n");
        let tag = read_line(&mut stdout);
        assert!(tag.len() > "tag=\n".len(), "no run tag: {tag:?}");
        // The child is in a group of its own.
        let pgid = nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(child.pid()))).unwrap();
        assert_eq!(pgid.as_raw(), child.pid());
        drop(stdin);
        child.finish(Duration::from_secs(10))
    });
    assert_eq!(rec.ended.exit_code(), Some(3), "{rec:?}");
    assert_eq!(rec.outcome(), Outcome::Failed);
    assert!(!rec.ended.is_hang() && !rec.ended.is_interrupted());
    assert_eq!(fs::read_to_string(&log).unwrap(), "err hello\n");
}

#[test]
fn killing_a_piped_child_kills_its_group_and_its_escaped_strays() {
    use std::io::BufReader;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let pidfile = dir.path().join("escaped");
    // A grandchild in the group, one that left it, and a child that hangs ignoring its stdin.
    let script = format!(
        "sleep 1000 & echo $!; setsid sh -c 'echo $$ > {}; exec sleep 1000' & wait",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log).grace(Duration::from_millis(300));
    let (rec, child, grandchild, escaped) = within(30, move || {
        let mut piped = runner::start_piped(&job).unwrap();
        let mut stdout = BufReader::new(piped.take_stdout().unwrap());
        let grandchild: i32 = read_line(&mut stdout).trim().parse().unwrap();
        let escaped = pid_from(&pidfile);
        assert!(alive(grandchild) && alive(escaped));
        let child = piped.pid();
        (piped.kill(), child, grandchild, escaped)
    });
    assert!(!alive(child), "the child survived");
    assert!(!alive(grandchild), "the grandchild in its group survived");
    assert!(!alive(escaped), "the child that left the group survived");
    assert!(rec.strays_killed >= 1, "{rec:?}");
    assert!(!rec.ended.is_hang());
}

#[test]
fn a_piped_child_past_its_timeout_is_a_hang_and_its_reader_sees_the_end() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let job = Job::shell("sleep 1000", dir.path(), &log)
        .timeout(Duration::from_millis(400))
        .grace(Duration::from_millis(200));
    let started = Instant::now();
    let rec = within(30, move || {
        let mut piped = runner::start_piped(&job).unwrap();
        // A read that would wait forever ends when the group is killed at the timeout.
        let mut rest = Vec::new();
        piped.take_stdout().unwrap().read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
        piped.finish(Duration::ZERO)
    });
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(rec.ended.is_hang(), "{rec:?}");
    assert_eq!(rec.outcome(), Outcome::Hang);
}

#[test]
fn a_dropped_piped_child_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let pidfile = dir.path().join("pid");
    let script = format!(
        "sh -c 'echo $$ > {}; exec sleep 1000' & wait",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log).grace(Duration::from_millis(300));
    let (child, grandchild) = within(30, move || {
        let piped = runner::start_piped(&job).unwrap();
        let grandchild = pid_from(&pidfile);
        let child = piped.pid();
        drop(piped);
        (child, grandchild)
    });
    assert!(!alive(child) && !alive(grandchild));
}

#[test]
fn a_piped_command_that_cannot_start_is_an_error_named_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let job = Job::new(
        Program::Argv(vec!["/nonexistent/gatekit-server".into()]),
        dir.path(),
        &log,
    );
    assert!(runner::start_piped(&job).is_err());
    assert!(fs::read_to_string(&log)
        .unwrap()
        .contains("/nonexistent/gatekit-server"));
}
