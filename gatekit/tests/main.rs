//! gatekit's end-to-end tests: the umbrella binary as a user runs it.

mod demo;
mod dispatch;
mod examples;
mod exits;
mod layout;
mod promises;
mod reports;
mod widths;

/// The umbrella binary, hermetic and under the outer timeout.
fn gatekit() -> assert_cmd::Command {
    testkit::bin(env!("CARGO_BIN_EXE_gatekit"))
}
