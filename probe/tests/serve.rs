//! `probe serve` on the raw wire: every method, every error path, exact lengths.

use crate::common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::time::Instant;

#[test]
fn unknown_methods_get_32601_never_silence() {
    let r = serve_lines(&[
        r#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"resources/list","params":{}}"#,
    ]);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["id"], 0);
    assert_eq!(r[0]["error"]["code"], -32601);
    assert_eq!(r[1]["id"], "x");
    assert_eq!(r[1]["error"]["code"], -32601);
}

#[test]
fn a_broken_line_gets_32700_and_the_server_keeps_serving() {
    let r = serve_lines(&[
        "{not json",
        "\u{1}\u{2}",
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    ]);
    assert_eq!(r.len(), 3);
    for e in &r[..2] {
        assert_eq!(e["error"]["code"], -32700);
        assert_eq!(e["id"], Value::Null);
    }
    assert_eq!(r[2], json!({"jsonrpc": "2.0", "id": 5, "result": {}}));
}

#[test]
fn invalid_requests_get_32600_with_their_id_when_it_can_be_read() {
    let r = serve_lines(&[
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":4}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"p"}"#,
        r#"{"jsonrpc":"2.0","id":[6],"method":"ping"}"#,
        r#"42"#,
        r#"[]"#,
    ]);
    assert_eq!(r.len(), 8, "{r:?}");
    for (i, e) in r.iter().enumerate() {
        assert_eq!(e["error"]["code"], -32600, "line {i}: {e}");
    }
    assert_eq!(r[0]["id"], 1);
    assert_eq!(r[4]["id"], 5);
    assert_eq!(r[5]["id"], Value::Null);
}

