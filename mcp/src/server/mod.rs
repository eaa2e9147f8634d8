//! `probe serve`: a stdio MCP server with one tool, `emit`.
//!
//! Stdout carries protocol only, one JSON-RPC message per line: anything else there (a log line,
//! a stray print) would be read by the client as a broken message. Logs go to stderr, and as JSON
//! lines to `--log`, where a driver reads which n was called with which nonce.

use crate::protocol::{
    self, Incoming, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
};
use report::lines::{self, LineEnd};

mod events;
mod tool;

pub use events::{client_info, read_calls, LoggedCall};
use events::{Event, EventLog};
use serde_json::{json, Value};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use tool::{call_tool, tool_description};

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

/// The longest line accepted. A line is read only up to this bound, so a client that sends one
/// endless line costs this much memory and no more; the rest of such a line is skipped.
pub const MAX_LINE: usize = 4 * 1024 * 1024;
/// The most messages one batch may hold: each gets a reply, so a long batch of tiny messages
/// would otherwise be answered with a reply many times its size.
pub const MAX_BATCH: usize = 1000;

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The client closed our input.
    Eof,
    /// The client closed our output (it went away): its way of ending the session.
    ClientGone,
    /// SIGINT or SIGTERM.
    Interrupted,
}

/// Appends one line to `buf`, reading at most `max` bytes of it, so the bound holds while
/// reading; a line the input ends inside counts as a line. A read that timed out or was
/// interrupted by a signal is retried unless an interrupt was requested (see [`Stdin`]).
fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineEnd> {
    Ok(
        match lines::read_bounded(reader, buf, max, files::interrupt::requested)? {
            LineEnd::Partial => LineEnd::Line,
            end => end,
        },
    )
}

/// Drops input up to and including the next newline, holding nothing of it.
fn skip_line(reader: &mut impl BufRead) -> io::Result<LineEnd> {
    lines::skip_line(reader, files::interrupt::requested)
}

/// The process's stdin, read so that SIGINT and SIGTERM are noticed while waiting: each read
/// first polls for at most 100 ms and reports a timeout, on which the caller checks
/// `files::interrupt::requested()` (the handler is installed with SA_RESTART, so a plain
/// blocking read would never return).
#[derive(Debug, Default)]
pub struct Stdin;

