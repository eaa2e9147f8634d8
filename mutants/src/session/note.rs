//! What a `mutants run` says as it goes, as values: the session and the engine hand these to
//! the run's `cmdline::Reporter`, and `render::lines` says what each reads as. Nothing here is
//! text a person reads; outside text (names, paths, a log's lines) is carried as it came and
//! escaped where it is rendered.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use crate::record::{Canary, ManifestCheck, Row, Tally};
use crate::run::Event;

/// An error a note quotes, as its own type shows it.
pub(crate) type Error<'a> = &'a dyn std::fmt::Display;

/// Something a run did or met, for the person watching it.
pub(crate) enum Note<'a> {
    /// A linked folder of the user's changed while the run went (its words are the
    /// fingerprint's, already escaped).
    LinkedChanged(&'a str),
    /// `[worktree]` comes from gate.toml (`theirs`), the spec has none.
    WorktreeFromConfig { theirs: &'a Path },
    /// `[worktree]` from the spec, gate.toml's left unused.
    WorktreeOverConfig { ours: &'a Path, theirs: &'a Path },
    /// `[worktree]` from the spec; gate.toml has none.
    WorktreeFromSpec { ours: &'a Path },
    /// No jobserver could be made.
    NoJobserver(Error<'a>),
    /// The jobserver this run made: `tokens` shared by `jobs` on `cores`.
    JobserverOwn {
        tokens: usize,
        jobs: usize,
        cores: usize,
    },
    /// The jobserver the run was started under, shared by `jobs`.
    JobserverInherited { jobs: usize },
    /// Builds that speak no jobserver take the build slot one at a time.
    BuildSlot,
    /// A candidate's manifest checked before the first mutant.
    ManifestBefore(&'a ManifestCheck),
    /// `--incremental`: `kept` of the `planned` mutants keep their verdicts from the report
    /// in --out; the rest are judged now.
    Reused { kept: usize, planned: usize },
    /// `--incremental`: the mutants judged again, each with why its row does not hold.
    Rejudged(&'a [(&'a str, &'a crate::session::incremental::Stale)]),
    /// `--incremental` found no report to reuse (why, in words): every mutant is judged.
    NothingToReuse(&'a str),
    /// A candidate's manifest that does not hold in a checkout.
    CandidateDoesNotHold(&'a manifests::Summary),
    /// The same after the last mutant.
    ManifestAfter(&'a ManifestCheck),
    /// The setup left a checkout other than the tree under review (`what`, put right).
    SetupChanged { checkout: &'a Path, what: &'a str },
    /// The baseline starts: `suites` in `checkouts`.
    BaselineStarts { suites: usize, checkouts: usize },
    /// The baseline runs (the live line while it does): these suites, unmutated.
    BaselineRunning { suites: &'a [String] },
    /// The baseline failed on restored build outputs and runs again cold.
    BaselineAgainCold,
    /// `suite`'s green baseline would already have stopped at a first failure (`test`, as the
    /// reader named it): its mutants run whole.
    FailFastOff { suite: &'a str, test: &'a str },
    /// A suite with `select` runs once unmutated with coverage on (the live line while it does).
    Covering { suite: &'a str },
    /// The covering selections of the suites with a build step run on the unmutated code before
    /// the first mutant (the live line while they do): `count` of them.
    Checking { count: usize },
    /// They ran: `failed` of `count` did not pass (their mutants run the whole suite).
    Checked { count: usize, failed: usize },
    /// Its coverage map: `tests` tests over `files` files of the tree; `kept`: read from the
    /// cache, made by an earlier run of the same code and suite.
    Covered {
        suite: &'a str,
        tests: usize,
        files: usize,
        kept: bool,
    },
    /// No coverage map for a suite with `select` (why, in words): its mutants run it whole.
    NotMapped { suite: &'a str, why: &'a str },
    /// A suite of the baseline failed: its status, why (failed tests, first errors, notes)
    /// and, when it names none, the log's last lines; the log.
    BaselineFailed {
        suite: &'a str,
        status: &'a str,
        why: Vec<&'a str>,
        tail: Vec<&'a str>,
        log: &'a Path,
    },
    /// After a red baseline: what git ignores in the user's tree and the checkout lacks
    /// (`candidate::ignored`), the first suspect.
    IgnoredMissing { paths: &'a [String] },
    /// A suite's floor runs (the live line while it does).
    FloorRunning { suite: &'a str },
    /// A suite's floor timed, or failed (its last log at `log`).
    Floor {
        suite: &'a str,
        floor: &'a crate::record::Floor,
        log: &'a Path,
    },
    /// No cache yet for `outputs` in `dir`.
    CacheNone {
        outputs: &'a [String],
        dir: &'a Path,
    },
    /// The cache restored: `stamped` source files keep their build, `forgotten` units rebuild.
    CacheRestored {
        outputs: &'a [String],
        dir: &'a Path,
        stamped: usize,
        forgotten: usize,
    },
    /// The cache was not used (`why`).
    CacheDiscarded(&'a str),
    /// The build outputs could not be kept for the other checkouts.
    CacheNotKept(Error<'a>),
    /// A build folder neither handed over nor kept, and why.
    NotHanded { folder: &'a str, why: &'a str },
    /// Checkout `checkout` builds cold: the first one's outputs could not be copied.
    BuildsCold { checkout: usize, error: Error<'a> },
    /// The cache saved.
    CacheSaved {
        outputs: &'a [String],
        dir: &'a Path,
    },
    /// The cache could not be saved.
    CacheNotSaved(Error<'a>),
    /// `--no-canary`.
    CanariesSkipped,
    /// A canary runs (the live line while it does): `file` unloadable under `suite`.
    CanaryRunning { file: &'a str, suite: &'a str },
    /// A canary ran: one step.
    CanaryRan(&'a Canary),
    /// A canary survived in the checkout at `dir`: the run stops.
    CanarySurvived { canary: &'a Canary, dir: &'a Path },
    /// A mutant judged: step `done` of `total`.
    Judged {
        row: &'a Row,
        done: usize,
        total: usize,
    },
    /// The tally so far and the mutants running, with when each started (the live line).
    Judging {
        tally: &'a Tally,
        running: &'a BTreeMap<usize, (String, Instant)>,
    },
    /// What the engine said of a checkout after the first (cold, or not green).
    Engine(&'a Event),
    /// A checkout kept (`--keep`).
    Kept(&'a Path),
    /// Where the report is.
    ReportIn(&'a Path),
    /// Interrupted after `judged` of `planned` mutants.
    Interrupted { judged: usize, planned: usize },
}
