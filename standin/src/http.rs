//! The stand-in's HTTP/1.1 transport over `std::net`: accepting connections (a bounded number,
//! one thread each, keep-alive), handing each request to the first API shape that serves its
//! method and path, and writing the reply, whole or as server-sent events.
//!
//! The [`Handler`] trait is the seam between the transport and the API shapes: a shape claims a
//! request and returns a [`Reply`]; it never sees a socket. Streams are sent chunked, one HTTP
//! chunk per event and flushed, as the real APIs do, since clients act on each event as it
//! comes. Requests are read by [`crate::request`], which bounds everything a client sends.

use serde_json::{json, Value};
use std::io::{self, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::events::ModelEvent;
use crate::request::{read_request, Request};
use crate::Shared;
use mcp::emit::fresh_nonce;

/// Most connections served at once; more are answered 503 and closed.
pub(crate) const MAX_CONNECTIONS: usize = 64;
/// A connection that sends nothing for this long is closed, so a silent client cannot keep a
/// thread forever.
const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// One API shape the stand-in speaks: the Anthropic Messages API, the OpenAI Responses API,
/// OpenAI Chat Completions, Gemini `generateContent`; each a sibling module of this one.
pub(crate) trait Handler: Send + Sync {
    /// The reply to `request` when this shape serves its method and path; `None` passes it to
    /// the next shape (and past the last one, a 404). Events go to `shared.record`.
    fn answer(&self, request: &Request, shared: &Shared) -> Option<Reply>;
}

/// What an API answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// One JSON body with this status.
    Json { status: u16, body: Value },
    /// `200`, `text/event-stream`: these events, in order.
    Events(Vec<Sse>),
}

/// One server-sent event: an optional `event:` name (OpenAI's chat stream sends none) and the
/// `data:` line (JSON, or a sentinel such as `[DONE]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sse {
    pub event: Option<&'static str>,
    pub data: String,
}

impl Sse {
    pub fn named(event: &'static str, data: &Value) -> Sse {
        Sse {
            event: Some(event),
            data: data.to_string(),
        }
    }

    fn wire(&self) -> String {
        match self.event {
            Some(name) => format!("event: {name}\ndata: {}\n\n", self.data),
            None => format!("data: {}\n\n", self.data),
        }
    }
}

/// The error body every refusal carries (the Anthropic API's; clients of the other shapes only
/// read the status of a refusal).
pub(crate) fn error_reply(status: u16, kind: &str, message: &str) -> Reply {
    Reply::Json {
        status,
        body: json!({"type": "error", "error": {"type": kind, "message": message}}),
    }
}

/// The request's body as JSON, or the 400 that refuses it (logged with the path it was sent
/// to).
pub(crate) fn json_body(request: &Request, shared: &Shared) -> Result<Value, Reply> {
    crate::json::parse(&request.body).map_err(|_| {
        shared.record(ModelEvent::BadRequest {
            status: None,
            error: None,
            path: Some(request.path.clone()),
        });
        error_reply(400, "invalid_request_error", "body is not JSON")
    })
}

/// The JSON body of a POST to `path`: `None` for another method or path (another API's), an
/// `Err` with the refusal to send (logged) when the body is not JSON.
pub(crate) fn post_json(
    request: &Request,
    shared: &Shared,
    path: &str,
) -> Option<Result<Value, Reply>> {
    (request.method == "POST" && request.path == path).then(|| json_body(request, shared))
}

/// The model's move on `conversation` (the same for every API shape), logged, with the usage
/// to report for `body`.
pub(crate) fn take_turn(
    conversation: &crate::turn::Conversation,
    id_prefix: &str,
    body: &Value,
    shared: &Shared,
) -> (crate::turn::Turn, crate::tokens::Usage) {
    let (turn, events) = crate::turn::decide(conversation, id_prefix);
    for event in events {
        shared.record(event);
    }
    (turn, crate::tokens::Usage::of(body, &shared.settings))
}

