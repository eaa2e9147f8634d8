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

#[test]
fn probe_run_as_a_subcommand_starts_its_server_as_a_subcommand_too() {
    // The test client starts the server the MCP config names; were that `gatekit serve`, the
    // client would find no server and the check would not hold.
    let dir = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_gatekit");
    let client = format!(
        "{exe} probe test-client --limit 500 --mcp-config {{mcp_config}} --n {{n}} --saved-dir {}",
        dir.path().display()
    );
    let out = Output::of(gatekit().args([
        "probe",
        "check",
        "--expect",
        "500",
        "--client",
        &client,
        "--out",
        &dir.path().join("probe-out").display().to_string(),
    ]));
    out.assert_exit(0);
    assert!(out.stdout.contains("check: held"), "{out}");
    let config = std::fs::read_to_string(dir.path().join("probe-out/points/500/mcp.json"))
        .or_else(|_| {
            std::fs::read_dir(dir.path().join("probe-out/points"))
                .unwrap()
                .flatten()
                .map(|e| e.path().join("mcp.json"))
                .find(|p| p.exists())
                .map(std::fs::read_to_string)
                .unwrap()
        })
        .unwrap();
    assert!(config.contains("\"probe\",\n        \"serve\""), "{config}");
}

#[test]
fn probe_linked_under_its_name_and_found_on_path_starts_its_server() {
    // A shell finds `probe` on PATH and starts it by its bare name: argv[0] is `probe`, no path,
    // so the server must be started from the running binary as `gatekit probe serve`.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gatekit"), bin.join("probe")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Whatever the test client saves over its limit stays in this test's folder.
    let out = Output::of(
        testkit::bin("sh")
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("TMPDIR", dir.path())
            .args(["-c", "probe check --expect 500 --client 'probe test-client --limit 500 --mcp-config {mcp_config} --n {n} --saved-dir .'"]),
    );
    out.assert_exit(0);
    assert!(out.stdout.contains("check: held"), "{out}");
}
