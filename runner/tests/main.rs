//! runner's integration tests, one binary: the runner against real child processes.
//!
//! Three more binaries stand apart because each needs a process of its own: `interrupt` (the
//! interrupt flag is process-wide), `sweep` (it looks at every child of the process) and
//! `orphan` (the subreaper rule applies while one run is in flight).

mod common;
mod grace;
mod runs;
mod watch;
