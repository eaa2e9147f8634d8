//! Command-line arguments (clap derive; the doc comments are the help text), and their
//! validation into the settings the library takes.

use crate::bracket::{BracketSettings, Client, Plan};
use crate::check::CheckSettings;
use crate::client::CallSettings;
use crate::emit::{Fill, MAX_N};
use crate::model::ModelSettings;
use crate::server::ServeSettings;
use crate::Command;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use clap::{Args, CommandFactory, Parser, Subcommand};
use report::manual::Shell;
use report::{ColorChoice, Exit, Format};
use std::path::PathBuf;
use std::time::Duration;

/// Measure where an MCP client stops passing tool results inline.
#[derive(Debug, Parser)]
#[command(name = "probe", version, about)]
pub struct Cli {
    /// Colour the verdict words: on a terminal (auto, and only without NO_COLOR), always, or
    /// never. Files written to disk are never coloured.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto", value_parser = color_parser())]
    color: ColorChoice,

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
    /// Run a loopback stand-in for the Anthropic Messages API.
    Model {
        /// Port on 127.0.0.1; 0 picks a free one and prints it on stdout.
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// What /v1/messages/count_tokens answers (default: one token per 4 UTF-16 units).
        #[arg(long, value_name = "N")]
        count_tokens: Option<u64>,
        /// Write events (what the client handed back) as JSON lines to FILE.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Run a client once per n and find where results stop coming back inline.
    Bracket(BracketArgs),
    /// A small MCP client with a known inline limit, built in so `bracket` and `check` can be
    /// tried (and tested) without installing an agent CLI: it calls `emit` with n on the first
    /// server of an MCP config and prints the text when it fits under the limit, otherwise
    /// saves it to a file and says so, as real clients do.
    TestClient {
        /// The MCP config (`{"mcpServers": {...}}`) naming the server to start.
        #[arg(long, value_name = "FILE")]
        mcp_config: PathBuf,
        /// How many UTF-16 units to ask `emit` for.
        #[arg(long)]
        n: u64,
        /// The most UTF-16 units this client passes on inline.
        #[arg(long, default_value_t = 50_000)]
        limit: u64,
        /// Where a result over the limit is saved (default: the temp dir).
        #[arg(long, value_name = "DIR")]
        saved_dir: Option<PathBuf>,
    },
    /// Check that a client's threshold is still N; exit 1 if it moved.
    Check(CheckArgs),
    /// Print a shell completion script, e.g. `probe completions bash > /etc/bash_completion.d/probe`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff) on stdout, or write probe.1 and one page per subcommand to DIR.
    Man {
        /// Write the pages into DIR instead.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
struct CallArgs {
    /// The tool to call.
    #[arg(long, default_value = "emit")]
    tool: String,
    /// The tool's arguments as a JSON object (instead of --n and --fill).
    #[arg(long, value_name = "JSON", conflicts_with_all = ["n", "fill"])]
    args: Option<String>,
    /// n for `emit`.
    #[arg(long, default_value_t = 1000)]
    n: u64,
    /// Fill for `emit`: ascii, astral or lines.
    #[arg(long, default_value = "ascii")]
    fill: String,
    /// Exit 1 when the reply's text is over N UTF-16 units.
    #[arg(long, value_name = "N")]
    cap: Option<u64>,
    /// Give up on the server after this long (e.g. 30s, 2m).
    #[arg(long, default_value = "30s")]
    timeout: String,
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
    /// `claude` for the Claude Code preset, or a shell command in which `{mcp_config}` becomes
    /// the path of an MCP config that starts `probe serve` and n in braces becomes the point.
    // (Clap's help renderer turns a literal n in braces into a line break, hence the wording.)
    #[arg(long)]
    client: String,
    /// The claude binary for `--client claude`.
    #[arg(long, value_name = "PATH", default_value = "claude")]
    claude_bin: PathBuf,
    /// What the stand-in's count_tokens answers (claude preset; default: units / 4).
    #[arg(long, value_name = "N")]
    count_tokens: Option<u64>,
    /// Fill for every point: ascii, astral or lines.
    #[arg(long, default_value = "ascii")]
    fill: String,
    /// A regex that marks a reply as saved to a file; repeat for more (replaces the defaults).
    #[arg(long = "spill-pattern", value_name = "REGEX")]
    spill_patterns: Vec<String>,
    /// Limit for one client run (e.g. 120s); a run over it is killed and is an `error`.
    #[arg(long, default_value = "120s")]
    timeout: String,
    /// Output folder for results.txt, results.json and per-point logs.
    #[arg(long, default_value = "probe-out")]
    out: PathBuf,
    /// Print the JSON report on stdout instead of the text (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// What to print on stdout: the text, GitHub-flavoured Markdown, or the JSON report. The
    /// files in --out are the same either way.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = format_parser())]
    format: Format,
}

#[derive(Debug, Args)]
struct BracketArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The points to run, e.g. 49990,50000,50010.
    #[arg(long, value_name = "N,N,...", conflicts_with_all = ["around", "bisect"])]
    points: Option<String>,
    /// Run N-STEP, N and N+STEP.
    #[arg(long, value_name = "N", requires = "step", conflicts_with = "bisect")]
    around: Option<u64>,
    /// The distance between points for --around.
    #[arg(long, value_name = "S", requires = "around")]
    step: Option<u64>,
    /// Find the exact threshold in LO..HI (LO inline, HI not) by bisection.
    #[arg(long, value_name = "LO..HI")]
    bisect: Option<String>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The threshold expected: inline up to N, not from N+1.
    #[arg(long, value_name = "N")]
    expect: u64,
    /// How far under the threshold the suggested reply cap stays.
    #[arg(long, default_value = "20%")]
    margin: String,
}

/// `--color`'s values, listed in help and completions.
fn color_parser() -> impl clap::builder::TypedValueParser<Value = ColorChoice> {
    PossibleValuesParser::new(ColorChoice::NAMES).map(|s| s.parse().expect("a listed value"))
}

/// `--format`'s values, listed in help and completions.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::NAMES).map(|s| s.parse().expect("a listed value"))
}

impl Cli {
    /// Runs the subcommands that only describe the command line (completions, man pages);
    /// `None` for every other subcommand.
    pub fn describe(&self) -> Option<Exit> {
        let result = match &self.command {
            Sub::Completions { shell } => {
                report::manual::print_completions(*shell, Cli::command());
                Ok(())
            }
            Sub::Man { out } => report::manual::write_man_pages(Cli::command(), out.as_deref()),
            _ => return None,
        };
        Some(match result {
            Ok(()) => Exit::Ok,
            Err(e) => {
                eprintln!("probe: {e}");
                Exit::Usage
            }
        })
    }

