//! The server's one tool, `emit`: how `tools/list` describes it, and a `tools/call` of it.
//!
//! Bad arguments are a tool error (`isError: true`), not a protocol error: a client shows a
//! tool error to its model and goes on, which is what a measurement needs; the server keeps
//! serving either way.

use super::events::{Event, EventLog, LoggedCall};
use super::TOOL_NAME;
use crate::emit::{self, EmitArgs, Fill, MAX_BLOCKS, MAX_N};
use crate::protocol::{self, INVALID_PARAMS};
use serde_json::{json, Value};

/// The `emit` tool as `tools/list` describes it.
pub fn tool_description() -> Value {
    json!({
        "name": TOOL_NAME,
        "description": "Returns text of exactly n UTF-16 code units (JavaScript string length), \
            starting and ending with a marker carrying n and a nonce. Used to measure the size \
            at which an MCP client stops passing tool results inline.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0, "maximum": MAX_N,
                      "description": "total length in UTF-16 code units"},
                "fill": {"type": "string", "enum": Fill::NAMES, "default": "ascii",
                         "description": "ascii: 'x' with position stamps; astral: surrogate pairs; lines: numbered 80-unit lines"},
                "blocks": {"type": "integer", "minimum": 1, "maximum": MAX_BLOCKS, "default": 1,
                           "description": "number of text blocks the total is split over"}
            },
            "required": ["n"],
            "additionalProperties": false
        }
    })
}

pub(super) fn call_tool(id: &Value, params: Option<&Value>, log: &mut EventLog) -> Value {
    let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        return protocol::error(
            id,
            INVALID_PARAMS,
            "tools/call needs params.name (a string)",
        );
    };
    if name != TOOL_NAME {
        log.record(
            &format!("unknown tool {name}"),
            &Event::UnknownTool {
                tool: name.to_string(),
            },
        );
        return protocol::error(id, INVALID_PARAMS, &format!("unknown tool: {name}"));
    }
    let raw = params.and_then(|p| p.get("arguments"));
    let args = match EmitArgs::from_json(raw) {
        Ok(args) => args,
        Err(e) => {
            log.record(
                &format!("refused emit: {e}"),
                &Event::Refused {
                    arguments: raw.cloned(),
                    error: e.to_string(),
                },
            );
            return protocol::result(
                id,
                json!({"content": [{"type": "text", "text": format!("emit: {e}")}], "isError": true}),
            );
        }
    };
    let emission = emit::emit(args);
    let args = emission.args;
    log.record(
        &format!(
            "emit n={} fill={} blocks={} nonce={}",
            args.n, args.fill, args.blocks, emission.nonce
        ),
        &Event::Call(LoggedCall {
            n: args.n,
            fill: args.fill,
            blocks: args.blocks,
            nonce: emission.nonce.clone(),
            units: emission.units(),
            bytes: emission.bytes(),
            start_marker: emission.start_marker,
            end_marker: emission.end_marker,
        }),
    );
    let content: Vec<Value> = emission
        .blocks
        .into_iter()
        .map(|text| json!({"type": "text", "text": text}))
        .collect();
    protocol::result(id, json!({"content": content, "isError": false}))
}
