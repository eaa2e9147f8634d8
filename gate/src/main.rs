use clap::Parser;

/// `gate`, or, when the binary is linked under their names, `mutants` and `probe`: `gate demo`
/// tours all three tools with nothing else built.
fn main() -> std::process::ExitCode {
    let invoked_as = std::env::args_os()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    match invoked_as.as_str() {
        "mutants" => mutants::commands::run(mutants::cli::Cli::parse()).into(),
        "probe" => probe::cli::main().into(),
        _ => match gate::cli::Cli::try_parse() {
            Ok(cli) => gate::commands::run(cli).into(),
            Err(e) => report::exit::usage(e).into(),
        },
    }
}
