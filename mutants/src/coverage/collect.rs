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
        let at = Libtest {
            cargo: &cargo,
            root,
            dir,
            target: places.cargo,
        };
        let collected = by_libtest(suite, &at, log, timeouts, share);
        let _ = scratch.remove();
        return collected;
    }
    if suite
        .select
        .as_ref()
        .is_some_and(|s| s.template.split_whitespace().any(|w| w == "cargo"))
    {
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

/// One of the collector's own commands (`cargo metadata`, a runner's list of its test files, a
/// test file's run with coverage) in the checkout at `root`, as the suite's commands run: its
/// environment, scratch folder and timeouts, without its build step (the baseline built).
fn run_own(
    suite: &Suite,
    command: &str,
    root: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &dyn Share,
) -> Result<candidate::suite::Ran> {
    run_own_with(suite, command, BTreeMap::new(), root, log, timeouts, share)
}

/// [`run_own`] with `env` over the suite's own variables.
fn run_own_with(
    suite: &Suite,
    command: &str,
    env: BTreeMap<String, String>,
    root: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &dyn Share,
) -> Result<candidate::suite::Ran> {
    let mut job = SuiteJob::of(suite, command, &BTreeMap::new(), timeouts);
    job.build = None;
    job.env.extend(env);
    candidate::suite::run_suite(&job, root, log, share)
}

/// Where a libtest map is made: the template's cargo part (`cargo test --tests`), the
/// checkout, the coverage run's scratch folder and the instrumented build's folder.
struct Libtest<'a> {
    cargo: &'a str,
    root: &'a Path,
    dir: &'a Path,
    target: &'a Path,
}

