//! The shards joined into the one report a single run would write, after checking that they
//! are one run split: the same spec, tool version, commit, tree and candidate, each `K/N` once
//! and none missing, and no field a run cannot have written (seconds no run takes, a file
//! outside the tree, more rows than planned, a mutant in two shards).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use cmdline::Exit;
use files::escape;

use crate::record::{ManifestCheck, RunReport};

/// The most seconds a recorded run or timeout may hold in a shard: a year, far past any real
/// run (timeouts are at most 30 days), far below what a `Duration` or a format can hold.
const MAX_SECONDS: f64 = 366.0 * 86_400.0;

/// The single report the shards add up to, or why they do not add up (naming the shard's
/// folder and the field).
pub(super) fn merge_reports(shards: &[(PathBuf, RunReport)]) -> Result<RunReport> {
    let Some((first_dir, first)) = shards.first() else {
        bail!("nothing to merge");
    };
    let name = |dir: &Path| escape::path(&dir.join("mutants.json"));
    let n = match first.shard {
        Some(s) => s.n,
        None if shards.len() == 1 => 1,
        None => bail!(
            "{}: field `shard` is null: not a shard output (run with --shard K/N)",
            name(first_dir)
        ),
    };
    // Each K once (a set, not a vector of N flags: N is outside input and may be vast).
    let mut seen = BTreeSet::new();
    for (dir, r) in shards {
        let differs = |field: &str, a: &str, b: &str| -> Result<()> {
            if a != b {
                bail!(
                    "{}: field `{field}` is {:?}, not {:?} as in {}: shards of different runs",
                    name(dir),
                    escape::text(a),
                    escape::text(b),
                    name(first_dir)
                );
            }
            Ok(())
        };
        differs("tool", &r.tool, "mutants")?;
        differs("tool_version", &r.tool_version, &first.tool_version)?;
        differs("spec_sha256", &r.spec_sha256, &first.spec_sha256)?;
        differs("commit", &r.commit, &first.commit)?;
        differs("tree", &r.tree, &first.tree)?;
        differs("code_tree", &r.code_tree, &first.code_tree)?;
        match (&r.candidate, &first.candidate) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                differs("candidate.base", &a.base, &b.base)?;
                differs("candidate.tree", &a.tree, &b.tree)?;
                differs("candidate.patch_sha256", &a.patch_sha256, &b.patch_sha256)?;
                differs(
                    "candidate.manifest_sha256",
                    &a.manifest_sha256,
                    &b.manifest_sha256,
                )?;
                differs(
                    "candidate.manifest_before",
                    &a.manifest_before.to_string(),
                    &b.manifest_before.to_string(),
                )?;
            }
            _ => bail!(
                "{}: field `candidate` differs from {}: one is a candidate run, the other is not",
                name(dir),
                name(first_dir)
            ),
        }
        let k = match r.shard {
            Some(s) if s.n != n => bail!(
                "{}: field `shard.n` is {}, not {n} as in {}",
                name(dir),
                s.n,
                name(first_dir)
            ),
            Some(s) if s.k == 0 || s.k > n => {
                bail!("{}: field `shard.k` is {}, outside 1..={n}", name(dir), s.k)
            }
            Some(s) => s.k,
            None if n == 1 => 1,
            None => bail!(
                "{}: field `shard` is null: not a shard output (run with --shard K/N)",
                name(dir)
            ),
        };
        if !seen.insert(k) {
            bail!("{}: field `shard.k`: shard {k}/{n} given twice", name(dir));
        }
        if r.mutants.len() > r.planned {
            bail!(
                "{}: field `mutants` holds {} rows, more than the {} planned",
                name(dir),
                r.mutants.len(),
                r.planned
            );
        }
        // Seconds a run can have taken or been given: finite, not negative, not vast.
        let seconds = |field: String, x: f64| -> Result<()> {
            if !(0.0..=MAX_SECONDS).contains(&x) {
                bail!(
                    "{}: field `{field}` is {x}, not a number of seconds a run can take",
                    name(dir)
                );
            }
            Ok(())
        };
        for (i, b) in r.baseline.iter().enumerate() {
            seconds(format!("baseline[{i}].duration_secs"), b.duration_secs)?;
            seconds(
                format!("baseline[{i}].mutant_timeout_secs"),
                b.mutant_timeout_secs,
            )?;
            if let Some(x) = b.build_secs {
                seconds(format!("baseline[{i}].build_secs"), x)?;
            }
        }
        for (i, c) in r.canaries.iter().enumerate() {
            seconds(format!("canaries[{i}].duration_secs"), c.duration_secs)?;
        }
        for (i, row) in r.mutants.iter().enumerate() {
            let runs = row.run.iter().map(|s| (format!("mutants[{i}].run"), s));
            let also = row
                .also
                .iter()
                .enumerate()
                .map(|(a, s)| (format!("mutants[{i}].also[{a}]"), s));
            for (at, s) in runs.chain(also) {
                seconds(format!("{at}.duration_secs"), s.duration_secs)?;
                seconds(format!("{at}.timeout_secs"), s.timeout_secs)?;
                if let Some(x) = s.build_secs {
                    seconds(format!("{at}.build_secs"), x)?;
                }
            }
        }
        for (i, row) in r.mutants.iter().enumerate() {
            if crate::spec::check_file(&row.file).as_deref() != Ok(row.file.as_str()) {
                bail!(
                    "{}: field `mutants[{i}].file` {:?} is not a clean path inside the tree",
                    name(dir),
                    escape::text(&row.file)
                );
            }
        }
    }
    // Every K in 1..=N was seen once, so the first gap is at most one past the shards given.
    if let Some(missing) = (1..=n).find(|k| !seen.contains(k)) {
        bail!("shard {missing}/{n} is missing: a merged report needs every shard");
    }

    let mut merged = first.clone();
    merged.shard = None;
    merged.mutants.clear();
    merged.canaries.clear();
    merged.planned = 0;
    let mut indices = BTreeSet::new();
    for (dir, r) in shards {
        merged.planned = merged.planned.saturating_add(r.planned);
        merged.start = merged.start.min(r.start);
        merged.end = merged.end.max(r.end);
        merged.jobs = merged.jobs.max(r.jobs);
        merged.interrupted |= r.interrupted;
        merged.baseline_failed |= r.baseline_failed;
        if merged.precondition.is_none() {
            merged.precondition.clone_from(&r.precondition);
        }
        merged.canaries_skipped |= r.canaries_skipped;
        // Each shard proves the files of its own mutants; one file's canary in two shards is
        // one proof, said once (a survivor anywhere stops the merged report as it did its run).
        for c in &r.canaries {
            if !merged
                .canaries
                .iter()
                .any(|m| m.file == c.file && m.suite == c.suite && m.verdict == c.verdict)
            {
                merged.canaries.push(c.clone());
            }
        }
        merged
            .linked_changed
            .extend(r.linked_changed.iter().cloned());
        for l in &r.canaries_left_out {
            if !merged.canaries_left_out.contains(l) {
                merged.canaries_left_out.push(l.clone());
            }
        }
        if let (Some(m), Some(c)) = (merged.candidate.as_mut(), r.candidate.as_ref()) {
            // The worst manifest result wins: one shard that did not restore spoils the merge.
            let ok = |s: &Option<ManifestCheck>| s.is_some_and(ManifestCheck::holds);
            if ok(&m.manifest_after) && !ok(&c.manifest_after) {
                m.manifest_after = c.manifest_after;
            }
        }
        for (i, row) in r.mutants.iter().enumerate() {
            if !indices.insert(row.index) {
                bail!(
                    "{}: field `mutants[{i}].index`: mutant {:?} (index {}) is in two shards",
                    name(dir),
                    escape::text(&row.name),
                    row.index
                );
            }
            merged.mutants.push(row.clone());
        }
    }
    // Complete only when every shard is: one shard cut short leaves the merge unfinished,
    // its unjudged mutants carried into the union.
    merged.complete = shards.iter().all(|(_, r)| r.complete);
    merged.unjudged = shards
        .iter()
        .flat_map(|(_, r)| r.unjudged.iter().cloned())
        .collect();
    merged.settle();
    merged.exit_code = exit_of(&merged).code();
    Ok(merged)
}

