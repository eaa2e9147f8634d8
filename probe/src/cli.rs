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
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// Measure where an MCP client stops passing tool results inline.
#[derive(Debug, Parser)]
#[command(name = "probe", version, about)]
pub(crate) struct Cli {
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
        #[arg(long, value_name = "N", value_parser = tokens_parser)]
        count_tokens: Option<u64>,
        /// Write events (what the client handed back) as JSON lines to FILE.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
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
struct TestClientArgs {
    /// The MCP config (`{"mcpServers": {...}}`) naming the server to start.
    #[arg(long, value_name = "FILE")]
    mcp_config: PathBuf,
    /// How many UTF-16 units to ask `emit` for.
    #[arg(long, value_parser = units_parser)]
    n: u64,
    /// The most UTF-16 units this client passes on inline.
    #[arg(long, default_value = "50000", value_parser = units_parser)]
    limit: u64,
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
    #[arg(long, default_value = "1000", value_parser = units_parser)]
    n: u64,
    /// Fill for `emit`: ascii, astral or lines.
    #[arg(long, default_value = "ascii", value_parser = fill_parser())]
    fill: Fill,
    /// Exit 1 when the reply's text is over N UTF-16 units.
    #[arg(long, value_name = "N", value_parser = cap_parser)]
    cap: Option<u64>,
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
    /// `claude` for the Claude Code preset, or a shell command in which `{mcp_config}` becomes
    /// the path of an MCP config that starts `probe serve` and n in braces becomes the point.
    // (Clap's help renderer turns a literal n in braces into a line break, hence the wording.)
    #[arg(long)]
    client: String,
    /// The claude binary for `--client claude`.
    #[arg(long, value_name = "PATH", default_value = "claude")]
    claude_bin: PathBuf,
    /// What the stand-in's count_tokens answers (claude preset; default: units / 4).
    #[arg(long, value_name = "N", value_parser = tokens_parser)]
    count_tokens: Option<u64>,
    /// Fill for every point: ascii, astral or lines.
    #[arg(long, default_value = "ascii", value_parser = fill_parser())]
    fill: Fill,
    /// A regex that marks a reply as saved to a file; repeat for more (replaces the defaults).
    #[arg(long = "spill-pattern", value_name = "REGEX")]
    spill_patterns: Vec<String>,
    /// Limit for one client run (e.g. 120s; at most 30d); a run over it is killed and is an
    /// `error`.
    #[arg(long, default_value = "120s", value_parser = timeout_parser)]
    timeout: Duration,
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
}

#[derive(Debug, Args)]
struct CheckArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The threshold expected: inline up to N, not from N+1.
    #[arg(long, value_name = "N", value_parser = expect_parser)]
    expect: u64,
    /// How far under the threshold the suggested reply cap stays (0% to under 100%).
    #[arg(long, default_value = "20%", value_parser = margin_parser)]
    margin: f64,
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
    pub(crate) fn describe(&self) -> Option<Exit> {
        let result = match &self.command {
            Sub::Completions { shell } => {
                // Into a buffer first: clap_complete panics when its writer fails, and a
                // closed stdout (`probe completions bash | head -1`) is no reason to.
                let mut cmd = Cli::command();
                let name = cmd.get_name().to_string();
                let mut script = Vec::new();
                clap_complete::generate(*shell, &mut cmd, name, &mut script);
                crate::print_out(&String::from_utf8_lossy(&script))
            }
            Sub::Man { out } => report::manual::write_man_pages(Cli::command(), out.as_deref()),
            _ => return None,
        };
        Some(match result {
            Ok(()) => Exit::Ok,
            // The reader of stdout went away: a quiet end.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::Ok,
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "probe: {e}");
                Exit::Usage
            }
        })
    }

    /// Validates the arguments into a command; `Err` is the one-line usage error.
    pub(crate) fn into_command(self) -> Result<Command, String> {
        let color = self.color;
        Ok(match self.command {
            Sub::Completions { .. } | Sub::Man { .. } => {
                return Err("completions and man are handled before this".into())
            }
            Sub::Serve { log } => Command::Serve(ServeSettings { log }),
            Sub::TestClient(a) => Command::TestClient(crate::testclient::TestClientSettings {
                mcp_config: a.mcp_config,
                n: a.n,
                limit: a.limit,
                saved_dir: a.saved_dir,
                mode: a.mode,
                spill_message: a.spill_message,
                client_info: crate::client::Implementation {
                    name: a.client_name,
                    version: a.client_version,
                },
                delay: a.delay,
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
                    client: client_settings(a.client, color)?,
                    plan,
                })
            }
            Sub::Check(a) => Command::Check(CheckSettings {
                expect: a.expect,
                margin: a.margin,
                client: client_settings(a.client, color)?,
            }),
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
        fill: a.fill,
        spill_patterns: a.spill_patterns,
        timeout: a.timeout,
        out: a.out,
        json: a.json,
        format: a.format,
        color,
    })
}

