//! `probe call` against `probe serve`: sizes, the cap, the JSON report, errors.

use crate::common::*;
use serde_json::Value;

fn call_probe(args: &[&str]) -> (i32, String, String) {
    let out = testkit::bin(PROBE).arg("call").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_reply_under_the_cap_fits_and_exits_0() {
    let (code, out, _) = call_probe(&["--n", "11210", "--cap", "40000", "--", PROBE, "serve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "text: 11210 UTF-16 units, 11210 chars, 11210 bytes, 1 line, ~2803 tokens in 1 block"
        ),
        "{out}"
    );
    assert!(
        out.contains("cap: fits, 11210 units under the cap of 40000 (28790 to spare)"),
        "{out}"
    );
}

#[test]
fn a_reply_over_the_cap_exits_1() {
    let (code, out, _) = call_probe(&["--n", "50001", "--cap", "50000", "--", PROBE, "serve"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("OVER, 50001 units is 1 over the cap of 50000"),
        "{out}"
    );
    let (code, _, _) = call_probe(&["--n", "50000", "--cap", "50000", "--", PROBE, "serve"]);
    assert_eq!(code, 0, "exactly at the cap fits");
}

/// A cap in each unit a client counts is judged in that unit, and the reply is sized in all.
#[test]
fn a_cap_is_judged_in_the_unit_it_names() {
    // 1001 units of astral fill: about 500 emoji of four bytes each, so about 2000 bytes.
    let astral = r#"{"n":1001,"fill":"astral"}"#;
    let (code, out, _) = call_probe(&["--args", astral, "--cap", "1001", "--", PROBE, "serve"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) =
        call_probe(&["--args", astral, "--cap", "1001bytes", "--", PROBE, "serve"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("bytes is") && out.contains("over the cap of 1001"),
        "{out}"
    );
    let (code, out, _) = call_probe(&[
        "--args",
        astral,
        "--cap",
        "1001codepoints",
        "--",
        PROBE,
        "serve",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("code points under the cap of 1001"), "{out}");
    // 8000 units of lines are 100 lines of 80.
    let lines = r#"{"n":8000,"fill":"lines"}"#;
    let (code, out, _) = call_probe(&["--args", lines, "--cap", "100lines", "--", PROBE, "serve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("cap: fits, 100 lines under the cap of 100 (0 to spare)"),
        "{out}"
    );
    let (code, _, _) = call_probe(&["--args", lines, "--cap", "99lines", "--", PROBE, "serve"]);
    assert_eq!(code, 1);
    // 8000 units estimate to 2000 tokens.
    let (code, out, _) =
        call_probe(&["--args", lines, "--cap", "1999tokens", "--", PROBE, "serve"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("OVER, 2000 tokens (estimated) is 1 over the cap of 1999"),
        "{out}"
    );
    let (code, out, _) = call_probe(&[
        "--json",
        "--args",
        lines,
        "--cap",
        "2000tokens",
        "--",
        PROBE,
        "serve",
    ]);
    assert_eq!(code, 0, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["cap"], 2000);
    assert_eq!(r["cap_unit"], "tokens");
    assert_eq!(r["fits"], true);
    assert_eq!(r["text"]["lines"], 100);
    assert_eq!(r["text"]["tokens"], 2000);
    let (code, _, err) = call_probe(&["--cap", "5parsecs", "--", PROBE, "serve"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown unit `parsecs`"), "{err}");
}

#[test]
fn the_json_report_counts_units_chars_and_bytes_as_sent_and_compact() {
    let (code, out, _) = call_probe(&[
        "--json",
        "--args",
        r#"{"n":1001,"fill":"astral","blocks":3}"#,
        "--",
        PROBE,
        "serve",
    ]);
    assert_eq!(code, 0);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["text"]["units"], 1001);
    assert_eq!(r["blocks"], 3);
    let units = r["text"]["units"].as_u64().unwrap();
    let chars = r["text"]["chars"].as_u64().unwrap();
    let bytes = r["text"]["bytes"].as_u64().unwrap();
    assert!(
        chars < units && bytes > units,
        "astral: {chars} chars, {bytes} bytes"
    );
    assert_eq!(r["protocol_version"], "2025-11-25");
    // probe serve already writes compact JSON, so as sent and compact agree.
    assert_eq!(r["reply_as_sent"], r["reply_compact"]);
    assert!(r["reply_as_sent"]["bytes"].as_u64().unwrap() > bytes);
    assert!(r["call_secs"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_refused_call_and_a_missing_tool_are_reported() {
    let (code, out, _) = call_probe(&["--args", r#"{"n":-3}"#, "--", PROBE, "serve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("isError"), "{out}");
    let (code, _, err) = call_probe(&["--tool", "nope", "--", PROBE, "serve"]);
    assert_eq!(code, 4);
    assert!(err.contains("no tool \"nope\""), "{err}");
    let (code, _, err) = call_probe(&["--", "/nonexistent/server"]);
    assert_eq!(code, 4);
    assert!(err.contains("/nonexistent/server"), "{err}");
    let (code, _, _) = call_probe(&["--args", "[1]", "--", PROBE, "serve"]);
    assert_eq!(code, 2);
}

#[test]
fn a_silent_server_times_out() {
    let (code, _, err) = call_probe(&["--timeout", "1s", "--", "sleep", "30"]);
    assert_eq!(code, 4);
    assert!(err.contains("timeout"), "{err}");
}

/// A refusal (`isError`) is no result: with a cap, `call` neither says it fits nor exits 0.
#[test]
fn a_refused_call_is_not_judged_against_the_cap() {
    let (code, out, _) = call_probe(&[
        "--args",
        r#"{"n":-3}"#,
        "--cap",
        "1000",
        "--",
        PROBE,
        "serve",
    ]);
    assert_eq!(code, 4, "{out}");
    assert!(!out.contains("fits"), "{out}");
    assert!(
        out.contains("cap: not judged, the tool refused the call (isError)"),
        "{out}"
    );
    let (code, out, _) = call_probe(&[
        "--json",
        "--args",
        r#"{"n":-3}"#,
        "--cap",
        "1000",
        "--",
        PROBE,
        "serve",
    ]);
    assert_eq!(code, 4, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (r["is_error"].clone(), r["fits"].clone()),
        (true.into(), Value::Null)
    );
}
