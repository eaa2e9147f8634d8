//! Every preset against its real client, offline: the client runs through `probe bracket
//! --client NAME` in a network namespace that has only loopback (where `unshare` can make one),
//! against the model stand-in, for every kind of limit `probe clients` reports: the size at a
//! point below its limit and at the two points around it (inline below, the nonce logged, the
//! measured kind and shape above, the threshold exact), the lines fill stopping where the size
//! limit is (a lines limit not reachable), the token counter never asked below the size limit,
//! and the total of a turn of 20 results (its budget and shape, or whole up to ten times the
//! size limit).
//! Continue's CLI has no limit of its own on a result, only its context window, over which no
//! result reaches the model: its test runs below and far above that window (the points just over
//! it loop until the timeout).
//!
//! A client that is not installed skips with a `SKIP:` line on stderr
//! (`scripts/install-clients.sh NAME` installs it); it is a failure for the clients
//! `GATEKIT_REQUIRE_CLIENTS` names (`.ci/run` sets `all`). The limits pinned here are those `probe
//! clients` measured on 2026-12-02 on the versions install-clients.sh pins; a client at another
//! version may differ, and says so.

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

/// What one preset is expected to show, for every kind of limit `probe clients` reports.
struct Expected {
    name: &'static str,
    bin: &'static str,
    /// Size: the last n inline (ascii fill); n + 1 comes back `above`.
    limit: u64,
    above: &'static str,
    /// Where the text that came back at LIMIT+1 first differs (end, middle, start, whole), when
    /// measured.
    place: Option<&'static str>,
    /// Lines: not reachable. The lines fill stops where the size limit is, at this n (its last
    /// inline n; the next one is over).
    lines_at: u64,
    /// The per-turn total, in turns of [`TURN_CALLS`] results.
    turn: Turn,
}

/// What a turn of [`TURN_CALLS`] results shows.
enum Turn {
    /// A budget: inline up to `total`, `above` from total + 1, the first result over changed at
    /// `place`.
    Budget {
        total: u64,
        above: &'static str,
        place: &'static str,
    },
    /// Every result came back whole up to this total (no budget found below it).
    WholeUpTo(u64),
}

/// The results asked for in one turn, as `probe clients` asks.
const TURN_CALLS: &str = "20";

/// The shapes of points that came back exactly: none.
fn inline_shape(points: &[Value]) -> Vec<Value> {
    points.iter().map(|p| p["shape"].clone()).collect()
}

/// Runs `probe bracket --client NAME ARGS` (in a loopback-only namespace where one can be made)
/// and returns its results.json, asserting it exited 0.
fn bracket(e: &Expected, bin: &std::path::Path, args: &[String]) -> Value {
    bracket_exit(e.name, bin, args, 0).0
}

/// Runs `probe bracket --client NAME ARGS` and checks it exits with `code` (0: every point
/// judged; 1: some point an error): the results.json, a context line for failures, and the
/// stand-in's log, every request of which must be one it serves.
fn bracket_exit(
    name: &str,
    bin: &std::path::Path,
    args: &[String],
    code: i32,
) -> (Value, String, String) {
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
    argv.extend(["bracket", "--client", name, "--timeout", "120s", "--bin"].map(String::from));
    argv.push(bin.display().to_string());
    argv.extend(args.iter().cloned());
    argv.push("--out".into());
    argv.push(out.display().to_string());
    let run = testkit::Output::of(
        testkit::bin(&argv[0])
            .args(&argv[1..])
            .current_dir(dir.path())
            // A few runs of a client that may take a minute each.
            .timeout(std::time::Duration::from_secs(480)),
    );
    let results = std::fs::read_to_string(out.join("results.json"));
    let r: Value = match results {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => panic!("{name}: no results.json\n{run}"),
    };
    let verdicts: Vec<&str> = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verdict"].as_str().unwrap())
        .collect();
    let context = format!("{name} {args:?}: {verdicts:?}\n{run}");
    assert_eq!(run.code, Some(code), "{context}");
    // Only the stand-in was asked: every request it logged was one it serves.
    let log = std::fs::read_to_string(out.join("model.log")).unwrap();
    for line in log.lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        assert_ne!(event["event"], "not_found", "{name}: {line}");
    }
    (r, context, log)
}

/// The client's executable, or `None` (with a `SKIP:` line) when it is not installed and not
/// required.
fn require(name: &str, bin: &str) -> Option<PathBuf> {
    let found = installed(name, bin);
    if found.is_none() {
        assert!(
            !required(name),
            "{name} is not installed, though GATEKIT_REQUIRE_CLIENTS requires it"
        );
        eprintln!("SKIP: {name} is not installed (run scripts/install-clients.sh {name})");
    }
    found
}