/// The most points one `--points` may list: a run per point, so more is surely a mistake.
pub const MAX_POINTS: usize = 1000;
/// The largest `--count-tokens` answer: far over any context window, far under any overflow.
pub const MAX_TOKENS: u64 = 1_000_000_000_000;
/// The largest `--cap`: a size in UTF-16 units, bounded so arithmetic on it cannot overflow.
pub const MAX_CAP: u64 = 1_000_000_000_000;

/// `--fill`'s values, listed in help and completions.
fn fill_parser() -> impl clap::builder::TypedValueParser<Value = Fill> {
    PossibleValuesParser::new(Fill::NAMES).map(|s| Fill::parse(&s).expect("a listed value"))
}

/// A whole number with optional `_` separators, at most `max`.
fn whole(text: &str, max: u64) -> Result<u64, String> {
    let t = text.trim().replace('_', "");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not a whole number"));
    }
    match t.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("{t} is over the maximum {max}")),
    }
}

/// A size for `emit`: 0 to [`MAX_N`] UTF-16 units.
fn units_parser(text: &str) -> Result<u64, String> {
    whole(text, MAX_N)
}

fn step_parser(text: &str) -> Result<u64, String> {
    match units_parser(text)? {
        0 => Err("the step must be at least 1".into()),
        step => Ok(step),
    }
}

fn expect_parser(text: &str) -> Result<u64, String> {
    // N+1 is run too, and must be a size emit serves.
    whole(text, MAX_N - 1)
}

fn tokens_parser(text: &str) -> Result<u64, String> {
    whole(text, MAX_TOKENS)
}

fn cap_parser(text: &str) -> Result<u64, String> {
    whole(text, MAX_CAP)
}

/// A timeout: a duration (see `report::duration`, at most 30 days) that is not zero.
fn timeout_parser(text: &str) -> Result<Duration, String> {
    match report::duration::parse(text).map_err(|e| e.to_string())? {
        d if d.is_zero() => Err(format!("{text:?} is zero: nothing could finish in it")),
        d => Ok(d),
    }
}

/// A delay: any duration `report::duration` reads, zero included.
fn delay_parser(text: &str) -> Result<Duration, String> {
    report::duration::parse(text).map_err(|e| e.to_string())
}

/// `--points`: distinct sizes in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Points(pub Vec<u64>);

fn points_parser(text: &str) -> Result<Points, String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > MAX_POINTS {
        return Err(format!(
            "{} points is over the maximum {MAX_POINTS}",
            parts.len()
        ));
    }
    let mut points = parts
        .into_iter()
        .map(units_parser)
        .collect::<Result<Vec<_>, _>>()?;
    points.sort_unstable();
    points.dedup();
    Ok(Points(points))
}

/// `--around N --step S`: N-S, N and N+S, each a size emit serves.
fn around(n: u64, step: u64) -> Result<Vec<u64>, String> {
    let below = n.checked_sub(step).ok_or_else(|| {
        format!("--around {n} --step {step}: {n}-{step} is below 0; take a smaller step")
    })?;
    let above = n.checked_add(step).filter(|a| *a <= MAX_N).ok_or_else(|| {
        format!("--around {n} --step {step}: {n}+{step} is over the maximum {MAX_N}")
    })?;
    Ok(vec![below, n, above])
}

/// `--bisect LO..HI`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub lo: u64,
    pub hi: u64,
}

fn range_parser(text: &str) -> Result<Range, String> {
    let (lo, hi) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not LO..HI"))?;
    let (lo, hi) = (units_parser(lo)?, units_parser(hi)?);
    if lo >= hi {
        return Err(format!("LO ({lo}) must be below HI ({hi})"));
    }
    Ok(Range { lo, hi })
}

