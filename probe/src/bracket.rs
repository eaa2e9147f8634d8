//! `probe bracket`: runs a client once per n and finds where its tool results stop coming back
//! inline.
//!
//! Each run is judged from two sides: what the server sent (its log names n and the nonce in the
//! markers) and what the client handed on (its output, or for the Claude preset what the model
//! stand-in received). Only the end marker with that very nonce proves a full delivery; a spill
//! message ("Output has been saved to", ...) proves a save; a start marker without the end marker
//! is a cut. Every client run goes through `report::runner`: its own process group, a timeout,
//! and strays killed, so a hung client is an `error (hang)`, never a verdict.

use crate::emit::{end_marker, start_marker, Fill};
use crate::model::{text_of, ModelSettings, StandIn};
use crate::server::{read_calls, LoggedCall};
use crate::Failure;
use anyhow::Context;
use regex::Regex;
use report::markdown::{self, code};
use report::runner::{self, Job, Outcome, Program, RunRecord};
use report::text::clip;
use report::text::shell_quote;
use report::{ColorChoice, Exit, Format, Painter, Table, Timestamp};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a client is: the Claude Code preset, or a shell command with `{n}` and `{mcp_config}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Client {
    Claude {
        bin: PathBuf,
        count_tokens: Option<u64>,
    },
    Command(String),
}

/// How a client is run and judged, shared by `bracket` and `check`.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    pub client: Client,
    pub fill: Fill,
    /// Regexes that mark a reply as saved; empty means [`DEFAULT_SPILL_PATTERNS`].
    pub spill_patterns: Vec<String>,
    pub timeout: Duration,
    pub out: PathBuf,
    pub json: bool,
    /// What to print on stdout (`json` true means [`Format::Json`]); the files are the same.
    pub format: Format,
    /// Colour for the verdict words printed on stdout (never in files).
    pub color: ColorChoice,
}

impl ClientSettings {
    /// The format to print in, `--json` included.
    pub fn output_format(&self) -> Format {
        self.format.with_json_flag(self.json)
    }
}

/// Which n to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Points(Vec<u64>),
    /// LO is expected inline and HI not; halve the gap until it is one.
    Bisect {
        lo: u64,
        hi: u64,
    },
}

/// What `bracket` takes.
#[derive(Debug, Clone)]
pub struct BracketSettings {
    pub client: ClientSettings,
    pub plan: Plan,
}

/// The messages Claude Code substitutes for a result it saved to a file (SPEC.md), as regexes.
pub const DEFAULT_SPILL_PATTERNS: [&str; 3] = [
    "exceeds maximum allowed tokens",
    "Output has been saved to",
    "persisted-output",
];

/// What happened to one point's tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// The end marker (with the logged nonce) came back: the whole text was passed on.
    #[serde(rename = "inline")]
    Inline,
    /// A spill message came back instead of the text.
    #[serde(rename = "saved")]
    Saved,
    /// The text came back cut: start marker, no end marker, no spill message.
    #[serde(rename = "truncated")]
    Truncated,
    /// The client ran to the end without calling the tool.
    #[serde(rename = "not called")]
    NotCalled,
    /// The run failed, hung, or could not start: no judgment.
    #[serde(rename = "error")]
    Error,
}

impl Verdict {
    /// Saved or truncated: the result did not come back whole.
    pub fn is_over(self) -> bool {
        matches!(self, Verdict::Saved | Verdict::Truncated)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Inline => "inline",
            Verdict::Saved => "saved",
            Verdict::Truncated => "truncated",
            Verdict::NotCalled => "not called",
            Verdict::Error => "error",
        })
    }
}

/// One run of the client at one n.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub n: u64,
    pub verdict: Verdict,
    /// What the client substituted or why the run failed (first 300 characters).
    pub message: Option<String>,
    /// UTF-16 units of what the client handed on (the stand-in's view; Claude preset only).
    pub received_units: Option<u64>,
    /// How many times the client asked the token counter (Claude preset only).
    pub count_tokens_calls: Option<u64>,
    pub nonce: Option<String>,
    pub status: String,
    pub duration_secs: f64,
    pub strays_killed: u32,
    pub start: Timestamp,
    pub dir: PathBuf,
}

/// Where the results put the threshold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Threshold {
    /// The largest n that came back inline, below every n that did not.
    pub last_inline: Option<u64>,
    /// The smallest n that came back saved or truncated.
    pub first_over: Option<u64>,
    /// How that first n came back.
    pub over_verdict: Option<Verdict>,
    /// `first_over == last_inline + 1`: the threshold is pinned to one unit.
    pub exact: bool,
    /// No inline point lies above an over point.
    pub monotone: bool,
    /// "inline up to 50000, saved from 50001".
    pub text: String,
}

/// Reads the threshold off a set of points.
pub fn threshold(points: &[Point]) -> Threshold {
    let mut sorted: Vec<&Point> = points.iter().collect();
    sorted.sort_by_key(|p| p.n);
    let first = sorted.iter().find(|p| p.verdict.is_over());
    let first_over = first.map(|p| p.n);
    let last_inline = sorted
        .iter()
        .filter(|p| p.verdict == Verdict::Inline && first_over.map_or(true, |f| p.n < f))
        .map(|p| p.n)
        .max();
    let monotone = !sorted
        .iter()
        .any(|p| p.verdict == Verdict::Inline && first_over.is_some_and(|f| p.n > f));
    let over_verdict = first.map(|p| p.verdict);
    let mut text = match (last_inline, first_over, over_verdict) {
        (Some(li), Some(fo), Some(v)) => format!("inline up to {li}, {v} from {fo}"),
        (Some(li), None, _) => format!("inline up to {li}; no limit found"),
        (None, Some(fo), Some(v)) => format!("{v} from {fo}; nothing came back inline"),
        _ => "no threshold: no point came back inline, saved or truncated".to_string(),
    };
    if !monotone {
        text.push_str(" (not monotone: a larger n came back inline)");
    }
    Threshold {
        last_inline,
        first_over,
        over_verdict,
        exact: matches!((last_inline, first_over), (Some(li), Some(fo)) if fo == li + 1),
        monotone,
        text,
    }
}

/// What is known about the client being measured.
#[derive(Debug, Clone, Serialize)]
pub struct ClientInfo {
    /// `claude` or `command`.
    pub kind: String,
    pub command: String,
    /// What `claude --version` printed (Claude preset).
    pub version: Option<String>,
    /// The `clientInfo` the client sent in MCP `initialize` (name and version).
    pub mcp_client: Option<Value>,
}

/// Runs points against one client and keeps what each found.
pub struct Driver {
    /// One run per --out: held until the driver is dropped (or the process ends).
    _lock: report::lock::OutLock,
    settings: ClientSettings,
    spill: Vec<Regex>,
    probe_exe: PathBuf,
    stand_in: Option<StandIn>,
    pub info: ClientInfo,
    pub points: Vec<Point>,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver").field("info", &self.info).finish()
    }
}

/// The run was interrupted (SIGINT/SIGTERM); what was finished is kept.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

impl Driver {
    /// Prepares the output folder, the stand-in (Claude preset) and the client's version.
    pub fn new(settings: &ClientSettings) -> anyhow::Result<Driver> {
        let patterns: Vec<String> = if settings.spill_patterns.is_empty() {
            DEFAULT_SPILL_PATTERNS
                .iter()
                .map(|p| regex::escape(p))
                .collect()
        } else {
            settings.spill_patterns.clone()
        };
        let spill = patterns
            .iter()
            .map(|p| Regex::new(p).map_err(|e| Failure::Usage(format!("spill pattern {p:?}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        // Before anything is written there: a second run on the same folder would interleave
        // its points with ours and rewrite our results.
        let lock = report::lock::OutLock::acquire(&settings.out).map_err(|e| match e {
            busy @ report::lock::LockError::Busy { .. } => {
                anyhow::Error::from(Failure::Usage(busy.to_string()))
            }
            other => anyhow::Error::from(other),
        })?;
        fs::create_dir_all(settings.out.join("points"))
            .with_context(|| format!("creating {}", settings.out.display()))?;
        let out = settings.out.canonicalize()?;
        let probe_exe = self_exe().context("finding the probe binary")?;
        let mut driver = Driver {
            _lock: lock,
            settings: ClientSettings {
                out,
                spill_patterns: patterns,
                ..settings.clone()
            },
            spill,
            probe_exe,
            stand_in: None,
            info: ClientInfo {
                kind: "command".into(),
                command: String::new(),
                version: None,
                mcp_client: None,
            },
            points: Vec::new(),
        };
        match &settings.client {
            Client::Command(cmd) => driver.info.command = cmd.clone(),
            Client::Claude { bin, count_tokens } => {
                driver.info.kind = "claude".into();
                driver.info.command = bin.display().to_string();
                driver.info.version = Some(driver.claude_version(bin)?);
                driver.stand_in = Some(StandIn::start(ModelSettings {
                    port: 0,
                    count_tokens: *count_tokens,
                    log: Some(driver.settings.out.join("model.log")),
                    keep_events: true,
                    ..ModelSettings::default()
                })?);
            }
        }
        Ok(driver)
    }

    pub fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    fn claude_version(&self, bin: &Path) -> anyhow::Result<String> {
        let log = self.settings.out.join("claude-version.log");
        let job = Job::new(
            Program::Argv(vec![bin.display().to_string(), "--version".into()]),
            &self.settings.out,
            &log,
        )
        .timeout(Duration::from_secs(60));
        let record = runner::run(&job)?;
        let text = fs::read_to_string(&log).unwrap_or_default();
        if record.outcome() != Outcome::Passed {
            return Err(Failure::Precondition(format!(
                "`{} --version` did not run ({}); install Claude Code with scripts/install-claude.sh \
                 or name the binary with --claude-bin",
                bin.display(),
                record.status_text()
            ))
            .into());
        }
        Ok(text.lines().next().unwrap_or("").trim().to_string())
    }

    /// Runs the client at `n` (once per n: a repeated n returns the first result) and records it.
    pub fn run_point(&mut self, n: u64) -> anyhow::Result<Point> {
        if let Some(p) = self.points.iter().find(|p| p.n == n) {
            return Ok(p.clone());
        }
        // An interrupt between points stops before the next one starts.
        if report::interrupt::requested() {
            return Err(Interrupted.into());
        }
        let dir = self.settings.out.join("points").join(format!("n-{n}"));
        if dir.exists() {
            fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let serve_log = dir.join("serve.log");
        let config = dir.join("mcp.json");
        let config_json = json!({"mcpServers": {"probe": {
            "command": self.probe_exe.display().to_string(),
            "args": ["serve", "--log", serve_log.display().to_string()],
        }}});
        fs::write(&config, serde_json::to_string_pretty(&config_json)?)?;
        let client_log = dir.join("client.log");
        let start = Timestamp::now();
        let point = match self.settings.client.clone() {
            Client::Command(cmd) => {
                let script = substitute(&cmd, n, &config);
                let cwd = std::env::current_dir()?;
                let job = Job::shell(script, cwd, &client_log)
                    .timeout(self.settings.timeout)
                    .env("PROBE_N", n.to_string())
                    .env("PROBE_MCP_CONFIG", config.display().to_string())
                    .env("PROBE_FILL", self.settings.fill.to_string());
                let record = runner::run(&job)?;
                if record.outcome() == Outcome::Interrupted {
                    return Err(Interrupted.into());
                }
                let output = read_output(&client_log);
                let calls = calls_for(&serve_log, n);
                let (verdict, message) = judge_output(
                    &record,
                    &calls,
                    &String::from_utf8_lossy(&output),
                    &self.spill,
                );
                self.point(
                    n, verdict, message, None, None, &calls, &record, start, &dir,
                )
            }
            Client::Claude { bin, .. } => {
                let home = tempfile::Builder::new().prefix("probe-home-").tempdir()?;
                let work = home.path().join("work");
                fs::create_dir_all(&work)?;
                let stand_in = self
                    .stand_in
                    .as_ref()
                    .expect("claude preset has a stand-in");
                stand_in.take_events();
                let fill = match self.settings.fill {
                    Fill::Ascii => String::new(),
                    other => format!(" fill={other}"),
                };
                let prompt = format!(
                    "Call the mcp__probe__emit tool once with n={n}{fill}, then reply done."
                );
                let mut job = Job::new(
                    Program::Argv(vec![
                        bin.display().to_string(),
                        "-p".into(),
                        prompt,
                        "--mcp-config".into(),
                        config.display().to_string(),
                        "--strict-mcp-config".into(),
                        "--allowedTools".into(),
                        "mcp__probe__emit".into(),
                        "--output-format".into(),
                        "json".into(),
                    ]),
                    &work,
                    &client_log,
                )
                .timeout(self.settings.timeout);
                job.env_clear = true;
                job = claude_env(job, home.path(), stand_in.port());
                let record = runner::run(&job)?;
                if record.outcome() == Outcome::Interrupted {
                    return Err(Interrupted.into());
                }
                let events = stand_in.take_events();
                let calls = calls_for(&serve_log, n);
                let (verdict, message, received) =
                    judge_stand_in(&record, &calls, &events, n, &self.spill);
                let count_calls = events
                    .iter()
                    .filter(|e| e["event"] == "count_tokens")
                    .count() as u64;
                self.point(
                    n,
                    verdict,
                    message,
                    received,
                    Some(count_calls),
                    &calls,
                    &record,
                    start,
                    &dir,
                )
            }
        };
        if self.info.mcp_client.is_none() {
            self.info.mcp_client = mcp_client_info(&serve_log);
        }
        self.points.push(point.clone());
        Ok(point)
    }

    #[allow(clippy::too_many_arguments)]
    fn point(
        &self,
        n: u64,
        verdict: Verdict,
        message: Option<String>,
        received_units: Option<u64>,
        count_tokens_calls: Option<u64>,
        calls: &[LoggedCall],
        record: &RunRecord,
        start: Timestamp,
        dir: &Path,
    ) -> Point {
        Point {
            n,
            verdict,
            message: message.map(|m| clip(&m, 300)),
            received_units,
            count_tokens_calls,
            nonce: calls.last().map(|c| c.nonce.clone()),
            status: record.status_text(),
            duration_secs: record.duration_secs,
            strays_killed: record.strays_killed,
            start,
            dir: dir.to_path_buf(),
        }
    }
}

/// The environment Claude Code runs in: nothing of ours but PATH, a scratch HOME, the stand-in
/// as its API, and every kind of background traffic off, so the only connection it makes is to
/// the stand-in. `ENABLE_TOOL_SEARCH=false` keeps the MCP tool in the request's tools instead of
/// behind a search tool. MAX_MCP_OUTPUT_TOKENS passes through, since it moves the second limit.
fn claude_env(job: Job, home: &Path, port: u16) -> Job {
    let mut job = job
        .env(
            "PATH",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        )
        .env("HOME", home.display().to_string())
        .env("TERM", "dumb")
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", "probe-offline-no-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_BUG_COMMAND", "1")
        .env("ENABLE_TOOL_SEARCH", "false");
    if let Ok(v) = std::env::var("MAX_MCP_OUTPUT_TOKENS") {
        job = job.env("MAX_MCP_OUTPUT_TOKENS", v);
    }
    job
}

/// `{n}` and `{mcp_config}` filled in; the path is shell-quoted when it needs to be.
pub fn substitute(command: &str, n: u64, config: &Path) -> String {
    command
        .replace("{n}", &n.to_string())
        .replace("{mcp_config}", &shell_quote(&config.display().to_string()))
}

/// The most of a client's output that is read to judge it: the largest result `emit` makes
/// (10,000,000 astral units) is 40 MB, 60 MB with every pair JSON-escaped, so this leaves room
/// for what a client prints around it while a client that prints without end cannot exhaust
/// memory.
pub const MAX_CLIENT_OUTPUT: u64 = 256 * 1024 * 1024;

/// A client's output, at most [`MAX_CLIENT_OUTPUT`] bytes of it (a missing log reads empty).
fn read_output(log: &Path) -> Vec<u8> {
    use std::io::Read as _;
    let mut out = Vec::new();
    if let Ok(file) = fs::File::open(log) {
        let _ = file.take(MAX_CLIENT_OUTPUT).read_to_end(&mut out);
    }
    out
}

fn calls_for(serve_log: &Path, n: u64) -> Vec<LoggedCall> {
    read_calls(serve_log)
        .into_iter()
        .filter(|c| c.n == n)
        .collect()
}

fn mcp_client_info(serve_log: &Path) -> Option<Value> {
    let text = fs::read_to_string(serve_log).ok()?;
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "initialize")
        .map(|v| v["client"].clone())
        .filter(|c| !c.is_null())
}

/// Why a run gives no verdict at all, if it does not.
fn failed_run(record: &RunRecord) -> Option<String> {
    match record.outcome() {
        Outcome::Hang => Some(format!(
            "hang: killed after the timeout ({:.0}s)",
            record.duration_secs
        )),
        Outcome::CouldNotStart => Some(format!("could not start: {}", record.status_text())),
        _ => None,
    }
}

/// The line of `text` where a spill pattern matches, if one does.
fn spill_line(text: &str, spill: &[Regex]) -> Option<String> {
    spill.iter().find_map(|re| {
        re.find(text).map(|m| {
            let begin = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
            let end = text[m.end()..]
                .find('\n')
                .map_or(text.len(), |i| m.end() + i);
            text[begin..end].trim().to_string()
        })
    })
}

/// Judges a command client from the server's log and the client's output.
pub fn judge_output(
    record: &RunRecord,
    calls: &[LoggedCall],
    output: &str,
    spill: &[Regex],
) -> (Verdict, Option<String>) {
    if let Some(why) = failed_run(record) {
        return (Verdict::Error, Some(why));
    }
    let Some(call) = calls.last() else {
        return if record.outcome() == Outcome::Passed {
            (Verdict::NotCalled, None)
        } else {
            (
                Verdict::Error,
                Some(format!("{} without calling the tool", record.status_text())),
            )
        };
    };
    judge_text(call, output, record, spill)
}

fn judge_text(
    call: &LoggedCall,
    text: &str,
    record: &RunRecord,
    spill: &[Regex],
) -> (Verdict, Option<String>) {
    if call.end_marker && text.contains(&end_marker(call.n, &call.nonce)) {
        return (Verdict::Inline, None);
    }
    if let Some(line) = spill_line(text, spill) {
        return (Verdict::Saved, Some(line));
    }
    if !call.end_marker {
        // Too small for markers: nothing to tell a cut by, and nothing was spilled.
        return (
            Verdict::Inline,
            Some("n too small for markers; no spill message".into()),
        );
    }
    if call.start_marker && text.contains(&start_marker(call.n, &call.nonce)) {
        return (
            Verdict::Truncated,
            Some("the start marker came back, the end marker did not".into()),
        );
    }
    if record.outcome() != Outcome::Passed {
        return (
            Verdict::Error,
            Some(format!("{} after calling the tool", record.status_text())),
        );
    }
    (
        Verdict::Truncated,
        Some("the tool was called, but neither its text nor a spill message came back".into()),
    )
}

/// Judges the Claude preset from what the stand-in received.
fn judge_stand_in(
    record: &RunRecord,
    calls: &[LoggedCall],
    events: &[Value],
    n: u64,
    spill: &[Regex],
) -> (Verdict, Option<String>, Option<u64>) {
    if let Some(why) = failed_run(record) {
        return (Verdict::Error, Some(why), None);
    }
    let result = events
        .iter()
        .rev()
        .find(|e| e["event"] == "tool_result" && e["n"].as_u64() == Some(n));
    let Some(result) = result else {
        let why = if events.iter().any(|e| e["event"] == "no_tool") {
            "the client offered the model no emit tool (is tool search on, or did the server fail?)"
                .to_string()
        } else if events.is_empty() {
            format!(
                "the client never reached the stand-in ({})",
                record.status_text()
            )
        } else if calls.is_empty() {
            return (
                Verdict::NotCalled,
                Some(format!(
                    "the client did not call the tool ({})",
                    record.status_text()
                )),
                None,
            );
        } else {
            format!(
                "the tool ran but no result reached the stand-in ({})",
                record.status_text()
            )
        };
        return (Verdict::Error, Some(why), None);
    };
    let text = text_of(&result["content"]);
    let received = result["units"].as_u64();
    let Some(call) = calls.last() else {
        return (
            Verdict::Error,
            Some(format!(
                "a tool result reached the stand-in, but the server logged no call: {}",
                clip(&text, 200)
            )),
            received,
        );
    };
    let (verdict, message) = judge_text(call, &text, record, spill);
    // For a save, the client's own words are the message (its first lines), not just the line
    // the pattern matched.
    let message = match verdict {
        Verdict::Saved => Some(clip(text.trim(), 300)),
        _ => message,
    };
    (verdict, message, received)
}

/// The version of the results.json layout; bumped when a field changes meaning or goes away.
pub const RESULTS_VERSION: u32 = 1;

/// Everything one bracket (or check) run found: what `results.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub version: u32,
    pub tool: &'static str,
    pub command: &'static str,
    pub client: ClientInfo,
    pub fill: Fill,
    pub spill_patterns: Vec<String>,
    pub started: Timestamp,
    pub finished: Timestamp,
    pub interrupted: bool,
    /// Whether the run finished: false in the copies written as points finish (and in an
    /// interrupted run's), whose points are those done so far.
    pub complete: bool,
    pub points: Vec<Point>,
    pub threshold: Threshold,
    /// `check` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<Value>,
    /// `--bisect` only: whether LO came back inline and HI did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<Value>,
}

