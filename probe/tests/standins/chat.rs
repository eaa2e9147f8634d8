//! OpenAI Chat Completions as its three clients speak it: Qwen Code (streamed with
//! `stream_options`, tools deferred behind `tool_search`/`tool_call`, the result as text
//! parts), opencode (a title request without tools, then `probe_emit`, the result as a string)
//! and a client that does not stream (Cline's tool name, the MCP result as JSON text).

use super::{chunks, Model};
use crate::common::js_length;
use probe::{ContentKind, ModelEvent};
use serde_json::{json, Value};

const PROMPT: &str = "Call the emit tool once with PROBE n=2000 fill=astral, then reply done.";

fn function(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": name,
        "parameters": {"type": "object", "properties": {}}}})
}

fn request(tools: &[Value], messages: &[Value]) -> Value {
    let mut r = json!({"model": "probe-model", "messages": messages, "stream": true,
        "stream_options": {"include_usage": true}});
    if !tools.is_empty() {
        r["tools"] = json!(tools);
    }
    r
}

/// The one call a streamed answer makes, checked as the protocol has it: one delta with the
/// call (index, id, type), then `finish_reason: "tool_calls"`, the usage chunk, `[DONE]`.
fn streamed_call(m: &Model, body: &Value) -> Value {
    let chunks = chunks(&m.ask("/v1/chat/completions", body).events());
    assert_eq!(chunks.len(), 3, "{chunks:?}");
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["id"], chunks[0]["id"]);
    }
    let delta = &chunks[0]["choices"][0]["delta"];
    assert_eq!(delta["role"], "assistant");
    let calls = delta["tool_calls"].as_array().expect("tool calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["index"], 0);
    assert_eq!(calls[0]["type"], "function");
    assert!(calls[0]["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(chunks[1]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(chunks[2]["choices"], json!([]));
    assert!(chunks[2]["usage"]["total_tokens"].is_u64());
    calls[0].clone()
}

fn arguments(call: &Value) -> Value {
    serde_json::from_str(call["function"]["arguments"].as_str().expect("JSON text")).unwrap()
}

/// The assistant message that made `call`, as the client replays it.
fn assistant(call: &Value) -> Value {
    let mut call = call.clone();
    call.as_object_mut().unwrap().remove("index");
    json!({"role": "assistant", "content": null, "tool_calls": [call]})
}

#[test]
fn qwen_code_searches_its_deferred_tools_calls_through_tool_call_and_hands_back_parts() {
    let m = Model::start(&["--input-tokens", "7", "--output-tokens", "3"]);
    let tools = [
        function("read_file"),
        function("tool_search"),
        function("tool_call"),
    ];
    let mut messages = vec![
        json!({"role": "system", "content": "You are Qwen Code."}),
        json!({"role": "user", "content": [{"type": "text", "text": PROMPT},
            {"type": "text", "text": "<system-reminder>Deferred tools, load with tool_search: mcp__probe__emit</system-reminder>"}]}),
    ];
    let search = streamed_call(&m, &request(&tools, &messages));
    assert_eq!(search["function"]["name"], "tool_search");
    assert_eq!(
        arguments(&search),
        json!({"query": "select:mcp__probe__emit"})
    );
    messages.push(assistant(&search));
    messages.push(json!({"role": "tool", "tool_call_id": search["id"],
        "content": "Loaded: mcp__probe__emit (call it with tool_call)"}));

    let call = streamed_call(&m, &request(&tools, &messages));
    assert_eq!(call["function"]["name"], "tool_call");
    assert_eq!(
        arguments(&call),
        json!({"name": "mcp__probe__emit", "arguments": {"n": 2000, "fill": "astral"}})
    );
    assert_ne!(call["id"], search["id"]);

    let text = "<<probe n=2000 start>>\u{1F600}\u{1F600}<<probe n=2000 end>>";
    let parts = json!([{"type": "text", "text": text}]);
    messages.push(assistant(&call));
    messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": parts}));
    let answer = chunks(
        &m.ask("/v1/chat/completions", &request(&tools, &messages))
            .events(),
    );
    assert_eq!(answer[0]["choices"][0]["delta"]["content"], "done");
    assert_eq!(answer[1]["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        answer[2]["usage"],
        json!({"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})
    );

    let tool_use_id = m.assert_tool_result(2000, &parts, ContentKind::Blocks, js_length(text));
    assert_eq!(tool_use_id, call["id"].as_str().unwrap());
    let events = m.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ModelEvent::ToolSearch { .. })),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e,
            ModelEvent::ToolUse { tool, via: Some(via), .. } if tool == "mcp__probe__emit" && via == "tool_call")),
        "{events:?}"
    );
}

