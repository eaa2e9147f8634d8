//! The `probe` command line: parse, validate into settings, run, exit.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    if let Some(exit) = cli.describe() {
        return exit.into();
    }
    let exit = match cli.into_command() {
        Ok(command) => probe::run(command),
        Err(message) => {
            eprintln!("probe: {message}");
            report::Exit::Usage
        }
    };
    exit.into()
}
