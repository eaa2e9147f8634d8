//! Requests the real clients sent, replayed: each fixture holds the requests one client made of
//! the stand-in in one offline run at n=1000 (Codex CLI 0.171.0 with an unknown slug and with
//! `gpt-5.5`, Gemini CLI 0.61.0, Qwen Code 0.24.4, opencode 1.18.33, Cline 3.0.65; long strings
//! trimmed to their head, see `fixtures/`). Replayed against a fresh stand-in, every answer
//! still parses as its protocol, each answer's call is the one the client carried into its
//! next request (so what the real client accepted is what the stand-in still says), and the
//! logged result is exactly what the client's last request carries.

use super::{chunks, frames, named, Model};
use crate::common::js_length;
use probe::ModelEvent;
use serde_json::{json, Value};

/// The API shape a fixture speaks.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Responses,
    Chat,
    Gemini,
}

/// A captured request.
struct Captured {
    path: String,
    body: Value,
}

fn captured(file: &str) -> Vec<Captured> {
    let path = format!(
        "{}/tests/standins/fixtures/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|line| {
            let r: Value = serde_json::from_str(line).unwrap();
            Captured {
                path: r["path"].as_str().unwrap().to_string(),
                body: r["body"].clone(),
            }
        })
        .collect()
}

/// The one step an answer takes, as (function name, namespace, arguments): read from the
/// stand-in's answer in its protocol, or `None` for a text answer.
fn step_of_answer(shape: Shape, m: &Model, request: &Captured) -> Option<(String, Value, Value)> {
    let answer = m.ask(&request.path, &request.body);
    assert_eq!(answer.status, 200, "{}: {}", request.path, answer.body);
    match shape {
        Shape::Responses => {
            let events = named(&answer.events());
            let done = &events.last().unwrap().1;
            assert_eq!(done["type"], "response.completed");
            let item = &done["response"]["output"][0];
            match item["type"].as_str() {
                Some("function_call") => Some((
                    item["name"].as_str()?.into(),
                    item["namespace"].clone(),
                    serde_json::from_str(item["arguments"].as_str()?).ok()?,
                )),
                Some("tool_search_call") => {
                    Some(("tool_search".into(), Value::Null, item["arguments"].clone()))
                }
                _ => None,
            }
        }
        Shape::Chat => {
            let chunks = chunks(&answer.events());
            let call = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
            let function = call.get("function")?;
            Some((
                function["name"].as_str()?.into(),
                Value::Null,
                serde_json::from_str(function["arguments"].as_str()?).ok()?,
            ))
        }
        Shape::Gemini => {
            let answer = if request.path.ends_with("alt=sse") {
                let frames = frames(&answer.body);
                assert_eq!(frames.len(), 1);
                frames[0].json()
            } else {
                answer.json()
            };
            let call = answer["candidates"][0]["content"]["parts"][0].get("functionCall")?;
            Some((
                call["name"].as_str()?.into(),
                Value::Null,
                call["args"].clone(),
            ))
        }
    }
}

/// The step the client carried into its next request (the last call in it), as above.
fn step_in_request(shape: Shape, next: &Value) -> Option<(String, Value, Value)> {
    match shape {
        Shape::Responses => {
            let input = next["input"].as_array()?;
            let item = input
                .iter()
                .rev()
                .find(|i| i["type"] == "function_call" || i["type"] == "tool_search_call")?;
            if item["type"] == "tool_search_call" {
                return Some(("tool_search".into(), Value::Null, item["arguments"].clone()));
            }
            Some((
                item["name"].as_str()?.into(),
                item["namespace"].clone(),
                serde_json::from_str(item["arguments"].as_str()?).ok()?,
            ))
        }
        Shape::Chat => {
            let messages = next["messages"].as_array()?;
            let assistant = messages.iter().rev().find(|m| m["role"] == "assistant")?;
            let function = &assistant["tool_calls"][0]["function"];
            Some((
                function["name"].as_str()?.into(),
                Value::Null,
                serde_json::from_str(function["arguments"].as_str()?).ok()?,
            ))
        }
        Shape::Gemini => {
            let contents = next["contents"].as_array()?;
            let model = contents.iter().rev().find(|c| c["role"] == "model")?;
            let call = model["parts"]
                .as_array()?
                .iter()
                .find_map(|p| p.get("functionCall"))?;
            Some((
                call["name"].as_str()?.into(),
                Value::Null,
                call["args"].clone(),
            ))
        }
    }
}

