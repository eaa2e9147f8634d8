//! The OpenAI Responses API, as Codex CLI calls it: `POST /v1/responses`, streamed as
//! server-sent events (`"stream": true`, the only way Codex asks), one whole response otherwise.
//!
//! What Codex needs, as measured: its MCP tools arrive inside a
//! `namespace` tool (`mcp__probe` holding `emit`), and a call of one must name that namespace;
//! the call is one `response.output_item.done`, then `response.completed` with the usage. The
//! result comes back in the next request's `input[]` as a `function_call_output` whose `output`
//! is a list of `input_text` items (or a string). For a model slug Codex knows, it defers MCP
//! tools behind a client-side tool search: the model answers a `tool_search_call` with
//! `execution: "client"`, the next request carries the `tool_search_output` (with the
//! namespace), and then the model calls emit.

use serde_json::{json, Value};

use crate::http::{post_json, take_turn, Handler, Reply, Sse};
use crate::request::Request;
use crate::tokens::Usage;
use crate::turn::{arguments_of, is_emit, text_of, Conversation, Offered, ToolResult, Turn};
use crate::Shared;
use mcp::emit::fresh_nonce;

/// The OpenAI Responses API shape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Responses;

impl Handler for Responses {
    fn answer(&self, request: &Request, shared: &Shared) -> Option<Reply> {
        let body = match post_json(request, shared, "/v1/responses")? {
            Ok(body) => body,
            Err(refusal) => return Some(refusal),
        };
        let (turn, usage) = take_turn(&conversation(&body), "call_", &body, shared);
        let items = output_items(&turn);
        Some(if body["stream"] == json!(true) {
            Reply::Events(stream(&body, &items, usage))
        } else {
            Reply::Json {
                status: 200,
                body: response(&body, "completed", &items, Some(usage)),
            }
        })
    }
}

/// A Responses request in the terms the turn is decided on.
fn conversation(request: &Value) -> Conversation<'_> {
    let input = request["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // The user's words: every user message, or `input` itself when it is one string.
    let prompt = match &request["input"] {
        Value::String(text) => text.clone(),
        _ => input
            .iter()
            .filter(|i| i["role"] == "user" && i.get("type").is_none_or(|t| t == "message"))
            .map(|i| text_of(&i["content"]))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    // The tools offered, and those a client-side search revealed.
    let searched: Vec<&Value> = input
        .iter()
        .filter(|i| i["type"] == "tool_search_output")
        .collect();
    let mut tools = offered(&request["tools"]);
    for output in &searched {
        tools.extend(offered(&output["tools"]));
    }
    let can_search = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["type"] == "tool_search" || t["name"] == "tool_search");
    let search = (can_search && searched.is_empty() && !tools.iter().any(|t| is_emit(&t.name)))
        .then(|| json!({"query": "probe emit", "limit": 5}));
    // The outputs of the last turn's calls: the run of calls and outputs that ends the input
    // at its last output (a client may interleave them: call, output, call, output).
    let last = input
        .iter()
        .rposition(|i| i["type"] == "function_call_output");
    let first = last.map_or(0, |last| {
        input[..last]
            .iter()
            .rposition(|i| {
                !matches!(
                    i["type"].as_str(),
                    Some("function_call" | "function_call_output" | "reasoning")
                )
            })
            .map_or(0, |k| k + 1)
    });
    let results = match last {
        None => Vec::new(),
        Some(last) => input[first..=last]
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|output| {
                let id = output["call_id"].as_str().unwrap_or("");
                ToolResult {
                    id,
                    input: input
                        .iter()
                        .find(|i| i["type"] == "function_call" && i["call_id"] == id)
                        .and_then(|call| arguments_of(&call["arguments"])),
                    is_error: Value::Null,
                    content: &output["output"],
                    raw: None,
                }
            })
            .collect(),
    };
    Conversation {
        model: &request["model"],
        tools,
        prompt,
        results,
        search,
    }
}

/// The function tools in a `tools` list, those inside a `namespace` tool with its name.
fn offered(tools: &Value) -> Vec<Offered> {
    let mut found = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        match tool["type"].as_str() {
            Some("namespace") => {
                let namespace = tool["name"].as_str().map(String::from);
                let inner = tool["tools"].as_array().into_iter().flatten();
                found.extend(
                    inner
                        .filter_map(|t| t["name"].as_str())
                        .map(|name| Offered {
                            name: name.into(),
                            namespace: namespace.clone(),
                            via: None,
                        }),
                );
            }
            Some("function") => found.extend(tool["name"].as_str().map(Offered::named)),
            _ => {}
        }
    }
    found
}

