//! JSON-RPC 2.0 framing as MCP's stdio transport uses it: one message per line, no embedded
//! newlines. Both `serve` and `call` speak through this module.
//!
//! The one thing to know: a line is classified before it is answered. A notification (no `id`)
//! never gets a reply, even when it is malformed or unknown; a request always gets one, even when
//! its method is unknown (clients such as Claude Code probe with `server/discover` first and wait
//! for the answer).

use serde_json::{json, Map, Value};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;

/// One message read off the wire, after validation.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A call that must be answered with the same `id`.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// A call with no `id`: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response (has `result` or `error`), e.g. the answer to a request we sent.
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
    /// Well-formed JSON that is no valid message; answered with -32600 and the id if one could be
    /// read (JSON-RPC says `null` otherwise).
    Invalid { id: Value, reason: String },
}

/// What one line held: its messages, and whether they came as a batch (a JSON array), whose
/// replies go back as one array.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub batch: bool,
    pub messages: Vec<Incoming>,
}

/// Parses one line. `Err` means the line is not JSON at all (answer -32700); a JSON array is a
/// batch and yields one entry per element. An empty batch is one invalid request, answered with
/// a single error rather than an array, as JSON-RPC 2.0 specifies.
pub fn parse_line(line: &[u8]) -> Result<Line, String> {
    let value: Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    Ok(match value {
        Value::Array(items) if items.is_empty() => Line {
            batch: false,
            messages: vec![Incoming::Invalid {
                id: Value::Null,
                reason: "empty batch".into(),
            }],
        },
        Value::Array(items) => Line {
            batch: true,
            messages: items.into_iter().map(classify).collect(),
        },
        other => Line {
            batch: false,
            messages: vec![classify(other)],
        },
    })
}

/// Decides what one JSON value is.
pub fn classify(value: Value) -> Incoming {
    let Value::Object(mut obj) = value else {
        return invalid(Value::Null, "a message must be a JSON object");
    };
    // Read the id first, so an invalid request can still be answered under its own id.
    let id = match obj.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(Value::Null) => return invalid(Value::Null, "id must not be null"),
        Some(_) => return invalid(Value::Null, "id must be a string or a number"),
    };
    let echo = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid(echo, "jsonrpc must be \"2.0\"");
    }
    if obj.contains_key("result") || obj.contains_key("error") {
        let Some(id) = id else {
            return invalid(Value::Null, "a response needs an id");
        };
        let result = match (obj.remove("result"), obj.remove("error")) {
            (Some(r), None) => Ok(r),
            (None, Some(e)) => Err(e),
            _ => return invalid(id, "a response has exactly one of result and error"),
        };
        return Incoming::Response { id, result };
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return invalid(echo, "method must be a string"),
        None => return invalid(echo, "missing method"),
    };
    let params = match obj.remove("params") {
        None => None,
        Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
        Some(_) => return invalid(echo, "params must be an object or an array"),
    };
    match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    }
}

fn invalid(id: Value, reason: &str) -> Incoming {
    Incoming::Invalid {
        id,
        reason: reason.into(),
    }
}

/// A success response.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A request (what `call` sends).
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification.
pub fn notification(method: &str) -> Value {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), "2.0".into());
    obj.insert("method".into(), method.into());
    Value::Object(obj)
}

/// One line on the wire: compact JSON (serde_json escapes newlines inside strings, so the only
/// newline is the terminator).
pub fn to_line(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("a JSON value always serializes");
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Incoming {
        let mut v = parse_line(line.as_bytes()).unwrap().messages;
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn a_request_keeps_its_id_and_params() {
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}"#),
            Incoming::Request {
                id: json!("a"),
                method: "ping".into(),
                params: Some(json!({}))
            }
        );
    }

    #[test]
    fn no_id_is_a_notification() {
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification { .. }
        ));
    }

    #[test]
    fn invalid_requests_keep_their_id_when_readable() {
        assert_eq!(
            one(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#),
            Incoming::Invalid {
                id: json!(7),
                reason: "jsonrpc must be \"2.0\"".into()
            }
        );
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            Incoming::Invalid {
                id: Value::Null,
                ..
            }
        ));
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"method":3}"#),
            Incoming::Invalid { .. }
        ));
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#),
            Incoming::Invalid { .. }
        ));
        assert!(matches!(one("42"), Incoming::Invalid { .. }));
    }

    #[test]
    fn not_json_is_a_parse_error_and_batches_split() {
        assert!(parse_line(b"{nope").is_err());
        assert!(parse_line(b"\xff\xfe").is_err());
        let batch = parse_line(
            br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#,
        )
        .unwrap();
        assert!(batch.batch);
        assert_eq!(batch.messages.len(), 2);
        assert!(!parse_line(b"[]").unwrap().batch);
    }

    #[test]
    fn responses_are_recognised() {
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Incoming::Response { result: Ok(_), .. }
        ));
    }
}
