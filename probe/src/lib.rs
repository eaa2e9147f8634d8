//! `probe`: measures where an MCP client stops passing tool results inline.
//!
//! The pieces: a stdio MCP [`server`] whose one tool [`emit`]s text of exactly n UTF-16 units
//! between markers; a minimal [`client`] that calls any stdio server and sizes its reply; a
//! [`model`] stand-in for the Anthropic Messages API so Claude Code can be driven offline; and the
//! [`bracket`] driver (with [`check`] on top) that runs a client over many n, classifies each run
//! from what was sent and what came back, and finds the threshold. [`protocol`] is the JSON-RPC
//! framing they share; [`testclient`] is a small client with a known limit, for trying the driver
//! without an agent CLI.

pub(crate) mod bracket;
pub(crate) mod check;
pub mod cli;
pub(crate) mod client;
pub(crate) mod emit;
pub(crate) mod model;
pub(crate) mod protocol;
pub(crate) mod server;
pub(crate) mod testclient;

use report::Exit;
use std::io::Write as _;

/// An error that carries the exit code it should end the run with: bad input is 2, a failed
/// precondition (a server that will not start, a client that is not installed) is 4.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Precondition(String),
}

/// A validated command, ready to run.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    Serve(server::ServeSettings),
    Call(client::CallSettings),
    Model(model::ModelSettings),
    Bracket(bracket::BracketSettings),
    Check(check::CheckSettings),
    TestClient(testclient::TestClientSettings),
}

/// Runs `command`; errors are printed here, once, as one line with their causes.
pub(crate) fn run(command: Command) -> Exit {
    // SIGINT and SIGTERM set a flag every command polls while it waits, so each ends with 130
    // after cleaning up (children killed, files whole) rather than dying mid-write.
    report::interrupt::install();
    // A run killed with SIGKILL could clean nothing: its processes and scratch go now.
    let stale = report::scratch::clean_stale();
    if stale.processes > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "probe: killed {} process(es) left by a gatekit run that was killed",
            stale.processes
        );
    }
    let result = match command {
        Command::Serve(s) => server::serve(&s, server::Stdin, std::io::stdout())
            .map(|end| match end {
                server::End::Interrupted => Exit::Interrupted,
                server::End::Eof | server::End::ClientGone => Exit::Ok,
            })
            .map_err(anyhow::Error::from),
        Command::Call(s) => client::run_call(&s),
        Command::Model(s) => model::run_model(s),
        Command::Bracket(s) => bracket::run_bracket(&s),
        Command::Check(s) => check::run_check(&s),
        Command::TestClient(s) => testclient::run_test_client(&s),
    };
    let exit = match result {
        Ok(exit) => exit,
        Err(e) => {
            // Causes can quote outside text (a server's error message): escaped, one line.
            let text = format!("{e:#}");
            let _ = writeln!(std::io::stderr(), "probe: {}", report::escape::text(&text));
            exit_for(&e)
        }
    };
    report::exit::sweep_strays("probe");
    report::scratch::finish();
    exit
}

/// Writes `text` to stdout. A closed stdout (`probe call ... | head -1`: the reader has all it
/// wanted) is a quiet end, not an error: nothing is lost, since every file is already written.
pub(crate) fn print_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The exit code for an error: what it says it is, else 4 (something stopped the judging).
pub(crate) fn exit_for(e: &anyhow::Error) -> Exit {
    if report::interrupt::requested() {
        return Exit::Interrupted;
    }
    match e.downcast_ref::<Failure>() {
        Some(Failure::Usage(_)) => Exit::Usage,
        _ => Exit::Precondition,
    }
}
