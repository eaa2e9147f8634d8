//! Command-line arguments (clap derive; the doc comments are the help text), and their
//! validation into the settings the library takes.

use crate::bracket::{around, BracketSettings, Client, Plan};
use crate::check::CheckSettings;
use crate::client::CallSettings;
use crate::Command;
use clap::{Args, CommandFactory, Parser, Subcommand};
use cmdline::cli::{ColorArg, Describe, FormatArgs};
use cmdline::Exit;
use mcp::emit::Fill;
use mcp::server::ServeSettings;
use report::ColorChoice;
use standin::{Api, ModelSettings};
use std::path::PathBuf;
use std::time::Duration;

mod values;

use values::*;

/// Measure where an MCP client stops passing tool results inline.
#[derive(Debug, Parser)]
#[command(name = "probe", version, about)]
pub(crate) struct Cli {
    // Colour goes to the verdict words only; files written to disk are never coloured.
    #[command(flatten)]
    color: ColorArg,

    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Run the stdio MCP server whose tool `emit` returns exactly n UTF-16 units.
    Serve {
        /// Also write events (each call's n and nonce) as JSON lines to FILE.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Call a tool on any stdio MCP server and report the size of its reply.
    Call(CallArgs),
    /// Run a loopback stand-in for the model APIs agent clients call (Anthropic Messages,
    /// OpenAI Responses and Chat Completions, Gemini generateContent).
    Model {
        /// Port on 127.0.0.1; 0 picks a free one and prints it on stdout.
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// What the token counters answer (/v1/messages/count_tokens, Gemini countTokens;
        /// default: one token per 4 UTF-16 units).
        #[arg(long, value_name = "N", value_parser = tokens_parser)]
        count_tokens: Option<u64>,
        /// The input tokens every answer's usage reports, in each API's own field
        /// (input_tokens, prompt_tokens, promptTokenCount; default: estimated from the
        /// request's text like count_tokens; some clients decide from usage).
        #[arg(long, value_name = "N", value_parser = tokens_parser)]
        input_tokens: Option<u64>,
        /// The output tokens every answer's usage reports (output_tokens, completion_tokens,
        /// candidatesTokenCount; default: 5).
        #[arg(long, value_name = "N", value_parser = tokens_parser)]
        output_tokens: Option<u64>,
        /// Write events (what the client handed back) as JSON lines to FILE.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
        /// Serve only these API shapes (comma-separated or repeated; default: every one).
        #[arg(long, value_parser = api_parser(), value_delimiter = ',', value_name = "SHAPE")]
        api: Vec<Api>,
    },
    /// Run a client once per n and find where results stop coming back inline.
    Bracket(BracketArgs),
    /// A small MCP client with a known inline limit, built in so `bracket` and `check` can be
    /// tried (and tested) without installing an agent CLI: it calls `emit` with n on the first
    /// server of an MCP config and hands the text on as its --mode says. The modes: `spill`
    /// (the default) prints the text when it fits under the limit, otherwise saves it to a
    /// file and says so, as real clients do; `cut` prints only the first LIMIT units; `never`
    /// answers without calling the tool; `hang` waits, without calling it, until killed.
    TestClient(TestClientArgs),
    /// Check that a client's threshold is still N; exit 1 if it moved.
    Check(CheckArgs),
    /// Measure every installed preset: version, each kind of limit (one result's size in its
    /// unit, its lines, its tokens, the total of one turn's results) with what happens above it
    /// or why it was not found, and a cap.
    Clients(ClientsArgs),
    #[command(flatten)]
    Describe(Describe),
}

#[derive(Debug, Args)]
struct TestClientArgs {
    /// The MCP config (`{"mcpServers": {...}}`) naming the server to start.
    #[arg(long, value_name = "FILE")]
    mcp_config: PathBuf,
    /// How many UTF-16 units to ask `emit` for.
    #[arg(long, value_parser = units_parser)]
    n: u64,
    /// The most this client passes on inline, in --limit-unit.
    #[arg(long, default_value = "50000", value_parser = units_parser)]
    limit: u64,
    /// The fill to ask `emit` for (default: $PROBE_FILL, which bracket and check set, else
    /// ascii).
    #[arg(long, value_parser = fill_parser())]
    fill: Option<Fill>,
    /// What --limit counts: utf16, bytes, codepoints, lines or tokens (one per four units).
    #[arg(long, default_value = "utf16", value_parser = measure_parser)]
    limit_unit: crate::units::Measure,
    /// How the result is handed on: spill, cut, never or hang.
    #[arg(long, value_enum, default_value = "spill")]
    mode: crate::testclient::Mode,
    /// Where a result over the limit is saved (default: the temp dir).
    #[arg(long, value_name = "DIR")]
    saved_dir: Option<PathBuf>,
    /// The line printed for a saved result (spill mode), instead of one naming the file.
    #[arg(long, value_name = "TEXT")]
    spill_message: Option<String>,
    /// The name the client gives in MCP initialize.
    #[arg(long, value_name = "NAME", default_value = "probe")]
    client_name: String,
    /// The version the client gives in MCP initialize.
    #[arg(long, value_name = "VERSION", default_value = env!("CARGO_PKG_VERSION"))]
    client_version: String,
    /// Wait this long before starting (e.g. 2s), so a driver's progress has a run to show.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = delay_parser)]
    delay: Duration,
    /// Ask for K results in one turn, n split over them (default: $PROBE_CALLS, which bracket
    /// and check set, else 1); each is printed as a JSON line with its `text`.
    #[arg(long, value_name = "K", value_parser = units_parser)]
    calls: Option<u64>,
    /// The most UTF-16 units all results of one turn may hold together: the result that
    /// crosses it keeps what fits and gets a note, the ones after it are the note alone.
    #[arg(long, value_name = "N", value_parser = units_parser)]
    turn_budget: Option<u64>,
}

#[derive(Debug, Args)]
struct CallArgs {
    /// The tool to call.
    #[arg(long, default_value = "emit")]
    tool: String,
    /// The tool's arguments as a JSON object (instead of --n and --fill).
    #[arg(long, value_name = "JSON", conflicts_with_all = ["n", "fill"], value_parser = json_object_parser)]
    args: Option<serde_json::Map<String, serde_json::Value>>,
    /// n for `emit`.
    #[arg(long, default_value = "1000", value_parser = units_parser)]
    n: u64,
    /// Fill for `emit`: ascii, astral or lines.
    #[arg(long, default_value = "ascii", value_parser = fill_parser())]
    fill: Fill,
    /// Exit 1 when the reply's text is over N UTF-16 units, or N of another unit: 51200bytes,
    /// 2000lines, 12000codepoints, 25000tokens (estimated, one per four units).
    #[arg(long, value_name = "N[UNIT]", value_parser = cap_parser)]
    cap: Option<crate::client::Cap>,
    /// Give up on the server after this long (e.g. 30s, 2m; at most 30d).
    #[arg(long, default_value = "30s", value_parser = timeout_parser)]
    timeout: Duration,
    /// Print the JSON report on stdout instead of the text.
    #[arg(long)]
    json: bool,
    /// The server command and its arguments.
    #[arg(last = true, required = true, value_name = "SERVER_COMMAND")]
    server: Vec<String>,
}

/// What bracket and check share: the client and how its runs are judged.
#[derive(Debug, Args)]
struct ClientArgs {
    /// A preset (claude, codex, gemini, qwen, opencode, cline, copilot, continue), or a shell
    /// command in which `{mcp_config}` becomes the path of an MCP config that starts `probe
    /// serve` and n in braces becomes the point.
    // (Clap's help renderer turns a literal n in braces into a line break, hence the wording.)
    #[arg(long, value_parser = client_parser)]
    client: ClientKind,
    /// The preset's executable (default: where scripts/install-clients.sh puts it, else PATH).
    #[arg(long, value_name = "PATH", visible_alias = "claude-bin")]
    bin: Option<PathBuf>,
    /// What the stand-in's count_tokens answers (presets; default: units / 4).
    #[arg(long, value_name = "N", value_parser = tokens_parser)]
    count_tokens: Option<u64>,
    /// Fill for every point: ascii, astral or lines.
    #[arg(long, default_value = "ascii", value_parser = fill_parser())]
    fill: Fill,
    /// Measure the total of all results in one turn: the model asks for K results at once
    /// (parallel tool calls), each point's n is their total, split evenly over them (keep
    /// n/K under the client's limit for one result). With check: --expect-turn (default 10).
    #[arg(long, value_name = "K", value_parser = calls_parser)]
    turn: Option<u64>,
    /// A regex that marks a reply as saved to a file; repeat for more (replaces the defaults).
    #[arg(long = "spill-pattern", value_name = "REGEX", value_parser = regex_parser)]
    spill_patterns: Vec<regex::Regex>,
    /// Limit for one client run (e.g. 120s; at most 30d); a run over it is killed and is an
    /// `error`.
    #[arg(long, default_value = "120s", value_parser = timeout_parser)]
    timeout: Duration,
    /// Output folder for results.txt, results.json and per-point logs.
    #[arg(long, default_value = "probe-out")]
    out: PathBuf,
    #[command(flatten)]
    output: FormatArgs,
}

#[derive(Debug, Args)]
struct BracketArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The points to run, e.g. 49990,50000,50010 (at most 1000 points).
    #[arg(long, value_name = "N,N,...", conflicts_with_all = ["around", "bisect"], value_parser = points_parser)]
    points: Option<Points>,
    /// Run N-STEP, N and N+STEP.
    #[arg(long, value_name = "N", requires = "step", conflicts_with = "bisect", value_parser = units_parser)]
    around: Option<u64>,
    /// The distance between points for --around (at least 1).
    #[arg(long, value_name = "S", requires = "around", value_parser = step_parser)]
    step: Option<u64>,
    /// Find the exact threshold in LO..HI (LO inline, HI not) by bisection.
    #[arg(long, value_name = "LO..HI", value_parser = range_parser)]
    bisect: Option<Range>,
    /// With --bisect: bisect again with the astral and lines fills and infer the unit the
    /// client counts in.
    #[arg(long, requires = "bisect", conflicts_with = "turn")]
    units: bool,
}