impl io::Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        let stdin = io::stdin();
        let fd = stdin.as_fd();
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(100u8)) {
            Ok(0) => Err(io::ErrorKind::TimedOut.into()),
            Ok(_) => nix::unistd::read(fd, buf).map_err(io::Error::from),
            Err(nix::errno::Errno::EINTR) => Err(io::ErrorKind::Interrupted.into()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Serves `input` to `output` until EOF, the client going away, or an interrupt.
pub fn serve(settings: &ServeSettings, input: impl Read, output: impl Write) -> io::Result<End> {
    let mut log = EventLog::open(settings.log.as_deref())?;
    let mut out = BufWriter::new(output);
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    log.record(
        "ready",
        &Event::Start {
            pid: std::process::id(),
        },
    );
    loop {
        line.clear();
        let mut skip_rest = false;
        let replies = match read_line_bounded(&mut input, &mut line, MAX_LINE)? {
            LineEnd::Eof => {
                log.record("end of input", &Event::Eof {});
                return Ok(End::Eof);
            }
            LineEnd::Stopped => {
                log.record("interrupted", &Event::Interrupted {});
                return Ok(End::Interrupted);
            }
            LineEnd::TooLong => {
                skip_rest = true;
                log.record(
                    &format!("a line over {MAX_LINE} bytes; its rest is skipped"),
                    &Event::LineTooLong { max: MAX_LINE },
                );
                vec![protocol::error(
                    &Value::Null,
                    INVALID_REQUEST,
                    &format!("line over {MAX_LINE} bytes: not read; its rest is skipped"),
                )]
            }
            LineEnd::Line | LineEnd::Partial => reply_to_line(trim_line(&line), &mut log),
        };
        for reply in replies {
            match out
                .write_all(&protocol::to_line(&reply))
                .and_then(|()| out.flush())
            {
                Ok(()) => {}
                // The client went away: that is its way of ending the session, not our failure.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(End::ClientGone),
                Err(e) => return Err(e),
            }
        }
        if skip_rest {
            match skip_line(&mut input)? {
                LineEnd::Stopped => return Ok(End::Interrupted),
                LineEnd::Eof => {
                    log.record("end of input", &Event::Eof {});
                    return Ok(End::Eof);
                }
                _ => {}
            }
        }
    }
}

/// The replies to one line of input (without its newline): none for a blank line or only
/// notifications and responses, one for a request or a broken line, one array for a batch.
/// Whatever the bytes, this never panics and a request is never met with silence.
pub fn reply_to_line(text: &[u8], log: &mut EventLog) -> Vec<Value> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return Vec::new();
    }
    match protocol::parse_line(text) {
        Err(e) => {
            log.record(
                &format!("parse error: {e}"),
                &Event::ParseError { error: e.clone() },
            );
            vec![protocol::error(
                &Value::Null,
                PARSE_ERROR,
                &format!("parse error: {e}"),
            )]
        }
        Ok(protocol::Line { batch, messages }) if batch && messages.len() > MAX_BATCH => {
            let why = format!(
                "a batch of {} messages is over the maximum {MAX_BATCH}",
                messages.len()
            );
            log.record(&why, &Event::Invalid { error: why.clone() });
            vec![protocol::error(&Value::Null, INVALID_REQUEST, &why)]
        }
        Ok(protocol::Line { batch, messages }) => {
            let replies: Vec<Value> = messages
                .into_iter()
                .filter_map(|m| handle(m, log))
                .collect();
            if batch && !replies.is_empty() {
                vec![Value::Array(replies)]
            } else {
                replies
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
                &Event::Notification {
                    method: method.clone(),
                },
            );
            None
        }
        Incoming::Response { id, .. } => {
            log.record("ignored a response", &Event::Response { id });
            None
        }
        Incoming::Invalid { id, reason } => {
            log.record(
                &format!("invalid request: {reason}"),
                &Event::Invalid {
                    error: reason.clone(),
                },
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
                    &Event::UnknownMethod {
                        method: other.to_string(),
                    },
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
        &Event::Initialize {
            asked: asked.to_string(),
            answered: answer.to_string(),
            client,
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every reply is a JSON-RPC 2.0 response: an id, and exactly one of result and error.
    fn is_response(v: &Value) -> bool {
        let Some(obj) = v.as_object() else {
            return false;
        };
        obj.get("jsonrpc") == Some(&json!("2.0"))
            && obj.contains_key("id")
            && (obj.contains_key("result") != obj.contains_key("error"))
    }

    /// What a line must be answered with, judged independently of the handler: a request (an
    /// object with a string or number id, no result or error) gets exactly one reply with its id.
    fn check_line(bytes: &[u8]) -> Result<(), TestCaseError> {
        let replies = reply_to_line(bytes, &mut EventLog::silent());
        let parsed: Option<Value> = serde_json::from_slice(bytes).ok();
        for r in &replies {
            match r {
                Value::Array(items) => {
                    prop_assert!(!items.is_empty());
                    prop_assert!(items.iter().all(is_response), "{items:?}");
                }
                one => prop_assert!(is_response(one), "{one}"),
            }
        }
        match parsed {
            None if !bytes.iter().all(u8::is_ascii_whitespace) => {
                prop_assert_eq!(replies.len(), 1);
                prop_assert_eq!(&replies[0]["error"]["code"], &json!(PARSE_ERROR));
            }
            Some(Value::Object(obj))
                if matches!(obj.get("id"), Some(Value::String(_) | Value::Number(_)))
                    && !obj.contains_key("result")
                    && !obj.contains_key("error") =>
            {
                prop_assert_eq!(replies.len(), 1, "a request met with silence");
                prop_assert_eq!(&replies[0]["id"], &obj["id"]);
            }
            _ => prop_assert!(replies.len() <= 1),
        }
        Ok(())
    }

    /// Any JSON value, nested a few levels, with the keys a message has.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            "\\PC{0,12}".prop_map(Value::from),
            prop_oneof![
                Just("2.0"),
                Just("initialize"),
                Just("tools/call"),
                Just("tools/list"),
                Just("ping"),
                Just("emit")
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            let key = prop_oneof![
                Just("jsonrpc".to_string()),
                Just("id".to_string()),
                Just("method".to_string()),
                Just("params".to_string()),
                Just("name".to_string()),
                Just("arguments".to_string()),
                Just("n".to_string()),
                Just("fill".to_string()),
                Just("blocks".to_string()),
                Just("protocolVersion".to_string()),
                Just("result".to_string()),
                "[a-z]{1,6}",
            ];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A request shaped like the real ones, with random parts in its places.
    fn request_like() -> impl Strategy<Value = Value> {
        (
            prop_oneof![any::<u32>().prop_map(Value::from), "[a-z0-9]{0,6}".prop_map(Value::from), json_value()],
            prop_oneof![Just(json!("tools/call")), Just(json!("initialize")), json_value()],
            json_value(),
            prop_oneof![
                any::<u64>().prop_map(Value::from),
                any::<f64>().prop_map(|f| json!(f)),
                json_value()
            ],
        )
            .prop_map(|(id, method, params, n)| {
                json!({"jsonrpc": "2.0", "id": id, "method": method,
                       "params": {"name": "emit", "arguments": {"n": n, "fill": params.clone()}, "protocolVersion": params}})
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_bytes_get_an_answer_or_are_blank(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_line(&bytes)?;
        }

        #[test]
        fn any_json_value_gets_a_well_formed_answer(v in json_value()) {
            check_line(v.to_string().as_bytes())?;
        }

        #[test]
        fn requests_with_random_parts_are_answered_under_their_id(v in request_like()) {
            // Sizes stay small: a valid n asks for that many units, so cap what is generated.
            let mut v = v;
            if let Some(n) = v["params"]["arguments"]["n"].as_u64() {
                v["params"]["arguments"]["n"] = json!(n % 5000);
            }
            check_line(v.to_string().as_bytes())?;
        }
    }

    #[test]
    fn depth_bombs_and_huge_numbers_get_error_answers() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let r = reply_to_line(deep.as_bytes(), &mut EventLog::silent());
        assert_eq!(r.len(), 1);
        assert_eq!(r[0]["error"]["code"], PARSE_ERROR);
        let deep_params = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}1{}}}"#,
            "{\"a\":".repeat(200),
            "}".repeat(200)
        );
        let r = reply_to_line(deep_params.as_bytes(), &mut EventLog::silent());
        assert_eq!(r.len(), 1);
        assert_eq!(r[0]["error"]["code"], PARSE_ERROR);
        // A number JSON cannot hold as a double is a parse error.
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"emit","arguments":{"n":1e400}}}"#;
        let r = reply_to_line(line.as_bytes(), &mut EventLog::silent());
        assert_eq!(r[0]["error"]["code"], PARSE_ERROR);
        for n in [
            "18446744073709551616",
            "-1",
            "1e300",
            "99999999999999999999999999",
        ] {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"emit","arguments":{{"n":{n}}}}}}}"#
            );
            let r = reply_to_line(line.as_bytes(), &mut EventLog::silent());
            assert_eq!(r.len(), 1, "{n}");
            assert_eq!(r[0]["id"], 7, "{n}");
            assert!(
                r[0]["result"]["isError"] == json!(true) || r[0]["error"].is_object(),
                "{n}: {}",
                r[0]
            );
        }
    }

    #[test]
    fn a_batch_over_the_maximum_is_one_error() {
        let batch = format!(
            "[{}]",
            vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#; MAX_BATCH + 1].join(",")
        );
        let r = reply_to_line(batch.as_bytes(), &mut EventLog::silent());
        assert_eq!(r.len(), 1);
        assert_eq!(r[0]["error"]["code"], INVALID_REQUEST);
        let batch = format!(
            "[{}]",
            vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#; MAX_BATCH].join(",")
        );
        let r = reply_to_line(batch.as_bytes(), &mut EventLog::silent());
        assert_eq!(r[0].as_array().map(Vec::len), Some(MAX_BATCH));
    }

    #[test]
    fn an_endless_line_is_answered_once_and_skipped_with_bounded_memory() {
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    let line = b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
                    let k = line.len().min(buf.len());
                    buf[..k].copy_from_slice(&line[..k]);
                    self.0 = usize::MAX;
                    return Ok(k);
                }
                if self.0 == usize::MAX {
                    return Ok(0);
                }
                let k = buf.len().min(self.0);
                buf[..k].fill(b'x');
                self.0 -= k;
                Ok(k)
            }
        }
        let mut out = Vec::new();
        let end = serve(
            &ServeSettings::default(),
            Endless(3 * MAX_LINE + 17),
            &mut out,
        )
        .unwrap();
        assert_eq!(end, End::Eof);
        let replies: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert_eq!(replies[0]["error"]["code"], INVALID_REQUEST);
        assert_eq!(replies[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    }
}