/// What a merged report exits with: as a single run of it would have.
pub(super) fn exit_of(merged: &RunReport) -> Exit {
    if merged.interrupted {
        Exit::Interrupted
    } else if merged.baseline_failed
        || merged.precondition.is_some()
        || merged.canary_survived()
        || !merged.linked_changed.is_empty()
    {
        Exit::Precondition
    } else {
        Exit::from_held(merged.held() && merged.complete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Shard;

    type Shards = Vec<(PathBuf, RunReport)>;

    /// The sample shard 1/2 and a shard 2/2 of the same run holding the next mutant.
    fn halves() -> Shards {
        let sample = include_str!("../../tests/data/shard-report.json");
        let first = serde_json::from_str::<RunReport>(sample).unwrap();
        let mut second = first.clone();
        second.shard = Some(Shard { k: 2, n: 2 });
        second.mutants[0].index = 1;
        second.mutants[0].name = "the second".into();
        vec![(PathBuf::from("b"), second), (PathBuf::from("a"), first)]
    }

    #[test]
    fn halves_of_one_run_merge_into_spec_order_with_the_plan_summed() {
        let merged = merge_reports(&halves()).unwrap();
        let order: Vec<usize> = merged.mutants.iter().map(|r| r.index).collect();
        assert_eq!(order, [0, 1]);
        assert_eq!(
            (merged.planned, merged.shard, merged.tally.total),
            (2, None, 2)
        );
        assert_eq!(merged.exit_code, exit_of(&merged).code());
    }

    #[test]
    fn a_merge_with_one_shard_cut_short_is_incomplete_and_never_exits_0() {
        let merged = merge_reports(&halves()).unwrap();
        assert!(merged.complete && merged.unjudged.is_empty());
        assert_eq!(exit_of(&merged), Exit::Ok);
        // Shard 2 was killed after judging its row but before its last write: every row is
        // there, yet the shard never said it finished.
        let mut shards = halves();
        shards[0].1.complete = false;
        let merged = merge_reports(&shards).unwrap();
        assert!(!merged.complete);
        assert_eq!(merged.verdict(), crate::record::RunVerdict::Incomplete);
        assert_ne!(merged.exit_code, 0);
        // Shard 2 was killed before its mutant: the mutant stays unjudged in the merge.
        let mut shards = halves();
        let row = shards[0].1.mutants.pop().unwrap();
        shards[0].1.complete = false;
        shards[0].1.unjudged.push(crate::record::Unjudged {
            index: row.index,
            name: row.name.clone(),
            file: row.file.clone(),
        });
        let merged = merge_reports(&shards).unwrap();
        assert!(!merged.complete);
        assert_eq!(merged.unjudged.len(), 1);
        assert_eq!(
            merged.cut_short_text().unwrap(),
            "cut short after 1 of 2 mutants judged; not judged: the second"
        );
        assert_ne!(merged.exit_code, 0);
    }

    #[test]
    fn shards_that_are_not_one_run_split_are_refused_naming_why() {
        let refused = |change: &dyn Fn(&mut Shards)| {
            let mut shards = halves();
            change(&mut shards);
            merge_reports(&shards).unwrap_err().to_string()
        };
        let e = refused(&|s| s[0].1.tree = "0".repeat(40));
        assert!(e.contains("field `tree`"), "{e}");
        let e = refused(&|s| s[0].1.spec_sha256 = "0".repeat(64));
        assert!(e.contains("field `spec_sha256`"), "{e}");
        let e = refused(&|s| {
            s.remove(0);
        });
        assert!(e.contains("shard 2/2 is missing"), "{e}");
        let e = refused(&|s| s[0].1.shard = Some(Shard { k: 1, n: 2 }));
        assert!(e.contains("given twice"), "{e}");
        let e = refused(&|s| s[0].1.mutants[0].index = 0);
        assert!(e.contains("is in two shards"), "{e}");
        let e = refused(&|s| s[0].1.baseline[0].duration_secs = -1.0);
        assert!(e.contains("baseline[0].duration_secs"), "{e}");
        let e = refused(&|s| s[0].1.mutants[0].file = "../out".into());
        assert!(e.contains("not a clean path"), "{e}");
    }
}
