//! `probe model`: a loopback stand-in for the Anthropic Messages API, so a real client (Claude
//! Code) can be measured offline, with no key and no cost.
//!
//! It plays a model that does one thing: asked to run, it calls the `emit` tool with the n named
//! in the prompt (`n=50000`); handed the tool's result, it logs exactly what the client passed
//! back and ends the turn. What the client passed back is the measurement: the full text
//! (inline), a `<persisted-output>` or "exceeds maximum allowed tokens" note (saved), or a cut.
//!
//! HTTP is hand-written over `std::net` (one thread per connection, keep-alive, Content-Length
//! or chunked request bodies): the API surface is two POST routes, and a stand-in that binds
//! 127.0.0.1 only needs nothing more. Streamed answers are sent chunked, one chunk per event,
//! as the real API does.

use regex::Regex;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

use crate::emit::{fresh_nonce, utf16_len};

/// What `model` takes.
#[derive(Debug, Clone, Default)]
pub struct ModelSettings {
    /// 0 picks a free port.
    pub port: u16,
    /// What `count_tokens` answers; `None` estimates one token per four UTF-16 units of text.
    pub count_tokens: Option<u64>,
    /// JSON lines, one per event.
    pub log: Option<PathBuf>,
    /// Keep events in memory for [`StandIn::take_events`] (an in-process driver reads them).
    pub keep_events: bool,
}

/// Largest request head (request line and headers) accepted, against a runaway client.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted: a tool result of 10,000,000 astral units is ~40 MB as JSON.
const MAX_BODY: usize = 256 * 1024 * 1024;

struct Shared {
    settings: ModelSettings,
    log: Mutex<Option<File>>,
    events: Mutex<Vec<Value>>,
}

impl Shared {
    fn record(&self, mut event: Value) {
        event["time"] = json!(report::time::Timestamp::now());
        if let Some(file) = self.log.lock().expect("log lock").as_mut() {
            let _ = writeln!(file, "{event}").and_then(|()| file.flush());
        }
        if self.settings.keep_events {
            self.events.lock().expect("events lock").push(event);
        }
    }
}

/// A running stand-in; stops accepting when dropped.
pub struct StandIn {
    port: u16,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for StandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandIn").field("port", &self.port).finish()
    }
}

impl StandIn {
    /// Binds 127.0.0.1 (never another address: the stand-in is for this machine's clients only)
    /// and serves on a background thread.
    pub fn start(settings: ModelSettings) -> io::Result<StandIn> {
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, settings.port)))
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("binding 127.0.0.1:{}: {e}", settings.port),
                )
            })?;
        let port = listener.local_addr()?.port();
        let log =
            match &settings.log {
                Some(p) => Some(File::options().create(true).append(true).open(p).map_err(
                    |e| io::Error::new(e.kind(), format!("opening log {}: {e}", p.display())),
                )?),
                None => None,
            };
        let shared = Arc::new(Shared {
            settings,
            log: Mutex::new(log),
            events: Mutex::new(Vec::new()),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (shared.clone(), stop.clone());
        thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                thread::spawn(move || {
                    let _ = serve_connection(conn, &s);
                });
            }
        });
        shared.record(json!({"event": "listening", "port": port}));
        Ok(StandIn { port, shared, stop })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The events recorded since the last call (only with `keep_events`).
    pub fn take_events(&self) -> Vec<Value> {
        std::mem::take(&mut *self.shared.events.lock().expect("events lock"))
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
    }
}

/// One parsed HTTP request.
#[derive(Debug)]
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn serve_connection(conn: TcpStream, shared: &Shared) -> io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut writer = conn;
    loop {
        let request = match read_request(&mut reader, &mut writer) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(e) => {
                let body = error_body("invalid_request_error", &e.to_string());
                let _ = respond(&mut writer, 400, "application/json", body.as_bytes(), true);
                return Ok(());
            }
        };
        let close = request
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        route(&request, &mut writer, shared, close)?;
        if close {
            return Ok(());
        }
    }
}

