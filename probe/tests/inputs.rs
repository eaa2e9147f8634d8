//! probe's one input file, `test-client --mcp-config`: a FIFO nobody writes to ends at Ctrl-C
//! with 130, and a folder, a socket or a device is refused with exit 2 and one line naming it.

use std::process::Command;
use std::time::Duration;

use testkit::inputs::{fifo, interrupt_while_waiting, not_files};

use crate::common::PROBE;

#[test]
fn an_mcp_config_nobody_writes_to_ends_at_ctrl_c_with_130() {
    let dir = tempfile::tempdir().unwrap();
    let silent = fifo(&dir.path().join("mcp.fifo"));
    let mut cmd = Command::new(PROBE);
    cmd.arg("test-client")
        .arg("--mcp-config")
        .arg(&silent)
        .args(["--n", "10"]);
    let ended = interrupt_while_waiting(&mut cmd, Duration::from_millis(800));
    assert_eq!(ended.code, Some(130), "{ended:?}");
    assert!(ended.took < Duration::from_secs(5), "{ended:?}");
}

#[test]
fn an_mcp_config_that_is_a_folder_a_socket_or_a_device_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (odd, words) in not_files(dir.path()) {
        let out = testkit::Output::of(
            testkit::bin(PROBE)
                .arg("test-client")
                .arg("--mcp-config")
                .arg(&odd)
                .args(["--n", "10"]),
        );
        let name = odd.display().to_string();
        assert_eq!(out.code, Some(2), "{name}: {out}");
        assert!(
            out.stderr.contains(&name) && out.stderr.contains(words),
            "{name}: {out}"
        );
        assert_eq!(out.stderr.lines().count(), 1, "{name}: {out}");
    }
}
