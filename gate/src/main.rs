use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = gate::cli::Cli::parse();
    gate::commands::run(cli).into()
}