/// Reads one request; `Ok(None)` at a clean end of the connection.
fn read_request(reader: &mut impl BufRead, writer: &mut impl Write) -> io::Result<Option<Request>> {
    let mut head = Vec::new();
    let mut line = Vec::new();
    // The request line, skipping the blank lines RFC 9112 lets a client send first.
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        if !trim_crlf(&line).is_empty() {
            break;
        }
    }
    let request_line = String::from_utf8_lossy(trim_crlf(&line)).into_owned();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("malformed request line: {request_line}")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("unsupported protocol {version}")));
    }
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Err(bad("connection closed inside the headers".into()));
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return Err(bad("request head too large".into()));
        }
        let l = trim_crlf(&line);
        if l.is_empty() {
            break;
        }
        let l = String::from_utf8_lossy(l);
        let Some((k, v)) = l.split_once(':') else {
            return Err(bad(format!("malformed header: {l}")));
        };
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let mut request = Request {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("").to_string(),
        headers,
        body: Vec::new(),
    };
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        request.body = read_chunked(reader)?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("bad content-length: {len}")))?;
        if len > MAX_BODY {
            return Err(bad(format!("body of {len} bytes is over {MAX_BODY}")));
        }
        request.body = vec![0; len];
        reader.read_exact(&mut request.body)?;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        reader.read_until(b'\n', &mut line)?;
        let size_text = String::from_utf8_lossy(trim_crlf(&line)).into_owned();
        // Chunk extensions (`;name=value`) are allowed and meaningless here.
        let size_hex = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| bad(format!("bad chunk size: {size_text}")))?;
        if size == 0 {
            // Trailer fields, then the blank line.
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line)? == 0 || trim_crlf(&line).is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(bad("chunked body too large".into()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_until(b'\n', &mut line)?;
    }
}

fn trim_crlf(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn error_body(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

fn respond(
    w: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Error",
    };
    let connection = if close { "close" } else { "keep-alive" };
    write!(
        w,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         connection: {connection}\r\nrequest-id: req_{}\r\n\r\n",
        body.len(),
        fresh_nonce()
    )?;
    w.write_all(body)?;
    w.flush()
}

fn route(request: &Request, w: &mut impl Write, shared: &Shared, close: bool) -> io::Result<()> {
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/v1/messages") => {
            let Some(body) = body else {
                shared.record(json!({"event": "bad_request", "path": request.path}));
                let b = error_body("invalid_request_error", "body is not JSON");
                return respond(w, 400, "application/json", b.as_bytes(), close);
            };
            let (turn, event) = answer(&body);
            shared.record(event);
            if body["stream"] == json!(true) {
                stream(w, &body, &turn, close)
            } else {
                let message = turn.message(&body);
                respond(
                    w,
                    200,
                    "application/json",
                    message.to_string().as_bytes(),
                    close,
                )
            }
        }
        ("POST", "/v1/messages/count_tokens") => {
            let units = body.as_ref().map(text_units).unwrap_or(0);
            let answer = shared.settings.count_tokens.unwrap_or(units.div_ceil(4));
            shared.record(json!({"event": "count_tokens", "units": units, "input_tokens": answer}));
            let b = json!({"input_tokens": answer}).to_string();
            respond(w, 200, "application/json", b.as_bytes(), close)
        }
        (method, path) => {
            shared.record(json!({"event": "not_found", "method": method, "path": path}));
            let b = error_body(
                "not_found_error",
                &format!("{method} {path} is not served here"),
            );
            respond(w, 404, "application/json", b.as_bytes(), close)
        }
    }
}

/// What the stand-in says in one turn.
#[derive(Debug, Clone, PartialEq)]
enum Turn {
    /// Call the tool with this input.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// Say this and end the turn.
    Text(String),
}

