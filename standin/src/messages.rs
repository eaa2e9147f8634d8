//! The Anthropic Messages API, as Claude Code calls it: `POST /v1/messages` (streamed as
//! server-sent events when asked, one whole message otherwise) and
//! `POST /v1/messages/count_tokens`.
//!
//! Only the parts a client needs to run one tool call are spoken; the wire format is what
//! Claude Code was measured to send. The one thing to know: the tool result is in the last message
//! whose role is `user`, since some clients (Claude Code 2.1.296) append a `system` message
//! after it.

use serde_json::{json, Value};

use crate::events::ModelEvent;
use crate::http::{json_body, take_turn, Handler, Reply, Sse};
use crate::request::Request;
use crate::tokens::{text_units, tokens_for, Usage};
use crate::turn::{text_of, Conversation, Offered, ToolResult, Turn};
use crate::Shared;
use mcp::emit::fresh_nonce;

/// The Anthropic Messages API shape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Messages;

impl Handler for Messages {
    fn answer(&self, request: &Request, shared: &Shared) -> Option<Reply> {
        if request.method != "POST" {
            return None;
        }
        match request.path.as_str() {
            "/v1/messages" => {
                let body = match json_body(request, shared) {
                    Ok(body) => body,
                    Err(refusal) => return Some(refusal),
                };
                let (turn, usage) = take_turn(&conversation(&body), "toolu_", &body, shared);
                Some(if body["stream"] == json!(true) {
                    Reply::Events(stream(&body, &turn, usage))
                } else {
                    Reply::Json {
                        status: 200,
                        body: message(&body, &turn, usage),
                    }
                })
            }
            "/v1/messages/count_tokens" => {
                let body = crate::json::parse(&request.body).ok();
                let units = body.as_ref().map(text_units).unwrap_or(0);
                let input_tokens = shared.settings.count_tokens.unwrap_or(tokens_for(units));
                shared.record(ModelEvent::CountTokens {
                    units,
                    input_tokens,
                });
                Some(Reply::Json {
                    status: 200,
                    body: json!({"input_tokens": input_tokens}),
                })
            }
            _ => None,
        }
    }
}

/// A Messages request in the terms the turn is decided on.
fn conversation(request: &Value) -> Conversation<'_> {
    let messages = request["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let last_user = messages.iter().rev().find(|m| m["role"] == "user");
    let blocks: &[Value] = last_user
        .and_then(|m| m["content"].as_array())
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let results = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|result| {
            let id = result["tool_use_id"].as_str().unwrap_or("");
            ToolResult {
                id,
                input: tool_use_input(messages, id),
                is_error: result["is_error"].clone(),
                content: &result["content"],
                raw: None,
            }
        })
        .collect();
    Conversation {
        model: &request["model"],
        tools: request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .map(Offered::named)
            .collect(),
        prompt: last_user
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default(),
        results,
        search: None,
    }
}

/// The input of the assistant's tool_use block with this id, from the conversation so far.
fn tool_use_input(messages: &[Value], id: &str) -> Option<Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "tool_use" && b["id"] == id)
        .map(|b| b["input"].clone())
}

/// The text of a turn that calls no tool.
fn text(turn: &Turn) -> &str {
    match turn {
        Turn::Text(text) => text,
        _ => "",
    }
}

fn stop_reason(turn: &Turn) -> &'static str {
    match turn {
        Turn::ToolUse { .. } => "tool_use",
        Turn::Search { .. } | Turn::Text(_) => "end_turn",
    }
}

/// The content blocks of a turn: one `tool_use` per call, or its text.
fn blocks(turn: &Turn) -> Vec<Value> {
    match turn {
        Turn::ToolUse { tool, calls } => calls
            .iter()
            .map(|c| json!({"type": "tool_use", "id": c.id, "name": tool.name, "input": c.input}))
            .collect(),
        // The Messages API's clients offer their tools directly: no search to run.
        Turn::Search { .. } | Turn::Text(_) => vec![json!({"type": "text", "text": text(turn)})],
    }
}

/// The whole answer as one (non-streamed) message.
fn message(request: &Value, turn: &Turn, usage: Usage) -> Value {
    json!({
        "id": format!("msg_{}", fresh_nonce()),
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": blocks(turn),
        "stop_reason": stop_reason(turn),
        "stop_sequence": null,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
    })
}

