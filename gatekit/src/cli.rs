//! The umbrella's command line, and the dispatch to each tool's own entry point.
//!
//! Each tool keeps its command line whole: `gatekit gate ARGS` hands ARGS to gate's parser as
//! if `gate ARGS` had been typed, so help, errors and exit codes are the tool's own. Invoked
//! under a tool's name (a link named `probe`), the binary is that tool outright. `gatekit probe`
//! tells probe the word that makes this binary probe, so the MCP configs it writes for a client
//! start `gatekit probe serve`.

use std::ffi::OsString;

use clap::Parser;
use cmdline::Exit;

/// Tour gatekit's three tools on a built-in sample, or run one of them.
#[derive(Debug, Parser)]
#[command(name = "gatekit", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Build a sample repository and candidate in a temp dir, gate it, run its mutants, and
    /// check probe's test client: the whole workflow, start to finish.
    Demo {
        /// Keep the sample repository and print where it is.
        #[arg(long)]
        keep: bool,
    },
    /// Run `gate` with these arguments (`gatekit gate run --config gate.toml`).
    #[command(disable_help_flag = true)]
    Gate(ToolArgs),
    /// Run `probe` with these arguments (`gatekit probe check --expect 50000 ...`).
    #[command(disable_help_flag = true)]
    Probe(ToolArgs),
    /// Run `mutants` with these arguments (`gatekit mutants run mutants.toml`).
    #[command(disable_help_flag = true)]
    Mutants(ToolArgs),
}

/// Everything after the tool's name, handed to the tool's own parser untouched.
#[derive(Debug, clap::Args)]
struct ToolArgs {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<OsString>,
}

/// The name this process was started by (the file name of `argv[0]`).
fn invoked_as() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default()
}

/// Parses the command line (or the name it was invoked by) and runs it.
pub(crate) fn main() -> Exit {
    match invoked_as().as_str() {
        "gate" => gate_main(std::env::args_os()),
        "mutants" => mutants_main(std::env::args_os()),
        "probe" => probe::cli::main_from(std::env::args_os(), probe_serve_prefix()),
        _ => match Cli::try_parse() {
            Ok(cli) => run(cli),
            Err(e) => cmdline::exit::usage(e),
        },
    }
}

fn run(cli: Cli) -> Exit {
    match cli.command {
        Command::Demo { keep } => cmdline::exit::run_tool("gatekit", || crate::demo::run(keep)),
        Command::Gate(ToolArgs { args }) => gate_main(std::iter::once("gate".into()).chain(args)),
        Command::Mutants(ToolArgs { args }) => {
            mutants_main(std::iter::once("mutants".into()).chain(args))
        }
        Command::Probe(ToolArgs { args }) => {
            probe::cli::main_from(std::iter::once("probe".into()).chain(args), &["probe"])
        }
    }
}

/// The words that make this executable probe when it runs as `probe`: probe starts its MCP
/// server from the path it was started by when that is a path (a link named `probe`), and from
/// the running binary, which is this umbrella and needs `probe` first, when it was found on
/// `PATH` by its bare name.
fn probe_serve_prefix() -> &'static [&'static str] {
    let bare = std::env::args_os()
        .next()
        .is_none_or(|arg0| std::path::Path::new(&arg0).components().count() <= 1);
    if bare {
        &["probe"]
    } else {
        &[]
    }
}

/// `mutants`' own main: its parser over `args` (`argv[0]` first), its usage errors, its exit.
fn mutants_main(args: impl IntoIterator<Item = OsString>) -> Exit {
    match mutants::cli::Cli::try_parse_from(args) {
        Ok(cli) => mutants::commands::run(cli),
        Err(e) => cmdline::exit::usage(e),
    }
}

/// `gate`'s own main: its parser over `args` (`argv[0]` first), its usage errors, its exit.
fn gate_main(args: impl IntoIterator<Item = OsString>) -> Exit {
    match gate::cli::Cli::try_parse_from(args) {
        Ok(cli) => gate::commands::run(cli),
        Err(e) => cmdline::exit::usage(e),
    }
}
