//! `cargo test`'s map by test, for a `select` that hands libtest its test names (`cargo test
//! --tests -- --exact {tests}`): rustc's own coverage (`-C instrument-coverage`), read with
//! the toolchain's `llvm-profdata` and `llvm-cov` (rustup's `llvm-tools`).
//!
//! The suite's test binaries are built once with instrumentation, into a build folder of
//! their own (never the checkout's `target/`, whose builds the mutants reuse). Each binary
//! lists its tests (`--list --format terse`, with the template's own options: its `--skip`s
//! hold), and each test then runs alone (`--exact NAME`), with `LLVM_PROFILE_FILE` pointing
//! into a folder of its own, so the processes it starts (a binary of the workspace its test
//! runs) write there too. The functions whose counters moved in that folder's profiles are the
//! test's (`read::functions_run`); one `llvm-cov export` of all the profiles says which lines
//! of which file each function spans (`read::Extents`). A test reaches every line of every
//! function it ran: a coarser grain than the line, never a finer one, so a selection holds
//! every test that ran the mutated code.
//!
//! A line in no function (a `const`, a type, an attribute) is read when the program is
//! compiled, not when a test runs: it counts as reached by every test, and a mutant there runs
//! the whole suite. So does a file the instrumented build does not know. A test's name does not
//! say which file holds it, and a file a test reads at run time (`include_str!`, a fixture) is
//! not in its profile, so `--incremental` holds a verdict from this map to the suite's inputs,
//! as it does without a map.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use super::own::{run_own, run_own_with};
use super::Collected;
use crate::spec::Suite;
use candidate::suite::{Share, Timeouts};
use report::Outcome;

mod read;

pub(super) use read::cargo_part;
use read::{artifacts, functions_run, listed, tools, Artifact, Extents, TestRun};

/// Where a libtest map is made: the template's parts (`cargo test --tests`, and the test
/// binaries' options its listing honours: `--skip slow`), the
/// checkout, the coverage run's scratch folder and the instrumented build's folder.
pub(super) struct At<'a> {
    pub cargo: &'a read::CargoParts,
    pub root: &'a Path,
    pub dir: &'a Path,
    pub target: &'a Path,
}

/// cargo's map by test (see `libtest`): the toolchain's LLVM tools found, the test binaries
/// built with `-C instrument-coverage` into their own folder, each listed, each test run alone
/// (as many at once as there are cores) with its profiles in a folder of its own, then every
/// profile read. A test's log is kept beside `log` (`.K.log`) only when it did not pass
/// alone; it still maps what it ran (a map is only ever a hint).
pub(super) fn collect(
    suite: &Suite,
    at: &At,
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
    let Some((profdata, cov)) = tools(&text(&sysroot), &text(&version)) else {
        return Ok(Collected::None(
            "the toolchain has no llvm-profdata and llvm-cov (`rustup component add llvm-tools`)"
                .into(),
        ));
    };
    // The instrumented build, with the suite's own RUSTFLAGS kept after ours.
    let built = dir.join("build.json");
    let command = format!(
        "{} --no-run --message-format=json-render-diagnostics > {}",
        at.cargo.cargo,
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
    let artifacts = artifacts(&std::fs::read(&built).unwrap_or_default());
    // Each test binary's tests, each run where cargo runs it: its package's folder.
    let mut tests: Vec<(String, &Artifact)> = Vec::new();
    for (k, a) in artifacts.iter().filter(|a| a.test).enumerate() {
        let listing = dir.join(format!("list-{}.txt", k + 1));
        let command = format!(
            "cd {} && {} --list --format terse {} > {}",
            q(&a.dir),
            q(&a.exe),
            at.cargo.options,
            q(&listing)
        );
        let ran = run_own(suite, &command, root, log, timeouts, share)?;
        if let Some(c) = failed(&ran, "a test binary did not list its tests", log) {
            return Ok(c);
        }
        for name in listed(&text(&listing)) {
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
    // One export of every test's profile: which lines each function spans.
    let all: Vec<std::path::PathBuf> = (0..tests.len())
        .map(|k| text_profile(dir, k))
        .filter(|p| p.is_file())
        .collect();
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
    let Some(extents) = Extents::read(&json, &[real.as_path(), root]) else {
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
        let alone: f64 = runs.iter().map(|r| r.secs).sum();
        map.ran_for(alone + ran.record.run.duration_secs);
    }
    Ok(Collected::Map(map))
}

/// Each of `tests` run alone (its binary with `--exact NAME`), `LLVM_PROFILE_FILE` in
/// `DIR/tests/K/`, as many at once as there are cores: each test's name, the functions its
/// profiles ran and its time. `None` when the run was interrupted.
fn each_alone(
    suite: &Suite,
    tests: &[(String, &Artifact)],
    (root, dir): (&Path, &Path),
    profdata: &Path,
    log: &Path,
    timeouts: Timeouts,
    share: &(dyn Share + Sync),
) -> Result<Option<Vec<TestRun>>> {
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
            let passed = match ran.record.outcome() {
                Outcome::Interrupted => {
                    stop.store(true, Ordering::SeqCst);
                    return Ok(());
                }
                Outcome::Passed => {
                    let _ = std::fs::remove_file(&test_log);
                    true
                }
                _ => false,
            };
            let functions = functions_in(profdata, &profiles_at, &text_profile(dir, k));
            files::sync::lock(&done)[k] = Some(TestRun {
                name: name.clone(),
                functions,
                secs: ran.record.run.duration_secs,
                passed,
            });
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

/// Where test `k`'s profiles are kept, merged: a sparse text profile (only the functions it
/// ran), which the last merge reads as it reads any profile.
fn text_profile(dir: &Path, k: usize) -> std::path::PathBuf {
    dir.join("tests").join(format!("{k}.proftext"))
}

/// The functions the raw profiles in `raw` ran, merged by `llvm-profdata merge -sparse -text`
/// into `merged`; the raw ones are removed then (a test that starts an instrumented binary a
/// hundred times leaves a hundred of them, each the size of every counter of the program).
/// None when there are no profiles or they do not read.
fn functions_in(profdata: &Path, raw: &Path, merged: &Path) -> std::collections::BTreeSet<String> {
    let found = profiles(raw);
    if found.is_empty() {
        return Default::default();
    }
    let out = std::process::Command::new(profdata)
        .args(["merge", "-sparse", "-text", "-o"])
        .arg(merged)
        .args(&found)
        .stdin(std::process::Stdio::null())
        .output();
    let _ = runner::scratch::remove_all(raw);
    match out {
        Ok(o) if o.status.success() => {
            functions_run(&std::fs::read_to_string(merged).unwrap_or_default())
        }
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
