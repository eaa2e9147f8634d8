//! Running the client for one point: a fresh folder with the MCP config that starts
//! `probe serve` (logging to the folder), the client run through `report::runner` (its own
//! group, a timeout, strays killed), and the judging of what came back.
//!
//! The Claude preset also starts the model stand-in once per driver, and runs claude with a
//! scratch HOME and nothing of our environment but PATH, so the only connection it makes is to
//! the stand-in.

use super::judge::{judge_output, judge_stand_in, Verdict};
use super::results::{ClientInfo, Point, Results};
use super::{Client, ClientSettings, DEFAULT_SPILL_PATTERNS};
use crate::emit::Fill;
use crate::model::{ModelEvent, ModelSettings, StandIn};
use crate::server::{read_calls, LoggedCall};
use crate::Failure;
use anyhow::Context;
use regex::Regex;
use report::exit::Interrupted;
use report::exit::PreconditionFailed;
use report::runner::{self, Job, Outcome, Program, RunRecord};
use report::text::{clip, shell_quote};
use report::Timestamp;
use serde_json::json;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs points against one client and keeps what each found.
pub(crate) struct Driver {
    /// One run per --out: held until the driver is dropped (or the process ends).
    _lock: report::lock::OutLock,
    settings: ClientSettings,
    probe_exe: PathBuf,
    stand_in: Option<StandIn>,
    pub(crate) info: ClientInfo,
    pub(crate) points: Vec<Point>,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver").field("info", &self.info).finish()
    }
}

impl Driver {
    /// Prepares the output folder, the stand-in (Claude preset) and the client's version.
    pub(crate) fn new(settings: &ClientSettings) -> anyhow::Result<Driver> {
        let spill: Vec<Regex> = if settings.spill_patterns.is_empty() {
            DEFAULT_SPILL_PATTERNS
                .iter()
                .map(|p| Regex::new(&regex::escape(p)).expect("an escaped pattern is a regex"))
                .collect()
        } else {
            settings.spill_patterns.clone()
        };
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
                spill_patterns: spill,
                ..settings.clone()
            },
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

    pub(crate) fn settings(&self) -> &ClientSettings {
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
            return Err(PreconditionFailed::new(format!(
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
    pub(crate) fn run_point(&mut self, n: u64) -> anyhow::Result<Point> {
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
            "args": serve_args(&serve_log),
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
                    &self.settings.spill_patterns,
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
                stand_in.take_model_events();
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
                let events = stand_in.take_model_events();
                let calls = calls_for(&serve_log, n);
                let (verdict, message, received) =
                    judge_stand_in(&record, &calls, &events, n, &self.settings.spill_patterns);
                let count_calls = events
                    .iter()
                    .filter(|e| matches!(e, ModelEvent::CountTokens { .. }))
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
            self.info.mcp_client = crate::server::client_info(&serve_log);
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
pub(crate) fn substitute(command: &str, n: u64, config: &Path) -> String {
    command
        .replace("{n}", &n.to_string())
        .replace("{mcp_config}", &shell_quote(&config.display().to_string()))
}

/// The most of a client's output that is read to judge it: the largest result `emit` makes
/// (10,000,000 astral units) is 40 MB, 60 MB with every pair JSON-escaped, so this leaves room
/// for what a client prints around it while a client that prints without end cannot exhaust
/// memory.
pub(crate) const MAX_CLIENT_OUTPUT: u64 = 256 * 1024 * 1024;

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

impl Driver {
    /// Writes the results so far (marked partial), so a reader can follow a long run.
    pub(crate) fn write_partial(
        &self,
        command: &'static str,
        started: Timestamp,
    ) -> anyhow::Result<()> {
        let results = Results::new(command, self, started);
        let text = super::render::text(&results, report::Painter::plain());
        super::results::write_results(&self.settings.out, &results, &text)
    }
}

/// The words before `serve` that make this executable probe: none for the probe binary,
/// `probe` when an umbrella binary runs probe as its subcommand.
static SERVE_PREFIX: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Sets [`SERVE_PREFIX`] once, at the start of probe's main.
pub(crate) fn set_serve_prefix(prefix: &[&str]) {
    let _ = SERVE_PREFIX.set(prefix.iter().map(|w| w.to_string()).collect());
}

/// The arguments after [`self_exe`] that start `probe serve --log LOG`.
fn serve_args(log: &Path) -> Vec<String> {
    let mut args = SERVE_PREFIX.get().cloned().unwrap_or_default();
    args.extend(["serve".into(), "--log".into(), log.display().to_string()]);
    args
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
