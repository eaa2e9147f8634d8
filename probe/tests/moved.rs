//! probe says what moved, and only that: `check` across a version bump (played by the test
//! client with a new limit) judges the unit where the threshold is now, `bracket --units` says
//! the unit and the wrapper it found in its text and Markdown, the progress count never runs
//! past its total, and a hang names the timeout that was set.

use crate::common::*;
use serde_json::Value;

/// What one probe command left: its exit code, stdout, stderr and results.json.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    results: Value,
}

/// `probe ARGS --out DIR/out` from `dir`, the test client's saves kept in `dir`.
fn probe_in(dir: &std::path::Path, args: &[&str]) -> Ran {
    let out = testkit::bin(PROBE)
        .args(args)
        .arg("--out")
        .arg(dir.join("out"))
        .current_dir(dir)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(dir.join("out/results.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        results,
    }
}

/// The test client inline up to `limit` `unit`, as a new version of a client would be.
fn client(dir: &std::path::Path, limit: u64, unit: &str) -> String {
    format!(
        "{PROBE} test-client --limit {limit} --limit-unit {unit} --mcp-config {{mcp_config}} \
         --n {{n}} --saved-dir '{}' --spill-message 'Output has been saved to /tmp/x.txt'",
        dir.display()
    )
}

/// Every `[k/N]` the progress printed, each with k at most N.
fn counts_within_totals(stderr: &str) -> usize {
    let mut seen = 0;
    for line in stderr.lines().filter(|l| l.starts_with('[')) {
        let (k, n) = line[1..line.find(']').unwrap()].split_once('/').unwrap();
        let (k, n): (usize, usize) = (k.parse().unwrap(), n.parse().unwrap());
        assert!(k <= n, "progress past its total: {line}\n{stderr}");
        seen += 1;
    }
    seen
}

/// A bump from 5120 to 6000 bytes: the threshold moved, the unit did not. check says it moved,
/// checks bytes at 6000 (where the astral fill also stops), and suggests a cap in bytes.
#[test]
fn check_across_a_bump_in_the_same_unit_says_only_that_the_threshold_moved() {
    let dir = tempfile::tempdir().unwrap();
    let c = client(dir.path(), 6000, "bytes");
    let ran = probe_in(
        dir.path(),
        &["check", "--expect", "5120bytes", "--client", &c],
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let out = &ran.stdout;
    assert!(
        out.contains("check: MOVED, expected inline up to 5120; now inline up to 6000"),
        "{out}"
    );
    assert!(
        !out.contains("unit: not"),
        "the unit did not change:\n{out}"
    );
    assert!(
        out.contains("unit: bytes, the astral fill also stops at 6000 bytes"),
        "{out}"
    );
    assert!(
        out.contains("suggested cap: 4800 bytes (6000 less 20%)"),
        "{out}"
    );
    let check = &ran.results["check"];
    assert_eq!(check["unit_held"], true, "{check}");
    assert_eq!(check["unit_at"], 6000, "{check}");
    // The astral points ran at the new threshold: 6000 bytes are about 1500 pairs, 3000 units
    // (the expected 5120 bytes would be about 2560).
    let astral: Vec<u64> = ran.results["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["fill"] == "astral")
        .map(|p| p["n"].as_u64().unwrap())
        .collect();
    assert!(
        astral.len() == 2 && astral[1] == astral[0] + 1 && (2950..3050).contains(&astral[0]),
        "{astral:?}"
    );
    assert!(counts_within_totals(&ran.stderr) >= astral.len() + 2);
}

/// A bump that also changed the unit (now UTF-16 units): check says the unit is not bytes,
/// judged at the new threshold, and suggests no cap in bytes.
#[test]
fn check_across_a_bump_to_another_unit_says_so_and_suggests_no_cap_in_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let c = client(dir.path(), 6000, "utf16");
    let ran = probe_in(
        dir.path(),
        &["check", "--expect", "5120bytes", "--client", &c],
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    let out = &ran.stdout;
    assert!(
        out.contains("unit: not bytes: at 6000 bytes the astral fill did not stop"),
        "{out}"
    );
    assert!(!out.contains("suggested cap: 4800 bytes"), "{out}");
    assert!(out.contains("suggested cap: none in bytes"), "{out}");
    assert_eq!(ran.results["check"]["unit_held"], false);
    assert_eq!(ran.results["check"]["suggested_cap"], Value::Null);
    counts_within_totals(&ran.stderr);
}

/// Where the search found no threshold to check at, the unit is said to be unchecked.
#[test]
fn check_says_the_unit_was_not_checked_when_no_threshold_was_pinned() {
    let dir = tempfile::tempdir().unwrap();
    // Inline up to 6000 bytes, but a run over 5200 fails: the search up stops unpinned.
    let c = format!(
        "if [ {{n}} -le 5200 ]; then {}; else exit 3; fi",
        client(dir.path(), 6000, "bytes")
    );
    let ran = probe_in(
        dir.path(),
        &["check", "--expect", "5120bytes", "--client", &c],
    );
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stdout
            .contains("unit: bytes not checked: the threshold was not pinned"),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("unit: not bytes"), "{}", ran.stdout);
    assert_eq!(ran.results["check"]["unit_held"], Value::Null);
    counts_within_totals(&ran.stderr);
}

/// `bracket --units` says the unit and the wrapper in its text (stdout and results.txt) and
/// Markdown, not only in results.json.
#[test]
fn bracket_units_prints_the_unit_and_the_wrapper() {
    let dir = tempfile::tempdir().unwrap();
    // A limit of 5000 units with a 37-unit wrapper counted before the reply.
    let c = client(dir.path(), 4963, "utf16");
    let args = [
        "bracket",
        "--bisect",
        "1000..9000",
        "--units",
        "--client",
        &c,
    ];
    let ran = probe_in(dir.path(), &args);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let file = std::fs::read_to_string(dir.path().join("out/results.txt")).unwrap();
    for text in [&ran.stdout, &file] {
        assert!(
            text.contains("\nunit: utf16 (inline up to 4963 units; fills ascii, astral, lines)\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nwrapper: 37 units counted with the reply (the limit is likely 5000)\n"
            ),
            "{text}"
        );
    }
    counts_within_totals(&ran.stderr);
    let mut md = args.to_vec();
    md.extend(["--format", "markdown"]);
    let ran = probe_in(dir.path(), &md);
    assert!(
        ran.stdout
            .contains("| **unit** | utf16 (inline up to 4963 units; fills ascii, astral, lines) |"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("| **wrapper** | 37 units counted"),
        "{}",
        ran.stdout
    );
}

/// A hang says the timeout that was set, not the time the kill took.
#[test]
fn a_hang_names_the_timeout_that_was_set() {
    let dir = tempfile::tempdir().unwrap();
    let c = format!("{} --mode hang", client(dir.path(), 100, "utf16"));
    let ran = probe_in(
        dir.path(),
        &[
            "bracket",
            "--points",
            "10",
            "--timeout",
            "1500ms",
            "--client",
            &c,
        ],
    );
    assert_eq!(ran.code, 4, "{}{}", ran.stdout, ran.stderr);
    let message = ran.results["points"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(message, "hang: killed after the timeout (1.50s)");
}

/// A one-word `--client` that is no preset, holds no `{mcp_config}` and is no program on PATH
/// is refused before anything runs, with the nearest preset's name; one that is a program on
/// PATH runs as the command it is.
#[test]
fn a_mistyped_preset_is_refused_with_the_nearest_name_and_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    for (word, nearest) in [
        ("cladue", "claude"),
        ("codx", "codex"),
        ("gemeni", "gemini"),
    ] {
        let out = testkit::bin(PROBE)
            .args(["check", "--expect", "100", "--client", word, "--out"])
            .arg(dir.path().join("out"))
            .env("PATH", &path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("did you mean \"{nearest}\"")),
            "{stderr}"
        );
        assert!(
            !dir.path().join("out").exists(),
            "a refused run wrote --out"
        );
    }
    // A program of one word on PATH is a command: it runs (and leaves its mark).
    let marker = dir.path().join("ran");
    let script = bin.join("myclient");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$PROBE_N\" >> '{}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = testkit::bin(PROBE)
        .args(["bracket", "--points", "7", "--client", "myclient", "--out"])
        .arg(dir.path().join("out"))
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "7\n");
}

/// Every line of `text` within 120 columns.
fn assert_within_120(what: &str, text: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= 120,
            "{what}: a line of {} columns:\n{line}\n\n{text}",
            line.chars().count()
        );
    }
}

/// results.txt and what check prints keep within 120 columns, however long the client's
/// command and its messages: the message column wraps, the lines around the table too.
#[test]
fn the_reports_and_what_probe_prints_keep_within_120_columns() {
    let dir = tempfile::tempdir().unwrap();
    let message = format!(
        "Output has been saved to /tmp/x.txt because it was {} long",
        "very ".repeat(30)
    );
    let c = format!(
        "{PROBE} test-client --limit 300 --mcp-config {{mcp_config}} --n {{n}} --saved-dir '{}' \
         --spill-message '{message}' --client-name a-client-with-a-rather-long-name-indeed",
        dir.path().display()
    );
    let ran = probe_in(dir.path(), &["check", "--expect", "200", "--client", &c]);
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("very very"), "{}", ran.stdout);
    assert_within_120("check's stdout", &ran.stdout);
    let file = std::fs::read_to_string(dir.path().join("out/results.txt")).unwrap();
    assert_within_120("results.txt", &file);
    // probe call: a long server command.
    let long = "x".repeat(150);
    let out = testkit::bin(PROBE)
        .args(["call", "--n", "10", "--", PROBE, "serve", "--log"])
        .arg(dir.path().join(format!("{long}.log")))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_within_120("probe call", &stdout);
}
