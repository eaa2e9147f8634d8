//! Each shard held to what a single run could have written: its rows against its own records,
//! its counts against its rows, and its rows against its share of the spec.
//!
//! A shard is outside input, and the cheapest forgery is a small one: a survivor's row
//! deleted (and `planned` lowered to match), or its verdict flipped to `killed` while its own
//! record still says the suite exited 0. Either would merge into a green report of a spec
//! whose single run fails. So, before anything is merged:
//! - every verdict must be the one its own records give ([`Row::judged`], the judge the run
//!   itself writes verdicts with), and every count must add up (rows and unjudged mutants to
//!   `planned`, the tally to the rows, exit 0 only for a complete run where everything held);
//! - the shard's mutants must be exactly its share of the spec, dealt as `run --shard K/N`
//!   deals them ([`Selection::select`]): a missing row, an extra one, or a row that is not the
//!   spec's mutant at its index is refused, naming the shard and the row.
//!
//! The spec is `--spec`, or else the one the shards name when it is here with the bytes they
//! ran (its sha256). Without either, the shares are dealt over the mutants the shards add up to:
//! a forger who drops the spec's last mutant and lowers `planned` to match is then caught only
//! by the spec or by signatures (see `signed`), as is one who rewrites a shard whole and
//! consistently, its records included.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use files::escape;

use crate::record::{Row, RunReport, Shard, Tally};
use crate::session::Selection;
use crate::spec::Spec;

/// The largest spec the shards' own spec path is read for (a spec of thousands of mutants is a
/// few megabytes).
const MAX_SPEC_BYTES: u64 = 64 << 20;

/// The spec the shards are held to, and where it came from, for the note a merge without one
/// prints.
pub(super) enum SpecFound {
    /// `--spec`, or the spec the shards name, with the bytes they ran.
    Spec(Box<Spec>),
    /// None: why, in words.
    Missing(String),
}

/// The spec to hold the shards to: `--spec` (refused when the shards ran other bytes), or the
/// spec the first shard names, read from where it says (relative to the current folder) when
/// its sha256 is the one the shards ran.
pub(super) fn spec_for(given: Option<&Path>, shards: &[(PathBuf, RunReport)]) -> Result<SpecFound> {
    let Some((_, first)) = shards.first() else {
        bail!("nothing to merge");
    };
    if let Some(path) = given {
        let spec = Spec::load(path)?;
        for (dir, r) in shards {
            if r.spec_sha256 != spec.sha256 {
                same_mutants(dir, r, &spec, path)?;
            }
        }
        return Ok(SpecFound::Spec(Box::new(spec)));
    }
    let path = Path::new(&first.spec);
    let missing = |why: &str| {
        Ok(SpecFound::Missing(format!(
            "the shards' spec {} {why}",
            escape::path(path)
        )))
    };
    // Only a regular file of a spec's size is read: the path is the shards' word.
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() && m.len() <= MAX_SPEC_BYTES => {}
        Ok(m) if m.is_file() => return missing("here is too large to be a spec"),
        _ => return missing("is not here"),
    }
    let Ok(read) = crate::swap::read_regular(path) else {
        return missing("is not here");
    };
    if manifests::Digest::of(&read.bytes).to_hex() != first.spec_sha256 {
        return missing("here is not the one they ran (its sha256 differs)");
    }
    match String::from_utf8(read.bytes)
        .ok()
        .and_then(|text| Spec::parse(&text, path).ok())
    {
        Some(spec) => Ok(SpecFound::Spec(Box::new(spec))),
        None => missing("does not read as a spec"),
    }
}

/// A shard that ran other spec bytes than `--spec` is held to it when it ran the same mutants
/// (`spec::identity`: a comment or a claim's words changed, nothing a verdict depends on): each
/// of its rows is the spec's mutant of that name, at that position, unchanged. That the shards
/// were dealt from as many mutants as the spec holds is checked with the rest ([`shards`]).
fn same_mutants(dir: &Path, r: &RunReport, spec: &Spec, path: &Path) -> Result<()> {
    let other = |why: String| -> Result<()> {
        bail!(
            "{}: field `spec_sha256` is {}, but --spec {} has sha256 {} and {why}: the shard ran another spec",
            name(dir),
            escape::text(&r.spec_sha256),
            escape::path(path),
            spec.sha256
        )
    };
    for row in &r.mutants {
        let same = spec.mutants.get(row.index).is_some_and(|m| {
            m.name == row.name && crate::spec::identity::of(spec, m) == row.identity
        });
        if !same {
            return other(format!(
                "its mutant `{}` is not the one the shard ran",
                escape::text(&row.name)
            ));
        }
    }
    Ok(())
}