/// Checks every kind of limit of one preset: its size at 1000, LIMIT and LIMIT+1; its lines
/// (the lines fill stops where the size limit is); its tokens (the counter is never asked
/// below the size limit); its per-turn total.
fn measures(e: Expected) {
    let Some(bin) = require(e.name, e.bin) else {
        return;
    };
    let points = |ns: &[u64]| {
        let list: Vec<String> = ns.iter().map(u64::to_string).collect();
        vec!["--points".to_string(), list.join(",")]
    };
    // Size.
    let r = bracket(&e, &bin, &points(&[1000, e.limit, e.limit + 1]));
    let version = r["client"]["version"].as_str().unwrap_or("?").to_string();
    let p = r["points"].as_array().unwrap();
    let context = format!("{} {version}: {p:#?}", e.name);
    // Below the limit: the whole text, the nonce the server logged, and at least n units
    // reached the model; and the token counter was never asked (a token limit, if the client
    // has one, is not reachable below the size limit).
    for inline in &p[..2] {
        assert_eq!(inline["verdict"], "inline", "{context}");
        assert_eq!(inline["message"], Value::Null, "{context}");
        assert!(inline["nonce"].is_string(), "{context}");
        assert!(inline["received_units"].as_u64().unwrap() >= inline["n"].as_u64().unwrap());
        assert_eq!(inline["count_tokens_calls"], 0, "tokens: {context}");
    }
    assert_eq!(p[2]["verdict"], e.above, "{context}");
    assert_eq!(
        inline_shape(&p[..2]),
        [Value::Null, Value::Null],
        "{context}"
    );
    if let Some(place) = e.place {
        assert_eq!(p[2]["shape"]["where"], place, "{context}");
    }
    assert_eq!(r["threshold"]["monotone"], true, "{context}");
    assert_eq!(r["threshold"]["exact"], true, "{context}");
    assert_eq!(r["threshold"]["last_inline"], e.limit, "{context}");
    // Lines: the lines fill stops where the size limit is, so a lines limit is not reachable.
    let mut args = points(&[e.lines_at, e.lines_at + 1]);
    args.extend(["--fill".to_string(), "lines".to_string()]);
    let r = bracket(&e, &bin, &args);
    let p = r["points"].as_array().unwrap();
    assert_eq!(p[0]["verdict"], "inline", "lines: {}: {p:#?}", e.name);
    assert_ne!(p[1]["verdict"], "inline", "lines: {}: {p:#?}", e.name);
    // The per-turn total.
    let mut args = vec!["--turn".to_string(), TURN_CALLS.to_string()];
    match e.turn {
        Turn::Budget {
            total,
            above,
            place,
        } => {
            args.extend(points(&[total, total + 1]));
            let r = bracket(&e, &bin, &args);
            let p = r["points"].as_array().unwrap();
            let context = format!("turn: {}: {p:#?}", e.name);
            assert_eq!(p[0]["verdict"], "inline", "{context}");
            assert_eq!(p[1]["verdict"], above, "{context}");
            assert_eq!(p[1]["shape"]["where"], place, "{context}");
            assert_eq!(p[1]["results"].as_array().unwrap().len(), 20, "{context}");
        }
        Turn::WholeUpTo(total) => {
            args.extend(points(&[total]));
            let r = bracket(&e, &bin, &args);
            let p = r["points"].as_array().unwrap();
            assert_eq!(p[0]["verdict"], "inline", "turn: {}: {p:#?}", e.name);
            assert_eq!(p[0]["results"].as_array().unwrap().len(), 20);
        }
    }
    eprintln!(
        "measured {} {version}: every limit kind as expected",
        e.name
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
        lines_at: 50_000,
        turn: Turn::WholeUpTo(500_000),
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
        lines_at: 11_964,
        turn: Turn::WholeUpTo(119_640),
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
        lines_at: 39_959,
        turn: Turn::WholeUpTo(399_590),
    });
}

#[test]
fn qwen_code_saves_a_reply_over_28000_units_and_cuts_a_turn_over_200000() {
    measures(Expected {
        name: "qwen",
        bin: "qwen",
        limit: 28_000,
        above: "saved",
        // A 2000-unit preview of the head beside the note.
        place: Some("end"),
        lines_at: 28_000,
        // Over 200,000 units in one turn, each result over its share (10,000 of 20) keeps a
        // head and a tail and is saved: `Tool output truncated. Persisted tool-output
        // artifact: PATH`.
        turn: Turn::Budget {
            total: 200_000,
            above: "cut+saved",
            place: "middle",
        },
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
        lines_at: 51_200,
        turn: Turn::WholeUpTo(512_000),
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
        // It escapes newlines before counting: the lines fill stops 97 units sooner.
        lines_at: 7848,
        turn: Turn::WholeUpTo(79_450),
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
        // Lines are bytes too: the lines fill stops where the size limit is.
        lines_at: 20_480,
        turn: Turn::WholeUpTo(204_800),
    });
}

#[test]
fn continue_cli_keeps_a_400000_unit_reply_whole_and_loses_one_over_its_context_window() {
    // No cap on one result: 400,000 units reach the model whole, inside its 27-unit JSON
    // envelope. At 1,000,000 the conversation is over its 200,000-token window: the client
    // compacts it, dropping the result, so no result reaches the stand-in, and the prompt is
    // lost with it (the stand-in is then asked with no n).
    let Some(bin) = require("continue", "cn") else {
        return;
    };
    let points = ["--points".to_string(), "1000,400000,1000000".to_string()];
    let (r, context, log) = bracket_exit("continue", &bin, &points, 1);
    let p = r["points"].as_array().unwrap();
    for inline in &p[..2] {
        assert_eq!(inline["verdict"], "inline", "{context}");
        assert_eq!(inline["shape"], Value::Null, "{context}");
        assert!(inline["nonce"].is_string(), "{context}");
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