#[derive(Debug, Args)]
struct ClientsArgs {
    /// The presets to run (default: every installed one).
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = preset_parser)]
    only: Vec<crate::presets::Preset>,
    /// Where each client's threshold is searched, in UTF-16 units (LO inline, HI not).
    #[arg(long, value_name = "LO..HI", default_value = "1000..1000000", value_parser = range_parser)]
    range: Range,
    /// How far under each threshold the suggested reply cap stays (0% to under 100%).
    #[arg(long, default_value = "20%", value_parser = margin_parser)]
    margin: f64,
    /// Limit for one client run (e.g. 120s; at most 30d).
    #[arg(long, default_value = "120s", value_parser = timeout_parser)]
    timeout: Duration,
    /// Output folder: clients.txt, clients.json, and a folder per client.
    #[arg(long, default_value = "probe-clients")]
    out: PathBuf,
    #[command(flatten)]
    output: FormatArgs,
}

#[derive(Debug, Args)]
struct CheckArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The threshold expected: inline up to N, not from N+1, optionally in a unit
    /// (`51200bytes`; utf16, bytes, codepoints, lines or tokens), which is then checked too.
    #[arg(long, value_name = "N[UNIT]", value_parser = expect_parser, required_unless_present = "expect_turn", conflicts_with = "expect_turn")]
    expect: Option<Expect>,
    /// The budget expected for all results of one turn together: inline up to N in total, not
    /// from N+1 (units as --expect), in a turn of --turn K results (default 10).
    #[arg(long, value_name = "N[UNIT]", value_parser = expect_parser)]
    expect_turn: Option<Expect>,
    /// How far under the threshold the suggested reply cap stays (0% to under 100%).
    #[arg(long, default_value = "20%", value_parser = margin_parser)]
    margin: f64,
}