/// Serves `listener` until `stop` is set (and something connects to wake the loop).
pub(crate) fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    apis: Arc<Vec<Box<dyn Handler>>>,
    stop: Arc<AtomicBool>,
) {
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut conn) = conn else { continue };
        // A bounded number of connection threads, so a flood of connections cannot exhaust
        // memory either.
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            let reply = error_reply(503, "overloaded_error", "too many connections");
            let _ = write_reply(&mut conn, &reply, true);
            continue;
        }
        let (shared, apis, open) = (shared.clone(), apis.clone(), open.clone());
        thread::spawn(move || {
            let _ = serve_connection(conn, &shared, &apis);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

fn serve_connection(conn: TcpStream, shared: &Shared, apis: &[Box<dyn Handler>]) -> io::Result<()> {
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
                    let reply = error_reply(status, "invalid_request_error", &message);
                    shared.record(ModelEvent::BadRequest {
                        status: Some(status),
                        error: Some(message),
                        path: None,
                    });
                    let _ = write_reply(&mut writer, &reply, true);
                    close_after_error(reader.into_inner());
                }
                return Ok(());
            }
        };
        let close = request.wants_close();
        let reply = route(&request, apis, shared);
        write_reply(&mut writer, &reply, close)?;
        if close {
            return Ok(());
        }
    }
}

/// The first shape's reply to `request`, or a 404 when none serves it.
fn route(request: &Request, apis: &[Box<dyn Handler>], shared: &Shared) -> Reply {
    if let Some(reply) = apis.iter().find_map(|api| api.answer(request, shared)) {
        return reply;
    }
    shared.record(ModelEvent::NotFound {
        method: request.method.clone(),
        path: request.path.clone(),
    });
    let message = format!("{} {} is not served here", request.method, request.path);
    error_reply(404, "not_found_error", &message)
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

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Writes `reply` as one HTTP/1.1 response; `close` says the connection ends after it.
fn write_reply(w: &mut impl Write, reply: &Reply, close: bool) -> io::Result<()> {
    let connection = if close { "close" } else { "keep-alive" };
    match reply {
        Reply::Json { status, body } => {
            let body = body.to_string();
            write!(
                w,
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: {connection}\r\nrequest-id: req_{}\r\n\r\n",
                reason(*status),
                body.len(),
                fresh_nonce()
            )?;
            w.write_all(body.as_bytes())?;
            w.flush()
        }
        Reply::Events(events) => {
            write!(
                w,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
                 cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\
                 connection: {connection}\r\nrequest-id: req_{}\r\n\r\n",
                fresh_nonce()
            )?;
            for event in events {
                let chunk = event.wire();
                write!(w, "{:x}\r\n{chunk}\r\n", chunk.len())?;
                w.flush()?;
            }
            w.write_all(b"0\r\n\r\n")?;
            w.flush()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(reply: &Reply, close: bool) -> String {
        let mut out = Vec::new();
        write_reply(&mut out, reply, close).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_json_reply_is_framed_by_its_length() {
        let text = written(&error_reply(413, "invalid_request_error", "big"), true);
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 413 Content Too Large\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nconnection: close"), "{head}");
        assert!(
            head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())),
            "{head}"
        );
        let body: Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["message"], "big");
    }

    #[test]
    fn a_stream_is_one_chunk_per_event_then_the_last_chunk() {
        let reply = Reply::Events(vec![
            Sse::named("ping", &json!({"a": 1})),
            Sse {
                event: None,
                data: "[DONE]".into(),
            },
        ]);
        let text = written(&reply, false);
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains("content-type: text/event-stream"), "{head}");
        assert!(head.contains("connection: keep-alive"), "{head}");
        let first = "event: ping\ndata: {\"a\":1}\n\n";
        let second = "data: [DONE]\n\n";
        assert_eq!(
            body,
            format!(
                "{:x}\r\n{first}\r\n{:x}\r\n{second}\r\n0\r\n\r\n",
                first.len(),
                second.len()
            )
        );
    }
}
