//! The end-of-tool sweep kills what no run claimed: an orphan we adopted as subreaper. In its
//! own test binary because the sweep looks at every child of the process.

mod common;

use std::process::Command;

use common::{alive, pid_from};

#[test]
fn the_sweep_kills_an_adopted_orphan_that_no_run_claimed() {
    runner::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // Started outside any run: it leaves its group, clears its environment, loses its parent.
    // Output to /dev/null: were the orphan to survive, it must not hold the test's stdout open.
    let status = Command::new("sh")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .arg("-c")
        .arg(format!(
            "(setsid env -i sh -c 'echo $$ > {}; exec sleep 1000' &)",
            pidfile.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let pid = pid_from(&pidfile);
    assert!(alive(pid));
    assert!(runner::sweep() >= 1);
    assert!(!alive(pid), "the orphan survived the sweep");
    assert_eq!(runner::sweep(), 0, "a second sweep finds nothing");
}
