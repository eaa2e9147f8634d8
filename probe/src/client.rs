//! `probe call`: a minimal stdio MCP client that calls one tool and sizes the reply.
//!
//! Sizes are given every way a limit counts: JavaScript clients compare UTF-16 units
//! (`.length`), a Rust or Go client may count chars or bytes, some limit lines, some tokens (an
//! estimate, one per four units, as the clients make before asking a counter), and the transport
//! carries the JSON as sent (escapes and all), which is larger than the text it holds. A cap is
//! judged in the unit it names.
//!
//! The server runs through the runner's piped mode: its own process group, the run tag, a
//! timeout and the interrupt check, and the group and its strays killed when the call is done,
//! so a server that forks helpers (or daemonizes them) leaves nothing behind.

use crate::units::Measure;
use crate::Failure;
use cmdline::Exit;
use mcp::protocol::{self, Incoming};
use report::lines::LineEnd;
use runner::scratch::ScratchDir;
use runner::stop::PreconditionFailed;
use runner::{Job, Piped, Program};
use serde::Serialize;
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::ChildStdin;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// What `call` takes.
#[derive(Debug, Clone)]
pub(crate) struct CallSettings {
    pub tool: String,
    pub arguments: Value,
    pub cap: Option<Cap>,
    pub timeout: Duration,
    pub json: bool,
    pub server: Vec<String>,
    /// Who the client says it is in `initialize` (MCP's `clientInfo`).
    pub client_info: Implementation,
}

/// A cap on a reply's text: n in a unit a client counts (tokens estimated, one per four units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    pub n: u64,
    pub unit: Measure,
}

/// A name and version, as MCP's `clientInfo` and `serverInfo` carry them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Implementation {
    pub name: String,
    pub version: String,
}

