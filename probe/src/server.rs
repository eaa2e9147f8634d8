//! `probe serve`: a stdio MCP server with one tool, `emit`.
//!
//! Stdout carries protocol only, one JSON-RPC message per line: anything else there (a log line,
//! a stray print) would be read by the client as a broken message. Logs go to stderr, and as JSON
//! lines to `--log`, where a driver reads which n was called with which nonce.

use crate::emit::{self, EmitArgs, Fill, MAX_BLOCKS, MAX_N};
use crate::protocol::{
    self, Incoming, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The protocol versions this server speaks, oldest first; the last is answered to a client that
/// asks for one it does not know.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The tool's name as `tools/list` announces it.
pub const TOOL_NAME: &str = "emit";

/// What `serve` takes.
#[derive(Debug, Clone, Default)]
pub struct ServeSettings {
    pub log: Option<PathBuf>,
}

/// Where the server's events go: a human line to stderr, a JSON line to the log file.
struct EventLog {
    file: Option<File>,
}

impl EventLog {
    fn open(path: Option<&Path>) -> io::Result<EventLog> {
        let file =
            match path {
                Some(p) => Some(File::options().create(true).append(true).open(p).map_err(
                    |e| io::Error::new(e.kind(), format!("opening log {}: {e}", p.display())),
                )?),
                None => None,
            };
        Ok(EventLog { file })
    }

    fn record(&mut self, summary: &str, mut event: Value) {
        eprintln!("probe serve: {summary}");
        if let Some(file) = &mut self.file {
            event["time"] = json!(report::time::Timestamp::now());
            // A log that cannot be written must not take the protocol down with it.
            let _ = writeln!(file, "{event}").and_then(|()| file.flush());
        }
    }
}

/// Serves `input` to `output` until EOF. Returns when the client closes its end.
pub fn serve(settings: &ServeSettings, input: impl BufRead, output: impl Write) -> io::Result<()> {
    let mut log = EventLog::open(settings.log.as_deref())?;
    let mut out = BufWriter::new(output);
    let mut input = input;
    let mut line = Vec::new();
    log.record(
        "ready",
        json!({"event": "start", "pid": std::process::id()}),
    );
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            log.record("end of input", json!({"event": "eof"}));
            return Ok(());
        }
        let text = trim_line(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let replies: Vec<Value> = match protocol::parse_line(text) {
            Err(e) => {
                log.record(
                    &format!("parse error: {e}"),
                    json!({"event": "parse_error", "error": e}),
                );
                vec![protocol::error(
                    &Value::Null,
                    PARSE_ERROR,
                    &format!("parse error: {e}"),
                )]
            }
            Ok(protocol::Line { batch, messages }) => {
                let replies: Vec<Value> = messages
                    .into_iter()
                    .filter_map(|m| handle(m, &mut log))
                    .collect();
                if batch && !replies.is_empty() {
                    vec![Value::Array(replies)]
                } else {
                    replies
                }
            }
        };
        for reply in replies {
            match out
                .write_all(&protocol::to_line(&reply))
                .and_then(|()| out.flush())
            {
                Ok(()) => {}
                // The client went away: that is its way of ending the session, not our failure.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Answers one message; `None` for notifications and responses, which are never answered.
fn handle(message: Incoming, log: &mut EventLog) -> Option<Value> {
    match message {
        Incoming::Notification { method, .. } => {
            log.record(
                &format!("notification {method}"),
                json!({"event": "notification", "method": method}),
            );
            None
        }
        Incoming::Response { id, .. } => {
            log.record("ignored a response", json!({"event": "response", "id": id}));
            None
        }
        Incoming::Invalid { id, reason } => {
            log.record(
                &format!("invalid request: {reason}"),
                json!({"event": "invalid", "error": reason}),
            );
            Some(protocol::error(
                &id,
                INVALID_REQUEST,
                &format!("invalid request: {reason}"),
            ))
        }
        Incoming::Request { id, method, params } => Some(match method.as_str() {
            "initialize" => initialize(&id, params.as_ref(), log),
            "ping" => protocol::result(&id, json!({})),
            "tools/list" => protocol::result(&id, json!({"tools": [tool_description()]})),
            "tools/call" => call_tool(&id, params.as_ref(), log),
            other => {
                log.record(
                    &format!("unknown method {other}"),
                    json!({"event": "unknown_method", "method": other}),
                );
                protocol::error(&id, METHOD_NOT_FOUND, &format!("method not found: {other}"))
            }
        }),
    }
}

fn initialize(id: &Value, params: Option<&Value>, log: &mut EventLog) -> Value {
    let Some(asked) = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    else {
        return protocol::error(
            id,
            INVALID_PARAMS,
            "initialize needs params.protocolVersion (a string)",
        );
    };
    let answer = if PROTOCOL_VERSIONS.contains(&asked) {
        asked
    } else {
        PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1]
    };
    let client = params
        .and_then(|p| p.get("clientInfo"))
        .cloned()
        .unwrap_or(Value::Null);
    log.record(
        &format!("initialize: client asked {asked}, answered {answer}"),
        json!({"event": "initialize", "asked": asked, "answered": answer, "client": client}),
    );
    protocol::result(
        id,
        json!({
            "protocolVersion": answer,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "probe", "version": env!("CARGO_PKG_VERSION")},
        }),
    )
}

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
                         "description": "ascii: 'x'; astral: surrogate pairs; lines: 80-unit lines"},
                "blocks": {"type": "integer", "minimum": 1, "maximum": MAX_BLOCKS, "default": 1,
                           "description": "number of text blocks the total is split over"}
            },
            "required": ["n"],
            "additionalProperties": false
        }
    })
}

fn call_tool(id: &Value, params: Option<&Value>, log: &mut EventLog) -> Value {
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
            json!({"event": "unknown_tool", "tool": name}),
        );
        return protocol::error(id, INVALID_PARAMS, &format!("unknown tool: {name}"));
    }
    let raw = params.and_then(|p| p.get("arguments"));
    let args = match EmitArgs::from_json(raw) {
        Ok(args) => args,
        Err(e) => {
            log.record(
                &format!("refused emit: {e}"),
                json!({"event": "refused", "arguments": raw, "error": e.to_string()}),
            );
            return protocol::result(
                id,
                json!({"content": [{"type": "text", "text": format!("emit: {e}")}], "isError": true}),
            );
        }
    };
    let emission = emit::emit(args);
    log.record(
        &format!(
            "emit n={} fill={} blocks={} nonce={}",
            args.n, args.fill, args.blocks, emission.nonce
        ),
        json!({
            "event": "call",
            "n": args.n,
            "fill": args.fill,
            "blocks": args.blocks,
            "nonce": emission.nonce,
            "units": emission.units(),
            "bytes": emission.bytes(),
            "start_marker": emission.start_marker,
            "end_marker": emission.end_marker,
        }),
    );
    let content: Vec<Value> = emission
        .blocks
        .into_iter()
        .map(|text| json!({"type": "text", "text": text}))
        .collect();
    protocol::result(id, json!({"content": content, "isError": false}))
}

/// One `call` event read back from a server log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct LoggedCall {
    pub n: u64,
    pub nonce: String,
    pub units: u64,
    pub start_marker: bool,
    pub end_marker: bool,
}

/// Every `emit` call a server log records, in order; a missing log reads as no calls.
pub fn read_calls(log: &Path) -> Vec<LoggedCall> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "call")
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}
