//! The seam between the searches that run a client (the runners: the bracket's `search` and
//! `fills`, `check`, `clients`) and what shows their progress (a renderer, the bracket's
//! `ProgressView`): the runners say what they do as typed steps and never format a line; the
//! renderer decides what a person sees, as nextest's reporter does. This module names neither
//! side, so both can import it. The renderer is the `cmdline` output seam's: a
//! `cmdline::Reporter` with the bracket's `Lines`, which also reads the commands' [`Note`]s.

use std::path::Path;

use super::results::Point;
use crate::presets::Preset;

/// The point a runner is about to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// A point on its own (a listed point, an end of a range, a check's N and N+1).
    Point { n: u64, calls: u64 },
    /// A bisection's midpoint between the last inline n and the first over.
    Between {
        n: u64,
        lo: u64,
        hi: u64,
        calls: u64,
    },
}

/// What a search is after, when a run measures more than one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// `probe clients` starts on a client.
    Client(Preset),
    /// It looks for the client's per-turn budget in turns of `calls` results.
    Turn(Preset, u64),
}

/// A point that finished, as the progress shows it (one step).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished<'a>(pub &'a Point);

/// What a probe command says on stderr whatever the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Note<'a> {
    /// No run of the client gave a verdict; each point's files are under `points`.
    NoVerdict { points: &'a Path },
    /// `probe clients` could measure no client.
    NoClientMeasured,
}

/// What a runner reports to. The runner hands over each point's work, so a live view can show
/// it running (a point blocks for as long as the client runs).
pub(crate) trait Observer {
    /// Runs `work`, the point `step`, and takes note of the point it gives.
    fn point(
        &mut self,
        step: Step,
        work: &mut dyn FnMut() -> anyhow::Result<Point>,
    ) -> anyhow::Result<Point>;
    /// A new search starts.
    fn search(&mut self, search: Search);
    /// At most `runs` more points follow in the part of the search that starts now (a
    /// bisection's midpoints, a range's two ends, a step of a search up or down).
    fn plan(&mut self, runs: usize);
    /// The run is over: whatever is shown live goes.
    fn clear(&mut self);
}
