//! The report a run finds in `--out`: updated in place by `--only`/`--from` when it judged the
//! same tree and every mutant it keeps is unchanged, refused when not, and cleared away
//! otherwise.
//!
//! One report judges one tree, so rows of two trees (or two candidates) can never stand in one
//! table, and a row is kept only while its mutant is what it was (`spec::identity`): the spec
//! file may change around it (a comment, a claim's words, the mutant being rerun), but a kept
//! row whose file, anchor, replacement or suite changed would be a verdict on another mutant.
//! The check happens before any row is run.

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
    pub spec: &'a Spec,
    /// The spec's mutants this run judges (by index): their rows are replaced, so they may
    /// have changed.
    pub selected: &'a [usize],
    /// The tree without the spec file (see [`code_tree`]).
    pub code_tree: &'a str,
    pub commit: &'a str,
    pub tree: &'a str,
    pub candidate: Option<&'a CandidateFacts>,
}

/// Refuses to update a report of another spec, commit, tree or candidate.
pub(crate) fn same_run(prev: &RunReport, now: &Judged, out: &Path) -> Result<()> {
    match difference(prev, now) {
        Some(why) => bail!(
            "{}: --only/--from update a report in place only for the same tree and unchanged mutants: {why}; run all mutants, or use another --out",
            files::escape::path(&out.join("mutants.json"))
        ),
        None => Ok(()),
    }
}

/// The first way `prev` is not a report of what is judged now, in words.
fn difference(prev: &RunReport, now: &Judged) -> Option<String> {
    let cand =
        |c: Option<&CandidateFacts>| c.map(|c| (c.patch_sha256.clone(), c.manifest_sha256.clone()));
    // A tree that differs in the spec alone holds the same code, whatever commit carried it.
    let same_code = prev.code_tree == now.code_tree;
    if prev.tree != now.tree && !same_code {
        Some(format!(
            "the tree changed ({} in the report, {} now)",
            short(&prev.tree),
            short(now.tree)
        ))
    } else if prev.commit != now.commit && !same_code {
        Some(format!(
            "the commit changed ({} in the report, {} now)",
            short(&prev.commit),
            short(now.commit)
        ))
    } else if cand(prev.candidate.as_ref()) != cand(now.candidate) {
        Some("the candidate changed (its patch or manifest)".to_string())
    } else {
        kept_mutants_differ(prev, now)
    }
}

/// The id of `tree` with the spec left out, when the spec lives in the checkout's tree (a
/// committed or carried mutants.toml): what a report's rows are held to, so editing one mutant
/// does not make every kept row a verdict on "another tree". `tree` itself otherwise.
pub(crate) fn code_tree(
    co: &crate::checkout::Checkout,
    repo: &Path,
    spec: &Path,
) -> Result<String> {
    match spec_in_tree(repo, spec) {
        Some(rel) => co
            .tree_without(&rel)
            .context("the tree without the spec (git write-tree)"),
        None => Ok(co.tree().to_string()),
    }
}

/// The spec's path in the tree of `repo` (`/`-separated), when it lives there.
pub(crate) fn spec_in_tree(repo: &Path, spec: &Path) -> Option<String> {
    let (root, spec) = (repo.canonicalize().ok()?, spec.canonicalize().ok()?);
    let rel = spec.strip_prefix(&root).ok()?.to_str()?.to_string();
    (!rel.is_empty()).then_some(rel)
}

