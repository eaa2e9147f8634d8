//! The server's event log: what `probe serve` did, one JSON line per event, typed both ways.
//!
//! The driver judges a point from this log (which n was called, with which nonce, and whether
//! the text carried markers), so the events are one enum that the server writes and the driver
//! reads back: a renamed field is a compile error, not a verdict that quietly stops matching.
//! Each line is the event's fields (keys in sorted order, as before the enum existed) with
//! `time` added.

use crate::emit::Fill;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io;
use std::path::Path;

/// One thing the server did, as its log line records it (`{"event": "call", "n": ..., ...}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The server is up and reading.
    Start {
        pid: u32,
    },
    /// The client closed the server's input.
    Eof {},
    /// SIGINT or SIGTERM ended the session.
    Interrupted {},
    /// A line over the bound; its rest was skipped.
    LineTooLong {
        max: usize,
    },
    /// A line that is not JSON.
    ParseError {
        error: String,
    },
    /// A message that is not a valid request (or a batch over the bound).
    Invalid {
        error: String,
    },
    Notification {
        method: String,
    },
    /// A response from the client, which is never answered.
    Response {
        id: Value,
    },
    UnknownMethod {
        method: String,
    },
    /// `initialize`: the version the client asked for, the one answered, and its `clientInfo`.
    Initialize {
        asked: String,
        answered: String,
        client: Value,
    },
    UnknownTool {
        tool: String,
    },
    /// `emit` refused its arguments (a tool error, `isError: true`).
    Refused {
        arguments: Option<Value>,
        error: String,
    },
    /// `emit` answered: what it sent, and whether the text carried its markers.
    Call(LoggedCall),
}

/// One `emit` call as the log records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedCall {
    pub n: u64,
    pub fill: Fill,
    pub blocks: u64,
    pub nonce: String,
    pub units: u64,
    pub bytes: u64,
    pub start_marker: bool,
    pub end_marker: bool,
}

/// Where the server's events go: a human line to stderr, and a stamped JSON line to the log
/// file through the one JSON-lines writer ([`crate::events::EventLog`]).
pub struct EventLog {
    file: crate::events::EventLog,
    stderr: bool,
}

impl EventLog {
    /// Appends to `path` when given; always writes the summaries to stderr.
    pub fn open(path: Option<&Path>) -> io::Result<EventLog> {
        Ok(EventLog {
            file: crate::events::EventLog::open(path)?,
            stderr: true,
        })
    }

    /// A log that records nothing (for driving the server's handlers directly).
    #[cfg(test)]
    pub fn silent() -> EventLog {
        EventLog {
            file: crate::events::EventLog::default(),
            stderr: false,
        }
    }

    /// Records `event`, with `summary` as its line on stderr.
    pub fn record(&mut self, summary: &str, event: &impl Serialize) {
        if self.stderr {
            // The summary quotes the client (method names, reasons): escaped, so it cannot
            // forge a line or drive the terminal; and a closed stderr is not worth a panic. A
            // stdio MCP server's stderr is its diagnostic channel (stdout is the protocol's).
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr().lock(),
                "probe serve: {}",
                files::escape::text(summary)
            );
        }
        self.file.record(event);
    }
}

/// Every event a server log holds, in order; a missing log, or a line that is not an event
/// (cut short by a kill), reads as nothing.
pub fn read_events(log: &Path) -> Vec<Event> {
    crate::events::read_events(log)
}

/// Every `emit` call a server log records, in order.
pub fn read_calls(log: &Path) -> Vec<LoggedCall> {
    read_events(log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Call(call) => Some(call),
            _ => None,
        })
        .collect()
}

/// The `clientInfo` the client sent in `initialize`, if it sent one.
pub fn client_info(log: &Path) -> Option<Value> {
    read_events(log).into_iter().find_map(|e| match e {
        Event::Initialize { client, .. } if !client.is_null() => Some(client),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_written_as_the_hand_built_lines_were_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.log");
        let mut log = EventLog::open(Some(&path)).unwrap();
        log.stderr = false;
        let call = LoggedCall {
            n: 5,
            fill: Fill::Ascii,
            blocks: 1,
            nonce: "abc".into(),
            units: 5,
            bytes: 5,
            start_marker: false,
            end_marker: false,
        };
        log.record("", &Event::Eof {});
        log.record("", &Event::Call(call.clone()));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with(r#"{"event":"eof","time":""#),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with(
                r#"{"blocks":1,"bytes":5,"end_marker":false,"event":"call","fill":"ascii","n":5,"nonce":"abc","start_marker":false,"time":"#
            ),
            "{}",
            lines[1]
        );
        assert_eq!(read_calls(&path), vec![call]);
        assert_eq!(read_events(&path)[0], Event::Eof {});
    }
}