/// cargo's map by test (see `libtest`): the toolchain's LLVM tools found, the test binaries
/// built with `-C instrument-coverage` into their own folder, each listed, each test run alone
/// (as many at once as there are cores) with its profiles in a folder of its own, then every
/// profile read. A test's log is kept beside `log` (`.K.log`) only when it did not pass
/// alone; it still maps what it ran (a map is only ever a hint).
fn by_libtest(
    suite: &Suite,
    at: &Libtest,
    log: &Path,
    timeouts: Timeouts,
    share: &(dyn Share + Sync),
) -> Result<Collected> {
    let Some(select) = &suite.select else {
        return Ok(Collected::None("the suite has no `select`".into()));
    };
    let (root, dir) = (at.root, at.dir);
    let q = |p: &Path| report::text::shell_quote(&p.display().to_string());
    // What a run of ours that did not pass makes of the map.
    let failed = |ran: &candidate::suite::Ran, what: &str, log: &Path| match ran.record.outcome() {
        Outcome::Passed => None,
        Outcome::Interrupted => Some(Collected::Interrupted),
        _ => Some(Collected::None(format!(
            "{what} ({}; log {})",
            ran.record.status_text(),
            log.display()
        ))),
    };
    // The toolchain the suite builds with, as its environment and the checkout choose it.
    let (sysroot, version) = (dir.join("sysroot.txt"), dir.join("version.txt"));
    let command = format!(
        "rustc --print sysroot > {} && rustc -vV > {}",
        q(&sysroot),
        q(&version)
    );
    let ran = run_own(suite, &command, root, log, timeouts, share)?;
    if let Some(c) = failed(&ran, "rustc did not name its toolchain", log) {
        return Ok(c);
    }
    let text = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let Some((profdata, cov)) = libtest::tools(&text(&sysroot), &text(&version)) else {
        return Ok(Collected::None(
            "the toolchain has no llvm-profdata and llvm-cov (`rustup component add llvm-tools`)"
                .into(),
        ));
    };
    // The instrumented build, with the suite's own RUSTFLAGS kept after ours.
    let built = dir.join("build.json");
    let command = format!(
        "{} --no-run --message-format=json-render-diagnostics > {}",
        at.cargo,
        q(&built)
    );
    let theirs = suite
        .env
        .get("RUSTFLAGS")
        .cloned()
        .or_else(|| std::env::var("RUSTFLAGS").ok())
        .unwrap_or_default();
    let mut env = BTreeMap::new();
    env.insert(
        "RUSTFLAGS".to_string(),
        format!("-C instrument-coverage {theirs}")
            .trim_end()
            .to_string(),
    );
    env.insert("CARGO_TARGET_DIR".into(), at.target.display().to_string());
    // Build scripts and proc macros are instrumented too: their profiles go here, not into
    // the checkout.
    env.insert(
        "LLVM_PROFILE_FILE".into(),
        dir.join("build")
            .join("%p-%m.profraw")
            .display()
            .to_string(),
    );
    let build_log = log.with_extension("build.log");
    let ran = run_own_with(suite, &command, env, root, &build_log, timeouts, share)?;
    if let Some(c) = failed(&ran, "the instrumented build failed", &build_log) {
        return Ok(c);
    }
    let artifacts = libtest::artifacts(&std::fs::read(&built).unwrap_or_default());
    // Each test binary's tests, each run where cargo runs it: its package's folder.
    let mut tests: Vec<(String, &libtest::Artifact)> = Vec::new();
    for (k, a) in artifacts.iter().filter(|a| a.test).enumerate() {
        let listing = dir.join(format!("list-{}.txt", k + 1));
        let command = format!(
            "cd {} && {} --list --format terse > {}",
            q(&a.dir),
            q(&a.exe),
            q(&listing)
        );
        let ran = run_own(suite, &command, root, log, timeouts, share)?;
        if let Some(c) = failed(&ran, "a test binary did not list its tests", log) {
            return Ok(c);
        }
        for name in libtest::listed(&text(&listing)) {
            tests.push((name, a));
        }
    }
    if tests.is_empty() {
        return Ok(Collected::None(format!(
            "the instrumented build listed no test (log {})",
            build_log.display()
        )));
    }
    let runs = match each_alone(suite, &tests, (root, dir), &profdata, log, timeouts, share)? {
        Some(runs) => runs,
        None => return Ok(Collected::Interrupted),
    };
    // One export of every profile: which lines each function spans.
    let mut all: Vec<std::path::PathBuf> = Vec::new();
    for k in 0..tests.len() {
        all.extend(profiles(&dir.join("tests").join(k.to_string())));
    }
    let list = dir.join("profiles.txt");
    let mut names = String::new();
    for p in &all {
        names.push_str(&p.display().to_string());
        names.push('\n');
    }
    std::fs::write(&list, names).context("writing the list of profiles")?;
    let merged = dir.join("all.profdata");
    let merge = std::process::Command::new(&profdata)
        .arg("merge")
        .arg("-sparse")
        .arg(format!("--input-files={}", list.display()))
        .arg("-o")
        .arg(&merged)
        .output();
    if !merge.as_ref().is_ok_and(|o| o.status.success()) {
        return Ok(Collected::None(format!(
            "llvm-profdata could not merge the tests' profiles{}",
            first_line(merge.as_ref().map(|o| &o.stderr[..]).unwrap_or_default())
        )));
    }
    let export_path = dir.join("export.json");
    let mut export = std::process::Command::new(&cov);
    export
        .arg("export")
        .arg("-format=text")
        .arg(format!("-instr-profile={}", merged.display()));
    for (k, a) in artifacts.iter().enumerate() {
        if k == 0 {
            export.arg(&a.exe);
        } else {
            export.arg(format!("-object={}", a.exe.display()));
        }
    }
    let file = std::fs::File::create(&export_path).context("writing llvm-cov's export")?;
    let exported = export
        .stdout(file)
        .stderr(std::process::Stdio::piped())
        .output();
    if !exported.as_ref().is_ok_and(|o| o.status.success()) {
        return Ok(Collected::None(format!(
            "llvm-cov could not export the coverage{}",
            first_line(exported.as_ref().map(|o| &o.stderr[..]).unwrap_or_default())
        )));
    }
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let json = std::fs::read(&export_path).unwrap_or_default();
    let Some(extents) = libtest::Extents::read(&json, &[real.as_path(), root]) else {
        return Ok(Collected::None("llvm-cov's export did not read".into()));
    };
    let mut map = extents.map(&runs);
    // What any selection pays besides its tests: the template run with a name no test has
    // (cargo's check of the build, each test binary's start).
    let none = ["gatekit::selects::no::test".to_string()];
    let overhead_log = log.with_extension("overhead.log");
    if let Some(command) = select.command(&none, &dir.join("none.txt"))? {
        let ran = run_own(suite, &command, root, &overhead_log, timeouts, share)?;
        if let Some(c) = failed(
            &ran,
            "the `select` template failed with no test",
            &overhead_log,
        ) {
            return Ok(c);
        }
        let alone: f64 = runs.iter().map(|r| r.2).sum();
        map.ran_for(alone + ran.record.run.duration_secs);
    }
    Ok(Collected::Map(map))
}

