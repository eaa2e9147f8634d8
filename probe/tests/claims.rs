//! Claims of the README that gatekit's own mutants (mutants.toml) showed no test pinned.

use serde_json::Value;

fn probe() -> assert_cmd::Command {
    testkit::bin(env!("CARGO_BIN_EXE_probe"))
}

/// `probe bracket --points POINTS` against the built-in test client (inline up to `limit`).
fn bracket(limit: u64, points: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let client = format!(
        "{} test-client --limit {limit} --mcp-config {{mcp_config}} --n {{n}} --saved-dir {}",
        env!("CARGO_BIN_EXE_probe"),
        dir.path().display()
    );
    let out = probe()
        .args(["bracket", "--points", points, "--client", &client, "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("out/results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_threshold_is_exact_only_when_the_points_are_one_unit_apart() {
    let apart = bracket(100, "99,101");
    assert_eq!(
        apart["threshold"]["text"],
        "inline up to 99, saved from 101"
    );
    assert_eq!(apart["threshold"]["exact"], false, "{}", apart["threshold"]);

    let pinned = bracket(100, "100,101");
    assert_eq!(
        pinned["threshold"]["text"],
        "inline up to 100, saved from 101"
    );
    assert_eq!(
        pinned["threshold"]["exact"], true,
        "{}",
        pinned["threshold"]
    );
}