impl Default for Implementation {
    /// probe itself.
    fn default() -> Implementation {
        Implementation {
            name: "probe".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The size of a piece of text, counted every way a client counts a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Size {
    /// UTF-16 code units: JavaScript's `.length`.
    pub units: u64,
    /// Unicode scalar values (code points).
    pub chars: u64,
    /// UTF-8 bytes.
    pub bytes: u64,
    /// Lines (a last line without a newline counts).
    pub lines: u64,
    /// Tokens, estimated as the clients estimate before asking a counter: one per four units.
    pub tokens: u64,
}

impl Size {
    pub(crate) fn of(text: &str) -> Size {
        Size {
            units: Measure::Utf16.measure(text),
            chars: Measure::Codepoints.measure(text),
            bytes: Measure::Bytes.measure(text),
            lines: Measure::Lines.measure(text),
            tokens: Measure::Tokens.measure(text),
        }
    }

    /// The size in one measure.
    pub(crate) fn get(&self, m: Measure) -> u64 {
        match m {
            Measure::Utf16 => self.units,
            Measure::Codepoints => self.chars,
            Measure::Bytes => self.bytes,
            Measure::Lines => self.lines,
            Measure::Tokens => self.tokens,
        }
    }
}

/// What one call found.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CallReport {
    pub server: Vec<String>,
    pub protocol_version: String,
    pub server_info: Value,
    pub tool: String,
    pub arguments: Value,
    pub is_error: bool,
    /// Text blocks in the result.
    pub blocks: usize,
    /// The result's text, all blocks together.
    pub text: Size,
    /// The whole JSON-RPC reply line, exactly as the server sent it (without the newline).
    pub reply_as_sent: Size,
    /// The same reply re-serialized compactly (differs when the server pretty-prints or escapes
    /// more than it must).
    pub reply_compact: Size,
    /// From sending `tools/call` to reading its reply.
    pub call_secs: f64,
    /// From starting the server to reading the reply.
    pub total_secs: f64,
    /// The cap, in `cap_unit`.
    pub cap: Option<u64>,
    /// The unit the cap counts in (`utf16` unless `--cap` named another).
    pub cap_unit: Option<Measure>,
    /// Whether the text fits under the cap, measured in its unit (`None` without one, or when
    /// the tool refused the call: its error text is no result).
    pub fits: Option<bool>,
    pub started: report::Timestamp,
    /// The text blocks themselves (not in the JSON report, which gives their sizes).
    #[serde(skip)]
    pub texts: Vec<String>,
}

/// The longest reply line read from a server (64 MiB, what `probe serve`'s largest reply needs
/// with every astral pair escaped, and the body `probe model` takes): a longer one is an error,
/// and what it held so far is dropped.
pub(crate) const MAX_REPLY_LINE: usize = 64 * 1024 * 1024;

/// How many lines the reader thread reads ahead of the session: one, so what probe holds of a
/// server's output is a few lines of at most [`MAX_REPLY_LINE`] each, however fast it writes.
const LINES_AHEAD: usize = 1;

/// A line the reader thread read from the server.
enum Line {
    /// A line (its newline included when it had one).
    Whole(Vec<u8>),
    /// A line past [`MAX_REPLY_LINE`]: the reader stopped there.
    TooLong,
}

/// A running server and the lines it writes, read on a thread so a silent server can time out.
struct Session {
    server: Piped,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    next_id: u64,
    deadline: Instant,
    /// Holds the server's stderr log; removed with the session.
    _scratch: ScratchDir,
}

/// How much longer than the call's own timeout the runner gives the server: the session's
/// deadline comes first and names what went unanswered; the runner's is the backstop that ends
/// the server's group even if the session were stuck.
const RUNNER_SLACK: Duration = Duration::from_secs(5);

impl Session {
    fn start(argv: &[String], timeout: Duration) -> anyhow::Result<Session> {
        let starting = |e: std::io::Error| {
            PreconditionFailed::new(format!("starting server {:?}: {e}", argv[0]))
        };
        let scratch = ScratchDir::new("mcp-server").map_err(starting)?;
        // The server's stderr (its log lines) goes to our stderr as it did when inherited,
        // through the log the runner keeps of it.
        let job = Job::new(
            Program::Argv(argv.to_vec()),
            std::env::current_dir().unwrap_or_else(|_| ".".into()),
            scratch.path().join("stderr.log"),
        )
        .timeout(timeout + RUNNER_SLACK)
        .grace(Duration::from_millis(500))
        .echo(true);
        let mut server = runner::start_piped(&job).map_err(starting)?;
        let stdout = server.take_stdout().expect("piped stdout");
        // Bounded: a server that writes lines faster than they are read waits for the reader
        // instead of filling memory.
        let (tx, rx) = mpsc::sync_channel(LINES_AHEAD);
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                // Bounded while it is read: a server that never ends its line is stopped at
                // MAX_REPLY_LINE, not held until memory runs out.
                let end =
                    report::lines::read_bounded(&mut reader, &mut line, MAX_REPLY_LINE, || false);
                let message = match end {
                    Ok(LineEnd::Line | LineEnd::Partial) => Line::Whole(line),
                    Ok(LineEnd::TooLong) => Line::TooLong,
                    Ok(LineEnd::Eof | LineEnd::Stopped) | Err(_) => return,
                };
                let last = matches!(message, Line::TooLong);
                if tx.send(message).is_err() || last {
                    return;
                }
            }
        });
        Ok(Session {
            stdin: server.take_stdin(),
            server,
            lines: rx,
            next_id: 1,
            deadline: Instant::now() + timeout,
            _scratch: scratch,
        })
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin open until finish");
        stdin
            .write_all(&protocol::to_line(message))
            .and_then(|()| stdin.flush())
            .map_err(|e| PreconditionFailed::new(format!("writing to the server: {e}")).into())
    }

    /// Sends a request and waits for its response; returns the raw line and the result.
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<(Vec<u8>, Value)> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&protocol::request(id, method, params))?;
        loop {
            // SIGINT or SIGTERM needs no look here: the runner's watcher stops the server's
            // group and every descendant on it, which closes this pipe (Disconnected below),
            // and run_tool makes any error after an interrupt the exit 130 it is.
            // Checked before every line, not only while waiting: a server that writes lines
            // without end (blank, notifications) never answers, and must not outlast the
            // timeout by keeping the queue full.
            let left = self.deadline.saturating_duration_since(Instant::now());
            let timed_out = || {
                Err(
                    PreconditionFailed::new(format!("no answer to {method} before the timeout"))
                        .into(),
                )
            };
            if left.is_zero() {
                return timed_out();
            }
            let line = match self.lines.recv_timeout(left) {
                Ok(Line::Whole(line)) => line,
                Ok(Line::TooLong) => {
                    return Err(PreconditionFailed::new(format!(
                        "the server's reply to {method} is a line over {} MiB; probe reads no \
                         more of it",
                        MAX_REPLY_LINE >> 20
                    ))
                    .into())
                }
                Err(RecvTimeoutError::Timeout) => return timed_out(),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PreconditionFailed::new(format!(
                        "the server closed its output before answering {method}"
                    ))
                    .into())
                }
            };
            let trimmed = line.strip_suffix(b"\n").unwrap_or(&line);
            let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed).to_vec();
            if trimmed.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let messages = protocol::parse_line(&trimmed).map_err(|e| {
                PreconditionFailed::new(format!(
                    "the server wrote a line that is not JSON ({e}): {}",
                    String::from_utf8_lossy(&trimmed[..trimmed.len().min(120)])
                ))
            })?;
            for message in messages.messages {
                match message {
                    Incoming::Response { id: rid, result } if rid == json!(id) => {
                        return match result {
                            Ok(value) => Ok((trimmed, value)),
                            Err(error) => {
                                Err(Failure::Usage(format!("{method} failed: {error}")).into())
                            }
                        };
                    }
                    // A server may ask us things (ping, roots/list): answer so it is not left
                    // waiting, with nothing more than the protocol requires.
                    Incoming::Request {
                        id: rid, method: m, ..
                    } => {
                        let reply = if m == "ping" {
                            protocol::result(&rid, json!({}))
                        } else {
                            protocol::error(
                                &rid,
                                protocol::METHOD_NOT_FOUND,
                                &format!("method not found: {m}"),
                            )
                        };
                        self.send(&reply)?;
                    }
                    _ => {}
                }
            }
        }
    }

    /// Closes the server's input (its cue to exit), gives it `linger` to go, and then ends its
    /// whole group and every process it left, through the runner.
    fn finish(mut self, linger: Duration) {
        drop(self.stdin.take());
        self.server.finish(linger);
    }
}

