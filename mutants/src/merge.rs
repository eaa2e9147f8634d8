//! `mutants merge`: the outputs of `run --shard K/N` joined into the report one run would write.
//!
//! Each shard's `mutants.json` carries every row whole (verdict, counts, log path relative to
//! its folder), so merging is a union of rows put back in spec order, the logs copied beside
//! them, and every output rendered again from the union. Shards of different specs (the spec's
//! sha256 differs) or an incomplete set of shards are refused: a merged report that silently
//! lacks a shard would read as a complete run.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use report::{ColorChoice, Exit, Format};

use crate::output::{self, Sources};
use crate::record::{ok_summary, RunReport, REPORT_VERSION};

pub fn cmd_merge(dirs: &[PathBuf], out: &Path, format: Format, color: ColorChoice) -> Result<Exit> {
    let mut shards: Vec<(PathBuf, RunReport)> = Vec::new();
    for dir in dirs {
        let path = dir.join("mutants.json");
        let text = fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a mutants report", path.display()))?;
        // A report of another layout would merge into nonsense: say so before reading it.
        if value["version"] != serde_json::json!(REPORT_VERSION) {
            bail!(
                "{}: mutants.json version {} is not {REPORT_VERSION}, the version this mutants reads",
                path.display(),
                value["version"]
            );
        }
        let report: RunReport = serde_json::from_value(value)
            .with_context(|| format!("{}: not a mutants report", path.display()))?;
        shards.push((dir.clone(), report));
    }
    let merged = merge_reports(&shards)?;

    let logs = out.join("logs");
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let mut sources = Sources::new();
    for (dir, report) in &shards {
        let runs = report
            .mutants
            .iter()
            .flat_map(|r| r.run.iter().chain(r.also.iter()))
            .map(|s| s.log.as_str());
        let baselines = report.baseline.iter().map(|b| b.log.as_str());
        for log in runs.chain(baselines) {
            let (from, to) = (dir.join(log), out.join(log));
            if from.exists() && from != to {
                fs::copy(&from, &to).with_context(|| format!("copying {}", from.display()))?;
            }
        }
        // The sources live only in each shard's mutation-report.json.
        if let Ok(text) = fs::read_to_string(dir.join("mutation-report.json")) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                if let Some(files) = v["files"].as_object() {
                    for (path, f) in files {
                        if let Some(src) = f["source"].as_str() {
                            sources
                                .entry(path.clone())
                                .or_insert_with(|| src.to_string());
                        }
                    }
                }
            }
        }
    }
    output::write_all(&merged, &sources, out)?;
    crate::commands::print_report(&merged, out, format, color)?;
    Ok(match merged.exit_code {
        130 => Exit::Interrupted,
        4 => Exit::Precondition,
        0 => Exit::Ok,
        _ => Exit::Findings,
    })
}

/// The single report the shards add up to.
pub fn merge_reports(shards: &[(PathBuf, RunReport)]) -> Result<RunReport> {
    let Some((_, first)) = shards.first() else {
        bail!("nothing to merge");
    };
    let n = match first.shard {
        Some(s) => s.n,
        None if shards.len() == 1 => 1,
        None => bail!(
            "{}: not a shard output (run with --shard K/N)",
            shards[0].0.display()
        ),
    };
    let mut seen = vec![false; n];
    for (dir, r) in shards {
        if r.spec_sha256 != first.spec_sha256 {
            bail!(
                "{}: a report of a different spec (sha256 {} is not {})",
                dir.display(),
                r.spec_sha256,
                first.spec_sha256
            );
        }
        let k = match r.shard {
            Some(s) if s.n == n => s.k,
            None if n == 1 => 1,
            _ => bail!(
                "{}: shard count differs from the others ({n})",
                dir.display()
            ),
        };
        if std::mem::replace(&mut seen[k - 1], true) {
            bail!("{}: shard {k}/{n} given twice", dir.display());
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        bail!(
            "shard {}/{n} is missing: a merged report needs every shard",
            missing + 1
        );
    }

    let mut merged = first.clone();
    merged.shard = None;
    merged.mutants.clear();
    merged.planned = 0;
    for (dir, r) in shards {
        merged.planned += r.planned;
        merged.start = merged.start.min(r.start);
        merged.end = merged.end.max(r.end);
        merged.jobs = merged.jobs.max(r.jobs);
        merged.interrupted |= r.interrupted;
        merged.baseline_failed |= r.baseline_failed;
        if let (Some(m), Some(c)) = (merged.candidate.as_mut(), r.candidate.as_ref()) {
            // The worst manifest result wins: one shard that did not restore spoils the merge.
            let ok = |s: &Option<String>| s.as_deref().is_some_and(ok_summary);
            if ok(&m.manifest_after) && !ok(&c.manifest_after) {
                m.manifest_after = c.manifest_after.clone();
            }
        }
        for row in &r.mutants {
            if merged.mutants.iter().any(|m| m.index == row.index) {
                bail!("{}: mutant {:?} is in two shards", dir.display(), row.name);
            }
            merged.mutants.push(row.clone());
        }
    }
    merged.settle();
    let exit = if merged.interrupted {
        Exit::Interrupted
    } else if merged.baseline_failed {
        Exit::Precondition
    } else {
        Exit::from_held(merged.held())
    };
    merged.exit_code = exit.code();
    Ok(merged)
}
