use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = mutants::cli::Cli::parse();
    mutants::commands::run(cli).into()
}
