//! The `probe` command line: parse, validate into settings, run, exit.

fn main() -> std::process::ExitCode {
    probe::cli::main().into()
}