/// Refuses the first shard that no single run could have written (see the module docs), naming
/// the shard's report and the row. The shards' `K/N` fields are already checked
/// (`join::merge_reports`).
pub(super) fn shards(shards: &[(PathBuf, RunReport)], spec: Option<&Spec>) -> Result<()> {
    for (dir, r) in shards {
        counts(dir, r)?;
        for (i, row) in r.mutants.iter().enumerate() {
            verdicts(dir, i, row)?;
        }
    }
    // The mutants the shards were dealt from: the spec's, or as many as the shards add up to
    // (each shard's `planned` is now its rows and unjudged mutants: bounded by what it holds).
    let total = match spec {
        Some(spec) => spec.mutants.len(),
        None => shards.iter().map(|(_, r)| r.planned).sum(),
    };
    for (dir, r) in shards {
        share(dir, r, total, spec)?;
    }
    Ok(())
}

fn name(dir: &Path) -> String {
    escape::path(&dir.join("mutants.json"))
}

fn mutant(row: &Row) -> String {
    format!("mutant {:?} (index {})", escape::text(&row.name), row.index)
}

/// The shard's counts add up: its rows and unjudged mutants are what it planned, its tally
/// counts its rows, and it says complete or exit 0 only when its rows allow it.
fn counts(dir: &Path, r: &RunReport) -> Result<()> {
    let held = r.mutants.len().checked_add(r.unjudged.len());
    if held != Some(r.planned) {
        bail!(
            "{}: field `planned` is {}, but the shard holds {} rows and {} unjudged mutants: counts that do not add up",
            name(dir),
            r.planned,
            r.mutants.len(),
            r.unjudged.len()
        );
    }
    let tally = Tally::of(&r.mutants);
    if r.tally != tally {
        bail!(
            "{}: field `tally` says {}, but its rows are {}: counts that do not add up",
            name(dir),
            r.tally,
            tally
        );
    }
    if r.complete && !r.all_judged() {
        bail!(
            "{}: field `complete` is true, but {} of its {} planned mutants have no verdict",
            name(dir),
            r.unjudged.len(),
            r.planned
        );
    }
    if r.exit_code == 0 && !(r.complete && r.held()) {
        let why = match r.mutants.iter().find(|row| !row.verdict.holds()) {
            Some(row) => format!("{} is {}", mutant(row), row.verdict),
            None => "the run did not finish with everything held".to_string(),
        };
        bail!(
            "{}: field `exit_code` is 0, but {why}: a run exits 0 only when everything held",
            name(dir)
        );
    }
    Ok(())
}

/// The row's verdicts are the ones its own records give: each suite run's, and the row's.
fn verdicts(dir: &Path, i: usize, row: &Row) -> Result<()> {
    match (&row.run, row.matches) {
        (None, 1) => bail!(
            "{}: field `mutants[{i}].run` is null, but {} matched its anchor once: a mutant swapped in has its suite's record",
            name(dir),
            mutant(row)
        ),
        (Some(_), n) if n != 1 => bail!(
            "{}: field `mutants[{i}].matches` is {n}, but {} has a suite run: only an anchor found once is swapped in",
            name(dir),
            mutant(row)
        ),
        _ => {}
    }
    if row.claim_named != crate::origin::claim_named(row.undoes.as_deref()) {
        bail!(
            "{}: field `mutants[{i}].claim_named` is {}, but {}'s `undoes` says otherwise",
            name(dir),
            row.claim_named,
            mutant(row)
        );
    }
    let runs = row.run.iter().map(|s| (format!("mutants[{i}].run"), s));
    let also = (row.also.iter().enumerate()).map(|(a, s)| (format!("mutants[{i}].also[{a}]"), s));
    for (at, s) in runs.chain(also) {
        let judged = s.judged(row.expect(), row.generated());
        if s.verdict != judged {
            bail!(
                "{}: field `{at}.verdict` is {}, but {}'s own record ({}) judges it {judged}",
                name(dir),
                s.verdict,
                mutant(row),
                escape::text(&s.status)
            );
        }
    }
    let judged = row.judged();
    if row.verdict != judged {
        let record = row.run.as_ref().map_or_else(
            || format!("no suite ran, {} matches", row.matches),
            |s| s.status.clone(),
        );
        bail!(
            "{}: field `mutants[{i}].verdict` is {}, but {}'s own record ({}) judges it {judged}",
            name(dir),
            row.verdict,
            mutant(row),
            escape::text(&record)
        );
    }
    Ok(())
}