/// Starts the server, initializes, lists tools and calls the one asked for.
pub(crate) fn call(settings: &CallSettings) -> anyhow::Result<CallReport> {
    let started = report::Timestamp::now();
    let t0 = Instant::now();
    let mut session = Session::start(&settings.server, settings.timeout)?;
    let outcome = (|| {
        let (_, init) = session.request(
            "initialize",
            json!({
                "protocolVersion": mcp::server::PROTOCOL_VERSIONS[mcp::server::PROTOCOL_VERSIONS.len() - 1],
                "capabilities": {},
                "clientInfo": settings.client_info,
            }),
        )?;
        session.send(&protocol::notification("notifications/initialized"))?;
        let (_, list) = session.request("tools/list", json!({}))?;
        let names: Vec<&str> = list["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        if !names.contains(&settings.tool.as_str()) {
            return Err(PreconditionFailed::new(format!(
                "the server has no tool {:?} (it lists: {})",
                settings.tool,
                names.join(", ")
            ))
            .into());
        }
        let t_call = Instant::now();
        let (raw, result) = session.request(
            "tools/call",
            json!({"name": settings.tool, "arguments": settings.arguments}),
        )?;
        let call_secs = t_call.elapsed().as_secs_f64();
        let total_secs = t0.elapsed().as_secs_f64();
        let texts: Vec<&str> = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect();
        // Sized as the client sees it: the blocks one after another (a line that runs over a
        // block boundary is one line, and tokens are estimated on the whole).
        let text = Size::of(&texts.concat());
        let raw_text = String::from_utf8_lossy(&raw);
        let compact = serde_json::from_slice::<Value>(&raw)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| raw_text.to_string());
        let is_error = result["isError"] == json!(true);
        Ok(CallReport {
            server: settings.server.clone(),
            protocol_version: init["protocolVersion"].as_str().unwrap_or("").to_string(),
            server_info: init["serverInfo"].clone(),
            tool: settings.tool.clone(),
            arguments: settings.arguments.clone(),
            is_error,
            blocks: texts.len(),
            text,
            reply_as_sent: Size::of(&raw_text),
            reply_compact: Size::of(&compact),
            call_secs,
            total_secs,
            cap: settings.cap.map(|c| c.n),
            cap_unit: settings.cap.map(|c| c.unit),
            // A refusal's text is an error message, not the tool's result: no size of a result
            // was measured, so the cap is not judged.
            fits: settings
                .cap
                .filter(|_| !is_error)
                .map(|c| text.get(c.unit) <= c.n),
            started,
            texts: texts.iter().map(|t| t.to_string()).collect(),
        })
    })();
    // A server that answered gets two seconds to exit on its own; one that did not (a
    // timeout, a line too long, an interrupt) is ended now, so the call ends on time.
    session.finish(if outcome.is_ok() {
        Duration::from_secs(2)
    } else {
        Duration::ZERO
    });
    outcome
}

