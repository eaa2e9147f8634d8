//! OpenAI Chat Completions, as Qwen Code, opencode and Cline call it:
//! `POST /v1/chat/completions`, streamed as server-sent events when asked (chunks with no event
//! name, a usage chunk when `stream_options.include_usage` says so, then `data: [DONE]`), one
//! whole completion otherwise.
//!
//! A call is one `delta.tool_calls` entry (id, index, the arguments as JSON text) and a
//! `finish_reason` of `tool_calls`; the result comes back in a `role: "tool"` message whose
//! content is a string or a list of text parts. Qwen Code defers MCP tools behind its own
//! `tool_search` and `tool_call` functions, naming the deferred tool only in a reminder: the
//! model searches (`{"query": "select:NAME"}`), then calls it through `tool_call`
//! (`{"name": NAME, "arguments": {...}}`). A request with no tools (opencode's title) gets text.

use regex::Regex;
use serde_json::{json, Value};
use std::sync::OnceLock;

use crate::http::{post_json, take_turn, Handler, Reply, Sse};
use crate::request::Request;
use crate::tokens::Usage;
use crate::turn::{arguments_of, is_emit, text_of, Conversation, Offered, ToolResult, Turn};
use crate::Shared;
use mcp::emit::fresh_nonce;

/// Qwen Code's function that finds deferred tools.
const SEARCH: &str = "tool_search";
/// Qwen Code's function that calls a deferred tool by name.
const PROXY: &str = "tool_call";

/// The OpenAI Chat Completions shape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chat;

impl Handler for Chat {
    fn answer(&self, request: &Request, shared: &Shared) -> Option<Reply> {
        let body = match post_json(request, shared, "/v1/chat/completions")? {
            Ok(body) => body,
            Err(refusal) => return Some(refusal),
        };
        let (turn, usage) = take_turn(&conversation(&body), "call_", &body, shared);
        Some(if body["stream"] == json!(true) {
            let separate = body["stream_options"]["include_usage"] == json!(true);
            Reply::Events(stream(&body, &turn, usage, separate))
        } else {
            Reply::Json {
                status: 200,
                body: completion(&body, &turn, usage),
            }
        })
    }
}

/// The names of the functions a request offers.
fn functions(request: &Value) -> Vec<&str> {
    let tools = request["tools"].as_array().into_iter().flatten();
    tools
        .filter_map(|t| t["function"]["name"].as_str())
        .collect()
}

/// The calls of an assistant message: (id, function name, arguments).
fn calls(message: &Value) -> Vec<(&str, &str, &Value)> {
    let calls = message["tool_calls"].as_array().into_iter().flatten();
    calls
        .map(|c| {
            let id = c["id"].as_str().unwrap_or("");
            let name = c["function"]["name"].as_str().unwrap_or("");
            (id, name, &c["function"]["arguments"])
        })
        .collect()
}

/// The first name of the emit tool written in any message (Qwen Code names a deferred tool in
/// a reminder, and its search's answer names it again).
fn emit_named(messages: &[Value]) -> Option<String> {
    static NAME: OnceLock<Regex> = OnceLock::new();
    let re = NAME.get_or_init(|| Regex::new(r"\b\w+_emit\b").expect("valid regex"));
    messages.iter().find_map(|m| {
        let text = text_of(&m["content"]);
        re.find(&text).map(|found| found.as_str().to_string())
    })
}

/// A Chat Completions request in the terms the turn is decided on.
fn conversation(request: &Value) -> Conversation<'_> {
    let messages = request["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let offered = functions(request);
    let mut tools: Vec<Offered> = offered.iter().copied().map(Offered::named).collect();
    let searched = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .any(|m| calls(m).iter().any(|(_, name, _)| *name == SEARCH));
    let mut search = None;
    if !tools.iter().any(|t| is_emit(&t.name)) {
        let name = emit_named(messages);
        if searched && offered.contains(&PROXY) {
            tools.extend(name.map(|name| Offered {
                name,
                namespace: None,
                via: Some(PROXY.into()),
            }));
        } else if !searched && offered.contains(&SEARCH) {
            let query = name.map_or("emit".to_string(), |name| format!("select:{name}"));
            search = Some(json!({"query": query}));
        }
    }
    let prompt = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .collect::<Vec<_>>()
        .join("\n");
    Conversation {
        model: &request["model"],
        tools,
        prompt,
        results: results(messages),
        search,
    }
}

/// The emit tool's results: the `tool` messages after the last assistant message that answer
/// its calls other than a search (by `tool_call_id`, or the calls in order when a message names
/// none), each with its call's input (unwrapped from `tool_call`'s arguments).
fn results(messages: &[Value]) -> Vec<ToolResult<'_>> {
    let Some(last) = messages.iter().rposition(|m| m["role"] == "assistant") else {
        return Vec::new();
    };
    let calls: Vec<_> = calls(&messages[last])
        .into_iter()
        .filter(|(_, name, _)| *name != SEARCH)
        .collect();
    let answers = messages[last + 1..].iter().filter(|m| m["role"] == "tool");
    answers
        .enumerate()
        .filter_map(|(k, m)| {
            let (id, name, arguments) = match m["tool_call_id"].as_str() {
                Some(id) => *calls.iter().find(|(call, _, _)| *call == id)?,
                None => *calls.get(k)?,
            };
            let input = arguments_of(arguments);
            let input = if name == PROXY {
                input.and_then(|i| arguments_of(&i["arguments"]))
            } else {
                input
            };
            Some(ToolResult {
                id,
                input,
                is_error: Value::Null,
                content: &m["content"],
                raw: None,
            })
        })
        .collect()
}