/// The first mutant whose row the update would keep but which is not the mutant it was, or
/// which the updated report would lack, in words.
fn kept_mutants_differ(prev: &RunReport, now: &Judged) -> Option<String> {
    let spec = now.spec;
    let rerun = |name: &str| {
        now.selected
            .iter()
            .any(|&i| spec.mutants.get(i).is_some_and(|m| m.name == name))
    };
    let name = |n: &str| files::escape::text(n).into_owned();
    for row in prev.mutants.iter().filter(|r| !rerun(&r.name)) {
        match spec.mutants.iter().find(|m| m.name == row.name) {
            None => {
                return Some(format!(
                    "mutant `{}` is in the report but not in the spec",
                    name(&row.name)
                ))
            }
            Some(m) if crate::spec::identity::of(spec, m) != row.identity => {
                return Some(format!(
                    "mutant `{}` changed since the report (its file, anchor, replacement, expectation or suites): run it too (--only)",
                    name(&row.name)
                ))
            }
            Some(m) if m.index != row.index => {
                return Some(format!(
                    "mutant `{}` moved in the spec (from position {} to {})",
                    name(&row.name),
                    row.index + 1,
                    m.index + 1
                ))
            }
            Some(_) => {}
        }
    }
    let in_report = |n: &str| {
        prev.mutants.iter().any(|r| r.name == n) || prev.unjudged.iter().any(|u| u.name == n)
    };
    spec.mutants
        .iter()
        .find(|m| !rerun(&m.name) && !in_report(&m.name))
        .map(|m| {
            format!(
                "mutant `{}` is new since the report: run it too (--only)",
                name(&m.name)
            )
        })
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

    const SPEC: &str = "[suites.unit]\nrun = \"sh test.sh\"\n\n[[mutant]]\nname = \"plus to minus\"\nfile = \"lib.sh\"\nanchor = \"$1 + $2\"\nreplace = \"$1 - $2\"\nsuite = \"unit\"\n";

    fn spec(text: &str) -> Spec {
        Spec::parse(text, Path::new("mutants.toml")).unwrap()
    }

    /// The sample report, its one row made a row of `SPEC`'s mutant.
    fn sample() -> RunReport {
        let mut prev = crate::merge::shard::parse(SAMPLE.as_bytes()).unwrap();
        let s = spec(SPEC);
        prev.mutants[0].identity = crate::spec::identity::of(&s, &s.mutants[0]);
        prev
    }

    #[test]
    fn a_report_of_other_code_or_another_candidate_is_not_updated() {
        let prev = sample();
        let s = spec(SPEC);
        let same = Judged {
            spec: &s,
            selected: &[],
            code_tree: &prev.code_tree,
            commit: &prev.commit,
            tree: &prev.tree,
            candidate: prev.candidate.as_ref(),
        };
        assert_eq!(difference(&prev, &same), None);
        let why = difference(
            &prev,
            &Judged {
                tree: "0123abcd",
                code_tree: "0123abcd",
                ..same
            },
        )
        .unwrap();
        assert!(why.starts_with("the tree changed"), "{why}");
        let why = difference(
            &prev,
            &Judged {
                commit: "0123abcd",
                code_tree: "0123abcd",
                ..same
            },
        )
        .unwrap();
        assert!(why.starts_with("the commit changed"), "{why}");
        // Another tree and commit that differ from the report's in the spec alone: the same
        // code, so the rows are kept.
        let spec_edited = Judged {
            tree: "0123abcd",
            commit: "4567cdef",
            ..same
        };
        assert_eq!(difference(&prev, &spec_edited), None);
    }

    #[test]
    fn a_spec_is_held_to_its_kept_mutants_not_to_its_bytes() {
        let prev = sample();
        let judged = |s: &Spec, selected: &[usize]| {
            difference(
                &prev,
                &Judged {
                    spec: s,
                    selected,
                    code_tree: &prev.code_tree,
                    commit: &prev.commit,
                    tree: &prev.tree,
                    candidate: prev.candidate.as_ref(),
                },
            )
        };
        // Other bytes, the same mutant: a comment and a claim's words.
        let reworded = spec(&format!("# edited\n{SPEC}undoes = \"sums add\"\n"));
        assert_eq!(judged(&reworded, &[]), None);
        // The kept mutant changed: refused unless this run judges it again.
        let changed = spec(&SPEC.replace("$1 - $2", "$1 * $2"));
        let why = judged(&changed, &[]).unwrap();
        assert!(
            why.contains("`plus to minus` changed since the report"),
            "{why}"
        );
        assert_eq!(judged(&changed, &[0]), None);
        let slower = spec(&SPEC.replace("run = \"sh test.sh\"", "run = \"sh test.sh -v\""));
        assert!(
            judged(&slower, &[]).is_some(),
            "a suite's command is the mutant's"
        );
        // A mutant the report lacks, and one the spec lost.
        let more = spec(&format!(
            "{SPEC}\n[[mutant]]\nname = \"new\"\nfile = \"lib.sh\"\nanchor = \"a\"\nreplace = \"b\"\nsuite = \"unit\"\n"
        ));
        let why = judged(&more, &[]).unwrap();
        assert!(why.contains("`new` is new since the report"), "{why}");
        assert_eq!(judged(&more, &[1]), None);
        let other = spec(&SPEC.replace("plus to minus", "renamed"));
        let why = judged(&other, &[0]).unwrap();
        assert!(
            why.contains("`plus to minus` is in the report but not in the spec"),
            "{why}"
        );
    }
}
