//! A candidate: a patch, the base commit it applies to, and the sha256 manifest of what it
//! leaves in place; and everything needed to rebuild it somewhere safe and check it.
//!
//! Shared by `gate` (which applies and gates candidates) and `mutants` (whose `--candidate`
//! runs mutate a candidate's checkout): [`git`] runs the real git, [`checkout`] makes and
//! cleans up the checkouts (each a repository of its own), [`setup`] reads the `[worktree]`
//! table, [`cache`] hands build outputs between checkouts and keeps them between runs,
//! [`config`] reads gate.toml, [`suite`] is the one suite both tools read and run, [`apply`] applies a candidate and runs its checks ([`history`]:
//! where its base stands against the head), [`pack`]
//! makes one from staged changes (both over `patch`: what a patch did to an index),
//! [`attest`] writes and checks the signed statements that bind a verdict to it.
//! Nothing here ever writes to the user's checkout.

pub mod apply;
pub mod attest;
pub mod cache;
pub mod canary;
pub mod checkout;
pub mod config;
pub mod diff;
pub mod fresh;
pub mod git;
pub mod history;
pub mod ignored;
pub mod installs;
pub mod linked;
pub mod pack;
mod patch;
pub mod pristine;
pub mod setup;
pub mod suite;
mod unique_keys;

pub use apply::{Applied, Candidate, Place, Prepared};
