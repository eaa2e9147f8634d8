//! `mutants`' integration tests, one binary: each module drives the real `mutants` binary on
//! real git repositories in temp dirs (`cargo test -p mutants --test main MODULE::`).

mod common;

mod attest;
mod build;
mod cache;
mod canary;
mod cores;
mod cut_short;
mod equivalence;
mod fail_fast;
mod faults;
mod floor;
mod formats;
mod fresh;
mod generated;
mod hostile_git;
mod incremental;
mod inputs;
mod isolation;
mod liveness;
mod order;
mod reasons;
mod run;
mod runner_maps;
mod select;
mod select_faults;
mod suggest;
mod usage;
mod warm;
mod wholeness;
mod workflow;