    /// Validates the arguments into a command; `Err` is the one-line usage error.
    pub fn into_command(self) -> Result<Command, String> {
        let color = self.color;
        Ok(match self.command {
            Sub::Completions { .. } | Sub::Man { .. } => {
                return Err("completions and man are handled before this".into())
            }
            Sub::Serve { log } => Command::Serve(ServeSettings { log }),
            Sub::TestClient {
                mcp_config,
                n,
                limit,
                saved_dir,
            } => Command::TestClient(crate::testclient::TestClientSettings {
                mcp_config,
                n,
                limit,
                saved_dir,
            }),
            Sub::Model {
                port,
                count_tokens,
                log,
            } => Command::Model(ModelSettings {
                port,
                count_tokens,
                log,
                keep_events: false,
            }),
            Sub::Call(a) => {
                let arguments = match &a.args {
                    Some(text) => {
                        let v: serde_json::Value = serde_json::from_str(text)
                            .map_err(|e| format!("--args is not JSON: {e}"))?;
                        if !v.is_object() {
                            return Err("--args must be a JSON object".into());
                        }
                        v
                    }
                    None => {
                        parse_fill(&a.fill)?;
                        serde_json::json!({"n": a.n, "fill": a.fill})
                    }
                };
                Command::Call(CallSettings {
                    tool: a.tool,
                    arguments,
                    cap: a.cap,
                    timeout: parse_duration(&a.timeout)?,
                    json: a.json,
                    server: a.server,
                })
            }
            Sub::Bracket(a) => {
                let plan = if let Some(points) = &a.points {
                    Plan::Points(parse_points(points)?)
                } else if let (Some(n), Some(step)) = (a.around, a.step) {
                    if step == 0 {
                        return Err("--step must be at least 1".into());
                    }
                    Plan::Points(vec![n.saturating_sub(step), n, n + step])
                } else if let Some(range) = &a.bisect {
                    let (lo, hi) = parse_range(range)?;
                    Plan::Bisect { lo, hi }
                } else {
                    return Err("give one of --points, --around N --step S, --bisect LO..HI".into());
                };
                Command::Bracket(BracketSettings {
                    client: client_settings(a.client, color)?,
                    plan,
                })
            }
            Sub::Check(a) => {
                if a.expect >= MAX_N {
                    return Err(format!("--expect must be under {MAX_N}"));
                }
                Command::Check(CheckSettings {
                    expect: a.expect,
                    margin: parse_margin(&a.margin)?,
                    client: client_settings(a.client, color)?,
                })
            }
        })
    }
}

fn client_settings(
    a: ClientArgs,
    color: ColorChoice,
) -> Result<crate::bracket::ClientSettings, String> {
    let client = if a.client == "claude" {
        Client::Claude {
            bin: a.claude_bin,
            count_tokens: a.count_tokens,
        }
    } else {
        if a.client.trim().is_empty() {
            return Err("--client must be `claude` or a command".into());
        }
        Client::Command(a.client)
    };
    for p in &a.spill_patterns {
        regex::Regex::new(p).map_err(|e| format!("--spill-pattern {p:?} is not a regex: {e}"))?;
    }
    Ok(crate::bracket::ClientSettings {
        client,
        fill: parse_fill(&a.fill)?,
        spill_patterns: a.spill_patterns,
        timeout: parse_duration(&a.timeout)?,
        out: a.out,
        json: a.json,
        format: a.format,
        color,
    })
}

fn parse_fill(text: &str) -> Result<Fill, String> {
    Fill::parse(text)
        .ok_or_else(|| format!("--fill must be one of ascii, astral, lines, not {text:?}"))
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    report::duration::parse(text).map_err(|e| format!("--timeout: {e}"))
}

fn parse_n(text: &str, what: &str) -> Result<u64, String> {
    let n: u64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("{what}: {text:?} is not a whole number"))?;
    if n > MAX_N {
        return Err(format!("{what}: {n} is over the maximum {MAX_N}"));
    }
    Ok(n)
}

