//! `gate run --canary`: proof that the suites read the checkout under review.
//!
//! After every suite passed, each source path of the candidate (a manifest path that is code:
//! its ending, a `#!` script, a file a suite's command names; see
//! [`candidate::canary::Canary::classify`]) is made unloadable in turn and the suites run again
//! until one fails: that path is read. A path no suite notices, a suite that notices none of
//! the paths, or a candidate with no source path at all means a PASS nothing proved is about
//! this checkout (an editable install, a global one, a build output naming another folder, a
//! script run from the user's copy): findings, and exit 4. Paths `[canary] skip` leaves out are
//! recorded with the glob that matched. Each run puts the checkout back to the tree under
//! review (the private index of [`candidate::pristine`]) before the next.
//!
//! It costs about one suite run per source path (more when several suites must each be
//! proved), so it is asked for, not done by default.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Context, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use candidate::apply::Applied;
use candidate::canary::Decision;
use candidate::pristine::Pristine;

use crate::progress::{Event, Shows};
use crate::suite::{self, Planned};

/// One canary run: `path` made unloadable, `suite` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct CanaryRun {
    pub path: String,
    pub suite: String,
    /// The suite failed (or hung) without the file: it reads it.
    pub noticed: bool,
    /// `exit 1`, `hang`, `exit 0`.
    pub status: String,
    #[schemars(range(min = 0.0))]
    pub duration_secs: f64,
    /// Relative to the output folder.
    pub log: String,
}

/// A path of the candidate that is code but no canary was written into, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct LeftOut {
    pub path: String,
    /// `[canary] skip "dist/**"`.
    pub why: String,
}

/// What the canary phase found: its runs, the paths it left out, whether it was cut short.
pub(crate) struct Canaries {
    pub runs: Vec<CanaryRun>,
    pub left_out: Vec<LeftOut>,
    pub interrupted: bool,
}

/// Runs the canaries in `applied`'s checkout, each suite's log in `logs`, each step emitted to
/// `shows`.
pub(crate) fn run(
    applied: &Applied,
    planned: &[Planned],
    config: &candidate::config::Config,
    logs: &Path,
    echo: bool,
    shows: &mut Shows,
) -> Result<Canaries> {
    let env = &config.env;
    let dir = applied.checkout.path();
    let index = runner::scratch::session()
        .context("making the session folder")?
        .join("canary.index");
    let pristine =
        Pristine::for_tree(dir, &applied.tree, index).context("recording the tree under review")?;
    let named: Vec<String> = planned
        .iter()
        .flat_map(|p| std::iter::once(&p.script).chain(&p.suite.build))
        .flat_map(|command| candidate::canary::command_words(command))
        .collect();
    let (mut paths, mut left_out) = (Vec::new(), Vec::new());
    for entry in &applied.prepared.manifest.entries {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        if !plain_file(dir, &path) {
            continue;
        }
        match config.canary.classify(dir, &path, &named) {
            Decision::Source(_) => paths.push(path),
            Decision::LeftOut(why) => left_out.push(LeftOut { path, why }),
            Decision::NotSource => {}
        }
    }
    let done = |runs, interrupted| Canaries {
        runs,
        left_out: left_out.clone(),
        interrupted,
    };
    let mut runs = Vec::new();
    let (mut read_paths, mut reading_suites) = (BTreeSet::new(), BTreeSet::new());
    shows.steps(paths.len() * planned.len());
    for path in &paths {
        for p in planned {
            if read_paths.contains(path) && reading_suites.contains(&p.name) {
                continue;
            }
            if files::interrupt::requested() {
                shows.clear();
                return Ok(done(runs, true));
            }
            let file = dir.join(std::ffi::OsStr::from_bytes(path.as_bytes()));
            let before = std::fs::symlink_metadata(&file).ok();
            std::fs::write(&file, candidate::canary::UNLOADABLE)
                .and_then(|()| candidate::fresh::stamp_written(&file, before.as_ref()))
                .with_context(|| format!("writing the canary into {}", file.display()))?;
            let log = logs.join(format!(
                "canary-{:02}-{}.{}.log",
                runs.len() + 1,
                report::text::slug(path, "path"),
                report::text::slug(&p.name, "suite")
            ));
            let started = Event::CanaryStarted {
                path,
                suite: &p.name,
            };
            let result = shows.during(&started, || suite::run_suite(p, dir, env, &log, echo));
            // Put back before anything else: the canary file and whatever the suite changed.
            let found = pristine
                .differences()
                .context("comparing the checkout with the tree under review")?;
            pristine
                .restore(&found)
                .context("restoring the checkout after a canary")?;
            let result = result?;
            if result.record.run.ended.is_interrupted() {
                shows.clear();
                return Ok(done(runs, true));
            }
            let noticed = result.record.outcome() != report::Outcome::Passed;
            if noticed {
                read_paths.insert(path.clone());
                reading_suites.insert(p.name.clone());
            }
            shows.emit(&Event::CanaryFinished {
                path,
                suite: &p.name,
                noticed,
            });
            runs.push(CanaryRun {
                path: path.clone(),
                suite: p.name.clone(),
                noticed,
                status: result.record.status_text(),
                duration_secs: result.record.run.duration_secs,
                log: log
                    .strip_prefix(logs.parent().unwrap_or(logs))
                    .unwrap_or(&log)
                    .to_string_lossy()
                    .into_owned(),
            });
        }
    }
    shows.clear();
    Ok(done(runs, files::interrupt::requested()))
}

/// Whether `rel` is a regular file of `dir` reached through no link (a canary never writes
/// through one).
fn plain_file(dir: &Path, rel: &str) -> bool {
    matches!(
        files::walk::below(dir, Path::new(rel)),
        Ok(files::walk::Reached {
            end: files::walk::End::File,
            ..
        })
    )
}