impl Turn {
    fn stop_reason(&self) -> &'static str {
        match self {
            Turn::ToolUse { .. } => "tool_use",
            Turn::Text(_) => "end_turn",
        }
    }

    fn block(&self) -> Value {
        match self {
            Turn::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            Turn::Text(text) => json!({"type": "text", "text": text}),
        }
    }

    /// The whole answer as one (non-streamed) message.
    fn message(&self, request: &Value) -> Value {
        json!({
            "id": format!("msg_{}", fresh_nonce()),
            "type": "message",
            "role": "assistant",
            "model": request["model"],
            "content": [self.block()],
            "stop_reason": self.stop_reason(),
            "stop_sequence": null,
            "usage": {"input_tokens": estimate_tokens(request), "output_tokens": 5},
        })
    }
}

fn estimate_tokens(request: &Value) -> u64 {
    text_units(request).div_ceil(4).max(1)
}

/// Sends `turn` as server-sent events, one HTTP chunk per event.
fn stream(w: &mut impl Write, request: &Value, turn: &Turn, close: bool) -> io::Result<()> {
    let connection = if close { "close" } else { "keep-alive" };
    write!(
        w,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
         cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: {connection}\r\n\
         request-id: req_{}\r\n\r\n",
        fresh_nonce()
    )?;
    let (start_block, delta) = match turn {
        Turn::ToolUse { id, name, input } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
        ),
        Turn::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
        ),
    };
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {
            "id": format!("msg_{}", fresh_nonce()), "type": "message", "role": "assistant",
            "model": request["model"], "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": estimate_tokens(request), "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": start_block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": turn.stop_reason(), "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    for (name, data) in events {
        let chunk = format!("event: {name}\ndata: {data}\n\n");
        write!(w, "{:x}\r\n{chunk}\r\n", chunk.len())?;
        w.flush()?;
    }
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

/// Decides the turn for one `/v1/messages` request, and the event that records it.
fn answer(request: &Value) -> (Turn, Value) {
    let messages = request["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // The tool result is in the last *user* message: some clients append a system message
    // after it.
    let last_user = messages.iter().rev().find(|m| m["role"] == "user");
    let blocks: &[Value] = last_user
        .and_then(|m| m["content"].as_array())
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if let Some(result) = blocks.iter().find(|b| b["type"] == "tool_result") {
        let id = result["tool_use_id"].as_str().unwrap_or("");
        let input = tool_use_input(messages, id);
        let content = &result["content"];
        let event = json!({
            "event": "tool_result",
            "n": input.as_ref().and_then(|i| i["n"].as_u64()),
            "input": input,
            "tool_use_id": id,
            "is_error": result["is_error"],
            "content": content,
            "content_kind": match content { Value::String(_) => "string", Value::Array(_) => "blocks", _ => "other" },
            "units": text_units(content),
        });
        return (Turn::Text("done".into()), event);
    }
    let tool = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .find(|name| *name == "emit" || name.ends_with("__emit"));
    let Some(tool) = tool else {
        return (
            Turn::Text("no emit tool was offered".into()),
            json!({"event": "no_tool", "model": request["model"]}),
        );
    };
    let prompt = last_user
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default();
    let Some(input) = emit_input(&prompt) else {
        return (
            Turn::Text("the prompt names no n (write n=50000)".into()),
            json!({"event": "no_n", "tool": tool}),
        );
    };
    let id = format!("toolu_{}{}", fresh_nonce(), fresh_nonce());
    let event =
        json!({"event": "tool_use", "tool": tool, "id": id, "n": input["n"], "input": input});
    (
        Turn::ToolUse {
            id,
            name: tool.to_string(),
            input,
        },
        event,
    )
}

/// The emit arguments a prompt names: `n=N`, optionally `fill=KIND` and `blocks=K`. The last
/// mention wins, so a preamble the client prepends cannot override the user's words.
fn emit_input(prompt: &str) -> Option<Value> {
    static N: OnceLock<Regex> = OnceLock::new();
    static FILL: OnceLock<Regex> = OnceLock::new();
    static BLOCKS: OnceLock<Regex> = OnceLock::new();
    let last = |re: &Regex| re.captures_iter(prompt).last().map(|c| c[1].to_string());
    let n: u64 = last(N.get_or_init(|| Regex::new(r"\bn\s*=\s*(\d+)").expect("valid regex")))?
        .parse()
        .ok()?;
    let mut input = json!({"n": n});
    if let Some(fill) =
        last(FILL.get_or_init(|| Regex::new(r"\bfill\s*=\s*(\w+)").expect("valid regex")))
    {
        input["fill"] = json!(fill);
    }
    if let Some(blocks) =
        last(BLOCKS.get_or_init(|| Regex::new(r"\bblocks\s*=\s*(\d+)").expect("valid regex")))
    {
        input["blocks"] = json!(blocks.parse::<u64>().unwrap_or(1));
    }
    Some(input)
}

/// The input of the assistant's tool_use block with this id, from the conversation so far (the
/// stand-in keeps no state: the client carries it).
fn tool_use_input(messages: &[Value], id: &str) -> Option<Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "tool_use" && b["id"] == id)
        .map(|b| b["input"].clone())
}

