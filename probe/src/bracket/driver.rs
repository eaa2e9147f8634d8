//! Running the client for one point: a fresh folder with the MCP config that starts
//! `probe serve` (logging to the folder), the client run through `runner` (its own
//! group, a timeout, strays killed), and the judging of what came back.
//!
//! A preset (`crate::presets`) also starts the model stand-in once per driver, and runs its
//! client with a scratch HOME (the preset's config written into it) and nothing of our
//! environment but PATH and the preset's variables, so the only connection it makes is to the
//! stand-in.

use super::judge::{failed_run, judge_output, judge_stand_in, Judgment, Verdict};
use super::results::{ClientInfo, Point, Results, TurnResult};
use super::turn::{judge_turn, Handed};
use super::{Client, ClientSettings, DEFAULT_SPILL_PATTERNS};
use crate::presets::{self, Preset};
use crate::Failure;
use anyhow::Context;
use mcp::emit::Fill;
use mcp::server::{read_calls, LoggedCall};
use regex::Regex;
use report::text::{clip, shell_quote};
use report::Timestamp;
use runner::stop::Interrupted;
use runner::stop::PreconditionFailed;
use runner::{Job, Outcome, Program};
use serde_json::json;
use standin::{ModelEvent, ModelSettings, StandIn};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs points against one client and keeps what each found.
pub(crate) struct Driver {
    /// One run per --out: held until the driver is dropped (or the process ends).
    _lock: files::lock::OutLock,
    settings: ClientSettings,
    probe_exe: PathBuf,
    stand_in: Option<StandIn>,
    /// The fill the next points run with: the settings' fill, until a unit search changes it.
    fill: Fill,
    /// The results the next points ask for in one turn: the settings' calls, until a search
    /// of another limit kind changes it.
    calls: u64,
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
        let defaults: &[&str] = match &settings.client {
            Client::Preset { preset, .. } => preset.spec().spill_patterns,
            Client::Command(_) => &DEFAULT_SPILL_PATTERNS,
        };
        let spill: Vec<Regex> = if settings.spill_patterns.is_empty() {
            defaults
                .iter()
                .map(|p| Regex::new(&regex::escape(p)).expect("an escaped pattern is a regex"))
                .collect()
        } else {
            settings.spill_patterns.clone()
        };
        // Before anything is written there: a second run on the same folder would interleave
        // its points with ours and rewrite our results.
        // Every path this run writes, refused now (exit 2) if one would land through a link,
        // in a gatekit checkout or on a file no run recorded: see `files::outputs`.
        let mut plan = files::outputs::Plan::new();
        plan.folder("--out", &settings.out)
            .folder_in(&settings.out, "points")
            .file_in(&settings.out, "results.json")
            .file_in(&settings.out, "results.txt")
            .file_in(&settings.out, "model.log");
        if let Client::Preset { preset, .. } = &settings.client {
            plan.file_in(&settings.out, &format!("{preset}-version.log"));
        }
        plan.check().map_err(|e| Failure::Usage(e.to_string()))?;
        let lock = files::lock::OutLock::acquire(&settings.out).map_err(|e| match e {
            busy @ files::lock::LockError::Busy { .. } => {
                anyhow::Error::from(Failure::Usage(busy.to_string()))
            }
            other => anyhow::Error::from(Failure::Usage(other.to_string())),
        })?;
        // A fresh run: what earlier runs wrote here goes (only that), so no point of theirs
        // is read as ours.
        files::outputs::own(&settings.out)
            .and_then(|()| files::outputs::clear_previous(&settings.out))
            .and_then(|_| fs::create_dir_all(settings.out.join("points")))
            .map_err(|e| Failure::Usage(format!("{}: {e}", settings.out.display())))?;
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
            fill: settings.fill,
            calls: settings.calls.max(1),
            info: ClientInfo {
                kind: "command".into(),
                command: String::new(),
                version: None,
                model: None,
                mcp_client: None,
            },
            points: Vec::new(),
        };
        match &settings.client {
            Client::Command(cmd) => driver.info.command = cmd.clone(),
            Client::Preset {
                preset,
                bin,
                count_tokens,
            } => {
                driver.info.kind = preset.name().into();
                driver.info.command = bin.display().to_string();
                driver.info.model = preset.spec().model.map(String::from);
                driver.info.version = Some(driver.client_version(*preset, bin)?);
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

    /// What `BIN --version` prints first; its failure to run says how to install the client.
    /// It runs as the points do, from a scratch HOME ([`scratch_home`]): a client may write its
    /// config or temp files even to say its version, and the user's are not ours to touch.
    fn client_version(&self, preset: Preset, bin: &Path) -> anyhow::Result<String> {
        let log = self.settings.out.join(format!("{preset}-version.log"));
        let home = scratch_home()?;
        let mut job = Job::new(
            Program::Argv(vec![bin.display().to_string(), "--version".into()]),
            &self.settings.out,
            &log,
        )
        .timeout(Duration::from_secs(60));
        job.env_clear = true;
        job = base_env(job, home.path());
        // With the preset's own environment too, as its runs have it: `cn --version` looks up
        // Continue's latest version unless the preset's fetch guard is loaded. (No stand-in runs
        // yet: port 0, which nothing answers.)
        let server = presets::Server {
            command: self.probe_exe.display().to_string(),
            args: serve_args(&home.path().join("serve.log")),
        };
        let launch = preset
            .launch(&presets::Run {
                bin,
                home: home.path(),
                port: 0,
                server: &server,
                mcp_config: &home.path().join("mcp.json"),
                prompt: "",
            })
            .with_context(|| format!("writing {preset}'s config"))?;
        for (key, value) in launch.env {
            job = job.env(key, value);
        }
        let record = report::record::run(&job)?;
        let text = fs::read_to_string(&log).unwrap_or_default();
        if record.outcome() != Outcome::Passed {
            return Err(PreconditionFailed::new(format!(
                "`{} --version` did not run ({}); install {} with scripts/install-clients.sh {preset} \
                 or name the binary with --bin",
                bin.display(),
                record.status_text(),
                preset.spec().package,
            ))
            .into());
        }
        Ok(version_line(&text))
    }

    /// Runs the client at `n` with the current fill (see [`Driver::run_point_with`]).
    pub(crate) fn run_point(&mut self, n: u64) -> anyhow::Result<Point> {
        self.run_point_with(n, self.fill)
    }

    /// Makes the following points run with `fill` (a search for the unit runs each fill in
    /// turn through the same bisection).
    pub(crate) fn set_fill(&mut self, fill: Fill) {
        self.fill = fill;
    }

    /// The results the next points ask for in one turn.
    pub(crate) fn calls(&self) -> u64 {
        self.calls
    }

    /// Makes the following points ask for `calls` results in one turn, n being their total
    /// (1: one result of n).
    pub(crate) fn set_calls(&mut self, calls: u64) {
        self.calls = calls.max(1);
    }

    /// Runs the client at `n` with `fill` (once per n, fill and calls: a repeat returns the
    /// first result) and records it.
    pub(crate) fn run_point_with(&mut self, n: u64, fill: Fill) -> anyhow::Result<Point> {
        let k = self.calls;
        if let Some(p) = self
            .points
            .iter()
            .find(|p| p.n == n && p.fill == fill && p.calls == k)
        {
            return Ok(p.clone());
        }
        // An interrupt between points stops before the next one starts.
        if files::interrupt::requested() {
            return Err(Interrupted.into());
        }
        let mut name = if fill == self.settings.fill {
            format!("n-{n}")
        } else {
            format!("n-{n}-{fill}")
        };
        if k > 1 {
            name.push_str(&format!("-turn{k}"));
        }
        // What each call of the turn asks for (one call: n itself).
        let ns = super::split(n, k);
        let dir = self.settings.out.join("points").join(name);
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let serve_log = dir.join("serve.log");
        // The server (a child) appends to it: recorded as this run's here, where the record is.
        files::outputs::claim(&serve_log)
            .with_context(|| format!("writing {}", serve_log.display()))?;
        let config = dir.join("mcp.json");
        let server = presets::Server {
            command: self.probe_exe.display().to_string(),
            args: serve_args(&serve_log),
        };
        let config_json = json!({"mcpServers": {"probe": {
            "command": server.command,
            "args": server.args,
        }}});
        files::atomic::write_bytes_atomic(
            &config,
            serde_json::to_string_pretty(&config_json)?.as_bytes(),
        )
        .with_context(|| format!("writing {}", config.display()))?;
        let client_log = dir.join("client.log");
        let start = Timestamp::now();
        let (judgment, received, count_calls, record, calls, results) =
            match self.settings.client.clone() {
                Client::Command(cmd) => {
                    let script = substitute(&cmd, n, &config).replace("{calls}", &k.to_string());
                    let cwd = std::env::current_dir()?;
                    let job = Job::shell(script, cwd, &client_log)
                        .timeout(self.settings.timeout)
                        .env("PROBE_N", n.to_string())
                        .env("PROBE_CALLS", k.to_string())
                        .env("PROBE_MCP_CONFIG", config.display().to_string())
                        .env("PROBE_FILL", fill.to_string());
                    let record = report::record::run(&job)?;
                    if record.outcome() == Outcome::Interrupted {
                        return Err(Interrupted.into());
                    }
                    let output = read_output(&client_log);
                    let output = String::from_utf8_lossy(&output);
                    let calls = calls_for(&serve_log, &ns);
                    let (judgment, results) = if k > 1 {
                        let handed = Handed::from_output(&output);
                        judge_turn_run(
                            &record,
                            &ns,
                            &calls,
                            handed.as_deref(),
                            &output,
                            &self.settings.spill_patterns,
                            self.settings.timeout,
                        )
                    } else {
                        let judgment = judge_output(
                            &record,
                            &calls,
                            &output,
                            &self.settings.spill_patterns,
                            self.settings.timeout,
                        );
                        (judgment, Vec::new())
                    };
                    (judgment, None, None, record, calls, results)
                }
                Client::Preset { preset, bin, .. } => {
                    let home = scratch_home()?;
                    let work = home.path().join("work");
                    fs::create_dir_all(&work)?;
                    let stand_in = self.stand_in.as_ref().expect("a preset has a stand-in");
                    stand_in.take_model_events();
                    let prompt = presets::prompt(&ns, fill);
                    let launch = preset
                        .launch(&presets::Run {
                            bin: &bin,
                            home: home.path(),
                            port: stand_in.port(),
                            server: &server,
                            mcp_config: &config,
                            prompt: &prompt,
                        })
                        .with_context(|| format!("writing {preset}'s config"))?;
                    let mut job = Job::new(Program::Argv(launch.argv), &work, &client_log)
                        .timeout(self.settings.timeout);
                    job.env_clear = true;
                    job = base_env(job, home.path());
                    for (key, value) in launch.env {
                        job = job.env(key, value);
                    }
                    let record = report::record::run(&job)?;
                    if record.outcome() == Outcome::Interrupted {
                        return Err(Interrupted.into());
                    }
                    let events = stand_in.take_model_events();
                    let calls = calls_for(&serve_log, &ns);
                    let spill = &self.settings.spill_patterns;
                    let timeout = self.settings.timeout;
                    let (judgment, received, results) = if k > 1 {
                        let handed = Handed::from_events(&events);
                        let received = handed.iter().map(|h| h.units).sum::<u64>();
                        let (j, results) =
                            judge_turn_run(&record, &ns, &calls, Some(&handed), "", spill, timeout);
                        (j, (!handed.is_empty()).then_some(received), results)
                    } else {
                        let (j, received) =
                            judge_stand_in(&record, &calls, &events, n, spill, timeout);
                        (j, received, Vec::new())
                    };
                    let count_calls = events
                        .iter()
                        .filter(|e| matches!(e, ModelEvent::CountTokens { .. }))
                        .count() as u64;
                    // What the stand-in saw, kept beside the point for a reader (HOME goes).
                    let _ = files::atomic::write_bytes_atomic(
                        &dir.join("model-events.json"),
                        serde_json::to_string_pretty(&events)
                            .unwrap_or_default()
                            .as_bytes(),
                    );
                    (
                        judgment,
                        received,
                        Some(count_calls),
                        record,
                        calls,
                        results,
                    )
                }
            };
        let point = Point {
            n,
            fill,
            calls: k,
            results,
            verdict: judgment.verdict,
            message: judgment.message.map(|m| clip(&m, 300)),
            saved_path: judgment.saved_path,
            shape: judgment.shape,
            received_units: received,
            count_tokens_calls: count_calls,
            nonce: calls.last().map(|c| c.nonce.clone()),
            status: record.status_text(),
            duration_secs: record.run.duration_secs,
            strays_killed: record.run.strays_killed,
            start,
            dir: dir.to_path_buf(),
        };
        if self.info.mcp_client.is_none() {
            self.info.mcp_client = mcp::server::client_info(&serve_log);
        }
        self.points.push(point.clone());
        Ok(point)
    }
}

/// What every preset's client starts from: nothing of ours but PATH, a scratch HOME with its
/// own temp folder ([`TMP`], so what a client leaves in its temp dir goes with HOME rather than
/// piling up in the machine's), a dumb terminal. The preset adds its own variables on top.
fn base_env(job: Job, home: &Path) -> Job {
    job.env(
        "PATH",
        std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
    )
    .env("HOME", home.display().to_string())
    .env("TMPDIR", home.join(TMP).display().to_string())
    .env("TERM", "dumb")
}

/// The temp folder inside a preset client's scratch HOME.
const TMP: &str = "tmp";

/// A scratch HOME for a preset's client, with its [`TMP`] folder; removed when dropped.
fn scratch_home() -> std::io::Result<tempfile::TempDir> {
    let home = tempfile::Builder::new().prefix("probe-home-").tempdir()?;
    fs::create_dir(home.path().join(TMP))?;
    Ok(home)
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

/// The calls the server logged for this point's ns (a call for another n is not this
/// point's: a client retrying with other arguments).
fn calls_for(serve_log: &Path, ns: &[u64]) -> Vec<LoggedCall> {
    read_calls(serve_log)
        .into_iter()
        .filter(|c| ns.contains(&c.n))
        .collect()
}

/// A turn's judgment, unless the run itself gives none (a hang, a client that did not start).
fn judge_turn_run(
    record: &report::record::RunRecord,
    ns: &[u64],
    calls: &[LoggedCall],
    handed: Option<&[Handed]>,
    whole: &str,
    spill: &[Regex],
    timeout: Duration,
) -> (Judgment, Vec<TurnResult>) {
    match failed_run(record, timeout) {
        Some(why) => (Judgment::of(Verdict::Error, Some(why)), Vec::new()),
        None => judge_turn(record, ns, calls, handed, whole, spill),
    }
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
pub(crate) fn serve_args(log: &Path) -> Vec<String> {
    let mut args = SERVE_PREFIX.get().cloned().unwrap_or_default();
    args.extend(["serve".into(), "--log".into(), log.display().to_string()]);
    args
}

/// The binary that answers to `probe serve`: the path this process was started by, when it is
/// a path (so a multi-call binary linked as `probe`, as `gate demo` does, keeps its name), else
/// the running executable.
pub(crate) fn self_exe() -> std::io::Result<std::path::PathBuf> {
    if let Some(arg0) = std::env::args_os().next() {
        let path = std::path::PathBuf::from(arg0);
        if path.components().count() > 1 && path.is_file() {
            return std::path::absolute(path);
        }
    }
    std::env::current_exe()
}

/// The line of a client's `--version` output that names its version: the first with a dotted
/// number, else the first. Copilot CLI warns `Package extraction took 5177ms` before its version
/// line when unpacking itself into the scratch HOME is slow.
fn version_line(text: &str) -> String {
    let dotted = |l: &&str| {
        l.as_bytes()
            .windows(3)
            .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit())
    };
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or("");
    lines.find(dotted).unwrap_or(first).to_string()
}

#[cfg(test)]
mod tests {
    use super::version_line;

    #[test]
    fn the_version_is_the_line_that_names_one_not_a_warning_before_it() {
        let copilot = "Package extraction took 5177ms\nGitHub Copilot CLI 1.0.102.\n";
        assert_eq!(version_line(copilot), "GitHub Copilot CLI 1.0.102.");
        assert_eq!(
            version_line("2.1.332 (Claude Code)\n"),
            "2.1.332 (Claude Code)"
        );
        assert_eq!(version_line("\nnightly build\n"), "nightly build");
        assert_eq!(version_line(""), "");
    }
}