/// The answer as the stream of events the real API sends: the message starts, each content
/// block (a tool call's input in one JSON delta, or the text in one text delta) starts, gets
/// its delta and stops, then the stop reason, the end.
fn stream(request: &Value, turn: &Turn, usage: Usage) -> Vec<Sse> {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_{}", fresh_nonce()), "type": "message", "role": "assistant",
            "model": request["model"], "content": [], "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1}}}),
    )];
    for (index, block) in blocks(turn).into_iter().enumerate() {
        let (start_block, delta) = if block["type"] == "tool_use" {
            let mut start = block.clone();
            start["input"] = json!({});
            let partial = block["input"].to_string();
            (
                start,
                json!({"type": "input_json_delta", "partial_json": partial}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        events.extend([
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start_block}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ),
        ]);
    }
    events.extend([
        (
            "message_delta",
            json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
                "usage": {"output_tokens": usage.output_tokens}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    events
        .into_iter()
        .map(|(name, data)| Sse::named(name, &data))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::{decide, Call};

    #[test]
    fn parallel_calls_are_one_tool_use_block_each_and_every_result_is_read() {
        let request = json!({"model": "m", "stream": true, "tools": [{"name": "mcp__probe__emit"}],
            "messages": [{"role": "user", "content": "PROBE n=4,3"}]});
        let (turn, _) = decide(&conversation(&request), "toolu_");
        let whole = message(
            &request,
            &turn,
            Usage {
                input_tokens: 1,
                output_tokens: 1,
            },
        );
        let ids: Vec<&Value> = whole["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| &b["id"])
            .collect();
        assert_eq!(whole["content"][1]["input"], json!({"n": 3}));
        assert_eq!(ids.len(), 2);
        let events = stream(
            &request,
            &turn,
            Usage {
                input_tokens: 1,
                output_tokens: 1,
            },
        );
        let data: Vec<Value> = events
            .iter()
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect();
        let starts: Vec<&Value> = data
            .iter()
            .filter(|d| d["type"] == "content_block_start")
            .map(|d| &d["index"])
            .collect();
        assert_eq!(starts, [&json!(0), &json!(1)]);
        assert_eq!(data[5]["delta"]["partial_json"], r#"{"n":3}"#);
        // The follow-up carries both results, each read with its call's input.
        let answered = json!({"model": "m", "messages": [
            {"role": "user", "content": "PROBE n=4,3"},
            {"role": "assistant", "content": whole["content"]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": ids[0], "content": "aaaa"},
                {"type": "tool_result", "tool_use_id": ids[1], "content": [{"type": "text", "text": "bbb"}]}]}]});
        let c = conversation(&answered);
        let got = c.inputs_and_contents();
        assert_eq!(
            got,
            [
                (Some(json!({"n": 4})), &json!("aaaa")),
                (
                    Some(json!({"n": 3})),
                    &json!([{"type": "text", "text": "bbb"}])
                )
            ]
        );
    }

    #[test]
    fn the_result_is_read_from_the_last_user_message_past_a_trailing_system_one() {
        let request = json!({"model": "m", "tools": [{"name": "mcp__probe__emit"}], "messages": [
            {"role": "user", "content": "n=7"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__probe__emit", "input": {"n": 7}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "<persisted-output>"}]},
            {"role": "system", "content": "after"}]});
        let c = conversation(&request);
        assert_eq!(c.tools, [Offered::named("mcp__probe__emit")]);
        let [result] = c.results.as_slice() else {
            panic!("{:?}", c.results)
        };
        assert_eq!(result.id, "t1");
        assert_eq!(result.input, Some(json!({"n": 7})));
        assert_eq!(result.content, &json!("<persisted-output>"));
        assert_eq!(result.is_error, Value::Null);
    }

    #[test]
    fn the_prompt_is_all_text_of_the_last_user_message() {
        let request = json!({"model": "m", "messages": [
            {"role": "user", "content": "n=1"},
            {"role": "user", "content": [{"type": "text", "text": "call it with "}, {"type": "text", "text": "n=50001"}]}]});
        let c = conversation(&request);
        assert_eq!(c.prompt, "call it with n=50001");
        assert!(c.results.is_empty());
        assert_eq!(c.model, "m");
    }

    #[test]
    fn a_streamed_tool_call_is_the_six_events_of_the_real_api() {
        let turn = Turn::ToolUse {
            tool: Offered::named("mcp__probe__emit"),
            calls: vec![Call {
                id: "toolu_1".into(),
                input: json!({"n": 5}),
            }],
        };
        let usage = Usage {
            input_tokens: 9,
            output_tokens: 3,
        };
        let events = stream(&json!({"model": "m"}), &turn, usage);
        let names: Vec<_> = events.iter().map(|e| e.event.unwrap_or("")).collect();
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
        let data: Vec<Value> = events
            .iter()
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect();
        assert_eq!(data[0]["message"]["usage"]["input_tokens"], 9);
        assert_eq!(data[1]["content_block"]["id"], "toolu_1");
        assert_eq!(data[2]["delta"]["partial_json"], r#"{"n":5}"#);
        assert_eq!(data[4]["delta"]["stop_reason"], "tool_use");
        assert_eq!(data[4]["usage"]["output_tokens"], 3);
        let text = stream(&json!({}), &Turn::Text("done".into()), usage);
        let delta: Value = serde_json::from_str(&text[4].data).unwrap();
        assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn a_whole_message_carries_the_block_and_the_usage() {
        let usage = Usage {
            input_tokens: 2,
            output_tokens: 5,
        };
        let m = message(&json!({"model": "m"}), &Turn::Text("done".into()), usage);
        assert_eq!(m["content"], json!([{"type": "text", "text": "done"}]));
        assert_eq!(m["stop_reason"], "end_turn");
        assert_eq!(m["usage"], json!({"input_tokens": 2, "output_tokens": 5}));
    }
}