/// All text in a content value (a string, or blocks with `text`), joined.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().map(text_of).collect::<Vec<_>>().join(""),
        Value::Object(obj) => match (obj.get("text"), obj.get("content")) {
            (Some(Value::String(t)), _) => t.clone(),
            (_, Some(inner)) => text_of(inner),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// UTF-16 units of all text anywhere in a value's `text`/`content` strings.
fn text_units(value: &Value) -> u64 {
    match value {
        Value::String(s) => utf16_len(s),
        Value::Array(items) => items.iter().map(text_units).sum(),
        Value::Object(obj) => ["text", "content", "messages", "system"]
            .iter()
            .filter_map(|k| obj.get(*k))
            .map(text_units)
            .sum(),
        _ => 0,
    }
}

/// Runs the stand-in in the foreground until killed. The chosen port goes to stdout when the
/// caller asked for any free one (`--port 0`), so a script can read it.
pub fn run_model(settings: ModelSettings) -> anyhow::Result<report::Exit> {
    let asked_any = settings.port == 0;
    let stand_in = StandIn::start(settings)?;
    eprintln!(
        "probe model: listening on http://127.0.0.1:{}",
        stand_in.port()
    );
    if asked_any {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", stand_in.port())?;
        out.flush()?;
    }
    loop {
        thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_turn_calls_the_tool_with_the_prompts_n() {
        let req = json!({"model": "m", "tools": [{"name": "Bash"}, {"name": "mcp__probe__emit"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "call it with n=50001 fill=astral"}]}]});
        let (turn, event) = answer(&req);
        let Turn::ToolUse { name, input, .. } = turn else {
            panic!("{turn:?}")
        };
        assert_eq!(name, "mcp__probe__emit");
        assert_eq!(input, json!({"n": 50001, "fill": "astral"}));
        assert_eq!(event["n"], 50001);
    }

    #[test]
    fn the_tool_result_is_logged_as_given_and_ends_the_turn() {
        let req = json!({"model": "m", "tools": [{"name": "mcp__probe__emit"}], "messages": [
            {"role": "user", "content": "n=7"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__probe__emit", "input": {"n": 7}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "<persisted-output>"}]},
            {"role": "system", "content": "after"}]});
        let (turn, event) = answer(&req);
        assert_eq!(turn, Turn::Text("done".into()));
        assert_eq!(event["n"], 7);
        assert_eq!(event["content"], "<persisted-output>");
        assert_eq!(event["content_kind"], "string");
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let raw = b"POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let mut r = io::Cursor::new(&raw[..]);
        let req = read_request(&mut r, &mut io::sink()).unwrap().unwrap();
        assert_eq!(req.body, b"abcde");
        assert!(read_request(&mut r, &mut io::sink()).unwrap().is_none());
    }
}