/// Each of `tests` run alone (its binary with `--exact NAME`), `LLVM_PROFILE_FILE` in
/// `DIR/tests/K/`, as many at once as there are cores: each test's name, the functions its
/// profiles ran and its time. `None` when the run was interrupted.
fn each_alone(
    suite: &Suite,
    tests: &[(String, &libtest::Artifact)],
    (root, dir): (&Path, &Path),
    profdata: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &(dyn Share + Sync),
) -> Result<Option<Vec<libtest::TestRun>>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done = std::sync::Mutex::new(vec![None; tests.len()]);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let work = || -> Result<()> {
        loop {
            let k = next.fetch_add(1, Ordering::SeqCst);
            if k >= tests.len() || stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            let (name, a) = &tests[k];
            let profiles_at = dir.join("tests").join(k.to_string());
            std::fs::create_dir_all(&profiles_at).context("making a profile folder")?;
            let q = |p: &Path| report::text::shell_quote(&p.display().to_string());
            let command = format!(
                "cd {} && exec {} --exact {} --test-threads=1",
                q(&a.dir),
                q(&a.exe),
                report::text::shell_quote(name)
            );
            let env = BTreeMap::from([
                (
                    "LLVM_PROFILE_FILE".to_string(),
                    profiles_at.join("%p-%m.profraw").display().to_string(),
                ),
                ("CARGO_MANIFEST_DIR".into(), a.dir.display().to_string()),
            ]);
            let test_log = log.with_extension(format!("{}.log", k + 1));
            let ran = run_own_with(suite, &command, env, root, &test_log, timeouts, share)?;
            match ran.record.outcome() {
                Outcome::Interrupted => {
                    stop.store(true, Ordering::SeqCst);
                    return Ok(());
                }
                Outcome::Passed => {
                    let _ = std::fs::remove_file(&test_log);
                }
                _ => {}
            }
            let functions = functions_in(profdata, &profiles(&profiles_at));
            files::sync::lock(&done)[k] =
                Some((name.clone(), functions, ran.record.run.duration_secs));
        }
    };
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers).map(|_| s.spawn(work)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Ok(())))
            .collect()
    });
    for r in results {
        r?;
    }
    if stop.load(Ordering::SeqCst) {
        return Ok(None);
    }
    let done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(Some(done.into_iter().flatten().collect()))
}

/// The `.profraw` files in `dir`.
fn profiles(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "profraw"))
        .collect();
    found.sort();
    found
}

/// The functions `profiles` ran, by `llvm-profdata merge -sparse -text`; none when there are
/// no profiles or they do not read.
fn functions_in(
    profdata: &Path,
    profiles: &[std::path::PathBuf],
) -> std::collections::BTreeSet<String> {
    if profiles.is_empty() {
        return Default::default();
    }
    let out = std::process::Command::new(profdata)
        .args(["merge", "-sparse", "-text", "-o", "-"])
        .args(profiles)
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => libtest::functions_run(&String::from_utf8_lossy(&o.stdout)),
        _ => Default::default(),
    }
}

/// `: ` and the first line of a tool's `stderr`, or nothing.
fn first_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default()
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