/// The output items of a turn: one function call per call (naming its namespace where the
/// tool has one), a client-side tool search, or an assistant message.
fn output_items(turn: &Turn) -> Vec<Value> {
    match turn {
        Turn::ToolUse { tool, calls } => calls
            .iter()
            .map(|c| {
                let mut item = json!({"type": "function_call",
                    "id": format!("fc_{}", fresh_nonce()), "call_id": c.id, "name": tool.name,
                    "arguments": c.input.to_string(), "status": "completed"});
                if let Some(namespace) = &tool.namespace {
                    item["namespace"] = json!(namespace);
                }
                item
            })
            .collect(),
        Turn::Search { id, arguments } => vec![json!({"type": "tool_search_call",
            "id": format!("ts_{}", fresh_nonce()), "call_id": id, "execution": "client",
            "status": "completed", "arguments": arguments})],
        Turn::Text(text) => vec![
            json!({"type": "message", "id": format!("msg_{}", fresh_nonce()),
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        ],
    }
}

/// A response object; `usage` once it is complete.
fn response(request: &Value, status: &str, output: &[Value], usage: Option<Usage>) -> Value {
    let mut response = json!({"id": format!("resp_{}", fresh_nonce()), "object": "response",
        "created_at": 0, "status": status, "model": request["model"], "output": output});
    if let Some(usage) = usage {
        response["usage"] = json!({
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.total(),
        });
    }
    response
}

/// The stream of events for a turn's output items: the response is created; each item is
/// done in turn (a message is first added and its text streamed as one delta; a call or a
/// search is not: Codex acts on the finished item); the response completes, with the usage.
fn stream(request: &Value, items: &[Value], usage: Usage) -> Vec<Sse> {
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "response": response(request, "in_progress", &[], None)}),
    )];
    for (index, item) in items.iter().enumerate() {
        if item["type"] == "message" {
            let mut added = item.clone();
            added["status"] = json!("in_progress");
            added["content"] = json!([]);
            events.push((
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": index, "item": added}),
            ));
            events.push((
                "response.output_text.delta",
                json!({"type": "response.output_text.delta", "item_id": item["id"],
                    "output_index": index, "content_index": 0, "delta": item["content"][0]["text"]}),
            ));
        }
        events.push((
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
    }
    let done = response(request, "completed", items, Some(usage));
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": done}),
    ));
    events
        .into_iter()
        .enumerate()
        .map(|(k, (name, mut data))| {
            data["sequence_number"] = json!(k);
            Sse::named(name, &data)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::decide;

    fn codex_tools() -> Value {
        json!([{"type": "function", "name": "shell", "parameters": {}},
            {"type": "namespace", "name": "mcp__probe", "description": "probe",
                "tools": [{"type": "function", "name": "emit", "parameters": {}}]}])
    }

    #[test]
    fn namespaced_tools_are_offered_with_their_namespace() {
        let request = json!({"model": "m", "tools": codex_tools(),
            "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "n=1"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Call it with n=1000."}]}]});
        let c = conversation(&request);
        assert_eq!(
            c.tools,
            [
                Offered::named("shell"),
                Offered {
                    name: "emit".into(),
                    namespace: Some("mcp__probe".into()),
                    via: None
                }
            ]
        );
        // Only the user's words name n (a developer message does not).
        assert_eq!(c.prompt, "Call it with n=1000.");
        assert_eq!(c.search, None);
        assert!(c.results.is_empty());
    }

    #[test]
    fn an_input_that_is_one_string_is_the_prompt() {
        let request = json!({"model": "m", "tools": codex_tools(), "input": "n=4"});
        assert_eq!(conversation(&request).prompt, "n=4");
    }

    #[test]
    fn parallel_calls_are_one_item_each_and_every_output_of_the_turn_is_read() {
        let request = json!({"model": "m", "stream": true, "tools": codex_tools(), "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "n=5,6"}]}]});
        let (turn, _) = decide(&conversation(&request), "call_");
        let items = output_items(&turn);
        assert_eq!(items.len(), 2);
        assert!(items.iter().all(|i| i["namespace"] == "mcp__probe"));
        let usage = Usage {
            input_tokens: 1,
            output_tokens: 1,
        };
        let events = stream(&request, &items, usage);
        let done: Vec<Value> = events
            .iter()
            .filter(|e| e.event == Some("response.output_item.done"))
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect();
        assert_eq!(done[1]["output_index"], 1);
        assert_eq!(done[1]["item"]["arguments"], r#"{"n":6}"#);
        // Interleaved calls and outputs after an older turn's: only this turn's are read.
        let mut answered = request.clone();
        let input = answered["input"].as_array_mut().unwrap();
        input.insert(
            0,
            json!({"type": "function_call_output", "call_id": "old", "output": "old"}),
        );
        input.extend([
            items[0].clone(),
            json!({"type": "function_call_output", "call_id": items[0]["call_id"], "output": "five"}),
            items[1].clone(),
            json!({"type": "function_call_output", "call_id": items[1]["call_id"], "output": "six"}),
        ]);
        let c = conversation(&answered);
        let got = c.inputs_and_contents();
        assert_eq!(
            got,
            [
                (Some(json!({"n": 5})), &json!("five")),
                (Some(json!({"n": 6})), &json!("six"))
            ]
        );
    }

    #[test]
    fn a_function_call_output_is_the_result_with_its_calls_input() {
        let output = json!([{"type": "input_text", "text": "Wall time: 0.1 seconds\nOutput:"},
            {"type": "input_text", "text": "<<probe n=7>>"}]);
        let request = json!({"model": "m", "tools": codex_tools(), "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "n=7"}]},
            {"type": "function_call", "call_id": "call_1", "name": "emit", "namespace": "mcp__probe", "arguments": "{\"n\":7}"},
            {"type": "function_call_output", "call_id": "call_1", "output": output}]});
        let c = conversation(&request);
        let result = &c.results[0];
        assert_eq!(result.id, "call_1");
        assert_eq!(result.input, Some(json!({"n": 7})));
        assert_eq!(result.content, &output);
    }

    #[test]
    fn deferred_tools_are_searched_for_once_and_found_in_the_search_output() {
        let mut request = json!({"model": "gpt-5.5",
            "tools": [{"type": "function", "name": "shell"}, {"type": "tool_search", "execution": "client"}],
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "n=3"}]}]});
        let c = conversation(&request);
        assert_eq!(c.search, Some(json!({"query": "probe emit", "limit": 5})));
        let (turn, _) = decide(&c, "call_");
        let item = output_items(&turn).remove(0);
        assert_eq!(item["type"], "tool_search_call");
        assert_eq!(item["execution"], "client");
        assert_eq!(item["arguments"]["query"], "probe emit");
        let call_id = item["call_id"].clone();
        request["input"].as_array_mut().unwrap().extend([
            item,
            json!({"type": "tool_search_output", "call_id": call_id, "status": "completed",
                "execution": "client", "tools": [codex_tools()[1].clone()]}),
        ]);
        let c = conversation(&request);
        assert_eq!(c.search, None);
        let (turn, _) = decide(&c, "call_");
        let item = output_items(&turn).remove(0);
        assert_eq!(item["type"], "function_call");
        // A search that found nothing is not run again.
        let mut empty = request.clone();
        empty["input"][2]["tools"] = json!([]);
        assert_eq!(conversation(&empty).search, None);
        assert_eq!(item["name"], "emit");
        assert_eq!(item["namespace"], "mcp__probe");
        assert_eq!(
            serde_json::from_str::<Value>(item["arguments"].as_str().unwrap()).unwrap(),
            json!({"n": 3})
        );
    }

    #[test]
    fn a_call_streams_as_its_item_done_then_the_completed_response_with_usage() {
        let turn = Turn::ToolUse {
            tool: Offered {
                name: "emit".into(),
                namespace: Some("mcp__probe".into()),
                via: None,
            },
            calls: vec![crate::turn::Call {
                id: "call_1".into(),
                input: json!({"n": 1000}),
            }],
        };
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 5,
        };
        let events = stream(&json!({"model": "m"}), &output_items(&turn), usage);
        let names: Vec<_> = events.iter().map(|e| e.event.unwrap_or("")).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let data: Vec<Value> = events
            .iter()
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect();
        for (k, (name, data)) in names.iter().zip(&data).enumerate() {
            assert_eq!(data["type"], *name);
            assert_eq!(data["sequence_number"], k);
        }
        assert_eq!(data[1]["item"]["call_id"], "call_1");
        assert_eq!(data[1]["item"]["namespace"], "mcp__probe");
        assert_eq!(data[1]["item"]["arguments"], r#"{"n":1000}"#);
        let done = &data[2]["response"];
        assert_eq!(done["status"], "completed");
        assert_eq!(done["output"][0], data[1]["item"]);
        assert_eq!(done["usage"]["input_tokens"], 100);
        assert_eq!(done["usage"]["output_tokens"], 5);
        assert_eq!(done["usage"]["total_tokens"], 105);
    }

    #[test]
    fn text_streams_as_a_message_added_its_delta_and_done() {
        let usage = Usage {
            input_tokens: 1,
            output_tokens: 1,
        };
        let item = output_items(&Turn::Text("done".into())).remove(0);
        let events = stream(&json!({}), std::slice::from_ref(&item), usage);
        let names: Vec<_> = events.iter().map(|e| e.event.unwrap_or("")).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.added",
                "response.output_text.delta",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let delta: Value = serde_json::from_str(&events[2].data).unwrap();
        assert_eq!(delta["delta"], "done");
        assert_eq!(delta["item_id"], item["id"]);
        assert_eq!(item["content"][0]["text"], "done");
    }
}