/// The shard holds exactly its share of the `total` mutants, as `run --shard K/N` deals them,
/// and (with the spec) each row is the spec's mutant at its index.
fn share(dir: &Path, r: &RunReport, total: usize, spec: Option<&Spec>) -> Result<()> {
    let shard = r.shard.unwrap_or(Shard { k: 1, n: 1 });
    let expected: BTreeSet<usize> = match spec {
        Some(spec) => Selection {
            shard: Some(shard),
            ..Selection::default()
        }
        .select(spec)?
        .into_iter()
        .collect(),
        None => shard.select((0..total).collect()).into_iter().collect(),
    };
    let mut held = BTreeSet::new();
    for (i, row) in r.mutants.iter().enumerate() {
        if !expected.contains(&row.index) {
            bail!(
                "{}: field `mutants[{i}]`: {} is not in shard {shard}'s share of {total} mutants: an extra row",
                name(dir),
                mutant(row)
            );
        }
        if let Some(spec) = spec {
            same_mutant(dir, i, row, spec)?;
        }
        held.insert(row.index);
    }
    for (u, un) in r.unjudged.iter().enumerate() {
        let spec_name = spec.and_then(|s| s.mutants.get(un.index)).map(|m| &m.name);
        if !expected.contains(&un.index)
            || !held.insert(un.index)
            || spec_name.is_some_and(|n| *n != un.name)
        {
            bail!(
                "{}: field `unjudged[{u}]`: mutant {:?} (index {}) is not one of shard {shard}'s mutants still to judge",
                name(dir),
                escape::text(&un.name),
                un.index
            );
        }
    }
    if let Some(&missing) = expected.difference(&held).next() {
        let what = match spec.and_then(|s| s.mutants.get(missing)) {
            Some(m) => format!("mutant {:?} (index {missing})", escape::text(&m.name)),
            None => format!("the mutant at index {missing}"),
        };
        bail!(
            "{}: {what} is in shard {shard}'s share of {total} mutants, but the shard has no row for it and does not list it unjudged: a missing row",
            name(dir)
        );
    }
    Ok(())
}

/// The row is the spec's mutant at its index: the same name, file, swap, claim, kind and
/// suites.
fn same_mutant(dir: &Path, i: usize, row: &Row, spec: &Spec) -> Result<()> {
    let Some(m) = spec.mutants.get(row.index) else {
        bail!(
            "{}: field `mutants[{i}].index`: the spec has no mutant at index {}",
            name(dir),
            row.index
        );
    };
    let suites: Vec<&str> = row.suite_runs().map(|s| s.suite.as_str()).collect();
    let differs = [
        ("name", row.name != m.name),
        ("file", row.file != m.file),
        ("anchor", row.anchor != m.anchor),
        ("replace", row.replace != m.replace),
        ("site", row.site != m.site),
        ("undoes", row.undoes != m.undoes),
        ("control", row.control != m.is_control()),
        ("operator", row.operator != m.operator),
        ("claim_named", row.claim_named != m.claim_named()),
        (
            "run.suite",
            row.run.is_some() && suites != m.suites().collect::<Vec<_>>(),
        ),
    ]
    .into_iter()
    .find(|(_, d)| *d);
    if let Some((field, _)) = differs {
        bail!(
            "{}: field `mutants[{i}].{field}`: {} is not the spec's mutant at that index ({:?})",
            name(dir),
            mutant(row),
            escape::text(&m.name)
        );
    }
    Ok(())
}
