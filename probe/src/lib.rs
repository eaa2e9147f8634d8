//! `probe`: measures where an MCP client stops passing tool results inline.
//!
//! It drives real agent CLIs against two harnesses that live in crates of their own: `mcp` (a
//! stdio MCP server whose one tool `emit`s text of exactly n UTF-16 units between markers) and
//! `standin` (a loopback stand-in for the model APIs, so a client runs offline, with no key).
//! What stays here is the measuring: the `bracket` driver (with `check` on top) runs a client
//! over many n, judges each run from what was sent and what came back, and finds the threshold;
//! `units` infers the unit a client counts in from thresholds under several fills; `presets`
//! holds how each agent CLI runs offline (data below the driver that uses it); `clients` is the
//! `probe clients` command, beside the other commands; `client`
//! is `probe call`, a minimal client for any stdio server; `testclient` is a small client with
//! a known limit, for trying the driver without an agent CLI; `model` runs the stand-in in the
//! foreground. The command line is [`cli`], whose [`cli::main`] is the one entry point other
//! crates call. It never links `gate` or `mutants`.

pub(crate) mod bracket;
pub(crate) mod check;
pub mod cli;
pub(crate) mod client;
pub(crate) mod clients;
mod model;
pub(crate) mod presets;
pub(crate) mod testclient;
pub(crate) mod units;

/// The model stand-in's log events, typed: what a test or a caller reads back from model.log.
pub use standin::{ContentKind, ModelEvent};

use cmdline::Exit;

/// Bad input found after the command line was parsed: exit 2, as in every gatekit tool (see
/// `cmdline::exit::Stop`); code that knows it has a failed precondition (exit 4) says
/// `runner::stop::PreconditionFailed`.
pub(crate) use cmdline::exit::Failure;

/// A validated command, ready to run.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    Serve(mcp::server::ServeSettings),
    Call(client::CallSettings),
    Model(standin::ModelSettings),
    Bracket(bracket::BracketSettings),
    Check(check::CheckSettings),
    Clients(clients::matrix::MatrixSettings),
    TestClient(testclient::TestClientSettings),
}

/// Runs `command` through `cmdline::exit::run_tool`, the policy every gatekit tool shares: SIGINT
/// and SIGTERM become a request each command polls (so it ends with 130 after cleaning up), an
/// error is printed once on one line, a closed stdout is a quiet end, and what the runs left is
/// swept.
pub(crate) fn run(command: Command) -> Exit {
    cmdline::exit::run_tool("probe", || {
        // Every probe command polls the interrupt flag and cleans up itself: its children
        // killed, its results whole.
        files::interrupt::cleans_up();
        dispatch(command)
    })
}

fn dispatch(command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Serve(s) => Ok(
            match mcp::server::serve(&s, mcp::server::Stdin, std::io::stdout())? {
                mcp::server::End::Interrupted => Exit::Interrupted,
                mcp::server::End::Eof | mcp::server::End::ClientGone => Exit::Ok,
            },
        ),
        Command::Call(s) => client::run_call(&s),
        Command::Model(s) => model::run_model(s),
        Command::Bracket(s) => bracket::run_bracket(&s),
        Command::Check(s) => check::run_check(&s),
        Command::Clients(s) => clients::command::run_clients(&s),
        Command::TestClient(s) => testclient::run_test_client(&s),
    }
}

/// Writes `text` to stdout through `cmdline::exit::show`, where no failure to write stdout (a
/// closed pipe, `probe check | head -1`; a full disk) is an error, for every tool: every file
/// is written, the verdict still decides the exit code (a moved threshold is still 1), and the
/// model stand-in keeps serving after printing its port.
pub(crate) fn print_out(text: &str) -> std::io::Result<()> {
    cmdline::exit::show(text);
    Ok(())
}
