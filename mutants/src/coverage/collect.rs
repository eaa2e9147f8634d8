//! One coverage run: the suite's own `run`, unmutated, with every ecosystem's switches in its
//! environment, writing into a scratch folder of the session; then whichever map it left read.
//! For a `select` that runs cargo, the workspace's packages are read instead, or, for one that
//! hands libtest its test names, each test runs alone in an instrumented build (see
//! `libtest`); for one that runs vitest or jest, the template runs once per test file with the
//! runner's own coverage on (see `istanbul`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use candidate::suite::{Share, SuiteJob, Timeouts};
use report::Outcome;

use super::own::run_own;
use super::{cargo, istanbul, libtest, node, pytest, Map};
use crate::spec::Suite;

/// What a coverage run gave.
#[derive(Debug)]
pub(crate) enum Collected {
    Map(Map),
    /// No map, and why (the mutants of the suite run it whole).
    None(String),
    Interrupted,
}

/// Where a coverage run builds: `cargo` is the build folder of libtest maps' instrumented
/// builds (kept between runs in the cache, or a scratch folder of the run), never the
/// checkout's own `target/`.
pub(crate) struct Places<'a> {
    pub cargo: &'a Path,
}

/// Runs `suite` unmutated in the checkout at `root` with coverage on, its output to `log`
/// (for a `select` that runs cargo, reads the workspace's packages instead, or runs each test
/// alone in an instrumented build). A map that names no test or no file is no map (see
/// [`Map::usable`]).
pub(crate) fn collect(
    suite: &Suite,
    root: &Path,
    places: &Places,
    log: &Path,
    timeouts: Timeouts,
    share: &(dyn Share + Sync),
) -> Result<Collected> {
    Ok(
        match collect_any(suite, root, places, log, timeouts, share)? {
            Collected::Map(map) => match map.usable() {
                Ok(()) => Collected::Map(map),
                Err(why) => Collected::None(why),
            },
            other => other,
        },
    )
}

fn collect_any(
    suite: &Suite,
    root: &Path,
    places: &Places,
    log: &Path,
    timeouts: Timeouts,
    share: &(dyn Share + Sync),
) -> Result<Collected> {
    let Some(run) = suite.run() else {
        return Ok(Collected::None("the suite has no `run` command".into()));
    };
    let scratch =
        runner::scratch::ScratchDir::new("cover").context("making the coverage folder")?;
    let dir = scratch.path();
    if let Some(cargo) = suite
        .select
        .as_ref()
        .and_then(|s| libtest::cargo_part(&s.template))
    {
        let at = libtest::At {
            cargo: &cargo,
            root,
            dir,
            target: places.cargo,
        };
        let collected = libtest::collect(suite, &at, log, timeouts, share);
        let _ = scratch.remove();
        return collected;
    }
    if suite.select.as_ref().is_some_and(|s| s.runs_cargo()) {
        let collected = from_cargo(suite, root, dir, log, timeouts, share);
        let _ = scratch.remove();
        return collected;
    }
    if let Some((runner, at)) = suite
        .select
        .as_ref()
        .and_then(|s| istanbul::Runner::of(&s.template))
    {
        let collected = by_test_file(suite, (runner, at), root, dir, log, timeouts, share);
        let _ = scratch.remove();
        return collected;
    }
    let data = dir.join("data");
    let plugins = dir.join("python");
    std::fs::create_dir_all(&data).context("making the coverage folder")?;
    std::fs::create_dir_all(&plugins).context("making the coverage folder")?;
    let probe = dir.join("probe.cjs");
    std::fs::write(&probe, node::PROBE).context("writing the node preload")?;
    std::fs::write(
        plugins.join(format!("{}.py", pytest::MODULE)),
        pytest::PLUGIN,
    )
    .context("writing the pytest plugin")?;
    let theirs = |name: &str| {
        suite
            .env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    };
    let before = |name: &str, ours: String, sep: &str| match theirs(name) {
        Some(v) => format!("{ours}{sep}{v}"),
        None => ours,
    };
    let data_text = data.display().to_string();
    let mut env = BTreeMap::new();
    env.insert("GATEKIT_COVER_DIR".to_string(), data_text.clone());
    env.insert("NODE_V8_COVERAGE".to_string(), data_text);
    // NODE_OPTIONS reads double-quoted words; a session path holds no quote.
    let require = format!("--require \"{}\"", probe.display());
    env.insert("NODE_OPTIONS".into(), before("NODE_OPTIONS", require, " "));
    let plugin = format!("-p {}", pytest::MODULE);
    env.insert(
        "PYTEST_ADDOPTS".into(),
        before("PYTEST_ADDOPTS", plugin, " "),
    );
    let path = plugins.display().to_string();
    env.insert("PYTHONPATH".into(), before("PYTHONPATH", path, ":"));
    let mut job = SuiteJob::of(suite, run, &BTreeMap::new(), timeouts);
    // Ours over the suite's own: each keeps theirs after ours.
    job.env.extend(env);
    let ran = candidate::suite::run_suite(&job, root, log, share)?;
    let collected = match ran.record.outcome() {
        Outcome::Interrupted => Collected::Interrupted,
        Outcome::Passed => match read(&data, root) {
            Collected::Map(mut map) => {
                map.ran_for(ran.record.run.duration_secs);
                Collected::Map(map)
            }
            other => other,
        },
        _ => Collected::None(format!(
            "the suite did not pass with coverage on ({})",
            ran.record.status_text()
        )),
    };
    let _ = scratch.remove();
    Ok(collected)
}

