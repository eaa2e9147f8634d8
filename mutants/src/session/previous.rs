//! The report a run finds in `--out`: updated in place by `--only`/`--from` when it judged the
//! same spec and tree, refused when it did not, and cleared away otherwise.
//!
//! One report judges one tree, so rows of two trees (or two specs, or two candidates) can never
//! stand in one table: the check happens before any row is run.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::record::{CandidateFacts, RunReport};
use crate::spec::Spec;
use report::text::short_id as short;

/// The report an `--only`/`--from` run updates: `OUT/mutants.json` read strictly, or `None`
/// when there is none yet (then the run starts one).
pub(crate) fn read(out: &Path) -> Result<Option<RunReport>> {
    let path = out.join("mutants.json");
    let bytes = match files::input::read(&path) {
        Ok(b) => b,
        Err(files::input::InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => bail!("{}: {e}", files::escape::path(&path)),
    };
    crate::merge::shard::parse(&bytes).map(Some).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot update this report in place: {e} (use another --out)",
            files::escape::path(&path)
        )
    })
}

/// What a run is judging, for comparing with the report it would update.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Judged<'a> {
    pub spec_sha256: &'a str,
    pub commit: &'a str,
    pub tree: &'a str,
    pub candidate: Option<&'a CandidateFacts>,
}

/// Refuses to update a report of another spec, commit, tree or candidate.
pub(crate) fn same_run(prev: &RunReport, now: &Judged, out: &Path) -> Result<()> {
    match difference(prev, now) {
        Some(why) => bail!(
            "{}: --only/--from update a report in place only for the same spec and tree: {why}; run all mutants, or use another --out",
            files::escape::path(&out.join("mutants.json"))
        ),
        None => Ok(()),
    }
}

/// The first way `prev` is not a report of what is judged now, in words.
fn difference(prev: &RunReport, now: &Judged) -> Option<String> {
    let cand =
        |c: Option<&CandidateFacts>| c.map(|c| (c.patch_sha256.clone(), c.manifest_sha256.clone()));
    if prev.spec_sha256 != now.spec_sha256 {
        Some(format!(
            "the spec changed (sha256 {} in the report, {} now)",
            short(&prev.spec_sha256),
            short(now.spec_sha256)
        ))
    } else if prev.tree != now.tree {
        Some(format!(
            "the tree changed ({} in the report, {} now)",
            short(&prev.tree),
            short(now.tree)
        ))
    } else if prev.commit != now.commit {
        Some(format!(
            "the commit changed ({} in the report, {} now)",
            short(&prev.commit),
            short(now.commit)
        ))
    } else if cand(prev.candidate.as_ref()) != cand(now.candidate) {
        Some("the candidate changed (its patch or manifest)".to_string())
    } else {
        None
    }
}

/// Removes what a previous run recorded as its own in `out` (its report files and logs:
/// replaced, not mixed with ours; a file no run recorded stays), and makes `out/logs`.
pub(crate) fn clear(out: &Path) -> Result<()> {
    files::outputs::clear_previous(out)
        .with_context(|| format!("clearing {}", files::escape::path(out)))?;
    let logs = out.join("logs");
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))
}

/// Each mutant's time in a previous report (its suite run plus its build), by name: what
/// [`longest_first`] orders by. Rows never run (skipped) have none.
pub(crate) fn times(prev: &RunReport) -> BTreeMap<String, f64> {
    prev.mutants
        .iter()
        .filter_map(|r| {
            let run = r.run.as_ref()?;
            Some((
                r.name.clone(),
                run.duration_secs + run.build_secs.unwrap_or(0.0),
            ))
        })
        .collect()
}

/// `selected` (spec order) in the order the workers take them: mutants with no known time
/// first (they may be long), then the known ones longest first, so the last job does not run
/// one long mutant alone while the others idle. Ties keep spec order.
pub(crate) fn longest_first(
    selected: &[usize],
    spec: &Spec,
    times: &BTreeMap<String, f64>,
) -> Vec<usize> {
    let mut order = selected.to_vec();
    let time = |i: usize| times.get(&spec.mutants[i].name).copied();
    order.sort_by(|&a, &b| match (time(a), time(b)) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => y.total_cmp(&x),
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutants_are_taken_unknown_first_then_longest_first() {
        let mut text = String::from("[suites.s]\nrun = \"true\"\n");
        for name in ["a", "b", "c", "d"] {
            text.push_str(&format!(
                "[[mutant]]\nname = \"{name}\"\nfile = \"f\"\nanchor = \"x\"\nreplace = \"y\"\nsuite = \"s\"\n"
            ));
        }
        let spec = Spec::parse(&text, Path::new("mutants.toml")).unwrap();
        let times = BTreeMap::from([("a".to_string(), 1.0), ("b".into(), 9.0), ("d".into(), 3.0)]);
        assert_eq!(longest_first(&[0, 1, 2, 3], &spec, &times), [2, 1, 3, 0]);
        assert_eq!(longest_first(&[0, 3], &spec, &times), [3, 0]);
        assert_eq!(
            longest_first(&[0, 1, 2, 3], &spec, &BTreeMap::new()),
            [0, 1, 2, 3]
        );
    }

    const SAMPLE: &str = include_str!("../../tests/data/shard-report.json");

    #[test]
    fn a_report_of_another_spec_tree_commit_or_candidate_is_not_updated() {
        let prev = crate::merge::shard::parse(SAMPLE.as_bytes()).unwrap();
        let same = Judged {
            spec_sha256: &prev.spec_sha256,
            commit: &prev.commit,
            tree: &prev.tree,
            candidate: prev.candidate.as_ref(),
        };
        assert_eq!(difference(&prev, &same), None);
        let spec = "f".repeat(64);
        let why = difference(
            &prev,
            &Judged {
                spec_sha256: &spec,
                ..same
            },
        )
        .unwrap();
        assert!(why.starts_with("the spec changed"), "{why}");
        let why = difference(
            &prev,
            &Judged {
                tree: "0123abcd",
                ..same
            },
        )
        .unwrap();
        assert!(why.starts_with("the tree changed"), "{why}");
        let why = difference(
            &prev,
            &Judged {
                commit: "0123abcd",
                ..same
            },
        )
        .unwrap();
        assert!(why.starts_with("the commit changed"), "{why}");
    }
}
