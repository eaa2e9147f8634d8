//! `mutants`' integration tests, one binary: each module drives the real `mutants` binary on
//! real git repositories in temp dirs (`cargo test -p mutants --test main MODULE::`).

mod common;

mod build;
mod cache;
mod cores;
mod faults;
mod formats;
mod inputs;
mod isolation;
mod order;
mod run;
mod workflow;
