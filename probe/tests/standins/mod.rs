//! The model stand-in played by fake clients over real HTTP, one module per API shape it
//! serves (each request shaped as the real client was measured to send
//! it), and the helpers they share: a `probe model` process, one HTTP exchange, and a strict
//! reading of server-sent events.

mod chat;
mod gemini;
mod replay;
mod responses;
mod routes;

use crate::common::*;
use mcp::events::read_events;
use probe::ModelEvent;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::time::Duration;

/// A running `probe model` with its log in a temp dir.
pub struct Model {
    child: Child,
    pub port: u16,
    pub log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// One answer: status, head (lowercase) and the de-chunked body.
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("the body is not JSON ({e}): {}", self.body))
    }

    /// The body as server-sent events, checked as the protocol frames them.
    pub fn events(&self) -> Vec<Frame> {
        assert_eq!(self.status, 200, "{}", self.body);
        assert!(
            self.head.contains("content-type: text/event-stream"),
            "{}",
            self.head
        );
        frames(&self.body)
    }
}

impl Model {
    pub fn start(extra: &[&str]) -> Model {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("model.log");
        let mut args = vec![std::ffi::OsString::from("--log"), log.clone().into()];
        args.extend(extra.iter().map(std::ffi::OsString::from));
        let (child, port) = spawn_model(&args);
        Model {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    /// One HTTP/1.1 exchange; returns status, headers (lowercase names) and the de-chunked body.
    pub fn post(&self, path: &str, body: &Value, chunked: bool) -> (u16, String, String) {
        let answer = self.send(path, body.to_string().as_bytes(), chunked);
        (answer.status, answer.head, answer.body)
    }

    /// POSTs JSON to `path` (with its query), framed by its length.
    pub fn ask(&self, path: &str, body: &Value) -> Answer {
        self.send(path, body.to_string().as_bytes(), false)
    }

    /// POSTs these bytes to `path`, framed by length or as two chunks.
    pub fn send(&self, path: &str, body: &[u8], chunked: bool) -> Answer {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let framing = if chunked {
            "transfer-encoding: chunked".to_string()
        } else {
            format!("content-length: {}", body.len())
        };
        write!(s, "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nauthorization: Bearer dummy\r\n{framing}\r\nconnection: close\r\n\r\n").unwrap();
        if chunked {
            let (a, b) = body.split_at(body.len() / 2);
            write!(s, "{:x}\r\n", a.len()).unwrap();
            s.write_all(a).unwrap();
            write!(s, "\r\n{:x}\r\n", b.len()).unwrap();
            s.write_all(b).unwrap();
            s.write_all(b"\r\n0\r\n\r\n").unwrap();
        } else {
            s.write_all(body).unwrap();
        }
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8(raw).unwrap();
        let (head, rest) = raw.split_once("\r\n\r\n").unwrap();
        let status = head[9..12].parse().unwrap();
        let head = head.to_ascii_lowercase();
        let body = if head.contains("transfer-encoding: chunked") {
            dechunk(rest)
        } else {
            rest.to_string()
        };
        Answer { status, head, body }
    }

    /// The log's events; every line must read as one.
    pub fn events(&self) -> Vec<ModelEvent> {
        let lines = std::fs::read_to_string(&self.log).unwrap().lines().count();
        let events = read_events(&self.log);
        assert_eq!(events.len(), lines, "every log line is a ModelEvent");
        events
    }

    /// The one tool result the log holds.
    pub fn tool_result(&self) -> ModelEvent {
        let results: Vec<ModelEvent> = self
            .events()
            .into_iter()
            .filter(|e| matches!(e, ModelEvent::ToolResult { .. }))
            .collect();
        assert_eq!(results.len(), 1, "{results:?}");
        results.into_iter().next().unwrap()
    }

    /// Asserts that the one tool result is `content` of `kind`, for a call of `n` units,
    /// counted as `units` UTF-16 units; gives the tool use it answers.
    pub fn assert_tool_result(
        &self,
        n: u64,
        content: &Value,
        kind: probe::ContentKind,
        units: usize,
    ) -> String {
        let ModelEvent::ToolResult {
            n: called,
            tool_use_id,
            content: got,
            content_kind,
            units: counted,
            ..
        } = self.tool_result()
        else {
            unreachable!()
        };
        assert_eq!(&got, content);
        assert_eq!(called, Some(n));
        assert_eq!(content_kind, kind);
        assert_eq!(counted, units as u64);
        tool_use_id
    }

    /// [`Model::assert_tool_result`] for `text` handed back as a plain string.
    pub fn assert_string_result(&self, n: u64, text: &str) {
        let content = serde_json::json!(text);
        self.assert_tool_result(n, &content, probe::ContentKind::String, js_length(text));
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            assert_eq!(after, "\r\n", "the last chunk ends the body");
            return out;
        }
        out.push_str(&after[..size]);
        assert_eq!(&after[size..size + 2], "\r\n", "a chunk ends with CRLF");
        rest = &after[size + 2..];
    }
}

/// One server-sent event: its `event:` name if it has one, and its `data:`.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub name: Option<String>,
    pub data: String,
}

impl Frame {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("data is not JSON ({e}): {}", self.data))
    }
}

/// A stream's events, read strictly: each event ends with a blank line, has at most one
/// `event:` line and exactly one `data:` line, and nothing else.
pub fn frames(body: &str) -> Vec<Frame> {
    assert!(
        body.ends_with("\n\n"),
        "a stream ends with a blank line: {body:?}"
    );
    body[..body.len() - 2]
        .split("\n\n")
        .map(|event| {
            let mut name = None;
            let mut data = None;
            for line in event.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    assert!(name.is_none() && data.is_none(), "{event:?}");
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    assert!(data.is_none(), "one data line per event: {event:?}");
                    data = Some(d.to_string());
                } else {
                    panic!("a line that is neither event: nor data: in {event:?}");
                }
            }
            Frame {
                name,
                data: data.unwrap_or_else(|| panic!("an event without data: {event:?}")),
            }
        })
        .collect()
}

/// The named events of a stream (every one named, as Anthropic's and OpenAI's Responses
/// streams are), as (name, data), each data JSON whose `type` is its name.
pub fn named(frames: &[Frame]) -> Vec<(String, Value)> {
    frames
        .iter()
        .map(|f| {
            let name = f.name.clone().expect("a named event");
            let data = f.json();
            assert_eq!(data["type"], name.as_str(), "{data}");
            (name, data)
        })
        .collect()
}

/// The events of an Anthropic Messages stream.
pub fn sse(body: &str) -> Vec<(String, Value)> {
    named(&frames(body))
}

/// The JSON chunks of an OpenAI chat stream: no event names, JSON data, `[DONE]` last.
pub fn chunks(frames: &[Frame]) -> Vec<Value> {
    let (done, chunks) = frames.split_last().expect("a stream with events");
    assert_eq!(done.data, "[DONE]", "the stream ends with [DONE]");
    chunks
        .iter()
        .map(|f| {
            assert_eq!(f.name, None, "chat chunks have no event name");
            f.json()
        })
        .collect()
}