impl Cli {
    /// Runs the subcommands that only describe the command line (completions, man pages);
    /// `None` for every other subcommand.
    pub(crate) fn describe(&self) -> Option<Exit> {
        let Sub::Describe(describe) = &self.command else {
            return None;
        };
        let result = describe.run(Cli::command());
        Some(match result {
            // A closed stdout is no error (`cmdline::exit::print` swallows it).
            Ok(()) => Exit::Ok,
            Err(e) => {
                cmdline::errln!("probe: {e}");
                Exit::Usage
            }
        })
    }

    /// Validates the arguments into a command; `Err` is the one-line usage error.
    /// (`--log` passes the one output guard here, so a bad one is exit 2 like a bad `--out`.)
    pub(crate) fn into_command(self) -> Result<Command, String> {
        let color = self.color.color;
        Ok(match self.command {
            Sub::Describe(_) => return Err("completions and man are handled before this".into()),
            Sub::Serve { log } => {
                guard_log(log.as_deref())?;
                Command::Serve(ServeSettings { log })
            }
            Sub::TestClient(a) => Command::TestClient(crate::testclient::TestClientSettings {
                mcp_config: a.mcp_config,
                n: a.n,
                limit: a.limit,
                limit_unit: a.limit_unit,
                fill: a
                    .fill
                    .or_else(|| {
                        std::env::var("PROBE_FILL")
                            .ok()
                            .and_then(|f| Fill::parse(&f))
                    })
                    .unwrap_or(Fill::Ascii),
                saved_dir: a.saved_dir,
                mode: a.mode,
                spill_message: a.spill_message,
                client_info: crate::client::Implementation {
                    name: a.client_name,
                    version: a.client_version,
                },
                delay: a.delay,
                calls: a
                    .calls
                    .or_else(|| {
                        std::env::var("PROBE_CALLS")
                            .ok()
                            .and_then(|c| c.parse().ok())
                    })
                    .unwrap_or(1)
                    .clamp(1, crate::bracket::MAX_CALLS),
                turn_budget: a.turn_budget,
            }),
            Sub::Model {
                port,
                count_tokens,
                input_tokens,
                output_tokens,
                log,
                api,
            } => Command::Model({
                guard_log(log.as_deref())?;
                ModelSettings {
                    port,
                    count_tokens,
                    input_tokens,
                    output_tokens,
                    log,
                    keep_events: false,
                    apis: api,
                }
            }),
            Sub::Call(a) => {
                let arguments = match a.args {
                    Some(map) => serde_json::Value::Object(map),
                    None => serde_json::json!({"n": a.n, "fill": a.fill.to_string()}),
                };
                Command::Call(CallSettings {
                    tool: a.tool,
                    arguments,
                    cap: a.cap,
                    timeout: a.timeout,
                    json: a.json,
                    server: a.server,
                    client_info: Default::default(),
                })
            }
            Sub::Bracket(a) => {
                let plan = if let Some(points) = a.points {
                    Plan::Points(points.0)
                } else if let (Some(n), Some(step)) = (a.around, a.step) {
                    Plan::Points(around(n, step)?)
                } else if let Some(Range { lo, hi }) = a.bisect {
                    Plan::Bisect { lo, hi }
                } else {
                    return Err("give one of --points, --around N --step S, --bisect LO..HI".into());
                };
                Command::Bracket(BracketSettings {
                    client: client_settings(a.client, color),
                    plan,
                    units: a.units,
                })
            }
            Sub::Check(a) => {
                let (expect, calls) = match (a.expect, a.expect_turn) {
                    (Some(_), Some(_)) | (None, None) => {
                        return Err("give one of --expect and --expect-turn".into())
                    }
                    (Some(_), _) if a.client.turn.is_some() => {
                        return Err("--turn goes with --expect-turn, not --expect".into())
                    }
                    (Some(e), None) => (e, 1),
                    (None, Some(e)) => (e, a.client.turn.unwrap_or(DEFAULT_TURN)),
                };
                let mut client = client_settings(a.client, color);
                client.calls = calls;
                Command::Check(CheckSettings {
                    expect: expect.n,
                    unit: expect.unit,
                    margin: a.margin,
                    client,
                })
            }
            Sub::Clients(a) => Command::Clients(crate::clients::matrix::MatrixSettings {
                only: a.only,
                lo: a.range.lo,
                hi: a.range.hi,
                margin: a.margin,
                timeout: a.timeout,
                out: a.out,
                format: a.output.format.with_json_flag(a.output.json),
                color,
            }),
        })
    }
}

