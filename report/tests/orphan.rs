//! A descendant that leaves the group, clears its environment and loses its parent is found by
//! the subreaper rule, which applies while one run is in flight: so this test has a process of
//! its own (cargo runs the tests of one file in parallel threads).

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use report::runner::{self, Job};

/// Runs `f` on a thread and fails the test if it takes longer than `secs`: a runner regression
/// must fail a test, not hang the suite.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("the runner did not return in time")
}

fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start().starts_with('Z'))
            .unwrap_or(true),
        Err(_) => false,
    }
}

/// Waits for a pid file a child writes, and returns the pid in it.
fn pid_from(path: &Path) -> i32 {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < until, "no pid in {}", path.display());
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_double_fork_that_clears_its_environment_is_still_found() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("out.log");
    let pidfile = dir.path().join("pid");
    // Leaves the group, drops the tag, and its parent dies: only the subreaper still sees it.
    let script = format!(
        "(setsid env -i sh -c 'echo $$ > {}; exec sleep 1000' &) ; sleep 0.3; exit 0",
        pidfile.display()
    );
    let job = Job::shell(script, dir.path(), &log);
    let rec = within(30, move || runner::run(&job).unwrap());
    let pid = pid_from(&pidfile);
    assert!(!alive(pid), "escaped process {pid} is still running");
    assert!(rec.strays_killed >= 1);
}
