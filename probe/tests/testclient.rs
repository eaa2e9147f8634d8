//! The built-in test client: a known limit that bracket, bisect and check find exactly.

use predicates::prelude::*;

fn probe() -> assert_cmd::Command {
    testkit::bin(env!("CARGO_BIN_EXE_probe"))
}

fn client(limit: u64, saved: &std::path::Path) -> String {
    format!(
        "{} test-client --limit {limit} --mcp-config {{mcp_config}} --n {{n}} --saved-dir {}",
        env!("CARGO_BIN_EXE_probe"),
        saved.display()
    )
}

#[test]
fn bisect_finds_the_test_clients_exact_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = probe()
        .args(["bracket", "--bisect", "1000..100000", "--client"])
        .arg(client(12_345, dir.path()))
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("threshold: inline up to 12345, saved from 12346"),
        "{text}"
    );
    // A result over the limit was saved whole, not cut.
    let saved: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("probe-test-client-")
        })
        .collect();
    assert!(!saved.is_empty());
    let body = std::fs::read_to_string(saved[0].path()).unwrap();
    assert!(body.encode_utf16().count() > 12_345);
}

#[test]
fn check_holds_at_the_limit_and_says_so_when_it_moves() {
    let dir = tempfile::tempdir().unwrap();
    probe()
        .args(["check", "--expect", "50000", "--client"])
        .arg(client(50_000, dir.path()))
        .arg("--out")
        .arg(dir.path().join("held"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains("suggested cap: 40000 units"));
    probe()
        .args(["check", "--expect", "50000", "--client"])
        .arg(client(49_000, dir.path()))
        .arg("--out")
        .arg(dir.path().join("moved"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "inline up to 49000, saved from 49001",
        ));
}

#[test]
fn a_config_without_a_server_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(&config, r#"{"mcpServers": {}}"#).unwrap();
    probe()
        .args(["test-client", "--n", "10", "--mcp-config"])
        .arg(&config)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no server"));
}

#[test]
fn the_modes_answer_as_their_help_says() {
    let help = probe().args(["test-client", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for mode in ["spill", "cut", "never", "hang"] {
        assert!(
            help.contains(&format!("- {mode}:")),
            "{mode} undocumented: {help}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    let server = serde_json::json!({"mcpServers": {"probe": {"command": env!("CARGO_BIN_EXE_probe"), "args": ["serve"]}}});
    std::fs::write(&config, server.to_string()).unwrap();
    let run = |mode: &str| {
        let out = probe()
            .args([
                "test-client",
                "--n",
                "200",
                "--limit",
                "100",
                "--mode",
                mode,
            ])
            .arg("--mcp-config")
            .arg(&config)
            .arg("--saved-dir")
            .arg(dir.path())
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{mode}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let cut = run("cut");
    assert_eq!(
        cut.trim_end_matches('\n').encode_utf16().count(),
        100,
        "{cut}"
    );
    assert!(cut.starts_with("<<probe n=200"), "{cut}");
    assert_eq!(run("never"), "answered without the tool\n");
    assert!(run("spill").contains("Output has been saved to"));
    // Hang never answers: only the outer timeout ends it, and that is no exit 0.
    let hang = probe()
        .args([
            "test-client",
            "--n",
            "200",
            "--mode",
            "hang",
            "--mcp-config",
        ])
        .arg(&config)
        .timeout(std::time::Duration::from_secs(1))
        .output()
        .unwrap();
    assert_ne!(hang.status.code(), Some(0));
}