impl Results {
    pub fn new(command: &'static str, driver: &Driver, started: Timestamp) -> Results {
        Results {
            version: RESULTS_VERSION,
            tool: "probe",
            command,
            client: driver.info.clone(),
            fill: driver.settings.fill,
            spill_patterns: driver.settings.spill_patterns.clone(),
            started,
            finished: Timestamp::now(),
            interrupted: false,
            complete: false,
            points: driver.points.clone(),
            threshold: threshold(&driver.points),
            check: None,
            bisect: None,
        }
    }
}

/// The points in order of n: verdict, units received, time, status, message.
fn points_table(r: &Results) -> Table {
    let mut points: Vec<&Point> = r.points.iter().collect();
    points.sort_by_key(|p| p.n);
    let mut table = Table::new(["n", "verdict", "received", "time", "status", "message"]);
    for p in points {
        table.row([
            p.n.to_string(),
            p.verdict.to_string(),
            p.received_units
                .map(|u| u.to_string())
                .unwrap_or_else(|| "-".into()),
            format!("{:.1}s", p.duration_secs),
            p.status.clone(),
            p.message
                .as_deref()
                .map(|m| clip(m, 100))
                .unwrap_or_default(),
        ]);
    }
    table
}

/// The text report: the client, the table of points, the threshold.
pub fn render(r: &Results) -> String {
    let mut out = String::new();
    let version = r.client.version.clone().or_else(|| {
        r.client.mcp_client.as_ref().map(|c| {
            format!(
                "{} {}",
                c["name"].as_str().unwrap_or("?"),
                c["version"].as_str().unwrap_or("?")
            )
        })
    });
    // The command and the version come from outside (the version from the client itself):
    // escaped, so a newline in them cannot forge a `threshold:` line.
    out.push_str(&format!(
        "client: {}\n",
        report::escape::text(&r.client.command)
    ));
    out.push_str(&format!(
        "version: {}\n",
        report::escape::text(version.as_deref().unwrap_or("unknown"))
    ));
    out.push_str(&format!(
        "started: {}  finished: {}\n\n",
        r.started, r.finished
    ));
    let table = points_table(r);
    out.push_str(&table.render_text());
    out.push_str(&format!("\nthreshold: {}\n", r.threshold.text));
    if let Some(b) = &r.bisect {
        if b["held"] == json!(false) {
            out.push_str(&format!("bisect: {}\n", b["why"].as_str().unwrap_or("")));
        }
    }
    if r.interrupted {
        out.push_str("interrupted: the results above are partial\n");
    } else if !r.complete {
        out.push_str("partial: written while the run was going; the points above are those finished so far\n");
    }
    out
}