fn parse_points(text: &str) -> Result<Vec<u64>, String> {
    let mut points = text
        .split(',')
        .map(|p| parse_n(p, "--points"))
        .collect::<Result<Vec<_>, _>>()?;
    points.sort_unstable();
    points.dedup();
    Ok(points)
}

fn parse_range(text: &str) -> Result<(u64, u64), String> {
    let (lo, hi) = text
        .split_once("..")
        .ok_or_else(|| format!("--bisect: {text:?} is not LO..HI"))?;
    let (lo, hi) = (parse_n(lo, "--bisect")?, parse_n(hi, "--bisect")?);
    if lo >= hi {
        return Err(format!("--bisect: LO ({lo}) must be below HI ({hi})"));
    }
    Ok((lo, hi))
}

/// `20%` or `20` is a fifth; `0.2` too.
fn parse_margin(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, percent) = match t.strip_suffix('%') {
        Some(num) => (num, true),
        None => (t, false),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("--margin: {text:?} is not a percentage such as 20%"))?;
    let fraction = if percent || v >= 1.0 { v / 100.0 } else { v };
    if !(0.0..1.0).contains(&fraction) {
        return Err(format!("--margin: {text:?} must be from 0% to under 100%"));
    }
    Ok(fraction)
}

/// The whole `probe` command line from the process's arguments: parse, run, exit code.
pub fn main() -> Exit {
    use clap::Parser as _;
    let cli = Cli::parse();
    if let Some(exit) = cli.describe() {
        return exit;
    }
    match cli.into_command() {
        Ok(command) => crate::run(command),
        Err(message) => {
            eprintln!("probe: {message}");
            Exit::Usage
        }
    }
}
