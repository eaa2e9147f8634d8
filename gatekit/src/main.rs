//! `gatekit`: the umbrella over the three peer tools. `gatekit demo` tours them on a sample;
//! `gatekit gate ...` and `gatekit mutants ...` are those tools; linked under the name `gate`,
//! `mutants` or `probe`, the binary is that tool (the demo runs its steps that way).

mod cli;
mod demo;

fn main() -> std::process::ExitCode {
    cli::main().into()
}
