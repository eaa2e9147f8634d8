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
use report::lines::{self, LineEnd};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

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

struct Shared {
    settings: ModelSettings,
    /// Connections being served now.
    open: AtomicUsize,
    log: Mutex<Option<File>>,
    events: Mutex<Vec<Value>>,
}

/// A lock that a panicked holder cannot poison for everyone else.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn record(&self, mut event: Value) {
        event["time"] = json!(report::time::Timestamp::now());
        // One write per event, under the lock, so a line is never half written when another
        // thread or an interrupt ends the process (see run_model).
        let line = format!("{event}\n");
        if let Some(file) = lock(&self.log).as_mut() {
            let _ = file.write_all(line.as_bytes()).and_then(|()| file.flush());
        }
        if self.settings.keep_events {
            lock(&self.events).push(event);
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
            open: AtomicUsize::new(0),
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
                let Ok(mut conn) = conn else { continue };
                // A bounded number of connection threads, so a flood of connections cannot
                // exhaust memory either.
                if s.open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    s.open.fetch_sub(1, Ordering::SeqCst);
                    let body = error_body("overloaded_error", "too many connections");
                    let _ = respond(&mut conn, 503, "application/json", body.as_bytes(), true);
                    continue;
                }
                let s = s.clone();
                thread::spawn(move || {
                    let _ = serve_connection(conn, &s);
                    s.open.fetch_sub(1, Ordering::SeqCst);
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
        std::mem::take(&mut *lock(&self.shared.events))
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
    conn.set_read_timeout(Some(IDLE_TIMEOUT))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut writer = conn;
    loop {
        let request = match read_request(&mut reader, &mut writer) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(e) => {
                if let Some(status) = e.status() {
                    let message = e.to_string();
                    shared.record(
                        json!({"event": "bad_request", "status": status, "error": message}),
                    );
                    let body = error_body("invalid_request_error", &message);
                    let _ = respond(
                        &mut writer,
                        status,
                        "application/json",
                        body.as_bytes(),
                        true,
                    );
                    close_after_error(reader.into_inner());
                }
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

/// Ends a connection whose request was refused. The answer is already sent, so stop writing,
/// then read and drop what the client is still sending for a little while (at most 4 MiB, one
/// second): closing a socket with unread input resets it, and a reset can destroy the answer
/// before the client has read it.
fn close_after_error(mut conn: TcpStream) {
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut sink = [0u8; 16 * 1024];
    let mut drained = 0usize;
    while drained < 4 * 1024 * 1024 && Instant::now() < deadline {
        match conn.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(k) => drained += k,
        }
    }
}

/// Largest request head (request line and headers) accepted, against a runaway client. It is
/// counted while the head is read, so a client that sends one endless line costs this much
/// memory and no more.
pub const MAX_HEAD: usize = 64 * 1024;
/// Most header fields in one head.
pub const MAX_HEADERS: usize = 100;
/// Largest request body accepted: a tool result of 10,000,000 astral units is 40 MB as UTF-8
/// JSON. The body grows as bytes arrive, so a Content-Length alone reserves nothing.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// Longest chunk-size line (the hex size and any chunk extensions).
pub const MAX_CHUNK_LINE: usize = 4 * 1024;
/// Most connections served at once; more are answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;
/// A connection that sends nothing for this long is closed, so a silent client cannot keep a
/// thread forever.
const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a request could not be read: each kind has its status, and the connection is closed
/// after the answer (the rest of its bytes cannot be trusted to frame a next request).
#[derive(Debug)]
pub enum HttpError {
    /// The head is over [`MAX_HEAD`] or [`MAX_HEADERS`]: 431.
    HeadTooLarge(String),
    /// The body is over [`MAX_BODY`]: 413.
    BodyTooLarge(String),
    /// Malformed framing: 400.
    Bad(String),
    /// Unsupported transfer coding: 501.
    NotImplemented(String),
    /// The connection failed or closed mid-request: nothing to answer.
    Io(io::Error),
}

impl HttpError {
    fn status(&self) -> Option<u16> {
        match self {
            HttpError::HeadTooLarge(_) => Some(431),
            HttpError::BodyTooLarge(_) => Some(413),
            HttpError::Bad(_) => Some(400),
            HttpError::NotImplemented(_) => Some(501),
            HttpError::Io(_) => None,
        }
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::HeadTooLarge(m)
            | HttpError::BodyTooLarge(m)
            | HttpError::Bad(m)
            | HttpError::NotImplemented(m) => f.write_str(m),
            HttpError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for HttpError {
    fn from(e: io::Error) -> HttpError {
        HttpError::Io(e)
    }
}

/// Appends one line (up to and including its LF) to `buf`, reading at most `max` bytes of it:
/// the bound holds while reading, so an endless line costs `max` bytes, never more. A socket
/// read that times out ends the connection (the idle limit), as an error.
fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineEnd> {
    match lines::read_bounded(reader, buf, max, || true)? {
        LineEnd::Stopped => Err(io::ErrorKind::TimedOut.into()),
        end => Ok(end),
    }
}

/// A header name is an RFC 9110 token: visible ASCII without separators.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Reads one request; `Ok(None)` at a clean end of the connection. Every length is bounded
/// while it is read (the head by [`MAX_HEAD`], chunk lines by [`MAX_CHUNK_LINE`], the body by
/// [`MAX_BODY`]) and every number is parsed strictly, so no input can make it panic or grow
/// without bound.
fn read_request(
    reader: &mut impl BufRead,
    writer: &mut impl Write,
) -> Result<Option<Request>, HttpError> {
    let too_large = || HttpError::HeadTooLarge(format!("request head over {MAX_HEAD} bytes"));
    let mut line = Vec::new();
    let mut used = 0usize;
    // The request line, skipping the blank lines RFC 9112 lets a client send first (they count
    // against the head's budget too).
    loop {
        line.clear();
        match read_line_bounded(reader, &mut line, MAX_HEAD - used)? {
            LineEnd::Eof | LineEnd::Stopped => return Ok(None),
            LineEnd::Partial => {
                return Err(HttpError::Bad(
                    "connection closed inside the request line".into(),
                ))
            }
            LineEnd::TooLong => return Err(too_large()),
            LineEnd::Line => {}
        }
        used += line.len();
        if !trim_crlf(&line).is_empty() {
            break;
        }
        if used >= MAX_HEAD {
            return Err(too_large());
        }
    }
    let request_line = String::from_utf8_lossy(trim_crlf(&line)).into_owned();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::Bad(format!(
            "malformed request line: {}",
            clip_for_error(&request_line)
        )));
    };
    if !is_token(method) || target.is_empty() {
        return Err(HttpError::Bad(format!(
            "malformed request line: {}",
            clip_for_error(&request_line)
        )));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HttpError::Bad(format!(
            "unsupported protocol {}",
            clip_for_error(version)
        )));
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        if used >= MAX_HEAD {
            return Err(too_large());
        }
        line.clear();
        match read_line_bounded(reader, &mut line, MAX_HEAD - used)? {
            LineEnd::Eof | LineEnd::Partial | LineEnd::Stopped => {
                return Err(HttpError::Bad(
                    "connection closed inside the headers".into(),
                ))
            }
            LineEnd::TooLong => return Err(too_large()),
            LineEnd::Line => {}
        }
        used += line.len();
        let l = trim_crlf(&line);
        if l.is_empty() {
            break;
        }
        if headers.len() == MAX_HEADERS {
            return Err(HttpError::HeadTooLarge(format!(
                "more than {MAX_HEADERS} header fields"
            )));
        }
        if l[0] == b' ' || l[0] == b'\t' {
            return Err(HttpError::Bad(
                "obsolete line folding in the headers".into(),
            ));
        }
        let l = String::from_utf8_lossy(l);
        let Some((k, v)) = l.split_once(':') else {
            return Err(HttpError::Bad(format!(
                "malformed header: {}",
                clip_for_error(&l)
            )));
        };
        if !is_token(k) {
            return Err(HttpError::Bad(format!(
                "malformed header name: {}",
                clip_for_error(k)
            )));
        }
        headers.push((k.to_string(), v.trim().to_string()));
    }
    let mut request = Request {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("").to_string(),
        headers,
        body: Vec::new(),
    };
    let framing = body_framing(&request)?;
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    request.body = match framing {
        Framing::None => Vec::new(),
        Framing::Length(len) => read_exactly(reader, len)?,
        Framing::Chunked => read_chunked(reader)?,
    };
    Ok(Some(request))
}

/// How a request's body is delimited.
#[derive(Debug, PartialEq, Eq)]
enum Framing {
    None,
    Length(usize),
    Chunked,
}

/// The body's framing from the headers, strictly: one Content-Length of digits only (repeats
/// must agree), no Content-Length beside chunked (RFC 9112 6.1: a smuggling risk), and no
/// transfer coding but `chunked`.
fn body_framing(request: &Request) -> Result<Framing, HttpError> {
    fn values<'a>(request: &'a Request, name: &'static str) -> impl Iterator<Item = &'a str> {
        request
            .headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    let codings: Vec<&str> = values(request, "transfer-encoding")
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut length: Option<usize> = None;
    for v in values(request, "content-length").flat_map(|v| v.split(',')) {
        let len = parse_content_length(v.trim())?;
        if length.is_some_and(|l| l != len) {
            return Err(HttpError::Bad(
                "content-length given twice with different values".into(),
            ));
        }
        length = Some(len);
    }
    if !codings.is_empty() {
        if length.is_some() {
            return Err(HttpError::Bad(
                "both content-length and transfer-encoding".into(),
            ));
        }
        if codings.len() != 1 || !codings[0].eq_ignore_ascii_case("chunked") {
            return Err(HttpError::NotImplemented(format!(
                "unsupported transfer-encoding: {}",
                clip_for_error(&codings.join(", "))
            )));
        }
        return Ok(Framing::Chunked);
    }
    Ok(length.map_or(Framing::None, Framing::Length))
}

/// A Content-Length value: ASCII digits only (no sign, no space, no hex), at most
/// [`MAX_BODY`].
fn parse_content_length(v: &str) -> Result<usize, HttpError> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(HttpError::Bad(format!(
            "bad content-length: {}",
            clip_for_error(v)
        )));
    }
    match v.parse::<usize>() {
        Ok(len) if len <= MAX_BODY => Ok(len),
        _ => Err(HttpError::BodyTooLarge(format!(
            "body of {} bytes is over {MAX_BODY}",
            clip_for_error(v)
        ))),
    }
}

/// Exactly `len` bytes, grown as they arrive (a claimed length reserves nothing up front).
fn read_exactly(reader: &mut impl BufRead, len: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::with_capacity(len.min(64 * 1024));
    reader.take(len as u64).read_to_end(&mut body)?;
    if body.len() != len {
        return Err(HttpError::Bad(format!(
            "connection closed after {} of {len} body bytes",
            body.len()
        )));
    }
    Ok(body)
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line_bounded(reader, &mut line, MAX_CHUNK_LINE)? {
            LineEnd::Line => {}
            LineEnd::TooLong => {
                return Err(HttpError::Bad(format!(
                    "chunk-size line over {MAX_CHUNK_LINE} bytes"
                )))
            }
            LineEnd::Eof | LineEnd::Partial | LineEnd::Stopped => {
                return Err(HttpError::Bad(
                    "connection closed inside a chunked body".into(),
                ))
            }
        }
        let size = parse_chunk_size(trim_crlf(&line))?;
        if size == 0 {
            // Trailer fields (read and dropped, bounded like the head), then the blank line.
            let mut used = 0usize;
            loop {
                line.clear();
                match read_line_bounded(reader, &mut line, MAX_HEAD.saturating_sub(used))? {
                    LineEnd::Line => {}
                    LineEnd::TooLong => {
                        return Err(HttpError::HeadTooLarge(format!(
                            "trailer fields over {MAX_HEAD} bytes"
                        )))
                    }
                    LineEnd::Eof | LineEnd::Partial | LineEnd::Stopped => {
                        return Err(HttpError::Bad(
                            "connection closed inside the trailer fields".into(),
                        ))
                    }
                }
                used += line.len();
                if trim_crlf(&line).is_empty() {
                    return Ok(body);
                }
                if used >= MAX_HEAD {
                    return Err(HttpError::HeadTooLarge(format!(
                        "trailer fields over {MAX_HEAD} bytes"
                    )));
                }
            }
        }
        if size > MAX_BODY - body.len() {
            return Err(HttpError::BodyTooLarge(format!(
                "chunked body over {MAX_BODY} bytes"
            )));
        }
        let start = body.len();
        reader.take(size as u64).read_to_end(&mut body)?;
        if body.len() - start != size {
            return Err(HttpError::Bad("connection closed inside a chunk".into()));
        }
        // The chunk's data ends with CRLF (a bare LF is tolerated, as for every other line).
        let mut end = [0u8; 1];
        reader
            .read_exact(&mut end)
            .map_err(|_| HttpError::Bad("connection closed after a chunk's data".into()))?;
        if end[0] == b'\r' {
            reader
                .read_exact(&mut end)
                .map_err(|_| HttpError::Bad("connection closed after a chunk's data".into()))?;
        }
        if end[0] != b'\n' {
            return Err(HttpError::Bad(
                "a chunk's data is not followed by CRLF".into(),
            ));
        }
    }
}

