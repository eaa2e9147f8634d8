//! A candidate: a patch, the base commit it applies to, and the sha256 manifest of what it
//! leaves in place; and everything needed to rebuild it somewhere safe and check it.
//!
//! Shared by `gate` (which applies and gates candidates) and `mutants` (whose `--candidate`
//! runs mutate a candidate's worktree): [`git`] runs the real git, [`worktree`] makes and
//! cleans up detached worktrees, [`setup`] reads the `[worktree]` table, [`cache`] hands build
//! outputs between checkouts and keeps them between runs, [`config`] reads gate.toml,
//! [`apply`] applies a candidate and runs its checks, [`pack`] makes one from staged changes,
//! [`attest`] writes and checks the signed statements that bind a verdict to it.
//! Nothing here ever writes to the user's checkout.

pub mod apply;
pub mod attest;
pub mod cache;
pub mod canary;
pub mod config;
pub mod git;
pub mod installs;
pub mod pack;
pub mod pristine;
pub mod setup;
pub mod worktree;

pub use apply::{Applied, Candidate, Place, Prepared};