/// cargo's map by package (see `cargo`): the workspace's manifests read by `cargo metadata`,
/// no test run.
fn from_cargo(
    suite: &Suite,
    root: &Path,
    dir: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &dyn Share,
) -> Result<Collected> {
    let meta = dir.join("metadata.json");
    let command = format!(
        "cargo metadata --no-deps --format-version 1 > {}",
        report::text::shell_quote(&meta.display().to_string())
    );
    let ran = run_own(suite, &command, root, log, timeouts, share)?;
    Ok(match ran.record.outcome() {
        Outcome::Interrupted => Collected::Interrupted,
        Outcome::Passed => {
            let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            match std::fs::read(&meta)
                .ok()
                .and_then(|j| cargo::read(&j, &real))
            {
                Some(map) => Collected::Map(map),
                None => Collected::None("cargo metadata's output did not read".into()),
            }
        }
        _ => Collected::None(format!(
            "cargo metadata failed ({})",
            ran.record.status_text()
        )),
    })
}

/// vitest's or jest's map (see `istanbul`): the runner lists its test files, then the suite's
/// `select` runs each alone with the runner's coverage on, into a folder of its own in `dir`.
/// Each run's output goes to a log beside `log` (`.1.log`, `.2.log`...). A file whose tests
/// fail alone still maps what ran (a map is only ever a hint); no coverage back from the first
/// file means none will come (no provider installed): the map is given up at once.
#[allow(clippy::too_many_arguments)]
fn by_test_file(
    suite: &Suite,
    (runner, at): (istanbul::Runner, usize),
    root: &Path,
    dir: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &dyn Share,
) -> Result<Collected> {
    let Some(select) = &suite.select else {
        return Ok(Collected::None("the suite has no `select`".into()));
    };
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let roots = [real.as_path(), root];
    let listing = dir.join("tests.json");
    let command = format!(
        "{} > {}",
        runner.list_command(&select.template, at),
        report::text::shell_quote(&listing.display().to_string())
    );
    let ran = run_own(suite, &command, root, log, timeouts, share)?;
    match ran.record.outcome() {
        Outcome::Interrupted => return Ok(Collected::Interrupted),
        Outcome::Passed => {}
        _ => {
            return Ok(Collected::None(format!(
                "{} could not list its test files ({}; log {})",
                runner.name(),
                ran.record.status_text(),
                log.display()
            )))
        }
    }
    let files = istanbul::listed(&std::fs::read(&listing).unwrap_or_default(), &roots);
    if files.is_empty() {
        return Ok(Collected::None(format!(
            "{} listed no test file in the checkout (log {})",
            runner.name(),
            log.display()
        )));
    }
    let mut map = Map::new(candidate::suite::Items::Files);
    let mut wall = 0.0;
    for (k, file) in files.iter().enumerate() {
        let out = dir.join(format!("coverage-{}", k + 1));
        let Some(command) = select.command(std::slice::from_ref(file), &dir.join("list.txt"))?
        else {
            continue;
        };
        let command = format!("{command} {}", runner.coverage_options(&out));
        let file_log = log.with_extension(format!("{}.log", k + 1));
        let ran = run_own(suite, &command, root, &file_log, timeouts, share)?;
        if ran.record.outcome() == Outcome::Interrupted {
            return Ok(Collected::Interrupted);
        }
        let secs = ran.record.run.duration_secs;
        let json = std::fs::read(out.join("coverage-final.json"));
        match json {
            Ok(json) if istanbul::read(&json, &roots, file, &mut map) => {
                map.timed(file, secs);
                wall += secs;
            }
            _ if k == 0 => {
                return Ok(Collected::None(format!(
                    "{} wrote no coverage for {file} ({}; log {}){}",
                    runner.name(),
                    ran.record.status_text(),
                    file_log.display(),
                    match runner {
                        istanbul::Runner::Vitest =>
                            ": is a coverage provider (@vitest/coverage-v8) installed?",
                        istanbul::Runner::Jest => "",
                    }
                )))
            }
            _ => {}
        }
    }
    // Each file's time holds its runner's start: a selection's estimate is the sum of its
    // files' times, with no overhead on top.
    map.ran_for(wall);
    Ok(Collected::Map(map))
}

/// The map the coverage folder holds: pytest's per test id when a pytest ran, else node's
/// per test file.
fn read(data: &Path, root: &Path) -> Collected {
    // Paths the tools wrote are the resolved ones.
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let from_node = || node::read(data, &real).or_else(|| node::read(data, root));
    match pytest::read(data, &real) {
        Ok(Some(map)) => Collected::Map(map),
        Ok(None) => match from_node() {
            Some(map) => Collected::Map(map),
            None => Collected::None(
                "no coverage came back (coverage maps are read from node --test and pytest)".into(),
            ),
        },
        Err(why) => match from_node() {
            Some(map) if map.tests() > 0 => Collected::Map(map),
            _ => Collected::None(why),
        },
    }
}
