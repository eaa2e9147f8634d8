//! A descendant that leaves the group, clears its environment and loses its parent is found by
//! the subreaper rule, which applies while one run is in flight: so this test has a process of
//! its own (cargo runs the tests of one file in parallel threads).

mod common;

use common::{alive, pid_from, within};
use runner::Job;

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
