//! gate's end-to-end tests: the built `gate` binary on real repositories in temp dirs, one
//! module per concern. One test binary for the crate, so the fixtures in `common` are built once.

mod apply;
mod approvals;
mod attest;
mod build;
mod canary;
mod cites;
mod common;
mod cut_short;
mod ecosystems;
mod faults;
mod formats;
mod habits;
mod hostile_git;
mod inputs;
mod linked;
mod liveness;
mod outputs;
mod owed;
mod ownership;
mod reasons;
mod recorded;
mod run;
mod trees;
mod whole_change;