#[test]
fn opencode_gets_a_title_as_text_then_calls_probe_emit_and_hands_back_a_string() {
    let m = Model::start(&[]);
    // The title request: no tools, not asking for a usage chunk.
    let mut title = request(
        &[],
        &[
            json!({"role": "system", "content": "Generate a title."}),
            json!({"role": "user", "content": PROMPT}),
        ],
    );
    title.as_object_mut().unwrap().remove("stream_options");
    let said = chunks(&m.ask("/v1/chat/completions", &title).events());
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0]["choices"][0]["delta"]["content"].is_string());
    assert_eq!(said[0]["choices"][0]["delta"].get("tool_calls"), None);
    assert_eq!(said[1]["choices"][0]["finish_reason"], "stop");
    assert!(said[1]["usage"]["prompt_tokens"].is_u64());
    assert!(
        m.events().contains(&ModelEvent::NoTool {
            model: json!("probe-model"),
            offered: Vec::new()
        }),
        "{:?}",
        m.events()
    );

    let tools = [function("bash"), function("probe_emit")];
    let mut messages = vec![json!({"role": "user", "content": PROMPT})];
    let call = streamed_call(&m, &request(&tools, &messages));
    assert_eq!(call["function"]["name"], "probe_emit");
    assert_eq!(arguments(&call), json!({"n": 2000, "fill": "astral"}));
    let handed = "The tool output was too large; the full text is saved to /tmp/tool_x.";
    messages.push(assistant(&call));
    messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": handed}));
    m.ask("/v1/chat/completions", &request(&tools, &messages));
    m.assert_string_result(2000, handed);
}

#[test]
fn a_request_that_does_not_stream_gets_one_completion_and_its_result_is_logged_as_sent() {
    let m = Model::start(&["--input-tokens", "50", "--output-tokens", "2"]);
    let tools = [function("probe__emit")];
    let mut messages = vec![json!({"role": "user", "content": PROMPT})];
    let plain =
        |messages: &[Value]| json!({"model": "probe-model", "tools": tools, "messages": messages});
    let answer = m.ask("/v1/chat/completions", &plain(&messages));
    assert_eq!(answer.status, 200);
    assert!(answer.head.contains("content-type: application/json"));
    let completion = answer.json();
    assert_eq!(completion["object"], "chat.completion");
    let choice = &completion["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    let call = choice["message"]["tool_calls"][0].clone();
    assert_eq!(call["function"]["name"], "probe__emit");
    assert_eq!(
        call.get("index"),
        None,
        "a whole message's calls have no index"
    );
    assert_eq!(
        completion["usage"],
        json!({"prompt_tokens": 50, "completion_tokens": 2, "total_tokens": 52})
    );
    // Cline hands back the whole MCP result serialized as JSON text.
    let handed = r#"{"content":[{"text":"<<probe n=2000 end>>","type":"text"}],"isError":false}"#;
    messages.push(choice["message"].clone());
    messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": handed}));
    let done = m.ask("/v1/chat/completions", &plain(&messages)).json();
    assert_eq!(done["choices"][0]["message"]["content"], "done");
    assert_eq!(done["choices"][0]["finish_reason"], "stop");
    let ModelEvent::ToolResult { content, n, .. } = m.tool_result() else {
        unreachable!()
    };
    assert_eq!(content, json!(handed));
    assert_eq!(n, Some(2000));
}
