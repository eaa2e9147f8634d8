//! The umbrella hands each tool its own command line: `gatekit gate ...` is `gate ...`, and a
//! link named for a tool is that tool.

use testkit::Output;

use crate::gatekit;

#[test]
fn each_tool_answers_as_a_subcommand_and_under_its_own_name() {
    let version = env!("CARGO_PKG_VERSION");
    let gate = Output::of(gatekit().args(["gate", "--version"]));
    gate.assert_exit(0);
    assert_eq!(gate.stdout, format!("gate {version}\n"));
    let mutants = Output::of(gatekit().args(["mutants", "--version"]));
    mutants.assert_exit(0);
    assert_eq!(mutants.stdout, format!("mutants {version}\n"));

    let dir = tempfile::tempdir().unwrap();
    for tool in ["gate", "mutants", "probe"] {
        let link = dir.path().join(tool);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gatekit"), &link).unwrap();
        let out = Output::of(testkit::bin(&link).arg("--version"));
        out.assert_exit(0);
        assert_eq!(out.stdout, format!("{tool} {version}\n"));
    }
}

#[test]
fn a_tools_usage_error_is_its_own_exit_2() {
    // gate's parser, not the umbrella's, judges the arguments after `gate`.
    let out = Output::of(gatekit().args(["gate", "run", "--no-such-flag"]));
    out.assert_exit(2);
    assert!(out.stderr.contains("--no-such-flag"), "{out}");
    let out = Output::of(gatekit().arg("no-such-tool"));
    out.assert_exit(2);
}
