//! The floor: a suite's runner started with no test selected (its `floor` command), timed in the
//! first checkout right after the green baseline. It is the least a mutant can cost with a
//! process per mutant, so a run can say how far above it each suite's time per mutant is (see
//! [`crate::record::Floor`]). It measures and never judges: a floor that fails is said and
//! recorded, and every verdict stays as it is.
//!
//! A floor that passed is kept in gatekit's cache (`floor/KEY.json`) by code tree, suite
//! (its identity and its floor command) and toolchain versions, as coverage maps are: a run
//! of the same code with the same suite and toolchains (a rerun, `--only`, the next shard on
//! this machine) reports the kept floor, saying when it was timed, instead of starting the
//! runner three more times. `--no-cache` neither reads nor writes one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::cores::Cores;
use super::suite::{relative, run_suite};
use super::timeout::Timeouts;
use crate::checkout::Checkout;
use crate::record::Floor;
use crate::spec::Suite;
use report::text::slug;
use report::Outcome;

/// How many times a floor runs; the median is kept, so one slow start (a cold disk cache, a
/// busy core) does not set it.
pub(crate) const FLOOR_RUNS: usize = 3;

/// Times `suite`'s floor command in `co`: in the suite's environment, with its scratch `TMPDIR`,
/// under the mutant timeout, without its `build` step (built by the baseline already). `None`
/// when the suite names no floor; an interrupted floor is one that failed, and the run stops as
/// it would anywhere else.
pub(crate) fn measure(
    suite: &Suite,
    co: &Checkout,
    timeouts: Timeouts,
    out: &Path,
    cores: &Cores,
) -> Result<Option<Floor>> {
    let Some(command) = &suite.floor else {
        return Ok(None);
    };
    let mut timed = suite.clone();
    timed.command = candidate::suite::Command::Run(command.clone());
    timed.build = None;
    let mut runs = Vec::new();
    let mut floor = Floor {
        command: command.clone(),
        runs: Vec::new(),
        secs: None,
        failed: None,
        per_mutant_secs: None,
        multiple: None,
        log: String::new(),
        kept_from: None,
    };
    for k in 1..=FLOOR_RUNS {
        let log = out
            .join("logs")
            .join(format!("floor.{}.{k}.log", slug(&suite.name, "mutant")));
        let ran = run_suite(&timed, co.path(), &log, timeouts, cores)?;
        floor.log = relative(out, &ran.record.run.log);
        if ran.record.outcome() != Outcome::Passed {
            floor.failed = Some(ran.record.status_text());
            break;
        }
        runs.push(ran.record.run.duration_secs);
    }
    if floor.failed.is_none() {
        floor.secs = median(&runs);
    }
    floor.runs = runs;
    Ok(Some(floor))
}

/// The layout of a kept floor; another is not read.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Kept {
    format: u32,
    runs: Vec<f64>,
    secs: f64,
    /// The start of the run that timed them.
    at: String,
}

/// What a floor is kept for: the code, the suite as it judges and its floor command, and the
/// toolchains the run asked (see `session::implicit`).
pub(crate) struct Key<'a> {
    pub code_tree: &'a str,
    pub suite: &'a Suite,
    pub toolchains: &'a BTreeMap<String, String>,
}

impl Key<'_> {
    fn path(&self, cache: &Path) -> Option<PathBuf> {
        let key = serde_json::json!({
            "format": FORMAT,
            "code_tree": self.code_tree,
            "suite": crate::spec::identity::suite_value(self.suite),
            "floor": self.suite.floor.as_ref()?,
            "toolchains": self.toolchains,
        });
        let hex = manifests::Digest::of(key.to_string().as_bytes()).to_hex();
        Some(cache.join("floor").join(format!("{hex}.json")))
    }
}

/// The floor kept for `key` in gatekit's cache, with a log in `out` that says where it came
/// from; `None` when none is kept (or it does not read, or its log cannot be written).
pub(crate) fn kept(key: &Key, out: &Path) -> Option<Floor> {
    kept_in(&runner::scratch::cache_dir(), key, out)
}

/// Keeps `floor` for `key`, timed by the run that started `at`, when it passed (best effort:
/// a cache that cannot be written only means the next run times it again).
pub(crate) fn keep(key: &Key, floor: &Floor, at: &str) {
    keep_in(&runner::scratch::cache_dir(), key, floor, at)
}