/// The report as text, for a person.
pub(crate) fn render(r: &CallReport) -> String {
    // The server's name, version and protocol come from the server: escaped, so they cannot
    // forge a line (`cap: fits ...`) or reach the terminal raw.
    let esc = |s: &str| files::escape::text(s).into_owned();
    let name = esc(r.server_info["name"].as_str().unwrap_or("?"));
    let version = esc(r.server_info["version"].as_str().unwrap_or("?"));
    let mut out = format!(
        "server: {} ({name} {version}, protocol {})\ntool: {} {}\n",
        esc(&r.server.join(" ")),
        esc(&r.protocol_version),
        esc(&r.tool),
        r.arguments
    );
    if r.is_error {
        out.push_str("result: isError (the tool refused the call)\n");
    }
    out.push_str(&format!(
        "text: {} UTF-16 units, {} chars, {} bytes, {} line{}, ~{} tokens in {} block{}\n",
        r.text.units,
        r.text.chars,
        r.text.bytes,
        r.text.lines,
        if r.text.lines == 1 { "" } else { "s" },
        r.text.tokens,
        r.blocks,
        if r.blocks == 1 { "" } else { "s" }
    ));
    out.push_str(&format!(
        "reply JSON: {} bytes / {} units as sent, {} bytes / {} units compact\n",
        r.reply_as_sent.bytes, r.reply_as_sent.units, r.reply_compact.bytes, r.reply_compact.units
    ));
    out.push_str(&format!(
        "time: {:.3}s for the call, {:.3}s in all\n",
        r.call_secs, r.total_secs
    ));
    if r.is_error && r.cap.is_some() {
        out.push_str("cap: not judged, the tool refused the call (isError): its text is an error, not a result\n");
    }
    if let (Some(cap), Some(unit), Some(fits)) = (r.cap, r.cap_unit, r.fits) {
        let size = r.text.get(unit);
        let words = unit.words();
        if fits {
            out.push_str(&format!(
                "cap: fits, {size} {words} under the cap of {cap} ({} to spare)\n",
                cap - size
            ));
        } else {
            out.push_str(&format!(
                "cap: OVER, {size} {words} is {} over the cap of {cap}\n",
                size - cap
            ));
        }
    }
    // A long server command (or tool argument) keeps within the width a report keeps to.
    report::fit::lines(&out)
}

/// `probe call`: 0 when the reply fits (or no cap), 1 when it is over the cap, 4 when a cap was
/// given and the tool refused the call (nothing was measured against it).
pub(crate) fn run_call(settings: &CallSettings) -> anyhow::Result<Exit> {
    let report = call(settings)?;
    let text = if settings.json {
        format!("{}\n", serde_json::to_string_pretty(&report)?)
    } else {
        render(&report)
    };
    crate::print_out(&text)?;
    if report.is_error && report.cap.is_some() {
        return Ok(Exit::Precondition);
    }
    Ok(Exit::from_held(report.fits != Some(false)))
}
