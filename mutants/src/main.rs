//! The `mutants` binary: parse the command line, run it (`mutants::commands::run`), exit with
//! its code. A command line clap refuses goes through the exit policy's `usage`, as in gate and
//! probe: exit 2, with every argument it quotes escaped.

use clap::Parser;

fn main() -> std::process::ExitCode {
    match mutants::cli::Cli::try_parse() {
        Ok(cli) => mutants::commands::run(cli).into(),
        Err(e) => cmdline::exit::usage(e).into(),
    }
}
