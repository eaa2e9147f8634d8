//! The real Claude Code binary through `probe model`, offline: 50000 units come back inline,
//! 50001 are saved to a file. Runs only when the binary is present (scripts/install-claude.sh
//! installs it); otherwise it skips with a notice.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

fn claude_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PROBE_CLAUDE_BIN") {
        return Some(PathBuf::from(p));
    }
    let cached = cache_dir().join("claude/node_modules/.bin/claude");
    if cached.exists() {
        return Some(cached);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("claude"))
            .find(|p| p.is_file())
    })
}

#[test]
fn claude_code_keeps_50000_inline_and_saves_50001() {
    let Some(bin) = claude_bin() else {
        eprintln!("SKIP: Claude Code is not installed (run scripts/install-claude.sh)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = testkit::bin(PROBE)
        .args([
            "bracket",
            "--client",
            "claude",
            "--points",
            "50000,50001",
            "--timeout",
            "90s",
        ])
        .arg("--claude-bin")
        .arg(&bin)
        .arg("--out")
        .arg(&out)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let points = r["points"].as_array().unwrap();
    assert_eq!(points[0]["verdict"], "inline", "{stdout}");
    assert_eq!(points[0]["received_units"], 50000);
    assert_eq!(points[1]["verdict"], "saved", "{stdout}");
    assert!(points[1]["message"]
        .as_str()
        .unwrap()
        .contains("persisted-output"));
    assert_eq!(
        r["threshold"]["text"],
        "inline up to 50000, saved from 50001"
    );
    assert!(r["client"]["version"]
        .as_str()
        .unwrap()
        .contains("Claude Code"));
    eprintln!(
        "measured {}: {}",
        r["client"]["version"], r["threshold"]["text"]
    );
}
