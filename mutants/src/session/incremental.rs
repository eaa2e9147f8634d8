//! `--incremental`: the rows of the report in `--out` that still hold, so only the rest are
//! judged.
//!
//! A row holds when its mutant is unchanged (the same `spec::identity`: file, anchor,
//! replacement, expectation, suites and their commands) at the same position, the candidate is
//! the same, its verdict was a judgement, not an `error` (a suite that could not start proves
//! nothing about the next run), and what the verdict depended on is unchanged: the whole code
//! (the report's `code_tree`, the tree without the spec), or, when every suite of the mutant
//! declares its `inputs`, the files those match and the mutated file itself. A report that
//! cannot be read (none, another version) reuses nothing: every mutant is judged, as without
//! the flag.

use std::collections::BTreeMap;
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

/// What this run judges that a row's reuse is compared with.
pub(crate) struct Now<'a> {
    pub code_tree: &'a str,
    pub candidate: Option<&'a CandidateFacts>,
    pub inputs: &'a BTreeMap<String, String>,
    pub file_blobs: &'a BTreeMap<String, String>,
}

/// The digest of each suite's declared `inputs` over `files` (path and blob id of every file
/// of the tree under review): the globs and each matching file, sorted. Suites without
/// `inputs` have none (every file counts for them, compared by the code tree).
pub(crate) fn inputs(spec: &Spec, files: &[(String, String)]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, suite) in &spec.suites {
        if suite.inputs.is_empty() {
            continue;
        }
        let mut set = globset::GlobSetBuilder::new();
        for pattern in &suite.inputs {
            // Each was checked to be a glob when the spec was read.
            if let Ok(glob) = globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
            {
                set.add(glob);
            }
        }
        let Ok(set) = set.build() else { continue };
        let mut matched: Vec<&(String, String)> = files
            .iter()
            .filter(|(path, _)| set.is_match(path))
            .collect();
        matched.sort();
        let text = serde_json::json!({ "globs": suite.inputs, "files": matched }).to_string();
        out.insert(
            name.clone(),
            manifests::Digest::of(text.as_bytes()).to_hex(),
        );
    }
    out
}

/// The blob id of each file the spec's mutants mutate, from `files`.
pub(crate) fn file_blobs(spec: &Spec, files: &[(String, String)]) -> BTreeMap<String, String> {
    spec.mutants
        .iter()
        .filter_map(|m| {
            let (_, id) = files.iter().find(|(path, _)| *path == m.file)?;
            Some((m.file.clone(), id.clone()))
        })
        .collect()
}

/// The spec indices among `selected` whose rows in `prior` hold for this run.
pub(crate) fn reusable(
    prior: &RunReport,
    spec: &Spec,
    selected: &[usize],
    now: &Now,
) -> Vec<usize> {
    let same_candidate = match (&prior.candidate, now.candidate) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.patch_sha256 == b.patch_sha256 && a.manifest_sha256 == b.manifest_sha256
        }
        _ => false,
    };
    if !same_candidate {
        return Vec::new();
    }
    let same_code = prior.code_tree == now.code_tree;
    // With other code, a mutant's verdict holds only when each of its suites says what it
    // reads, that is unchanged, and so is the mutated file.
    let same_inputs = |m: &crate::spec::Mutant| {
        let same = |a: Option<&String>, b: Option<&String>| a.is_some() && a == b;
        same(prior.file_blobs.get(&m.file), now.file_blobs.get(&m.file))
            && m.suites()
                .all(|s| same(prior.inputs.get(s), now.inputs.get(s)))
    };
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
                    && (same_code || same_inputs(m))
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
