//! The OpenAI Responses API as Codex CLI speaks it: a streamed round trip with MCP tools in a
//! namespace and the result as `input_text` items, and the client-side tool search (not
//! streamed) with the result as a string.

use super::{named, Model};
use crate::common::js_length;
use probe::{ContentKind, ModelEvent};
use serde_json::{json, Value};

const PROMPT: &str = "Call the emit tool once with PROBE n=1000 fill=ascii, then reply done.";

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn namespace() -> Value {
    json!({"type": "namespace", "name": "mcp__probe", "description": "Tools of the probe server",
        "tools": [{"type": "function", "name": "emit", "description": "emit n units",
            "strict": false, "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]})
}

fn request(tools: Value, input: &[Value], stream: bool) -> Value {
    json!({"model": "probe-model", "instructions": "You are Codex.", "input": input,
        "tools": tools, "tool_choice": "auto", "parallel_tool_calls": false, "store": false,
        "stream": stream, "include": [], "prompt_cache_key": "k"})
}

#[test]
fn a_streamed_codex_round_trip_calls_in_the_namespace_and_logs_the_parts_handed_back() {
    let m = Model::start(&["--input-tokens", "120000", "--output-tokens", "9"]);
    let tools = json!([{"type": "function", "name": "shell", "parameters": {}}, namespace()]);
    let developer = json!({"type": "message", "role": "developer",
        "content": [{"type": "input_text", "text": "<permissions>n=1</permissions>"}]});
    let first = [developer, user(PROMPT)];
    let answer = m.ask("/v1/responses", &request(tools.clone(), &first, true));
    let events = named(&answer.events());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let item = &events[1].1["item"];
    assert_eq!(events[1].1["output_index"], 0);
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["name"], "emit");
    assert_eq!(item["namespace"], "mcp__probe");
    assert_eq!(item["status"], "completed");
    let call_id = item["call_id"].as_str().expect("a call id").to_string();
    assert!(item["id"].as_str().is_some_and(|id| id.starts_with("fc_")));
    let arguments: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"n": 1000, "fill": "ascii"}));
    let completed = &events[2].1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"], json!([item]));
    assert_eq!(completed["usage"]["input_tokens"], 120000);
    assert_eq!(completed["usage"]["output_tokens"], 9);
    assert_eq!(completed["usage"]["total_tokens"], 120009);

    let handed = [
        "Wall time: 0.0012 seconds\nOutput:",
        "<<probe n=1000 start>>\u{1F600}x<<probe n=1000 end>>",
    ];
    let output = json!([{"type": "input_text", "text": handed[0]}, {"type": "input_text", "text": handed[1]}]);
    let mut input = first.to_vec();
    input.push(item.clone());
    input.push(json!({"type": "function_call_output", "call_id": call_id, "output": output}));
    let answer = m.ask("/v1/responses", &request(tools, &input, true));
    let events = named(&answer.events());
    let message = &events.last().unwrap().1["response"]["output"][0];
    assert_eq!(message["type"], "message");
    assert_eq!(message["content"][0]["text"], "done");

    let units = js_length(handed[0]) + js_length(handed[1]);
    let tool_use_id = m.assert_tool_result(1000, &output, ContentKind::Blocks, units);
    assert_eq!(tool_use_id, call_id);
    assert!(
        m.events().iter().any(|e| matches!(e,
            ModelEvent::ToolUse { tool, namespace: Some(ns), n: 1000, .. } if tool == "emit" && ns == "mcp__probe")),
        "{:?}",
        m.events()
    );
}

#[test]
fn deferred_tools_are_found_by_a_client_side_search_then_called_and_a_string_result_logged() {
    let m = Model::start(&[]);
    let tools = json!([{"type": "function", "name": "shell", "parameters": {}},
        {"type": "tool_search", "execution": "client", "description": "Search deferred tools",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]);
    let mut input = vec![user(PROMPT)];
    // Not streamed: one whole response object.
    let answer = m.ask("/v1/responses", &request(tools.clone(), &input, false));
    assert_eq!(answer.status, 200);
    assert!(answer.head.contains("content-type: application/json"));
    let response = answer.json();
    assert_eq!(response["object"], "response");
    assert_eq!(response["status"], "completed");
    let search = &response["output"][0];
    assert_eq!(search["type"], "tool_search_call");
    assert_eq!(search["execution"], "client");
    assert_eq!(
        search["arguments"],
        json!({"query": "probe emit", "limit": 5})
    );
    let search_id = search["call_id"].as_str().expect("a call id").to_string();
    assert!(response["usage"]["total_tokens"].as_u64().unwrap() >= 1);

    input.push(search.clone());
    input.push(
        json!({"type": "tool_search_output", "call_id": search_id, "status": "completed",
        "execution": "client", "tools": [namespace()]}),
    );
    let response = m
        .ask("/v1/responses", &request(tools.clone(), &input, false))
        .json();
    let call = &response["output"][0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["name"], "emit");
    assert_eq!(call["namespace"], "mcp__probe");

    let handed = "<persisted-output>saved to /tmp/x</persisted-output>";
    input.push(call.clone());
    input.push(
        json!({"type": "function_call_output", "call_id": call["call_id"], "output": handed}),
    );
    let response = m
        .ask("/v1/responses", &request(tools, &input, false))
        .json();
    assert_eq!(response["output"][0]["content"][0]["text"], "done");
    m.assert_string_result(1000, handed);
    assert!(
        m.events().contains(&ModelEvent::ToolSearch {
            id: search_id,
            arguments: json!({"query": "probe emit", "limit": 5})
        }),
        "{:?}",
        m.events()
    );
}