/// What the client's last request hands back, read independently of the stand-in.
fn handed_back(shape: Shape, last: &Value) -> Value {
    match shape {
        Shape::Responses => {
            let input = last["input"].as_array().unwrap();
            let output = input
                .iter()
                .rev()
                .find(|i| i["type"] == "function_call_output");
            output.unwrap()["output"].clone()
        }
        Shape::Chat => {
            let messages = last["messages"].as_array().unwrap();
            let tool = messages.iter().rev().find(|m| m["role"] == "tool");
            tool.unwrap()["content"].clone()
        }
        Shape::Gemini => {
            let entry = last["contents"].as_array().unwrap().last().unwrap();
            entry["parts"][0]["functionResponse"]["response"]["output"].clone()
        }
    }
}

/// UTF-16 units of the text in a result: a string, or parts with `text`.
fn units(content: &Value) -> u64 {
    match content {
        Value::String(s) => js_length(s) as u64,
        Value::Array(parts) => parts
            .iter()
            .map(|p| js_length(p["text"].as_str().unwrap_or("")) as u64)
            .sum(),
        _ => panic!("{content}"),
    }
}

/// Replays one fixture; returns the log.
fn replay(file: &str, shape: Shape) -> Vec<ModelEvent> {
    let requests = captured(file);
    let m = Model::start(&[]);
    for (k, request) in requests.iter().enumerate() {
        let step = step_of_answer(shape, &m, request);
        match requests.get(k + 1) {
            // Each call the stand-in makes is the one the client carried on.
            Some(next) if step.is_some() => {
                assert_eq!(
                    step,
                    step_in_request(shape, &next.body),
                    "{file}: request {k}"
                );
            }
            _ => {}
        }
    }
    let ModelEvent::ToolResult {
        n,
        content,
        units: logged,
        ..
    } = m.tool_result()
    else {
        unreachable!()
    };
    let last = &requests.last().unwrap().body;
    assert_eq!(content, handed_back(shape, last), "{file}");
    assert_eq!(n, Some(1000), "{file}");
    assert_eq!(logged, units(&content), "{file}");
    m.events()
}

#[test]
fn codex_cli_offers_mcp_tools_in_a_namespace() {
    let log = replay("codex-0.171.0.jsonl", Shape::Responses);
    assert!(log.iter().any(|e| matches!(e,
        ModelEvent::ToolUse { namespace: Some(ns), .. } if ns == "mcp__probe")));
}

#[test]
fn codex_cli_with_a_known_slug_defers_its_tools_behind_a_client_side_search() {
    let log = replay("codex-0.171.0-gpt-5.5.jsonl", Shape::Responses);
    assert!(log.iter().any(|e| matches!(e,
        ModelEvent::ToolSearch { arguments, .. } if *arguments == json!({"query": "probe emit", "limit": 5}))));
}

#[test]
fn gemini_cli_asks_its_classifier_then_streams_its_turns() {
    let log = replay("gemini-0.61.0.jsonl", Shape::Gemini);
    assert!(log.iter().any(|e| matches!(e,
        ModelEvent::NoTool { offered, .. } if offered.is_empty())));
}

#[test]
fn qwen_code_searches_then_calls_through_tool_call() {
    let log = replay("qwen-0.24.4.jsonl", Shape::Chat);
    assert!(log.iter().any(|e| matches!(e,
        ModelEvent::ToolSearch { arguments, .. } if *arguments == json!({"query": "select:mcp__probe__emit"}))));
    assert!(log.iter().any(|e| matches!(e,
        ModelEvent::ToolUse { via: Some(via), .. } if via == "tool_call")));
}

#[test]
fn opencode_asks_a_title_then_calls_probe_emit() {
    let log = replay("opencode-1.18.33.jsonl", Shape::Chat);
    assert!(log.iter().any(|e| matches!(e,
        ModelEvent::ToolUse { tool, .. } if tool == "probe_emit")));
}

#[test]
fn cline_hands_back_the_whole_mcp_result_as_json_text() {
    let log = replay("cline-3.0.65.jsonl", Shape::Chat);
    let Some(ModelEvent::ToolResult { content, .. }) = log
        .iter()
        .find(|e| matches!(e, ModelEvent::ToolResult { .. }))
    else {
        panic!("{log:?}")
    };
    let mcp: Value = serde_json::from_str(content.as_str().unwrap()).unwrap();
    assert_eq!(mcp["isError"], false);
}