/// The client's version as the report shows it: what `--version` said, or the MCP clientInfo.
fn client_version(r: &Results) -> Option<String> {
    r.client.version.clone().or_else(|| {
        r.client.mcp_client.as_ref().map(|c| {
            format!(
                "{} {}",
                c["name"].as_str().unwrap_or("?"),
                c["version"].as_str().unwrap_or("?")
            )
        })
    })
}

/// The results as GitHub-flavoured Markdown, for a pull request or a job summary: a heading
/// with the threshold (and for `check`, whether it held), the facts, then the points.
pub fn render_markdown(r: &Results) -> String {
    let mut out = match &r.check {
        Some(c) => format!(
            "## probe check: {}\n\n",
            check_word(c["held"].as_bool(), c["judged"].as_bool())
        ),
        None => format!("## probe {}\n\n", r.command),
    };
    let mut facts = vec![
        ("client", code(&report::escape::text(&r.client.command))),
        (
            "version",
            client_version(r)
                .map(|v| code(&report::escape::text(&v)))
                .unwrap_or_else(|| "unknown".into()),
        ),
        ("threshold", markdown::escape(&r.threshold.text)),
    ];
    if let Some(c) = &r.check {
        facts.push(("expected", format!("inline up to {}", c["expect"])));
        if let Some(cap) = c["suggested_cap"].as_u64() {
            facts.push((
                "suggested cap",
                format!(
                    "{cap} units ({} less {}%)",
                    c["measured"],
                    (c["margin"].as_f64().unwrap_or(0.0) * 100.0).round()
                ),
            ));
        }
        if let Some(note) = c["note"].as_str() {
            facts.push(("note", markdown::escape(note)));
        }
    }
    if let Some(b) = &r.bisect {
        if b["held"] == json!(false) {
            facts.push(("bisect", markdown::escape(b["why"].as_str().unwrap_or(""))));
        }
    }
    facts.push(("time", format!("{} .. {}", r.started, r.finished)));
    if r.interrupted {
        facts.push(("interrupted", "yes: the results are partial".into()));
    } else if !r.complete {
        facts.push(("partial", "yes: the run had not finished".into()));
    }
    out.push_str(&markdown::facts(facts));
    out.push('\n');
    out.push_str(&points_table(r).render_markdown());
    out
}

