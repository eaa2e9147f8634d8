//! What a gatekit process killed with SIGKILL left behind, cleaned by the next one to start:
//! the processes still carrying its run tags, then its session folder.
//!
//! Apart from [`crate::scratch`] (which finds the dead sessions) and the process table (which
//! finds their processes) because it needs both, and neither needs the other.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::scratch::{self, RunId};

/// What [`clean_stale`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cleaned {
    /// Dead sessions whose folders were removed.
    pub sessions: usize,
    /// Processes still carrying a dead session's tag, killed.
    pub processes: usize,
}

/// Finds the sessions of gatekit processes that are gone (killed, even with SIGKILL), kills the
/// processes still carrying their run tags, and removes their folders. Only folders that pass
/// every ownership check are touched (see [`scratch::dead_sessions`]).
pub fn clean_stale() -> Cleaned {
    let mut cleaned = Cleaned::default();
    for (id, dir) in scratch::dead_sessions() {
        cleaned.processes += kill_tagged(&id);
        if scratch::remove_all(&dir).is_ok() {
            cleaned.sessions += 1;
        }
    }
    cleaned
}

/// Kills every process whose run tag has a part handed out by session `id`; returns how many.
fn kill_tagged(id: &RunId) -> usize {
    let prefix = format!("{}-", id.tag());
    let mut killed = BTreeSet::new();
    // A few passes: a dying parent may fork once more before its SIGKILL lands.
    for _ in 0..5 {
        let found = crate::procs::tagged_processes(|part| part.starts_with(prefix.as_bytes()));
        let fresh: Vec<i32> = found.into_iter().filter(|p| !killed.contains(p)).collect();
        if fresh.is_empty() {
            break;
        }
        for pid in fresh {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
            killed.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.len()
}