/// The results one turn asks for in `check --expect-turn` without `--turn`: a 200,000 budget
/// is then 20,000 a result, far under any one-result limit measured so far.
const DEFAULT_TURN: u64 = 10;

fn client_settings(a: ClientArgs, color: ColorChoice) -> crate::bracket::ClientSettings {
    let client = match a.client {
        ClientKind::Preset(preset) => Client::Preset {
            preset,
            bin: a.bin.unwrap_or_else(|| preset.find_bin()),
            count_tokens: a.count_tokens,
        },
        ClientKind::Command(command) => Client::Command(command),
    };
    crate::bracket::ClientSettings {
        client,
        fill: a.fill,
        calls: a.turn.unwrap_or(1),
        spill_patterns: a.spill_patterns,
        timeout: a.timeout,
        out: a.out,
        json: a.output.json,
        format: a.output.format,
        color,
    }
}

/// A bad value's error on one line: the flag, the value (clipped: a list of a million points
/// need not be echoed whole) and why, safe to print.
fn value_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let why = std::error::Error::source(e).map(|s| s.to_string());
    let text = match (
        context(ContextKind::InvalidArg),
        context(ContextKind::InvalidValue),
        why,
    ) {
        (Some(arg), Some(value), Some(why)) => {
            let mut shown: String = value.chars().take(60).collect();
            if shown.len() < value.len() {
                shown.push('…');
            }
            format!("invalid value '{shown}' for '{arg}': {why}")
        }
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("");
            let mut line: String = first
                .strip_prefix("error: ")
                .unwrap_or(first)
                .chars()
                .take(300)
                .collect();
            if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) {
                line.push_str(&format!(" (possible values: {})", valid.join(", ")));
            }
            line
        }
    };
    files::escape::text(&text).into_owned()
}

