//! Build outputs (`target/` for Cargo) handed from one checkout to another: from a run's first
//! checkout to the others, and from one run to the next through gatekit's cache folder.
//!
//! Within a run, the first copy builds (its baseline) and the others get its build folders
//! instead of N cold builds fighting for the cores. Between runs, a snapshot of the first
//! copy's folders taken right after its green baseline (the unmutated tree, built) is kept
//! under `cache_dir()/worktrees/KEY/`, and put into the next run's first copy before its
//! baseline, so a repeat run builds only what changed.
//!
//! The one thing to know: build tools judge staleness by times and some outputs hold the
//! absolute path they were built at. So a hand-over keeps every output's mtime (`copy`),
//! gives each source file of the new checkout its twin's mtime back only when its bytes are
//! the same (`stamps`), and makes Cargo rebuild every unit that baked in the old path
//! (`cargo`). The build tool still runs in every copy and decides for itself; the cache only
//! saves work it agrees is the same. That, and the baseline run again cold when it fails on a
//! cache, is why a cache never changes a verdict.
//!
//! The cache is keyed by the repository's path (its top folder, canonical): the outputs are
//! this checkout's, built by this user's toolchain; a root commit would merge unrelated clones
//! of one project (a CI workspace and a reviewer's clone) into one cache they would overwrite
//! in turn, and a shallow clone has no stable root. Saving is atomic: a snapshot is written
//! into a staging folder named for its run and renamed into place only when whole, so a killed
//! run leaves a staging folder the next run removes, never a half cache that is used.

use crate::git::Git;
use crate::setup::WorktreeSetup;

mod cargo;
mod copy;
mod snapshot;
mod stamps;
mod store;

pub use copy::remove_outputs;
pub use snapshot::{hand_over, HandedOver, Snapshot};
pub use store::{clean, Cleaned, Restored, Store};

/// The build folders `setup` caches in checkouts of `repo`: its `cache` list when it says one
/// (`cache = []` is none), else the ecosystem's default, when git ignores it: `target` for a
/// Cargo project (`Cargo.toml` at the root).
pub fn paths_for(setup: &WorktreeSetup, repo: &Git) -> Vec<String> {
    if let Some(paths) = &setup.cache {
        return paths.clone();
    }
    let cargo = repo.dir().join("Cargo.toml").is_file();
    if cargo
        && !crate::setup::is_not_ignored(repo, "target")
        && !setup.link.iter().any(|l| l == "target")
    {
        vec!["target".into()]
    } else {
        Vec::new()
    }
}
