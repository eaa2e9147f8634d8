//! A loopback stand-in for the model APIs agent clients call, so a real client (Claude Code,
//! Codex CLI, Gemini CLI, Qwen Code, opencode, Cline) can be measured offline, with no key and
//! no cost. `probe model` runs it in the foreground; `probe bracket` starts one per run.
//!
//! It holds no command line and judges nothing: it serves, and logs what the client handed back.
//!
//! It plays a model that does one thing (`turn`): asked to run, it calls the `emit` tool with
//! the n named in the prompt (`n=50000`), through the client's tool search where the client
//! defers its tools; handed the tool's result, it logs exactly what the client passed back and
//! ends the turn. What the client passed back is the measurement: the full text (inline), a
//! note that the text was saved to a file, or a cut.
//!
//! The parts: `http` is the transport (connections, routing to an API shape by method and path,
//! replies and streams), `request` reads one request within bounds and `json` reads its body
//! as the JavaScript clients write JSON (lone surrogates and all). Each API shape is a
//! module implementing `http::Api`, all served at once: `messages` (Anthropic Messages),
//! `responses` (OpenAI Responses), `chat` (OpenAI Chat Completions), `gemini` (Gemini
//! `generateContent`). `turn` decides what the model says, whatever the shape; `tokens` counts
//! text and holds the usage numbers every shape reports; `events` is what the stand-in logs
//! ([`ModelEvent`]). This module holds the dialects ([`Api`]), the settings and the stand-in's
//! life: start, serve, stop.

mod chat;
mod events;
mod gemini;
mod http;
mod json;
mod messages;
mod request;
mod responses;
mod tokens;
mod turn;

pub use events::{ContentKind, ModelEvent};
pub use tokens::tokens_for;
pub use turn::emit_inputs;
pub use turn::text_of;
pub use turn::MAX_CALLS;

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use mcp::events::EventLog;

/// What `model` takes.
#[derive(Debug, Clone, Default)]
pub struct ModelSettings {
    /// 0 picks a free port.
    pub port: u16,
    /// What `count_tokens` answers; `None` estimates one token per four UTF-16 units of text.
    pub count_tokens: Option<u64>,
    /// The `input_tokens` every answer's usage reports; `None` estimates them from the
    /// request's text as `count_tokens` does (at least 1).
    pub input_tokens: Option<u64>,
    /// The `output_tokens` every answer's usage reports; `None` is 5.
    pub output_tokens: Option<u64>,
    /// JSON lines, one per event.
    pub log: Option<PathBuf>,
    /// Keep events in memory for [`StandIn::take_model_events`] (an in-process driver reads
    /// them).
    pub keep_events: bool,
    /// The dialects served; empty serves every one (a dialect left out answers 404, so a
    /// client set up for another API shows as `not_found` in the log).
    pub apis: Vec<Api>,
}

/// The model API a client calls, which the stand-in answers in that shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    Chat,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
}

impl Api {
    /// Every dialect, in the order `--api` lists them.
    pub const ALL: [Api; 4] = [Api::Anthropic, Api::Responses, Api::Chat, Api::Gemini];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Api::Anthropic => "anthropic",
            Api::Responses => "responses",
            Api::Chat => "chat",
            Api::Gemini => "gemini",
        }
    }

    /// The clients that speak it, for `--help`.
    pub fn speakers(self) -> &'static str {
        match self {
            Api::Anthropic => "Claude Code",
            Api::Responses => "Codex CLI",
            Api::Chat => "Qwen Code, opencode, Cline, Continue, Copilot CLI",
            Api::Gemini => "Gemini CLI",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Api {
    type Err = String;

    fn from_str(s: &str) -> Result<Api, String> {
        Api::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("no API named {s:?}"))
    }
}

/// What every connection thread shares: the settings and where events go.
pub(crate) struct Shared {
    pub settings: ModelSettings,
    log: EventLog,
    kept: Mutex<Vec<ModelEvent>>,
}

use files::sync::lock;

impl Shared {
    /// Logs `event` (and keeps it, with `keep_events`).
    pub fn record(&self, event: ModelEvent) {
        self.log.record(&event);
        if self.settings.keep_events {
            lock(&self.kept).push(event);
        }
    }
}

/// The API shapes served (`chosen`, or every one when it is empty), in the order they are asked
/// to claim a request (their paths do not overlap, so the order only matters for speed).
fn apis(chosen: &[Api]) -> Vec<Box<dyn http::Handler>> {
    let all: [(Api, Box<dyn http::Handler>); 4] = [
        (Api::Anthropic, Box::new(messages::Messages)),
        (Api::Responses, Box::new(responses::Responses)),
        (Api::Chat, Box::new(chat::Chat)),
        (Api::Gemini, Box::new(gemini::Gemini)),
    ];
    all.into_iter()
        .filter(|(shape, _)| chosen.is_empty() || chosen.contains(shape))
        .map(|(_, api)| api)
        .collect()
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
        let log = EventLog::open(settings.log.as_deref())?;
        let shared = Arc::new(Shared {
            settings,
            log,
            kept: Mutex::new(Vec::new()),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (shared.clone(), stop.clone());
        let apis = Arc::new(apis(&shared.settings.apis));
        thread::spawn(move || http::serve(listener, s, apis, st));
        shared.record(ModelEvent::Listening { port });
        Ok(StandIn { port, shared, stop })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The events recorded since the last call (only with `keep_events`).
    pub fn take_model_events(&self) -> Vec<ModelEvent> {
        std::mem::take(&mut *lock(&self.shared.kept))
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
    }
}

impl StandIn {
    /// Stops the stand-in: its log closed first (waiting for a line being written), so no
    /// connection thread is halfway through a line when the process exits; then the accept loop
    /// stopped and the port freed.
    pub fn stop(self) {
        self.shared.log.close();
        drop(self);
    }
}