/// `held`, `MOVED` or `no verdict`, from check's record.
pub fn check_word(held: Option<bool>, judged: Option<bool>) -> &'static str {
    match (judged, held) {
        (Some(false), _) => "no verdict",
        (_, Some(true)) => "held",
        _ => "MOVED",
    }
}

/// Prints the results on stdout in the settings' format; the text is painted per `paint_text`.
pub fn print_results(settings: &ClientSettings, r: &Results, text: &str) -> anyhow::Result<()> {
    let out = match settings.output_format() {
        Format::Json => format!("{}\n", serde_json::to_string_pretty(r)?),
        Format::Markdown => render_markdown(r),
        Format::Text => paint_text(text, Painter::new(settings.color.for_stdout())),
    };
    crate::print_out(&out)?;
    Ok(())
}

/// The text report with its verdict words painted: the check line's `held` / `MOVED`.
pub fn paint_text(text: &str, paint: Painter) -> String {
    if !paint.is_on() {
        return text.to_string();
    }
    text.lines()
        .map(|line| {
            for word in ["held", "MOVED"] {
                if let Some(rest) = line.strip_prefix(&format!("check: {word}")) {
                    return format!("check: {}{rest}\n", paint.verdict(word));
                }
            }
            format!("{line}\n")
        })
        .collect()
}