/// A chunk-size line: hex digits (at most 15, so the size fits any usize we allow), then
/// optional `;extension`s, which are meaningless here.
fn parse_chunk_size(line: &[u8]) -> Result<usize, HttpError> {
    let bad = || {
        HttpError::Bad(format!(
            "bad chunk size: {}",
            clip_for_error(&String::from_utf8_lossy(line))
        ))
    };
    let hex_end = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    let (hex, rest) = line.split_at(hex_end);
    if hex.is_empty() {
        return Err(bad());
    }
    let rest = rest.trim_ascii_start();
    if !rest.is_empty() && rest[0] != b';' {
        return Err(bad());
    }
    let digits = hex.iter().skip_while(|&&b| b == b'0').count();
    if digits > 15 {
        return Err(HttpError::BodyTooLarge(format!(
            "chunk size {} is over {MAX_BODY} bytes",
            clip_for_error(&String::from_utf8_lossy(hex))
        )));
    }
    let size = usize::from_str_radix(std::str::from_utf8(hex).map_err(|_| bad())?, 16)
        .map_err(|_| bad())?;
    Ok(size)
}

/// At most 80 characters of outside text for an error message, made safe to print.
fn clip_for_error(s: &str) -> String {
    let clipped: String = s.chars().take(80).collect();
    report::escape::text(&clipped).into_owned()
}