fn kept_in(cache: &Path, key: &Key, out: &Path) -> Option<Floor> {
    let bytes = std::fs::read(key.path(cache)?).ok()?;
    let kept: Kept = serde_json::from_slice(&bytes).ok()?;
    let usable = |s: f64| s.is_finite() && s >= 0.0;
    if kept.format != FORMAT || kept.runs.is_empty() || !kept.runs.iter().all(|&s| usable(s)) {
        return None;
    }
    if median(&kept.runs) != Some(kept.secs) {
        return None;
    }
    let command = key.suite.floor.clone()?;
    let log = PathBuf::from("logs").join(format!(
        "floor.{}.kept.log",
        slug(&key.suite.name, "mutant")
    ));
    let runs: Vec<String> = kept.runs.iter().map(|s| format!("{s:.2}s")).collect();
    let text = format!(
        "The floor of suite {:?} (`{command}`) was not timed by this run: it was kept in gatekit's \
         cache by the run of {}, on the same code tree ({}), suite and toolchains.\nruns: {}\nmedian: {:.2}s\n",
        key.suite.name,
        kept.at,
        key.code_tree,
        runs.join(" "),
        kept.secs
    );
    // Written as every log of the run is: recorded, and never through a link in `logs/`.
    let mut file = files::outputs::create(&out.join(&log)).ok()?;
    std::io::Write::write_all(&mut file, text.as_bytes()).ok()?;
    Some(Floor {
        command,
        runs: kept.runs,
        secs: Some(kept.secs),
        failed: None,
        per_mutant_secs: None,
        multiple: None,
        log: log.to_string_lossy().into_owned(),
        kept_from: Some(kept.at),
    })
}

fn keep_in(cache: &Path, key: &Key, floor: &Floor, at: &str) {
    let (Some(secs), None, None) = (floor.secs, &floor.failed, &floor.kept_from) else {
        return;
    };
    let Some(path) = key.path(cache) else {
        return;
    };
    let kept = Kept {
        format: FORMAT,
        runs: floor.runs.clone(),
        secs,
        at: at.to_string(),
    };
    let Ok(text) = serde_json::to_string(&kept) else {
        return;
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = files::atomic::write_text_atomic(&path, &text);
}

/// The middle value (the mean of the two middle ones for an even count); `None` for none.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_keeps_the_middle_run() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 0.5, 9.0]), Some(3.0));
        assert_eq!(median(&[1.0, 4.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn a_kept_floor_reads_back_for_its_own_tree_suite_and_toolchains_only() {
        let cache = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(out.path().join("logs")).unwrap();
        let spec = crate::spec::Spec::parse(
            "[suites.t]\nrun = \"pytest\"\nfloor = \"pytest --co -q -k nothing\"\n[suites.u]\nrun = \"pytest -x\"\nfloor = \"pytest --co -q -k nothing\"\n[[mutant]]\nname = \"m\"\nfile = \"f\"\nanchor = \"a\"\nreplace = \"b\"\nsuite = \"t\"\n",
            Path::new("mutants.toml"),
        )
        .unwrap();
        let tools = BTreeMap::from([("python3".to_string(), "Python 3.11.7".to_string())]);
        let other_tools = BTreeMap::from([("python3".to_string(), "Python 3.12.1".to_string())]);
        let key = |tree, suite, toolchains| Key {
            code_tree: tree,
            suite: &spec.suites[suite],
            toolchains,
        };
        let timed = Floor {
            command: "pytest --co -q -k nothing".into(),
            runs: vec![0.7, 0.5, 0.6],
            secs: Some(0.6),
            failed: None,
            per_mutant_secs: Some(1.2),
            multiple: Some(2.0),
            log: "logs/floor.t.3.log".into(),
            kept_from: None,
        };
        keep_in(
            cache.path(),
            &key("tree1", "t", &tools),
            &timed,
            "2026-12-06T10:00:00Z",
        );
        let kept = kept_in(cache.path(), &key("tree1", "t", &tools), out.path()).unwrap();
        assert_eq!(kept.runs, timed.runs);
        assert_eq!(kept.secs, Some(0.6));
        assert_eq!(kept.kept_from.as_deref(), Some("2026-12-06T10:00:00Z"));
        // Per-mutant figures are this run's own, made later.
        assert_eq!((kept.per_mutant_secs, kept.multiple), (None, None));
        let log = std::fs::read_to_string(out.path().join(&kept.log)).unwrap();
        assert!(log.contains("kept in gatekit's cache by the run of 2026-12-06T10:00:00Z"));
        assert!(log.contains("median: 0.60s"), "{log}");
        // Another tree, suite or toolchain has none.
        assert!(kept_in(cache.path(), &key("tree2", "t", &tools), out.path()).is_none());
        assert!(kept_in(cache.path(), &key("tree1", "u", &tools), out.path()).is_none());
        assert!(kept_in(cache.path(), &key("tree1", "t", &other_tools), out.path()).is_none());
        // A floor that failed, or one kept already, is not kept (again).
        let cache2 = tempfile::tempdir().unwrap();
        let failed = Floor {
            secs: None,
            failed: Some("exit 1".into()),
            ..timed.clone()
        };
        keep_in(cache2.path(), &key("tree1", "t", &tools), &failed, "t");
        keep_in(cache2.path(), &key("tree1", "t", &tools), &kept, "t");
        assert!(kept_in(cache2.path(), &key("tree1", "t", &tools), out.path()).is_none());
    }
}
