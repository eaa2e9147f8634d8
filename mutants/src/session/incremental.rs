//! `--incremental`: the rows of the report in `--out` that still hold, so only the rest are
//! judged.
//!
//! A row holds when its mutant is unchanged (the same `spec::identity`: file, anchor,
//! replacement, expectation, suites and their commands) at the same position, the code is the
//! same (the report's `code_tree`, the tree without the spec, equals this run's), the candidate
//! is the same, and its verdict was a judgement, not an `error` (a suite that could not start
//! proves nothing about the next run). A report that cannot be read (none, another version) reuses
//! nothing: every mutant is judged, as without the flag.

use std::path::Path;

use crate::record::{CandidateFacts, Reused, Row, RunReport};
use crate::spec::Spec;
use crate::verdict::Verdict;

/// The report in `out` an incremental run may reuse rows of, or why there is none.
pub(crate) fn prior(out: &Path) -> Result<RunReport, String> {
    match super::previous::read(out) {
        Ok(Some(report)) => Ok(report),
        Ok(None) => Err("no report in --out yet".to_string()),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// The spec indices among `selected` whose rows in `prior` hold for this run.
pub(crate) fn reusable(
    prior: &RunReport,
    spec: &Spec,
    selected: &[usize],
    code_tree: &str,
    candidate: Option<&CandidateFacts>,
) -> Vec<usize> {
    let same_candidate = match (&prior.candidate, candidate) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.patch_sha256 == b.patch_sha256 && a.manifest_sha256 == b.manifest_sha256
        }
        _ => false,
    };
    if prior.code_tree != code_tree || !same_candidate {
        return Vec::new();
    }
    selected
        .iter()
        .copied()
        .filter(|&i| {
            let m = &spec.mutants[i];
            prior.mutants.iter().any(|r| {
                r.name == m.name
                    && r.index == m.index
                    && r.identity == crate::spec::identity::of(spec, m)
                    && r.verdict != Verdict::Error
            })
        })
        .collect()
}

/// `prior`'s rows for `reused` (spec indices), each marked with the tree and time it was
/// judged (its rerun's time, or the report's start).
pub(crate) fn kept_rows(prior: RunReport, spec: &Spec, reused: &[usize]) -> Vec<Row> {
    let names: Vec<&str> = reused
        .iter()
        .map(|&i| spec.mutants[i].name.as_str())
        .collect();
    let (tree, start) = (prior.tree, prior.start);
    prior
        .mutants
        .into_iter()
        .filter(|r| names.contains(&r.name.as_str()))
        .map(|mut r| {
            let at = r.reused.as_ref().map_or(r.rerun.unwrap_or(start), |u| u.at);
            let from = r.reused.as_ref().map_or(tree.clone(), |u| u.tree.clone());
            r.reused = Some(Reused { tree: from, at });
            r.rerun = None;
            r
        })
        .collect()
}