fn trim_crlf(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
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
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
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
    let _ = writeln!(
        io::stderr(),
        "probe model: listening on http://127.0.0.1:{}",
        stand_in.port()
    );
    if asked_any {
        crate::print_out(&format!("{}\n", stand_in.port()))?;
    }
    // Serve until SIGINT or SIGTERM (the flag is polled: the handler only sets it).
    while !report::interrupt::requested() {
        thread::sleep(Duration::from_millis(50));
    }
    // Hold the log's lock to the end, so no connection thread is halfway through a line when
    // the process exits; dropping the stand-in stops the accept loop and frees the port.
    let shared = stand_in.shared.clone();
    let held = lock(&shared.log);
    drop(stand_in);
    std::mem::forget(held);
    let _ = writeln!(io::stderr(), "probe model: interrupted");
    Ok(report::Exit::Interrupted)
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

    /// An endless source of one pattern that counts what was taken from it.
    struct Endless {
        pattern: Vec<u8>,
        at: usize,
        taken: usize,
    }

    impl Endless {
        fn after(prefix: &[u8], pattern: &[u8]) -> io::Chain<io::Cursor<Vec<u8>>, Endless> {
            io::Cursor::new(prefix.to_vec()).chain(Endless {
                pattern: pattern.to_vec(),
                at: 0,
                taken: 0,
            })
        }
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            // "Endless" up to 16 MiB, so a parser that lost its bound fails the test instead
            // of eating the machine's memory.
            if self.taken >= 16 * 1024 * 1024 {
                return Ok(0);
            }
            for b in buf.iter_mut() {
                *b = self.pattern[self.at % self.pattern.len()];
                self.at += 1;
            }
            self.taken += buf.len();
            Ok(buf.len())
        }
    }

    fn parse(raw: &[u8]) -> Result<Option<Request>, HttpError> {
        read_request(&mut io::Cursor::new(raw), &mut io::sink())
    }

    /// Reads from an endless source and returns the error and how many bytes were taken.
    fn parse_endless(prefix: &[u8], pattern: &[u8]) -> (HttpError, usize) {
        let mut r = BufReader::with_capacity(8 * 1024, Endless::after(prefix, pattern));
        let e = read_request(&mut r, &mut io::sink()).expect_err("an endless input is refused");
        let taken = r.get_ref().get_ref().1.taken;
        (e, taken)
    }

    #[test]
    fn an_endless_header_line_is_refused_after_a_bounded_read() {
        for prefix in [
            &b""[..],
            b"POST /v1/messages HTTP/1.1\r\n",
            b"POST /v1/messages HTTP/1.1\r\nx-a: ",
        ] {
            let (e, taken) = parse_endless(prefix, b"a");
            assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
            assert_eq!(e.status(), Some(431));
            assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
        }
    }

    #[test]
    fn endless_headers_are_refused_after_a_bounded_read() {
        let (e, taken) = parse_endless(b"GET / HTTP/1.1\r\n", b"x-a: b\r\n");
        assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
        assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
        // Long header lines reach the byte bound before the count bound.
        let long = format!("x-a: {}\r\n", "b".repeat(4000));
        let (e, taken) = parse_endless(b"GET / HTTP/1.1\r\n", long.as_bytes());
        assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
        assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
        // And endless blank lines before the request line.
        let (e, taken) = parse_endless(b"", b"\r\n");
        assert!(matches!(e, HttpError::HeadTooLarge(_)), "{e}");
        assert!(taken <= MAX_HEAD + 8 * 1024, "read {taken} bytes");
    }

    #[test]
    fn content_length_is_parsed_strictly() {
        let head = |cl: &str| format!("POST / HTTP/1.1\r\n{cl}\r\n\r\nabc");
        for bad in [
            "content-length: -1",
            "content-length: +3",
            "content-length: 0x3",
            "content-length: 3 3",
            "content-length: ",
            "content-length: 4\r\ncontent-length: 3",
            "content-length: 3, 4",
            "content-length: 3\r\ntransfer-encoding: chunked",
            "transfer-encoding: gzip",
            "transfer-encoding: chunked, chunked",
        ] {
            let e = parse(head(bad).as_bytes()).expect_err(bad);
            assert!(matches!(e.status(), Some(400 | 501)), "{bad}: {e}");
        }
        for huge in [
            "content-length: 99999999999999999999999999999",
            "content-length: 18446744073709551616",
            "content-length: 67108865",
        ] {
            let e = parse(head(huge).as_bytes()).expect_err(huge);
            assert_eq!(e.status(), Some(413), "{huge}: {e}");
        }
        for good in [
            "content-length: 3",
            "Content-Length: 3\r\ncontent-length: 3",
            "content-length: 003",
        ] {
            let r = parse(head(good).as_bytes()).unwrap().unwrap();
            assert_eq!(r.body, b"abc", "{good}");
        }
    }

    #[test]
    fn a_claimed_length_reserves_nothing_before_the_bytes_arrive() {
        let e = parse(b"POST / HTTP/1.1\r\ncontent-length: 67108864\r\n\r\nabc").unwrap_err();
        assert!(matches!(e, HttpError::Bad(_)), "{e}");
    }

    #[test]
    fn chunk_sizes_are_parsed_strictly_and_bounded() {
        let req =
            |chunks: &str| format!("POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n{chunks}");
        for bad in [
            "zz\r\nabc\r\n0\r\n\r\n",
            "\r\n",
            "-3\r\nabc\r\n0\r\n\r\n",
            "3 x\r\nabc\r\n0\r\n\r\n",
            "3\r\nabcX0\r\n\r\n",
            "3\r\nabc",
            "3\r\nab",
        ] {
            let e = parse(req(bad).as_bytes()).expect_err(bad);
            assert_eq!(e.status(), Some(400), "{bad:?}: {e}");
        }
        for huge in [
            "ffffffffffffffffffff\r\n",
            "4000001\r\n",
            "0000000000000000000004000001\r\n",
        ] {
            let e = parse(req(huge).as_bytes()).expect_err(huge);
            assert_eq!(e.status(), Some(413), "{huge:?}: {e}");
        }
        // A size under the bound with no data behind it is a cut, not an allocation.
        let e = parse(req("3ffffff\r\n").as_bytes()).unwrap_err();
        assert_eq!(e.status(), Some(400), "{e}");
        let (e, taken) = parse_endless(
            b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3;ext=",
            b"x",
        );
        assert_eq!(e.status(), Some(400), "{e}");
        assert!(taken <= MAX_HEAD + 16 * 1024, "read {taken} bytes");
        let (e, taken) = parse_endless(
            b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n",
            b"x-trailer: y\r\n",
        );
        assert_eq!(e.status(), Some(431), "{e}");
        assert!(taken <= 2 * MAX_HEAD + 16 * 1024, "read {taken} bytes");
        let ok = parse(req("0000A\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\n").as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(ok.body, b"0123456789");
    }

    #[test]
    fn malformed_heads_are_400() {
        for bad in [
            "GET /\r\n\r\n",
            "GET / HTTP/1.1 extra\r\n\r\n",
            "GET / HTTP/2\r\n\r\n",
            "G(T / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nno colon\r\n\r\n",
            "GET / HTTP/1.1\r\nbad name: v\r\n\r\n",
            "GET / HTTP/1.1\r\nx: a\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nx: a\r\n",
            "GET / HT",
        ] {
            let e = parse(bad.as_bytes()).expect_err(bad);
            assert_eq!(e.status(), Some(400), "{bad:?}: {e}");
        }
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        const VALID: &[&str] = &[
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}",
            "POST /v1/messages HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n1;a=b\r\n{\r\n1\r\n}\r\n0\r\n\r\n",
            "\r\nGET /x?y HTTP/1.0\r\nexpect: 100-continue\r\n\r\n",
        ];

        /// What every outcome must satisfy: a request never claims more body than the bound, and
        /// every refusal carries an answerable status unless the input simply ended.
        fn check(raw: &[u8]) -> Result<(), TestCaseError> {
            match parse(raw) {
                Ok(Some(r)) => prop_assert!(r.body.len() <= MAX_BODY),
                Ok(None) => {}
                Err(HttpError::Io(e)) => prop_assert!(false, "an in-memory read failed: {e}"),
                Err(e) => prop_assert!(e.status().is_some()),
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn any_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..600)) {
                check(&raw)?;
            }

            #[test]
            fn mutated_valid_requests_never_panic(
                which in 0..VALID.len(),
                edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
            ) {
                let mut raw = VALID[which].as_bytes().to_vec();
                for (at, byte, kind) in edits {
                    let i = at.index(raw.len() + 1);
                    match kind {
                        0 => raw.insert(i, byte),
                        1 if i < raw.len() => raw[i] = byte,
                        _ if i < raw.len() => { raw.remove(i); }
                        _ => raw.push(byte),
                    }
                }
                check(&raw)?;
            }

            #[test]
            fn header_text_from_outside_never_panics(
                name in "[ -~]{0,20}",
                value in "\\PC{0,40}",
                size in "[0-9a-fA-F;=x ]{0,24}",
            ) {
                let raw = format!("POST / HTTP/1.1\r\n{name}: {value}\r\ntransfer-encoding: chunked\r\n\r\n{size}\r\nab\r\n0\r\n\r\n");
                check(raw.as_bytes())?;
                let raw = format!("POST / HTTP/1.1\r\ncontent-length: {size}\r\n\r\nab");
                check(raw.as_bytes())?;
            }
        }
    }
}
