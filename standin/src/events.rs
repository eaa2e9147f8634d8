//! What the model stand-in logs: one typed event per thing it saw or decided, written as one
//! JSON line each (`model.log`) and kept in memory for an in-process driver.
//!
//! The names and fields are a format: `probe bracket` judges a point from the `tool_result`
//! event, and people read the log when a point looks wrong. Every API shape logs the same
//! events, so a driver judges every client the same way.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event of the stand-in's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ModelEvent {
    /// The stand-in is accepting connections on this loopback port.
    Listening { port: u16 },
    /// A request was refused before it reached an API: its framing (with the status answered
    /// and why), or a body that is not JSON (with the path it was sent to).
    BadRequest {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// No API shape serves this method and path (answered 404).
    NotFound { method: String, path: String },
    /// The token counter was asked: the UTF-16 units of text it was given, and its answer.
    CountTokens { units: u64, input_tokens: u64 },
    /// The stand-in called the emit tool with this input: by its name `tool`, in `namespace`
    /// where the client offered it in one (Codex), through the client's tool `via` where the
    /// client defers it (Qwen Code's `tool_call`).
    ToolUse {
        tool: String,
        id: String,
        n: u64,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        via: Option<String>,
    },
    /// The emit tool was deferred behind the client's tool search: the stand-in ran the search
    /// with these arguments (in the API's terms) to find it.
    ToolSearch { id: String, arguments: Value },
    /// The client handed a tool result back: exactly what the model would have read. `n` and
    /// `input` are those of the call it answers, when the conversation still holds it.
    ToolResult {
        n: Option<u64>,
        input: Option<Value>,
        tool_use_id: String,
        /// As the client sent it (absent is `null`).
        #[serde(default)]
        is_error: Value,
        content: Value,
        content_kind: ContentKind,
        /// UTF-16 units of all text in `content`.
        units: u64,
        /// The whole item that carried the result, where `content` is only part of it
        /// (Gemini's last content entry, with every part the model reads).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<Value>,
    },
    /// The request offered no emit tool; `model` is what it asked for, `offered` the names of
    /// the tools it did offer (none: a request beside the turn, as opencode's title or Gemini
    /// CLI's routing classifier).
    NoTool {
        model: Value,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        offered: Vec<String>,
    },
    /// The prompt names no n to call the tool with.
    NoN { tool: String },
}

impl ModelEvent {
    /// A turn that offered tools but no emit tool among them (so the client hid or lost it);
    /// not a request beside the turn that offers none at all (opencode's title, Gemini CLI's
    /// routing classifier), which every run of those clients makes.
    pub fn is_turn_without_emit(&self) -> bool {
        matches!(self, ModelEvent::NoTool { offered, .. } if !offered.is_empty())
    }
}

/// The form of a tool result's content as the client handed it back: the tool's own blocks
/// (passed inline), one string (a client's replacement note, or text it flattened), or
/// anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    String,
    Blocks,
    Other,
}

