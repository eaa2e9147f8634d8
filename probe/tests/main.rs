//! probe's integration tests, one binary: each module drives the built `probe` for one concern.

mod common;

mod bracket;
mod call;
mod claims;
mod claude;
mod faults;
mod formats;
mod interop;
mod model;
mod serve;
mod standins;
mod testclient;