#[test]
fn notifications_and_responses_are_never_answered() {
    let r = serve_lines(&[
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"no/such/notification"}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
        "",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    ]);
    assert_eq!(r, vec![json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
}

#[test]
fn initialize_echoes_every_supported_version_and_answers_the_latest_otherwise() {
    let versions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
    let mut lines: Vec<String> = versions
        .iter()
        .enumerate()
        .map(|(i, v)| initialize(i as u64, v))
        .collect();
    lines.push(initialize(10, "2023-01-01"));
    lines.push(initialize(11, "2099-12-31"));
    lines.push(r#"{"jsonrpc":"2.0","id":12,"method":"initialize","params":{}}"#.into());
    let r = serve_lines(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, v) in versions.iter().enumerate() {
        assert_eq!(r[i]["result"]["protocolVersion"], *v);
        assert_eq!(r[i]["result"]["serverInfo"]["name"], "probe");
        assert!(r[i]["result"]["capabilities"]["tools"].is_object());
    }
    assert_eq!(r[4]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r[5]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r[6]["error"]["code"], -32602);
}

#[test]
fn tools_list_offers_emit_with_its_schema() {
    let r = serve_lines(&[r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#]);
    let tools = r[0]["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "emit");
    let schema = &tools[0]["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["n"]));
    assert_eq!(
        schema["properties"]["fill"]["enum"],
        json!(["ascii", "astral", "lines"])
    );
}

#[test]
fn bad_arguments_are_tool_errors_and_the_server_keeps_serving() {
    let bad = [
        r#"{"n":-1}"#,
        r#"{"n":1.5}"#,
        r#"{"n":"50"}"#,
        r#"{"n":10000001}"#,
        r#"{}"#,
        r#"{"n":5,"fill":"utf8"}"#,
        r#"{"n":5,"blocks":0}"#,
        r#"{"n":5,"blocks":6}"#,
        r#"{"n":5,"extra":1}"#,
    ];
    let mut lines: Vec<String> = bad
        .iter()
        .enumerate()
        .map(|(i, a)| call(i as u64, a))
        .collect();
    lines.push(call(100, r#"{"n":100}"#));
    lines.push(r#"{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#.into());
    lines.push(r#"{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{}}"#.into());
    let r = serve_lines(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.len(), bad.len() + 3);
    for (i, reply) in r[..bad.len()].iter().enumerate() {
        assert_eq!(reply["result"]["isError"], true, "{}: {reply}", bad[i]);
        assert!(texts(reply)[0].starts_with("emit: "), "{reply}");
    }
    assert_eq!(r[bad.len()]["result"]["isError"], false);
    assert_eq!(js_length(&texts(&r[bad.len()])[0]), 100);
    assert_eq!(r[bad.len() + 1]["error"]["code"], -32602);
    assert_eq!(r[bad.len() + 2]["error"]["code"], -32602);
}

#[test]
fn batches_are_answered_as_batches() {
    let r = serve_lines(&[
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"x"}]"#,
    ]);
    assert_eq!(r.len(), 1);
    let batch = r[0].as_array().unwrap();
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[1]["error"]["code"], -32601);
}

/// Checks one reply: exactly n units in all, markers with the same nonce at both ends.
fn check_exact(reply: &Value, n: usize, blocks: usize) -> String {
    let t = texts(reply);
    assert_eq!(t.len(), blocks);
    let whole: String = t.concat();
    assert_eq!(js_length(&whole), n, "n={n} blocks={blocks}");
    let start = format!("<<probe n={n} nonce=");
    assert!(
        whole.starts_with(&start),
        "{}",
        &whole[..60.min(whole.len())]
    );
    let nonce = &whole[start.len()..start.len() + 8];
    assert!(whole.ends_with(&format!("<<probe n={n} nonce={nonce} end>>")));
    whole
}

#[test]
fn each_fill_gives_exactly_n_units_with_markers_at_both_ends() {
    let ns = [72usize, 73, 100, 101, 1000, 49_999, 50_000, 50_001];
    let mut lines = Vec::new();
    for (i, fill) in ["ascii", "astral", "lines"].iter().enumerate() {
        for (j, n) in ns.iter().enumerate() {
            lines.push(call(
                (i * 100 + j) as u64,
                &format!(r#"{{"n":{n},"fill":"{fill}"}}"#),
            ));
        }
    }
    let r = serve_lines(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, fill) in ["ascii", "astral", "lines"].iter().enumerate() {
        for (j, &n) in ns.iter().enumerate() {
            let whole = check_exact(&r[i * ns.len() + j], n, 1);
            let body = &whole[whole.find("start>>").unwrap() + 7..whole.rfind("<<probe").unwrap()];
            match *fill {
                "ascii" => {
                    // `x`s and a stamp `@OFFSET:CC` every 64 units, OFFSET being where it is.
                    assert!(body
                        .bytes()
                        .all(|b| b == b'x' || b == b'@' || b == b':' || b.is_ascii_hexdigit()));
                    for (i, _) in whole.match_indices('@') {
                        let stamp = &whole[i + 1..];
                        let digits: String =
                            stamp.chars().take_while(char::is_ascii_digit).collect();
                        assert_eq!(digits, i.to_string(), "n={n}");
                    }
                }
                "astral" => {
                    // Every character is a surrogate pair, except one final 'x' when the fill is odd.
                    let odd = js_length(body) % 2 == 1;
                    let pairs = if odd { &body[..body.len() - 1] } else { body };
                    assert!(pairs.chars().all(|c| c.len_utf16() == 2), "n={n}");
                    assert_eq!(odd, body.ends_with('x'));
                    assert_eq!(body.chars().count(), js_length(body) / 2 + usize::from(odd));
                }
                _ => {
                    if n >= 1000 {
                        assert!(body.lines().count() > 1);
                        assert!(body.lines().all(|l| l.len() <= 79));
                    }
                }
            }
        }
    }
}

#[test]
fn blocks_split_the_total_exactly() {
    let cases = [
        (1000, 3, "ascii"),
        (1001, 7, "astral"),
        (50_000, 2, "ascii"),
        (5000, 10, "lines"),
        (99, 99, "ascii"),
    ];
    let lines: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (n, k, f))| {
            call(
                i as u64,
                &format!(r#"{{"n":{n},"blocks":{k},"fill":"{f}"}}"#),
            )
        })
        .collect();
    let r = serve_lines(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, &(n, k, _)) in cases.iter().enumerate() {
        check_exact(&r[i], n, k);
        for t in texts(&r[i]) {
            assert!(!t.is_empty());
        }
    }
}

#[test]
fn small_n_degrades_to_the_end_marker_then_to_plain_fill() {
    let r = serve_lines(&[
        &call(1, r#"{"n":0}"#),
        &call(2, r#"{"n":10}"#),
        &call(3, r#"{"n":50}"#),
    ]);
    assert_eq!(texts(&r[0]), vec![String::new()]);
    // Plain fill: a position stamp, then `x`s.
    let t = &texts(&r[1])[0];
    assert_eq!(js_length(t), 10);
    assert!(t.starts_with("@0:") && t.ends_with("xxxxx"), "{t}");
    let t = &texts(&r[2])[0];
    assert_eq!(js_length(t), 50);
    assert!(t.ends_with(" end>>") && !t.contains("start>>"), "{t}");
}

#[test]
fn a_million_units_come_back_exact_in_one_reply() {
    let mut child = crate::common::spawn_serve();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Warm up (process start, page faults) before the call that is shown timed.
    writeln!(stdin, "{}", call(1, r#"{"n":10}"#)).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let t = Instant::now();
    writeln!(stdin, "{}", call(2, r#"{"n":1000000}"#)).unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let took = t.elapsed();
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let reply: Value = serde_json::from_str(&line).unwrap();
    check_exact(&reply, 1_000_000, 1);
    // Speed is for benchmarks, not for a test on a shared machine: the time is only shown.
    eprintln!("1,000,000 units in {took:?}");
}

#[test]
fn the_log_names_each_calls_n_and_nonce() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let out = testkit::bin(PROBE)
        .args(["serve", "--log"])
        .arg(&log)
        .write_stdin(format!("{}\n", call(1, r#"{"n":500}"#)))
        .output()
        .unwrap();
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = &texts(&reply)[0];
    let events: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = events
        .iter()
        .find(|e| e["event"] == "call")
        .expect("a call event");
    assert_eq!(call["n"], 500);
    assert_eq!(call["units"], 500);
    let nonce = call["nonce"].as_str().unwrap();
    assert!(text.ends_with(&format!("nonce={nonce} end>>")));
    assert!(call["time"].as_str().unwrap().ends_with('Z'));
    assert!(
        !String::from_utf8_lossy(&out.stderr).is_empty(),
        "logs also go to stderr"
    );
}