impl ContentKind {
    pub fn of(content: &Value) -> ContentKind {
        match content {
            Value::String(_) => ContentKind::String,
            Value::Array(_) => ContentKind::Blocks,
            _ => ContentKind::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each event serializes exactly as the stand-in wrote it before the events were typed
    /// (the `json!` literals are the old code's), and reads back as itself.
    #[test]
    fn every_event_serializes_as_the_log_format_says() {
        let input = json!({"n": 50001, "fill": "astral"});
        let cases = [
            (
                ModelEvent::Listening { port: 4711 },
                json!({"event": "listening", "port": 4711}),
            ),
            (
                ModelEvent::BadRequest {
                    status: Some(431),
                    error: Some("request head over 65536 bytes".into()),
                    path: None,
                },
                json!({"event": "bad_request", "status": 431, "error": "request head over 65536 bytes"}),
            ),
            (
                ModelEvent::BadRequest {
                    status: None,
                    error: None,
                    path: Some("/v1/messages".into()),
                },
                json!({"event": "bad_request", "path": "/v1/messages"}),
            ),
            (
                ModelEvent::NotFound {
                    method: "GET".into(),
                    path: "/v1/complete".into(),
                },
                json!({"event": "not_found", "method": "GET", "path": "/v1/complete"}),
            ),
            (
                ModelEvent::CountTokens {
                    units: 4000,
                    input_tokens: 1000,
                },
                json!({"event": "count_tokens", "units": 4000, "input_tokens": 1000}),
            ),
            (
                ModelEvent::ToolUse {
                    tool: "mcp__probe__emit".into(),
                    id: "toolu_1".into(),
                    n: 50001,
                    input: input.clone(),
                    namespace: None,
                    via: None,
                },
                json!({"event": "tool_use", "tool": "mcp__probe__emit", "id": "toolu_1", "n": 50001, "input": input}),
            ),
            (
                ModelEvent::ToolUse {
                    tool: "emit".into(),
                    id: "call_1".into(),
                    n: 7,
                    input: json!({"n": 7}),
                    namespace: Some("mcp__probe".into()),
                    via: Some("tool_call".into()),
                },
                json!({"event": "tool_use", "tool": "emit", "id": "call_1", "n": 7, "input": {"n": 7},
                    "namespace": "mcp__probe", "via": "tool_call"}),
            ),
            (
                ModelEvent::ToolSearch {
                    id: "search_1".into(),
                    arguments: json!({"query": "probe emit", "limit": 5}),
                },
                json!({"event": "tool_search", "id": "search_1", "arguments": {"query": "probe emit", "limit": 5}}),
            ),
            (
                ModelEvent::ToolResult {
                    n: Some(50001),
                    input: Some(input.clone()),
                    tool_use_id: "toolu_1".into(),
                    is_error: Value::Null,
                    content: json!("<persisted-output>"),
                    content_kind: ContentKind::String,
                    units: 18,
                    raw: None,
                },
                json!({"event": "tool_result", "n": 50001, "input": input, "tool_use_id": "toolu_1",
                    "is_error": null, "content": "<persisted-output>", "content_kind": "string", "units": 18}),
            ),
            (
                ModelEvent::ToolResult {
                    n: None,
                    input: None,
                    tool_use_id: String::new(),
                    is_error: json!(true),
                    content: json!([{"type": "text", "text": "ab"}]),
                    content_kind: ContentKind::Blocks,
                    units: 2,
                    raw: Some(json!({"parts": []})),
                },
                json!({"event": "tool_result", "n": null, "input": null, "tool_use_id": "",
                    "is_error": true, "content": [{"type": "text", "text": "ab"}], "content_kind": "blocks", "units": 2,
                    "raw": {"parts": []}}),
            ),
            (
                ModelEvent::NoTool {
                    model: json!("m"),
                    offered: Vec::new(),
                },
                json!({"event": "no_tool", "model": "m"}),
            ),
            (
                ModelEvent::NoTool {
                    model: json!("m"),
                    offered: vec!["Read".into()],
                },
                json!({"event": "no_tool", "model": "m", "offered": ["Read"]}),
            ),
            (
                ModelEvent::NoN {
                    tool: "emit".into(),
                },
                json!({"event": "no_n", "tool": "emit"}),
            ),
        ];
        for (event, want) in cases {
            assert_eq!(serde_json::to_value(&event).unwrap(), want, "{event:?}");
            assert_eq!(
                serde_json::from_value::<ModelEvent>(want).unwrap(),
                event,
                "reading back"
            );
        }
    }

    #[test]
    fn only_a_turn_that_offered_other_tools_lacks_the_emit_tool() {
        let side = ModelEvent::NoTool {
            model: json!("m"),
            offered: Vec::new(),
        };
        let turn = ModelEvent::NoTool {
            model: json!("m"),
            offered: vec!["Read".into()],
        };
        assert!(!side.is_turn_without_emit());
        assert!(turn.is_turn_without_emit());
        assert!(!ModelEvent::Listening { port: 1 }.is_turn_without_emit());
    }

    #[test]
    fn content_kind_follows_the_json_type() {
        assert_eq!(ContentKind::of(&json!("x")), ContentKind::String);
        assert_eq!(ContentKind::of(&json!([])), ContentKind::Blocks);
        assert_eq!(ContentKind::of(&json!({"text": "x"})), ContentKind::Other);
        assert_eq!(ContentKind::of(&Value::Null), ContentKind::Other);
    }
}
