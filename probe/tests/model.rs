//! `probe model` driven over real HTTP by a fake client: a full tool_use round trip, the token
//! counter, settable usage numbers, chunked bodies, and a 404 for anything else.

use crate::common::*;
use crate::standins::{sse, Model};
use probe::{ContentKind, ModelEvent};
use serde_json::{json, Value};

fn tools() -> Value {
    json!([{"name": "Read", "input_schema": {}}, {"name": "mcp__probe__emit", "input_schema": {}}])
}

#[test]
fn a_full_tool_use_round_trip_logs_exactly_what_the_client_handed_back() {
    let m = Model::start(&[]);
    let user = json!({"role": "user", "content": [{"type": "text", "text": "Call the tool with n=50001."}]});
    let (status, head, body) = m.post(
        "/v1/messages?beta=true",
        &json!({"model": "claude-test", "stream": true, "max_tokens": 100, "tools": tools(), "messages": [user]}),
        false,
    );
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let events = sse(&body);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[0].1["message"]["model"], "claude-test");
    let block = &events[1].1["content_block"];
    assert_eq!(block["type"], "tool_use");
    assert_eq!(block["name"], "mcp__probe__emit");
    let id = block["id"].as_str().unwrap().to_string();
    let input: Value =
        serde_json::from_str(events[2].1["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(input, json!({"n": 50001}));
    assert_eq!(events[4].1["delta"]["stop_reason"], "tool_use");

    // The client hands the result back (as a replaced string), with a system message after it.
    let handed = "<persisted-output>\nOutput too large (48.9KB). Full output saved to: /x.json\n</persisted-output>";
    let second = json!({"model": "claude-test", "stream": true, "tools": tools(), "messages": [
        user,
        {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "mcp__probe__emit", "input": input}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": handed}]},
        {"role": "system", "content": "a trailing system message"},
    ]});
    let (status, _, body) = m.post("/v1/messages?beta=true", &second, true);
    assert_eq!(status, 200);
    let events = sse(&body);
    assert_eq!(events[1].1["content_block"]["type"], "text");
    assert_eq!(events[4].1["delta"]["stop_reason"], "end_turn");

    let log = m.events();
    let Some(ModelEvent::ToolResult {
        n,
        content,
        content_kind,
        units,
        ..
    }) = log
        .iter()
        .find(|e| matches!(e, ModelEvent::ToolResult { .. }))
    else {
        panic!("a tool_result event in {log:?}")
    };
    assert_eq!(*content, json!(handed));
    assert_eq!(*n, Some(50001));
    assert_eq!(*content_kind, ContentKind::String);
    assert_eq!(*units, js_length(handed) as u64);
    assert!(
        log.iter()
            .any(|e| matches!(e, ModelEvent::ToolUse { n: 50001, .. })),
        "{log:?}"
    );
}

#[test]
fn count_tokens_answers_what_it_was_told_or_estimates() {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "x".repeat(4000)}]}], "tools": []});
    let m = Model::start(&["--count-tokens", "30000"]);
    let (status, _, reply) = m.post("/v1/messages/count_tokens?beta=true", &body, false);
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&reply).unwrap(),
        json!({"input_tokens": 30000})
    );
    let m = Model::start(&[]);
    let (_, _, reply) = m.post("/v1/messages/count_tokens", &body, false);
    assert_eq!(
        serde_json::from_str::<Value>(&reply).unwrap(),
        json!({"input_tokens": 1000})
    );
    assert!(
        m.events().contains(&ModelEvent::CountTokens {
            units: 4000,
            input_tokens: 1000
        }),
        "{:?}",
        m.events()
    );
}

#[test]
fn usage_numbers_are_what_was_set_or_estimated() {
    let request = json!({"model": "m", "stream": true, "tools": tools(),
        "messages": [{"role": "user", "content": "n=7 and some words"}]});
    let usage = |m: &Model| {
        let (status, _, body) = m.post("/v1/messages", &request, false);
        assert_eq!(status, 200);
        let events = sse(&body);
        (
            events[0].1["message"]["usage"]["input_tokens"].clone(),
            events[4].1["usage"]["output_tokens"].clone(),
        )
    };
    let m = Model::start(&["--input-tokens", "120000", "--output-tokens", "9"]);
    assert_eq!(usage(&m), (json!(120000), json!(9)));
    // "n=7 and some words" is 18 units: 5 tokens; 5 output tokens by default.
    let m = Model::start(&[]);
    assert_eq!(usage(&m), (json!(5), json!(5)));
}

#[test]
fn other_routes_get_404_and_a_plain_request_gets_a_whole_message() {
    let m = Model::start(&[]);
    let (status, _, body) = m.post("/v1/complete", &json!({}), false);
    assert_eq!(status, 404);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["type"],
        "error"
    );
    let (status, _, body) = m.post(
        "/v1/messages",
        &json!({"model": "m", "tools": tools(), "messages": [{"role": "user", "content": "n = 7"}]}),
        false,
    );
    assert_eq!(status, 200);
    let msg: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(msg["stop_reason"], "tool_use");
    assert_eq!(msg["content"][0]["input"], json!({"n": 7}));
}