/// `20%` or `20` is a fifth; `0.2` too. From 0% to under 100%.
fn margin_parser(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, percent) = match t.strip_suffix('%') {
        Some(num) => (num, true),
        None => (t, false),
    };
    let num = num.trim();
    // Digits and one point only: no sign, no exponent, no `inf` or `NaN`.
    if num.is_empty()
        || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || num.bytes().filter(|&b| b == b'.').count() > 1
    {
        return Err(format!("{text:?} is not a percentage such as 20%"));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a percentage such as 20%"))?;
    let fraction = if percent || v >= 1.0 { v / 100.0 } else { v };
    if !(0.0..1.0).contains(&fraction) {
        return Err(format!("{text:?} must be from 0% to under 100%"));
    }
    Ok(fraction)
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
    report::escape::text(&text).into_owned()
}

/// The whole `probe` command line from the process's arguments: parse, run, exit code.
pub fn main() -> Exit {
    use clap::error::ErrorKind;
    use clap::Parser as _;
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A bad value is one line naming the flag and the value, exit 2.
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::ValueValidation | ErrorKind::InvalidValue
            ) =>
        {
            let _ = writeln!(std::io::stderr(), "probe: {}", value_error(&e));
            return Exit::Usage;
        }
        Err(e) => {
            // Help and version on stdout (0), other usage errors with clap's hints (2); a
            // closed stdout is no reason to panic.
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
        }
    };
    if let Some(exit) = cli.describe() {
        return exit;
    }
    match cli.into_command() {
        Ok(command) => crate::run(command),
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "probe: {message}");
            Exit::Usage
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever is typed, a value parser answers without panicking, and what it accepts is
        /// in bounds.
        #[test]
        fn value_parsers_accept_only_bounded_values(text in "[0-9_.,%a-z -]{0,24}|\\PC{0,12}") {
            if let Ok(n) = units_parser(&text) {
                prop_assert!(n <= MAX_N);
            }
            if let Ok(step) = step_parser(&text) {
                prop_assert!((1..=MAX_N).contains(&step));
            }
            if let Ok(n) = expect_parser(&text) {
                prop_assert!(n < MAX_N);
            }
            if let Ok(Points(p)) = points_parser(&text) {
                prop_assert!(p.len() <= MAX_POINTS && p.iter().all(|n| *n <= MAX_N));
                prop_assert!(p.windows(2).all(|w| w[0] < w[1]));
            }
            if let Ok(Range { lo, hi }) = range_parser(&text) {
                prop_assert!(lo < hi && hi <= MAX_N);
            }
            if let Ok(m) = margin_parser(&text) {
                prop_assert!((0.0..1.0).contains(&m));
            }
            if let Ok(d) = timeout_parser(&text) {
                prop_assert!(!d.is_zero() && d <= report::duration::MAX);
            }
        }

        /// --around never yields a point below 0 or over the maximum, whatever N and S are.
        #[test]
        fn around_stays_in_bounds(n in any::<u64>(), step in any::<u64>()) {
            if let Ok(points) = around(n, step) {
                prop_assert_eq!(points, vec![n - step, n, n + step]);
                prop_assert!(n + step <= MAX_N);
            }
        }
    }

    #[test]
    fn sizes_take_separators_and_refuse_signs_and_exponents() {
        assert_eq!(units_parser("50_000"), Ok(50_000));
        assert_eq!(units_parser(" 7 "), Ok(7));
        for bad in [
            "",
            "-1",
            "+1",
            "1e3",
            "0x10",
            "1.5",
            "10000001",
            "18446744073709551616",
        ] {
            assert!(units_parser(bad).is_err(), "{bad}");
        }
        assert_eq!(margin_parser("20%"), Ok(0.2));
        assert_eq!(margin_parser("0.2"), Ok(0.2));
        assert_eq!(margin_parser("20"), Ok(0.2));
        assert_eq!(range_parser("1..2"), Ok(Range { lo: 1, hi: 2 }));
        assert_eq!(around(5, 5), Ok(vec![0, 5, 10]));
        assert!(around(5, 6).is_err());
        assert!(around(MAX_N, 1).is_err());
    }
}