/// Writes `results.txt` and `results.json` (atomically, so a reader never sees half).
pub fn write_results(out: &Path, r: &Results, text: &str) -> anyhow::Result<()> {
    report::json::write_atomic(&out.join("results.json"), r)
        .with_context(|| format!("writing {}", out.join("results.json").display()))?;
    report::json::write_text_atomic(&out.join("results.txt"), text)
        .with_context(|| format!("writing {}", out.join("results.txt").display()))?;
    Ok(())
}

/// A progress line per finished point.
pub fn progress_line(p: &Point) -> String {
    let message = p
        .message
        .as_deref()
        .map(|m| {
            let first = clip(m.lines().next().unwrap_or(""), 80);
            format!(": {}", report::escape::text(&first))
        })
        .unwrap_or_default();
    format!("n={} {} ({:.1}s){message}", p.n, p.verdict, p.duration_secs)
}

/// Bisects between `lo` (inline) and `hi` (over), both already run. Returns `Err` with the
/// reason when a midpoint gives no verdict to steer by.
pub fn bisect(
    driver: &mut Driver,
    mut lo: u64,
    mut hi: u64,
    progress: &mut report::progress::Progress,
) -> anyhow::Result<Result<(), String>> {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let p = progress.during(&format!("n={mid} (between {lo} and {hi})"), || {
            driver.run_point(mid)
        })?;
        progress.finished(&progress_line(&p));
        match p.verdict {
            Verdict::Inline => lo = mid,
            v if v.is_over() => hi = mid,
            v => {
                return Ok(Err(format!(
                    "n={mid} came back `{v}`, so the bisection stopped between {lo} and {hi}"
                )))
            }
        }
    }
    Ok(Ok(()))
}

