//! probe's integration tests, one binary: each module drives the built `probe` for one concern.

mod common;

mod bracket;
mod call;
mod claims;
mod clients_out;
mod faults;
mod formats;
mod inputs;
mod interop;
mod model;
mod moved;
mod presets;
mod serve;
mod standins;
mod testclient;
mod turn;
