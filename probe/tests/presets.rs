//! Every preset against its real client, offline: the client runs through `probe bracket
//! --client NAME` in a network namespace that has only loopback (where `unshare` can make one),
//! against the model stand-in, at a point below its limit and at the two points around it, and
//! the verdicts must be consistent: inline below (both markers, the nonce logged), the measured
//! kind above, monotone, the threshold exact. Continue's CLI has no limit of its own on a result,
//! only its context window, over which no result reaches the model: its test runs below and far
//! above that window (the points just over it loop until the timeout).
//!
//! A client that is not installed skips with a `SKIP:` line on stderr
//! (`scripts/install-clients.sh NAME` installs it); it is a failure for the clients
//! `GATEKIT_REQUIRE_CLIENTS` names (`.ci/run` sets `all`). The limits pinned here are those `probe clients` measured on the
//! versions install-clients.sh pins; a client at another version may differ, and says so.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// The client's executable: `PROBE_<NAME>_BIN`, install-clients.sh's cache (and for Claude
/// install-claude.sh's older folder), or PATH.
fn installed(name: &str, bin: &str) -> Option<PathBuf> {
    if let Ok(p) = std::env::var(format!("PROBE_{}_BIN", name.to_uppercase())) {
        return Some(PathBuf::from(p));
    }
    let clients = std::env::var_os("GATEKIT_CLIENTS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir().join("clients"));
    let mut candidates = vec![clients.join(name).join("node_modules/.bin").join(bin)];
    if name == "claude" {
        candidates.push(cache_dir().join("claude/node_modules/.bin/claude"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join(bin)));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// Whether this run must have the client: `GATEKIT_REQUIRE_CLIENTS` names it (a space-separated
/// list) or says `all`. `.ci/run` sets it for the clients it installs, so a client that failed to
/// install fails CI instead of skipping quietly.
fn required(name: &str) -> bool {
    std::env::var("GATEKIT_REQUIRE_CLIENTS")
        .is_ok_and(|names| names.split_whitespace().any(|n| n == name || n == "all"))
}

/// How to run a command in a network namespace with only loopback, if this machine can make
/// one: `unshare -rn` (a user namespace too) or, as root, `unshare -n`; the loopback is brought
/// up and checked to be the only interface before the command starts.
fn loopback_only() -> Option<Vec<String>> {
    for flags in ["-rn", "-n"] {
        let ok = Command::new("unshare")
            .args([flags, "sh", "-c", "ip link set lo up"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(vec![
                "unshare".into(),
                flags.into(),
                "sh".into(),
                "-c".into(),
                r#"ip link set lo up && [ "$(ip -o link show | wc -l)" = 1 ] && exec "$0" "$@""#
                    .into(),
            ]);
        }
    }
    None
}

/// What one preset is expected to show around its limit (n in UTF-16 units, ascii fill).
struct Expected {
    name: &'static str,
    bin: &'static str,
    /// The last n inline; n + 1 comes back `above`.
    limit: u64,
    above: &'static str,
    /// Where the text that came back at LIMIT+1 first differs (end, middle, start, whole), when
    /// measured.
    place: Option<&'static str>,
}

/// Runs `probe bracket --client NAME --points POINTS` against the installed client, in a
/// loopback-only namespace where one can be made, and checks it exits with `code` (0: every
/// point judged; 1: some point an error): the results.json, the stand-in's log, and a context
/// line for failures. `None` when the client is not installed (and not required).
fn bracket(name: &str, bin: &str, points: &str, code: i32) -> Option<(Value, String, String)> {
    let Some(bin) = installed(name, bin) else {
        assert!(
            !required(name),
            "{name} is not installed, though GATEKIT_REQUIRE_CLIENTS requires it"
        );
        eprintln!("SKIP: {name} is not installed (run scripts/install-clients.sh {name})");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut argv: Vec<String> = match loopback_only() {
        Some(ns) => ns,
        None => {
            eprintln!("NOTE: no network namespace here; {name} runs on the host network");
            Vec::new()
        }
    };
    argv.push(PROBE.into());
    argv.extend(
        [
            "bracket",
            "--client",
            name,
            "--points",
            points,
            "--timeout",
            "120s",
            "--bin",
        ]
        .map(String::from),
    );
    argv.push(bin.display().to_string());
    argv.push("--out".into());
    argv.push(out.display().to_string());
    let run = testkit::Output::of(
        testkit::bin(&argv[0])
            .args(&argv[1..])
            .current_dir(dir.path())
            // Three runs of a client that may take a minute each.
            .timeout(std::time::Duration::from_secs(480)),
    );
    let results = std::fs::read_to_string(out.join("results.json"));
    let r: Value = match results {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => panic!("{name}: no results.json\n{run}"),
    };
    let version = r["client"]["version"].as_str().unwrap_or("?").to_string();
    let verdicts: Vec<&str> = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verdict"].as_str().unwrap())
        .collect();
    let context = format!("{name} {version}: {verdicts:?}\n{run}");
    assert_eq!(run.code, Some(code), "{context}");
    // Only the stand-in was asked: every request it logged was one it serves.
    let log = std::fs::read_to_string(out.join("model.log")).unwrap();
    for line in log.lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        assert_ne!(event["event"], "not_found", "{name}: {line}");
    }
    Some((r, context, log))
}

/// A point whose whole text reached the model: judged by its markers (no "too small" note),
/// the nonce the server logged, and at least n units received.
fn assert_inline(point: &Value, context: &str) {
    assert_eq!(point["verdict"], "inline", "{context}");
    assert_eq!(point["message"], Value::Null, "{context}");
    assert!(point["nonce"].is_string(), "{context}");
    assert!(point["received_units"].as_u64().unwrap() >= point["n"].as_u64().unwrap());
    assert_eq!(point["shape"], Value::Null, "{context}");
}

/// Runs the preset at 1000, LIMIT and LIMIT+1 and checks what came back.
fn measures(e: Expected) {
    let points = format!("1000,{},{}", e.limit, e.limit + 1);
    let Some((r, context, _)) = bracket(e.name, e.bin, &points, 0) else {
        return;
    };
    let p = r["points"].as_array().unwrap();
    for inline in &p[..2] {
        assert_inline(inline, &context);
    }
    assert_eq!(p[2]["verdict"], e.above, "{context}");
    if let Some(place) = e.place {
        assert_eq!(p[2]["shape"]["where"], place, "{context}");
    }
    assert_eq!(r["threshold"]["monotone"], true, "{context}");
    assert_eq!(r["threshold"]["exact"], true, "{context}");
    assert_eq!(r["threshold"]["last_inline"], e.limit, "{context}");
    eprintln!(
        "measured {} {}: {}",
        e.name, r["client"]["version"], r["threshold"]["text"]
    );
}

#[test]
fn claude_code_keeps_50000_utf16_units_inline_and_saves_50001() {
    measures(Expected {
        name: "claude",
        bin: "claude",
        limit: 50_000,
        above: "saved",
        // A preview of the head, and the path of the file.
        place: Some("end"),
    });
}

#[test]
fn codex_cli_keeps_the_head_and_tail_of_a_reply_over_about_12000_bytes() {
    // Over its limit codex keeps head and tail and puts `…N tokens truncated…` where the middle
    // was; from 11965 to 11984 that note is as long as what it replaced or longer, so a count
    // of units called those points inline (and the limit 11984).
    measures(Expected {
        name: "codex",
        bin: "codex",
        limit: 11_964,
        above: "cut",
        place: Some("middle"),
    });
}

#[test]
fn gemini_cli_cuts_and_saves_a_reply_over_40000_units_less_its_wrapper() {
    measures(Expected {
        name: "gemini",
        bin: "gemini",
        // 40,000 units with its 41-unit wrapper; over it, `... [N characters omitted] ...` in
        // the middle, which a count of units took for the text up to 39,994.
        limit: 39_959,
        above: "cut+saved",
        place: Some("middle"),
    });
}

#[test]
fn qwen_code_saves_a_reply_over_28000_units_and_shows_a_preview() {
    measures(Expected {
        name: "qwen",
        bin: "qwen",
        limit: 28_000,
        above: "saved",
        // A 2000-unit preview of the head beside the note.
        place: Some("end"),
    });
}

#[test]
fn opencode_saves_a_reply_over_51200_bytes() {
    measures(Expected {
        name: "opencode",
        bin: "opencode",
        limit: 51_200,
        above: "saved",
        // No preview: a note naming the file.
        place: Some("whole"),
    });
}

#[test]
fn cline_keeps_head_and_tail_of_a_reply_whose_json_envelope_is_over_8000_units() {
    measures(Expected {
        name: "cline",
        bin: "cline",
        limit: 7945,
        above: "cut",
        place: None,
    });
}

#[test]
fn copilot_cli_saves_a_reply_over_20480_bytes_and_shows_a_500_unit_head() {
    measures(Expected {
        name: "copilot",
        bin: "copilot",
        limit: 20_480,
        above: "saved",
        // `Output too large to read at once (20.0 KB). Saved to: ...` and the head as preview.
        place: Some("end"),
    });
}

#[test]
fn continue_cli_keeps_a_400000_unit_reply_whole_and_loses_one_over_its_context_window() {
    // No cap on one result: 400,000 units reach the model whole, inside its 27-unit JSON
    // envelope. At 1,000,000 the conversation is over its 200,000-token window: the client
    // compacts it, dropping the result, so no result reaches the stand-in, and the prompt is
    // lost with it (the stand-in is then asked with no n).
    let Some((r, context, log)) = bracket("continue", "cn", "1000,400000,1000000", 1) else {
        return;
    };
    let p = r["points"].as_array().unwrap();
    for inline in &p[..2] {
        assert_inline(inline, &context);
        let envelope = inline["received_units"].as_u64().unwrap() - inline["n"].as_u64().unwrap();
        assert_eq!(envelope, 27, "{context}");
    }
    assert_eq!(p[2]["verdict"], "error", "{context}");
    let message = p[2]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("no result reached the stand-in"),
        "{context}"
    );
    assert!(log.contains(r#""event":"no_n""#), "{context}");
    eprintln!(
        "measured continue {}: {}",
        r["client"]["version"], r["threshold"]["text"]
    );
}

#[test]
fn a_presets_version_runs_with_the_presets_environment_as_its_points_do() {
    // A stand-in for `cn` that prints what it was given on --version and fails any point: the
    // recorded version shows whether Continue's fetch guard (NODE_OPTIONS) was loaded, without
    // which `cn --version` looks up api.continue.dev.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("cn");
    std::fs::write(
        &bin,
        "#!/bin/sh\n[ \"$1\" = --version ] && echo \"1.5.47 options=$NODE_OPTIONS\" && exit 0\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    let run = testkit::Output::of(
        testkit::bin(PROBE)
            .args([
                "bracket", "--client", "continue", "--points", "1000", "--bin",
            ])
            .arg(&bin)
            .arg("--out")
            .arg(&out)
            .current_dir(dir.path())
            .timeout(std::time::Duration::from_secs(60)),
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let version = r["client"]["version"].as_str().unwrap_or("");
    assert!(
        version.starts_with("1.5.47 options=--import="),
        "{version}\n{run}"
    );
    assert!(version.ends_with("probe-offline.mjs\""), "{version}\n{run}");
}
