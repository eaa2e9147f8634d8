//! The `gate` binary: parse the command line, run it (`gate::commands::run`), exit with its code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    match gate::cli::Cli::try_parse() {
        Ok(cli) => gate::commands::run(cli).into(),
        Err(e) => cmdline::exit::usage(e).into(),
    }
}