/// `probe bracket`.
pub fn run_bracket(settings: &BracketSettings) -> anyhow::Result<Exit> {
    report::interrupt::install();
    let started = Timestamp::now();
    let mut driver = Driver::new(&settings.client)?;
    let total = match &settings.plan {
        Plan::Points(p) => p.len(),
        Plan::Bisect { lo, hi } => 2 + (64 - (hi - lo).leading_zeros()) as usize,
    };
    let quiet = settings.client.output_format() == Format::Json;
    let mut progress = report::progress::Progress::new(total, quiet);
    let mut bisect_note = None;
    let outcome: anyhow::Result<()> = (|| {
        match &settings.plan {
            Plan::Points(points) => {
                for &n in points {
                    let p = progress.during(&format!("n={n}"), || driver.run_point(n))?;
                    progress.finished(&progress_line(&p));
                    write_partial(&driver, started)?;
                }
            }
            Plan::Bisect { lo, hi } => {
                let (lo, hi) = (*lo, *hi);
                let mut ends = Vec::new();
                for n in [lo, hi] {
                    let p = progress.during(&format!("n={n}"), || driver.run_point(n))?;
                    progress.finished(&progress_line(&p));
                    ends.push(p.verdict);
                }
                let why = if ends[0] != Verdict::Inline {
                    Some(format!(
                        "LO={lo} came back `{}`, not inline: the threshold is not in {lo}..{hi}",
                        ends[0]
                    ))
                } else if !ends[1].is_over() {
                    Some(format!("HI={hi} came back `{}`, not saved or truncated: the threshold is not in {lo}..{hi}", ends[1]))
                } else {
                    bisect(&mut driver, lo, hi, &mut progress)?.err()
                };
                bisect_note = Some(json!({"lo": lo, "hi": hi, "held": why.is_none(), "why": why}));
            }
        }
        Ok(())
    })();
    progress.clear();
    let interrupted = match outcome {
        Ok(()) => false,
        Err(e) if e.is::<Interrupted>() => true,
        Err(e) => return Err(e),
    };
    let mut results = Results::new("bracket", &driver, started);
    results.interrupted = interrupted;
    results.complete = !interrupted;
    results.bisect = bisect_note;
    let text = render(&results);
    write_results(&driver.settings.out, &results, &text)?;
    print_results(&settings.client, &results, &text)?;
    if interrupted {
        return Ok(Exit::Interrupted);
    }
    let judged = results
        .points
        .iter()
        .filter(|p| p.verdict != Verdict::Error && p.verdict != Verdict::NotCalled)
        .count();
    if judged == 0 && results.points.iter().all(|p| p.verdict == Verdict::Error) {
        let _ = writeln!(
            std::io::stderr(),
            "probe: no run of the client gave a verdict (see {})",
            report::escape::path(&driver.settings.out.join("points"))
        );
        return Ok(Exit::Precondition);
    }
    let held = judged == results.points.len()
        && results
            .bisect
            .as_ref()
            .map_or(true, |b| b["held"] == json!(true));
    Ok(Exit::from_held(held))
}

fn write_partial(driver: &Driver, started: Timestamp) -> anyhow::Result<()> {
    let results = Results::new("bracket", driver, started);
    write_results(&driver.settings.out, &results, &render(&results))
}

/// The binary that answers to `probe serve`: the path this process was started by, when it is
/// a path (so a multi-call binary linked as `probe`, as `gate demo` does, keeps its name), else
/// the running executable.
fn self_exe() -> std::io::Result<std::path::PathBuf> {
    if let Some(arg0) = std::env::args_os().next() {
        let path = std::path::PathBuf::from(arg0);
        if path.components().count() > 1 && path.is_file() {
            return std::path::absolute(path);
        }
    }
    std::env::current_exe()
}