/// The whole `probe` command line from the process's arguments: parse, run, exit code.
pub fn main() -> Exit {
    main_from(std::env::args_os(), &[])
}

/// [`main`] over `args` (`argv[0]` first), for a binary that carries probe as a subcommand:
/// `serve_prefix` holds the words that make this executable probe (`["probe"]` for
/// `gatekit probe ...`), so the MCP configs a client gets start `EXE probe serve`.
pub fn main_from(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    serve_prefix: &[&str],
) -> Exit {
    use clap::error::ErrorKind;
    use clap::Parser as _;
    crate::bracket::set_serve_prefix(serve_prefix);
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // A bad value is one line naming the flag and the value, exit 2.
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::ValueValidation | ErrorKind::InvalidValue
            ) =>
        {
            cmdline::errln!("probe: {}", value_error(&e));
            return Exit::Usage;
        }
        // Help and version on stdout (0), other usage errors with clap's hints (2).
        Err(e) => return cmdline::exit::usage(e),
    };
    if let Some(exit) = cli.describe() {
        return exit;
    }
    match cli.into_command() {
        Ok(command) => crate::run(command),
        Err(message) => {
            cmdline::errln!("probe: {message}");
            Exit::Usage
        }
    }
}

/// `--log FILE` through the one output guard (`files::outputs`): never a link or a folder,
/// never inside a gatekit checkout.
fn guard_log(log: Option<&std::path::Path>) -> Result<(), String> {
    match log {
        Some(path) => files::outputs::Plan::new()
            .file("--log", path)
            .check()
            .map_err(|e| e.to_string()),
        None => Ok(()),
    }
}