/// A turn's message: its text, or its calls (through the client's proxy where the tool is
/// deferred), each with its index when streamed.
fn message(turn: &Turn, streamed: bool) -> (Value, &'static str) {
    let call = |id: &str, name: &str, arguments: String| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}});
    let mut calls = match turn {
        Turn::Text(text) => {
            return (json!({"role": "assistant", "content": text}), "stop");
        }
        Turn::ToolUse { tool, calls } => calls
            .iter()
            .map(|c| match &tool.via {
                Some(via) => call(
                    &c.id,
                    via,
                    json!({"name": tool.name, "arguments": c.input}).to_string(),
                ),
                None => call(&c.id, &tool.name, c.input.to_string()),
            })
            .collect::<Vec<_>>(),
        Turn::Search { id, arguments } => vec![call(id, SEARCH, arguments.to_string())],
    };
    if streamed {
        for (index, call) in calls.iter_mut().enumerate() {
            call["index"] = json!(index);
        }
    }
    (
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

fn usage_of(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total()})
}

/// The whole answer as one completion.
fn completion(request: &Value, turn: &Turn, usage: Usage) -> Value {
    let (message, finish) = message(turn, false);
    json!({"id": format!("chatcmpl-{}", fresh_nonce()), "object": "chat.completion",
        "created": 0, "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage_of(usage)})
}

/// The answer as the chunks the real API streams: the delta (the text, or the call whole),
/// the finish reason, the usage (a chunk of its own when `separate`, as `include_usage` asks;
/// else on the finish chunk, for clients that read it there), then `[DONE]`.
fn stream(request: &Value, turn: &Turn, usage: Usage, separate: bool) -> Vec<Sse> {
    let id = format!("chatcmpl-{}", fresh_nonce());
    let chunk = |choices: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0,
            "model": request["model"], "choices": choices})
    };
    let (delta, finish) = message(turn, true);
    let mut finished = chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}]));
    let mut chunks = vec![
        chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])),
        finished.clone(),
    ];
    if separate {
        let mut last = chunk(json!([]));
        last["usage"] = usage_of(usage);
        chunks.push(last);
    } else {
        finished["usage"] = usage_of(usage);
        chunks[1] = finished;
    }
    let mut events: Vec<Sse> = chunks
        .iter()
        .map(|data| Sse {
            event: None,
            data: data.to_string(),
        })
        .collect();
    events.push(Sse {
        event: None,
        data: "[DONE]".into(),
    });
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::decide;

    #[test]
    fn parallel_calls_stream_with_their_indexes_and_every_tool_message_is_read() {
        let request = json!({"model": "m", "stream": true, "tools": [function("probe_emit")],
            "messages": [{"role": "user", "content": "PROBE n=2,9,4"}]});
        let (turn, _) = decide(&conversation(&request), "call_");
        let (whole, finish) = message(&turn, true);
        assert_eq!(finish, "tool_calls");
        let calls = whole["tool_calls"].as_array().unwrap().clone();
        let indexes: Vec<&Value> = calls.iter().map(|c| &c["index"]).collect();
        assert_eq!(indexes, [&json!(0), &json!(1), &json!(2)]);
        assert_eq!(calls[1]["function"]["arguments"], r#"{"n":9}"#);
        // Answered with ids, out of order, and without ids (in order of the calls).
        let mut answered = request.clone();
        let messages = answered["messages"].as_array_mut().unwrap();
        messages.push(whole.clone());
        messages.push(json!({"role": "tool", "tool_call_id": calls[2]["id"], "content": "c"}));
        messages.push(json!({"role": "tool", "tool_call_id": calls[0]["id"], "content": "a"}));
        let c = conversation(&answered);
        let got = c.inputs_and_contents();
        assert_eq!(
            got,
            [
                (Some(json!({"n": 4})), &json!("c")),
                (Some(json!({"n": 2})), &json!("a"))
            ]
        );
        let mut bare = request.clone();
        let messages = bare["messages"].as_array_mut().unwrap();
        messages.push(whole);
        messages.push(json!({"role": "tool", "content": "a"}));
        messages.push(json!({"role": "tool", "content": "b"}));
        let c = conversation(&bare);
        let ns: Vec<Option<Value>> = c.results.iter().map(|r| r.input.clone()).collect();
        assert_eq!(ns, [Some(json!({"n": 2})), Some(json!({"n": 9}))]);
    }

    fn function(name: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "parameters": {}}})
    }

    fn data(events: &[Sse]) -> Vec<Value> {
        let (last, chunks) = events.split_last().unwrap();
        assert_eq!(last.data, "[DONE]");
        chunks
            .iter()
            .map(|e| {
                assert_eq!(e.event, None);
                serde_json::from_str(&e.data).unwrap()
            })
            .collect()
    }

    #[test]
    fn a_direct_call_streams_with_its_index_id_and_finish_reason() {
        let request = json!({"model": "probe-model", "stream": true,
            "tools": [function("bash"), function("probe_emit")],
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "n=1000"}]});
        let (turn, _) = decide(&conversation(&request), "call_");
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 2,
        };
        let chunks = data(&stream(&request, &turn, usage, true));
        assert_eq!(chunks.len(), 3);
        let call = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(call["index"], 0);
        assert!(call["id"].as_str().unwrap().starts_with("call_"), "{call}");
        assert_eq!(call["function"]["name"], "probe_emit");
        assert_eq!(call["function"]["arguments"], r#"{"n":1000}"#);
        assert_eq!(chunks[1]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(chunks[1].get("usage"), None);
        assert_eq!(chunks[2]["choices"], json!([]));
        assert_eq!(
            chunks[2]["usage"],
            json!({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12})
        );
        // Without include_usage, the usage rides on the finish chunk.
        let chunks = data(&stream(&request, &turn, usage, false));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[1]["usage"]["prompt_tokens"], 10);
    }

    #[test]
    fn a_deferred_tool_is_searched_for_by_the_name_in_the_reminder_then_called_through_the_proxy() {
        let mut request = json!({"model": "m", "tools": [function(SEARCH), function(PROXY)],
            "messages": [{"role": "system", "content": "Deferred tools: mcp__probe__emit, other"},
                {"role": "user", "content": [{"type": "text", "text": "n=42"}]}]});
        let c = conversation(&request);
        assert_eq!(c.search, Some(json!({"query": "select:mcp__probe__emit"})));
        let (turn, _) = decide(&c, "call_");
        let (search, finish) = message(&turn, true);
        assert_eq!(finish, "tool_calls");
        let search_call = search["tool_calls"][0].clone();
        assert_eq!(search_call["function"]["name"], SEARCH);
        let messages = request["messages"].as_array_mut().unwrap();
        messages.push(search);
        messages.push(json!({"role": "tool", "tool_call_id": search_call["id"], "content": "found mcp__probe__emit"}));
        let c = conversation(&request);
        assert_eq!(c.search, None);
        assert!(c.results.is_empty(), "a search's answer is not the result");
        let (turn, _) = decide(&c, "call_");
        let (called, _) = message(&turn, true);
        let call = &called["tool_calls"][0];
        assert_eq!(call["function"]["name"], PROXY);
        let arguments: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(
            arguments,
            json!({"name": "mcp__probe__emit", "arguments": {"n": 42}})
        );
        // The proxy's result carries the input of the call it made.
        let parts = json!([{"type": "text", "text": "<<probe>>"}]);
        let messages = request["messages"].as_array_mut().unwrap();
        messages.push(called.clone());
        messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": parts}));
        let c = conversation(&request);
        let result = &c.results[0];
        assert_eq!(result.id, call["id"]);
        assert_eq!(result.input, Some(json!({"n": 42})));
        assert_eq!(result.content, &parts);
    }

    #[test]
    fn a_tool_message_without_an_id_answers_the_one_call() {
        let request = json!({"model": "m", "tools": [function("probe__emit")], "messages": [
            {"role": "user", "content": "n=5"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "probe__emit", "arguments": "{\"n\":5}"}}]},
            {"role": "tool", "content": "{\"content\":[],\"isError\":false}"},
            {"role": "user", "content": "<environment_details>n=9</environment_details>"}]});
        let c = conversation(&request);
        let result = &c.results[0];
        assert_eq!(result.id, "c1");
        assert_eq!(result.input, Some(json!({"n": 5})));
        assert_eq!(result.content, &json!("{\"content\":[],\"isError\":false}"));
    }

    #[test]
    fn a_request_without_tools_gets_text_whole_or_streamed() {
        let request =
            json!({"model": "m", "messages": [{"role": "user", "content": "title for n=5"}]});
        let (turn, _) = decide(&conversation(&request), "call_");
        let usage = Usage {
            input_tokens: 3,
            output_tokens: 4,
        };
        let whole = completion(&request, &turn, usage);
        assert_eq!(whole["object"], "chat.completion");
        assert_eq!(whole["choices"][0]["finish_reason"], "stop");
        assert_eq!(
            whole["choices"][0]["message"]["content"],
            "no emit tool was offered"
        );
        assert_eq!(whole["usage"]["total_tokens"], 7);
        let chunks = data(&stream(&request, &turn, usage, true));
        assert_eq!(
            chunks[0]["choices"][0]["delta"]["content"],
            "no emit tool was offered"
        );
        assert_eq!(chunks[1]["choices"][0]["finish_reason"], "stop");
    }
}
